"""Single rods on the implicit integrator: natural frequencies of a clamped-free rod
against the closed forms of the discrete rod, and the characterization set-ups.

The reference frequencies do not come from any integrator: they are the exact eigenvalues of
the linearised discrete rod (the PyElastica discretisation the package integrates) about the
straight rest pose, written out here from the rod's parameters:

* axial: a chain of ``n`` elements of stiffness ``E A / l`` (``l = L / n``), node masses
  ``rho A l`` (half at the free tip), node 0 held.  Its modes are ``u_j = sin(j theta)`` with
  ``cos(n theta) = 0``, so ``omega_1 = (2 / l) sqrt(E / rho) sin(pi / (4 n))`` (the continuum
  ``pi / (2 L) sqrt(E / rho)`` as ``n -> oo``);
* bending (one plane): lateral node displacements ``u_i`` and element tilts ``phi_e`` with
  the shear strain ``(u_{e+1} - u_e) / l - phi_e`` (stiffness ``alpha_c G A``) and the Voronoi
  curvature ``(phi_e - phi_{e-1}) / l`` (rigidity ``B_xy``), node masses as above, element
  rotary inertias ``rho I l``; node 0 and element 0 held (the motor clamp).  ``omega_1`` is the
  smallest root of ``det(K - omega^2 M) = 0`` (a discrete Timoshenko beam: 19.09 Hz for 10
  elements; the Euler-Bernoulli continuum ``1.875^2 / (2 pi L^2) sqrt(B / (rho A))``, 18.44 Hz,
  is not the discrete rod's: the motor clamp holds the whole first element, and the shear
  stiffness ``alpha_c G A`` is finite).

The elastic law only: ``C_eps = 0`` (the auxetic rest length does not move), no Kelvin-Voigt
damping, no linear damping, no gravity, so the rod's law about the straight pose is linear
elasticity (docs/model.md, Eq. 1).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hsa_elastica.engines.implicit import ImplicitStepFailed, generalized_alpha
from hsa_elastica.params import paper_robot_params
from hsa_elastica.params.base import ALPHA_C
from hsa_elastica.params.robot import SimulationParams
from hsa_elastica.robots.builders import build_single_rod
from hsa_elastica.robots.compiled import FastRobot, ImplicitRobot, compiled_engine
from tests.test_passivity import NO_KV

N = 10  # elements
RHO_INF = 0.8


def _rod():  # type: ignore[no-untyped-def]
    p = paper_robot_params().rod
    return p.replace(n_elements=N, C_eps=0.0, **NO_KV)


def _sim(dt: float, integrator: str) -> SimulationParams:
    return SimulationParams(dt=dt, damping=0.0, rotational_damping=0.0, integrator=integrator,
                            implicit_rho_inf=RHO_INF)


def _axial_mode(rod):  # type: ignore[no-untyped-def]
    """(omega_1 [rad/s], node velocity shape (n,), nodes 1..n) of the discrete axial chain."""
    n, l = rod.n_elements, rod.length / rod.n_elements
    theta = math.pi / (2 * n)
    omega = 2.0 / l * math.sqrt(rod.youngs_modulus / rod.density) * math.sin(theta / 2.0)
    return omega, np.sin(np.arange(1, n + 1) * theta)


def _bending_mode(rod):  # type: ignore[no-untyped-def]
    """(omega_1 [rad/s], shape) of the discrete bending problem: shape = (u_1..u_n, phi_1..
    phi_{n-1}) (nodes 1..n lateral, elements 1..n-1 tilt; node 0 and element 0 held)."""
    n, l = rod.n_elements, rod.length / rod.n_elements
    s = ALPHA_C * rod.shear_modulus * rod.area  # N
    b = rod.B_xy  # N m^2
    nu = n  # u_1..u_n at 0..n-1; phi_e (e = 1..n-1) at n + e - 1
    dim = 2 * n - 1

    def u(i: int) -> int:
        return i - 1 if i >= 1 else -1

    def ph(e: int) -> int:
        return nu + e - 1 if e >= 1 else -1

    k = np.zeros((dim, dim))
    for e in range(n):  # shear of element e: (u_{e+1} - u_e) / l - phi_e, energy S l g^2 / 2
        g = np.zeros(dim)
        for idx, c in ((u(e + 1), 1.0 / l), (u(e), -1.0 / l), (ph(e), -1.0)):
            if idx >= 0:
                g[idx] += c
        k += s * l * np.outer(g, g)
    for v in range(1, n):  # curvature at the Voronoi between elements v-1 and v
        g = np.zeros(dim)
        for idx, c in ((ph(v), 1.0 / l), (ph(v - 1), -1.0 / l)):
            if idx >= 0:
                g[idx] += c
        k += b * l * np.outer(g, g)
    m = np.empty(dim)
    m[:nu] = rod.density * rod.area * l
    m[nu - 1] *= 0.5  # the tip node
    m[nu:] = rod.density * rod.second_moment * l
    w = 1.0 / np.sqrt(m)
    lam, vec = np.linalg.eigh(k * w[:, None] * w[None, :])
    return math.sqrt(lam[0]), vec[:, 0] * w


def _period_error(omega: float, dt: float) -> float:
    """Relative period error of generalized-alpha (rho_inf = RHO_INF) at step ``dt`` on the
    undamped oscillator ``omega`` [rad/s]: principal eigenvalue of the scheme's amplification
    matrix (state x, v, a, vdot), as docs/performance.md tabulates it."""
    am, af, g, b = generalized_alpha(RHO_INF)
    h, w2 = dt, omega * omega
    amp = np.zeros((4, 4))
    for col in range(4):
        x, v, a, vd = np.eye(4)[col]
        base = h * v + h * h * (0.5 - b) * a
        c1 = (1 - am) / ((1 - af) * b * h * h)
        c0 = (-(1 - am) * base / (b * h * h) + am * a - af * vd) / (1 - af)
        dq = (-w2 * x - c0) / (c1 + w2)
        a1 = (dq - base) / (b * h * h)
        amp[:, col] = (x + dq, v + h * (1 - g) * a + h * g * a1, a1, c0 + c1 * dq)
    lam = np.linalg.eigvals(amp)
    lam = lam[np.argmax(np.abs(lam.imag))]
    return omega / (abs(np.log(lam).imag) / h) - 1.0


def _verlet_ratio(omega: float, dt: float) -> float:
    """Numerical / exact frequency of Position Verlet (central difference) on the undamped
    oscillator: ``(2 / h) asin(omega h / 2) / omega``."""
    return 2.0 / dt * math.asin(0.5 * omega * dt) / omega


def _frequency(times: np.ndarray, y: np.ndarray) -> float:
    """Frequency [Hz] from the zero crossings of ``y`` (linear interpolation; slope of the
    crossing times against their count)."""
    s = np.sign(y)
    k = np.nonzero(s[:-1] * s[1:] < 0)[0]
    tc = times[k] - y[k] * (times[k + 1] - times[k]) / (y[k + 1] - y[k])
    assert tc.size >= 6
    half = np.polyfit(np.arange(tc.size), tc, 1)[0]
    return 1.0 / (2.0 * half)


def _ring_down(engine: str, dt: float, mode: str, periods: float, sample: int = 1
               ) -> tuple[float, FastRobot]:
    """Clamped-free rod (motor base at angle 0, distal free) given the velocity field of the
    discrete first ``mode``; returns the measured frequency [Hz] of the tip's motion."""
    rod = _rod()
    h = build_single_rod(rod, _sim(dt, engine), base="motor", angle=0.0, distal="free",
                         record=False)
    r = h.rod
    if mode == "axial":
        omega, shape = _axial_mode(rod)
        r.velocity_collection[2, 1:] = 10e-6 * omega * shape / shape[-1]  # 10 um at the tip
    else:
        omega, shape = _bending_mode(rod)
        shape = 0.1e-3 * omega * shape / shape[N - 1]  # 0.1 mm at the tip
        r.velocity_collection[0, 1:] = shape[:N]
        r.omega_collection[1, 1:] = shape[N:]  # tilt towards +x: local d2 = lab y
    robot = compiled_engine(h)
    assert isinstance(robot, ImplicitRobot) == (engine == "implicit")
    steps = int(periods * 2 * math.pi / omega / dt / sample)
    times, y = np.empty(steps + 1), np.empty(steps + 1)
    axis = 2 if mode == "axial" else 0
    rest = r.position_collection[axis, -1]
    times[0], y[0] = 0.0, 0.0
    for k in range(1, steps + 1):
        robot.run(sample * dt)
        times[k] = robot.time
        y[k] = r.position_collection[axis, -1] - rest
    return _frequency(times, y), robot


