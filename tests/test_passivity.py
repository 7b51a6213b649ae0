"""Passivity and material damping (physics; docs/stability.md).

References not produced by the code under test:
* energy conservation of an undamped elastic structure (the sum of kinetic and elastic energy
  of :mod:`hsa_elastica.physics.energy` is constant up to the second-order mismatch between
  PyElastica's forces and that energy, and the time-stepping error);
* passivity: with the Kelvin-Voigt damper the same energy can only decrease;
* the Kelvin-Voigt closed form: a mode of angular frequency omega that strains only the axis
  has the damping ratio ``zeta = omega tau_axial / 2``;
* the operator path and the compiled path run the same kernels in the same order (1e-10).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hsa_elastica.params import (
    RETARDATION_FIELDS,
    RodParams,
    SimulationParams,
    paper_robot_params,
)
from hsa_elastica.physics.energy import (
    joint_energy,
    rigid_body_kinetic_energy,
    rod_elastic_energy,
    rod_kinetic_energy,
)
from hsa_elastica.robots.builders import build_fast_robot, build_robot, build_single_rod
from hsa_elastica.robots.primitives import primitive_angles

NO_KV = {f: 0.0 for f in RETARDATION_FIELDS}


def _rod_energy(rod) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    kin = rod_kinetic_energy(
        rod.position_collection, rod.velocity_collection, rod.omega_collection, rod.mass,
        rod.mass_second_moment_of_inertia, rod.rest_lengths,
    )
    el = rod_elastic_energy(
        rod.position_collection, rod.director_collection, rod.rest_lengths,
        rod.rest_voronoi_lengths, rod.shear_matrix, rod.bend_matrix, rod.rest_sigma,
        rod.rest_kappa,
    )
    return float(kin), float(el)


def _robot_energy(robot) -> float:  # type: ignore[no-untyped-def]
    """Kinetic + elastic energy [J] of a FastRobot (rods, platform, joint springs)."""
    total = sum(sum(_rod_energy(r)) for r in robot.rods)
    p = robot.platform
    total += rigid_body_kinetic_energy(
        p.velocity_collection, p.omega_collection, np.atleast_1d(p.mass),
        p.mass_second_moment_of_inertia,
    )
    j = robot.joints
    ra, ba = robot.rod_arrays, robot.body_arrays
    for i in range(j.node.shape[0]):
        total += joint_energy(
            ra.position, ra.director, int(j.node[i]), int(j.element[i]), ba.position,
            ba.director, int(j.body[i]), j.attachment[i], j.rest_orientation[i],
            float(j.k_F[i]), float(j.k_tau[i]),
        )
    return float(total)


def _perturbed_rod(kv: dict, n: int = 20):  # type: ignore[no-untyped-def]
    """Straight rod, base held by the motor (angle 0), tip free, no damping, no coupling,
    with a smooth initial velocity field (bending, stretching and twisting)."""
    rp = RodParams(n_elements=n, C_eps=0.0, twist_filter_time=0.0, **kv)
    sp = SimulationParams(dt=2e-5, damping=0.0, rotational_damping=0.0)
    rod_h = build_single_rod(rp, sp, base="motor", angle=0.0, distal="free", record=False)
    rod = rod_h.rod
    z = rod.position_collection[2] / rp.length
    rod.velocity_collection[0] = 0.05 * np.sin(0.5 * math.pi * z)
    rod.velocity_collection[2] = 0.02 * np.sin(0.5 * math.pi * z)
    rod.velocity_collection[:, 0] = 0.0
    ze = 0.5 * (z[1:] + z[:-1])
    rod.omega_collection[2] = 5.0 * np.sin(0.5 * math.pi * ze)
    rod.omega_collection[:, 0] = 0.0
    return rod_h, sp.dt


def test_single_rod_energy_is_conserved_without_damping() -> None:
    """Undamped rod: kinetic + elastic energy constant within 1 % over 0.1 s (~15 periods of
    the lowest bending mode, ~1000 of the highest); the energies are second-order consistent
    with PyElastica's forces, so the residual is small, not zero."""
    rod_h, dt = _perturbed_rod(NO_KV)
    e0 = sum(_rod_energy(rod_h.rod))
    assert e0 > 1e-6
    worst = 0.0
    for _ in range(50):
        rod_h.run(100 * dt)
        worst = max(worst, abs(sum(_rod_energy(rod_h.rod)) - e0) / e0)
    assert worst < 0.01, f"energy drift {worst:.2%}"


def test_kelvin_voigt_only_removes_energy() -> None:
    """With the material damping the energy never increases and decays (passivity)."""
    rod_h, dt = _perturbed_rod({f: 1e-4 for f in RETARDATION_FIELDS})
    energies = [sum(_rod_energy(rod_h.rod))]
    for _ in range(40):
        rod_h.run(50 * dt)
        energies.append(sum(_rod_energy(rod_h.rod)))
    e = np.array(energies)
    # elastic/kinetic exchange is not monotone in the second-order energy: allow 0.5 % of e0
    assert np.all(np.diff(e) < 5e-3 * e[0])
    assert e[-1] < 0.9 * e[0]