@pytest.mark.parametrize("mode, dt_implicit, dt_explicit", [
    ("axial", 1e-4, 2e-5),
    ("bending", 1e-3, 2e-5),
])
def test_natural_frequency_equals_the_discrete_rod(mode: str, dt_implicit: float,
                                                   dt_explicit: float) -> None:
    """Clamped-free elastic rod (10 elements) started in its first axial (243.72 Hz) / bending
    (19.09 Hz) mode: the frequency of the tip's oscillation over 6 periods equals the discrete
    rod's eigenvalue (module doc) within 1e-4, on the implicit integrator once its own period
    error at the step is removed (+0.206 % / +0.127 % at omega h = 0.153 / 0.120, from the
    scheme's amplification matrix; docs/performance.md) and on the explicit fused stepper once
    Position Verlet's is removed (+3.9e-5 / 2e-7).  Measured: both within 1e-6 after the
    corrections.  Reason for 1e-4: it leaves two orders of magnitude for the interpolated zero
    crossings (40 or more samples per period), the Newton tolerance (1e-6 N) and the
    amplitude's nonlinearity (strain 1e-4), while a node mass or stiffness wrong by 0.02 %
    fails it; without the period corrections the implicit run is off by 0.2 %."""
    rod = _rod()
    omega = (_axial_mode(rod) if mode == "axial" else _bending_mode(rod))[0]
    f_exact = omega / (2 * math.pi)
    err = _period_error(omega, dt_implicit)
    assert 0.0 < err < 0.005  # the step resolves the mode: a small correction
    f_impl, robot = _ring_down("implicit", dt_implicit, mode, 6.0)
    assert f_impl * (1.0 + err) == pytest.approx(f_exact, rel=1e-4)
    assert abs(f_impl / f_exact - 1.0) > 1e-3  # the scheme's period error is really there
    f_expl, _ = _ring_down("explicit", dt_explicit, mode, 6.0,
                           sample=1 if mode == "axial" else 10)
    assert f_expl / _verlet_ratio(omega, dt_explicit) == pytest.approx(f_exact, rel=1e-4)
    # the closed form is the rod the builders made (stiffnesses and inertias as written above)
    rr = robot.rods[0]
    assert rr.shear_matrix[0, 0, 0] == pytest.approx(ALPHA_C * rod.shear_modulus * rod.area)
    assert rr.bend_matrix[0, 0, 0] == pytest.approx(rod.B_xy)
    assert rr.mass[-1] == pytest.approx(0.5 * rod.density * rod.area * rod.length / N)


# --------------------------------------------------------------------------------------------
# the characterization set-ups
# --------------------------------------------------------------------------------------------
SETUPS = [("motor", "free"), ("motor", "twist_locked"), ("motor", "fixed"),
          ("free_twist", "twist_locked")]


@pytest.mark.parametrize("base, distal", SETUPS)
def test_single_rod_set_ups_run_on_both_compiled_engines(base: str, distal: str) -> None:
    """Every single-rod set-up of build_single_rod runs on the fused explicit stepper -- bitwise
    the trajectory of the operator loop (Robot.run's PyElastica Position Verlet), the
    free-twist base's torque schedule included -- and on the implicit integrator at a 10x
    larger step, which follows it through the 10 ms ramp and 10 ms after to 2e-3 of the rod
    length.  Reason: the ramp launches nearly undamped axial and torsional waves (244 Hz
    axial, omega h = 0.15 at 1e-4 s, period error 0.2 %) whose phase error accumulates;
    measured 1.2e-3 L with the free distal end (the rod whips), <= 1e-4 L in the others."""
    rod = _rod().replace(C_eps=0.01)  # the auxetic law on: the twist lengthens the rod
    sim = SimulationParams(dt=1e-5, ramp_time=0.01)
    kw = {"base": base, "distal": distal, "angle": 1.0, "torque": 0.002, "record": False}
    ref = build_single_rod(rod, sim, **kw)  # type: ignore[arg-type]
    ref.run(0.02)
    fast = build_single_rod(rod, sim, **kw)  # type: ignore[arg-type]
    robot = compiled_engine(fast)
    assert type(robot) is FastRobot
    robot.run(0.02)
    assert np.array_equal(fast.rod.position_collection, ref.rod.position_collection)
    assert np.array_equal(fast.rod.director_collection, ref.rod.director_collection)
    impl = build_single_rod(rod, sim.replace(dt=1e-4, integrator="implicit"), **kw)  # type: ignore[arg-type]
    robot = compiled_engine(impl)
    assert isinstance(robot, ImplicitRobot)
    robot.run(0.02)
    err = np.abs(impl.rod.position_collection - ref.rod.position_collection).max()
    assert err < 2e-3 * rod.length
    assert ref.rod.position_collection[2, -1] > rod.length * 1.0003 or distal == "fixed"