def test_kelvin_voigt_axial_mode_damping_ratio() -> None:
    """First axial mode of a base-held, tip-free rod with only axial Kelvin-Voigt damping:
    zeta = omega tau / 2 (closed form of a Kelvin-Voigt bar; the discrete rod's omega is read
    from the same run).  Tolerance 10 %: the log decrement is taken over 3 periods of a
    response that still holds a little of the higher modes, and the semi-implicit step has
    an O(dt omega) error."""
    tau = 1e-4
    kv = dict(NO_KV, retardation_time_axial=tau)
    rp = RodParams(n_elements=20, C_eps=0.0, twist_filter_time=0.0, **kv)
    sp = SimulationParams(dt=1e-5, damping=0.0, rotational_damping=0.0)
    rod_h = build_single_rod(rp, sp, base="motor", angle=0.0, distal="free", record=False)
    rod = rod_h.rod
    z = rod.position_collection[2] / rp.length
    rod.velocity_collection[2] = 0.01 * np.sin(0.5 * math.pi * z)
    zs, ts = [], []
    for k in range(1600):
        rod_h.run(sp.dt)
        zs.append(rod.position_collection[2, -1] - rp.length)
        ts.append((k + 1) * sp.dt)
    x = np.array(zs)
    peaks = [i for i in range(1, len(x) - 1) if x[i] > x[i - 1] and x[i] >= x[i + 1] and x[i] > 0]
    assert len(peaks) >= 4
    period = (ts[peaks[3]] - ts[peaks[0]]) / 3.0
    delta = math.log(x[peaks[0]] / x[peaks[3]]) / 3.0
    zeta = delta / math.sqrt(4.0 * math.pi**2 + delta**2)
    omega = 2.0 * math.pi / period / math.sqrt(1.0 - zeta**2)
    expected = omega * tau / 2.0
    assert zeta == pytest.approx(expected, rel=0.10), (zeta, expected, omega)
    # the bar's first axial mode, (pi / 2) sqrt(E / rho) / L (discrete: within 2 %)
    assert omega == pytest.approx(0.5 * math.pi * math.sqrt(rp.youngs_modulus / rp.density) / rp.length, rel=0.02)


def _small_robot(**rod_changes):  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    return p.replace(rod=p.rod.replace(n_elements=6, **rod_changes))


def _kicked_elastic_robot(dt: float):  # type: ignore[no-untyped-def]
    p = _small_robot(C_eps=0.0, **NO_KV)
    p = p.replace(simulation=p.simulation.replace(dt=dt, damping=0.0, rotational_damping=0.0))
    robot = build_fast_robot(p, [0.0] * 4, record=False)
    robot.platform.velocity_collection[:, 0] = (0.05, -0.03, 0.02)
    robot.platform.omega_collection[:, 0] = (2.0, 1.0, 3.0)
    return robot


def test_small_robot_energy_is_conserved_without_damping() -> None:
    """Elastic robot (no coupling, no damping): rods + platform + joint springs conserve
    kinetic + elastic energy.  Position Verlet conserves a modified energy, so the computed
    energy fluctuates by O((omega_max dt)^2): within 1 % at dt = 1e-5 s (measured 0.2 %),
    ~1.3 % at the default 3e-5 s (close to the stability limit) -- but it does not drift: the
    mean over the second half equals the mean over the first within 0.2 %."""
    robot = _kicked_elastic_robot(1e-5)
    e0 = _robot_energy(robot)
    worst = 0.0
    for _ in range(10):
        robot.run(0.05)
        worst = max(worst, abs(_robot_energy(robot) - e0) / e0)
    assert worst < 0.01, f"energy error {worst:.2%}"
    robot = _kicked_elastic_robot(3e-5)
    e0 = _robot_energy(robot)
    series = []
    for _ in range(40):
        robot.run(0.05)
        series.append(_robot_energy(robot) / e0 - 1.0)
    assert max(abs(x) for x in series) < 0.03
    assert abs(np.mean(series[20:]) - np.mean(series[:20])) < 2e-3


def test_operator_path_equals_compiled_path_with_material_damping() -> None:
    """Long retardation times (10x the defaults) and no other damping: both paths agree."""
    p = _small_robot(**{f: 10.0 * getattr(paper_robot_params().rod, f) for f in RETARDATION_FIELDS})
    p = p.replace(simulation=p.simulation.replace(damping=0.0, rotational_damping=0.0, ramp_time=0.01))
    angles = (0.9, -0.4, 0.3, -0.7)
    ref = build_robot(p, angles, record=False)
    fast = build_fast_robot(p, angles, record=False, chunk=97)
    ref.run(400 * p.simulation.dt)
    fast.run(400 * p.simulation.dt)
    for a, b in zip(ref.rods, fast.rods):
        for name in ("position_collection", "velocity_collection", "omega_collection"):
            assert np.max(np.abs(getattr(a, name) - getattr(b, name))) <= 1e-10
    assert np.max(np.abs(fast.rods[0].velocity_collection)) > 1e-4  # it moved


def test_small_robot_holds_30_s_at_light_damping() -> None:
    """Default (passive, damped) model, global damping 5 1/s, no twist filter: the twist
    primitive (the hardest case of the former model) stays bounded and settles over 30 s."""
    p = _small_robot()
    assert p.simulation.damping <= 5.0 and p.rod.twist_filter_time == 0.0
    robot = build_fast_robot(p, list(primitive_angles("twist_ccw", 1.0, p)), record=False)
    robot.run(16.0)
    mid = robot.platform.position_collection[:, 0].copy()
    robot.run(15.0)
    end = robot.platform.position_collection[:, 0].copy()
    speed = max(float(np.abs(r.velocity_collection).max()) for r in robot.rods)
    assert speed < 1e-6
    assert np.linalg.norm(end - mid) < 1e-6