@pytest.mark.parametrize("characteristic", ["holding_torque", "minimum_energy_length",
                                            "spring_constant", "blocked_force"])
def test_characterization_relaxes_on_the_implicit_integrator(characteristic: str) -> None:
    """The dynamic characterization experiments with ``sim_params.integrator = "implicit"``
    (settling_sim_params(..., integrator="implicit"): a step 17x the explicit one) settle
    where the static solver says, within 1e-5 relative: the accuracy of the settling stop
    (node speeds below 1e-4 L/s), as for the explicit relaxation (tests/test_rod_statics.py)."""
    from hsa_elastica.experiments import characterization as ch
    from hsa_elastica.params import table1_rod_params

    rod = table1_rod_params(4)
    phi = math.radians(90.0)
    sp = ch.settling_sim_params(rod, angle=phi, integrator="implicit")
    assert sp.integrator == "implicit" and sp.dt > 10 * ch.settling_sim_params(rod, angle=phi).dt
    fn = getattr(ch, characteristic)
    static = fn(rod, phi)
    dynamic = fn(rod, phi, method="dynamic", sim_params=sp)
    assert dynamic == pytest.approx(static, rel=1e-5)


def test_twist_angle_under_torque_on_the_implicit_integrator() -> None:
    """Free-twist base driven by a torque schedule (a compiled load row the implicit
    integrator refreshes every step): the settled angle equals the static one within 5e-4
    relative, the explicit relaxation's own distance (measured 0.9e-4 explicit, 1.2e-4
    implicit: the slow twist mode is stopped by the angular-speed tolerance 1e-3 rad/s)."""
    from hsa_elastica.experiments import characterization as ch
    from hsa_elastica.params import table1_rod_params

    rod = table1_rod_params(4)
    static = ch.twist_angle_under_torque(rod, 0.01)
    sp = ch.settling_sim_params(rod, angle=1.0, integrator="implicit")
    dynamic = ch.twist_angle_under_torque(rod, 0.01, method="dynamic", sim_params=sp)
    assert dynamic == pytest.approx(static, rel=5e-4)


def test_refused_step_and_divergence_name_the_time_and_the_rod() -> None:
    """A step Newton cannot take (here: force and increment tolerances below round-off, so no
    step converges; with the Newton matrix of differences, whose linear convergence does not
    reach 1e-14 N in 3 iterations as the exact tangents do) is refused naming dt, the time and
    the rod's unknown with the largest residual; the explicit stepper above its step limit
    diverges naming the time and the rod."""
    from hsa_elastica.engines.timeloop import SimulationDiverged

    sim = _sim(1e-3, "implicit").replace(ramp_time=0.01)
    h = build_single_rod(_rod(), sim, angle=1.0, distal="free", record=False)
    robot = ImplicitRobot(h, tol_force=1e-14, tol_torque=1e-17, tol_position=1e-30,
                          tol_rotation=1e-30, max_iter=3, jacobian="fd")
    with pytest.raises(ImplicitStepFailed, match=r"dt = 0\.001 s .* at t = [0-9.]+ s: .*largest "
                                                 r"at rod (node|element) \d+") as info:
        robot.run(0.01)
    assert 0.0 <= info.value.time < 0.01 and robot.time == pytest.approx(info.value.time)
    h = build_single_rod(_rod().replace(C_eps=0.01), _sim(2e-3, "explicit"), angle=1.0,
                         distal="free", record=False, check_dt=False)
    with pytest.raises(SimulationDiverged, match="rod") as div:
        FastRobot(h, chunk=20).run(0.5)
    assert div.value.name == "rod" and div.value.time < 0.5


@pytest.mark.parametrize("kind", ["compliant mount", "torque drive"])
def test_motors_on_moving_bodies_run_on_the_implicit_integrator(kind: str) -> None:
    """The other assemblies the fused stepper compiles: a stack whose upper motors sit on the
    lower platform through compliant mounts (MotorMount, Eq. 6-7 at each base), or drive by a
    torque with the base free to twist (TwistMountBC + MountReaction(torque)).  After a 0.2 s
    ramp and 0.6 s of damped settling both platforms are where the explicit stepper puts them
    within 1e-9 m (both at the same equilibrium; measured 3e-12 m)."""
    from hsa_elastica.robots.stack import build_stack

    p = paper_robot_params()
    p = p.replace(rod=p.rod.replace(n_elements=6),
                  simulation=p.simulation.replace(ramp_time=0.2, damping=30.0,
                                                  rotational_damping=30.0))
    q = p.replace(simulation=p.simulation.replace(dt=1e-3, integrator="implicit"))
    if kind == "compliant mount":
        kw: dict = {"mount": p.joint}
        cmd = [[0.8, 0.3, 0.8, 0.3], [0.3, 0.8, 0.3, 0.8]]
    else:
        kw = {"drive": "torque"}
        cmd = [[0.8, 0.3, 0.8, 0.3], [0.002, 0.001, 0.002, 0.001]]
    ex = FastRobot(build_stack([p, p], cmd, record=False, **kw))
    im = compiled_engine(build_stack([q, q], cmd, record=False, **kw))
    assert isinstance(im, ImplicitRobot)
    ex.run(0.8)
    im.run(0.8)
    assert np.abs(ex.body_arrays.position[:, -1]).max() > 0.2  # the top platform is up there
    assert np.abs(ex.body_arrays.position - im.body_arrays.position).max() < 1e-9


@pytest.mark.parametrize("integrator, dt", [("implicit", 2e-4), ("explicit", 1e-5)])
@pytest.mark.parametrize("base", ["motor", "free_twist"])
def test_single_rod_snapshots_restore_bitwise(integrator: str, dt: float, base: str) -> None:
    """get_state / set_state on a single rod's compiled engine (the torque schedule's phase
    included): restoring mid-ramp and stepping again repeats the trajectory bit for bit."""
    sim = _sim(dt, integrator).replace(ramp_time=0.01)
    h = build_single_rod(_rod().replace(C_eps=0.01), sim, base=base, angle=1.0, torque=0.002,
                         distal="twist_locked", record=False)
    robot = compiled_engine(h)
    robot.run(0.004)
    state = robot.get_state()
    robot.run(0.006)
    first = h.rod.position_collection.copy()
    robot.set_state(state)
    robot.run(0.006)
    assert np.array_equal(first, h.rod.position_collection)
