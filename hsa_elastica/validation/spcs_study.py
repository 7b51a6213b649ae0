"""SPCS kinematic model fitted to simulated steady-state rod shapes (paper Section IV-D, Fig. 5).

For each motion primitive of Fig. 2(a) (elongation, bending N/S/E/W, twisting CW/CCW) and each
magnitude, the four-rod paper robot (Section II-E) is run from rest to its steady state with our
simulator.  Each rod then gives N = 25 poses, one per element:

* position: the element centre, the midpoint of its two nodes [m];
* orientation: the element's directors (``R = Q.T``: columns d1, d2, d3, d3 = tangent);
* arc length: the printed arc length of the element centre, ``s_k = (k + 1/2) L / 25``;
* frame: the rod's *un-actuated* base frame {S_B}: origin at the rod's base node, axes
  ``(radial, tangential, +z)`` of the straight rod before actuation, so that the motor angle is
  the SPCS ``phi0`` (``hsa_elastica.spcs.rod_element_poses`` with that base pose).

The SPCS model (twist and stretch constant over the rod, bend and shear piecewise constant over
``n_S = 1..5`` equal segments; ``n_q = 3 + 4 n_S``) is fitted to these poses by the
Levenberg-Marquardt IK of ``hsa_elastica.spcs.inverse_kinematics_lm`` (exact Jacobian, orientation
weight 0.1 L; the paper uses the gradient iteration of Eq. 14, which converges to the same
least-squares optimum, only slower).  Two variants:

* ``fixed``: ``phi0`` fixed to the motor angle (read from the encoder in the paper);
* ``free``: ``phi0`` fitted too.

Errors (Eq. 15-16, ``hsa_elastica.spcs.error_metrics``) are pooled per primitive over its magnitudes,
the four rods and the 25 poses: ``e_p`` [mm], ``e_quat`` [-] (quaternion vector part) and the
XYZ Euler-angle errors [rad].

This module holds the computations (:func:`run_study`, the fits, the metrics).  The report (``spcs_study.md``,
``fig5_spcs.png``) is written by the checkout's ``python -m validation.spcs_study
[--magnitudes 0.25 0.5 0.75 1.0] [--results DIR]``, which caches every simulated steady state as
``<out>/spcs_<primitive>_m<mag>_<hash>.npz`` (the hash covers the robot parameters and settling
settings), so refits do not re-simulate.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from hsa_elastica.spcs import (
    SPCSModel,
    error_metrics,
    inverse_kinematics_lm,
    rod_element_poses,
)
from hsa_elastica.params import RobotParams, paper_robot_params
from hsa_elastica.params.files import write_atomic
from hsa_elastica.robots.primitives import primitive_angles
from hsa_elastica.robots.settling import SettleOptions
from hsa_elastica.io.recording import directors, node_positions
from hsa_elastica.engines.timeloop import SimulationDiverged
from hsa_elastica.robots.steady_state import solve_steady_state

FloatArray = NDArray[np.float64]

#: primitives of Fig. 2(a), grouped as in the paper's discussion of Fig. 5
GROUPS: dict[str, tuple[str, ...]] = {
    "elongation": ("elongation",),
    "bending": ("bend_north", "bend_south", "bend_east", "bend_west"),
    "twisting": ("twist_cw", "twist_ccw"),
}
PRIMITIVE_NAMES: tuple[str, ...] = tuple(p for g in GROUPS.values() for p in g)
N_SEGMENTS: tuple[int, ...] = (1, 2, 3, 4, 5)
VARIANTS: tuple[str, ...] = ("fixed", "free")


# --------------------------------------------------------------------------------------------
# simulation settings and cached steady states
# --------------------------------------------------------------------------------------------
#: the study's settling test (:class:`~hsa_elastica.robots.settling.SettleOptions`):
#: every rod node and the platform below 1e-4 m/s and the platform below 1e-3 rad/s for
#: 0.05 s, checked every 0.01 s, giving up at 3 s simulated
STUDY_SETTLE = SettleOptions(max_time=3.0, check_interval=0.01)


def study_params(
    *,
    dt: float = 2e-5,
    damping: float = 50.0,
    ramp_time: float = 0.2,
    twist_filter_time: float = 2e-3,
) -> RobotParams:
    """The paper robot (``paper_robot_params``) with the study's numerics.

    ``dt`` [s]: 2e-5 (the preset's 4e-5 diverges for this robot); ``damping`` [1/s]: the same
    translational and rotational rate, high so that the steady state is reached in ~1 s;
    ``ramp_time`` [s]: short smooth motor ramp; ``twist_filter_time`` [s]: the coupling's
    low-pass of the handed twist strain (numerics only, it does not change the steady state).
    Damping 50 1/s because lower rates are not enough here: at 30 1/s ``bend_north`` at
    magnitude 1 diverges after ~0.7 s with dt = 2e-5 s *and* with dt = 1e-5 s (so not a
    time-step limit; without the low-pass it diverges at ~0.2 s), and at 10-20 1/s
    ``twist_ccw`` at magnitude 0.5 keeps moving (max node speed 0.04-4 m/s after 2 s).
    Records at 10 Hz (only the final state is used).
    """
    p = paper_robot_params()
    rod = dataclasses.replace(p.rod, twist_filter_time=twist_filter_time)
    sim = dataclasses.replace(
        p.simulation,
        dt=dt,
        damping=damping,
        rotational_damping=damping,
        ramp_time=ramp_time,
        record_fps=10.0,
    )
    return dataclasses.replace(p, rod=rod, simulation=sim)


@dataclass(frozen=True)
class SteadyShape:
    """Final state of one simulated primitive (lab frame, SI units).

    ``positions`` (n_rods, 3, n+1) [m]; ``element_directors`` (n_rods, 3, 3, n) lab -> local;
    ``motor_angles`` (n_rods,) [rad]; settling diagnostics of the run.
    """

    primitive: str
    magnitude: float
    positions: FloatArray
    element_directors: FloatArray
    motor_angles: FloatArray
    converged: bool
    sim_time_s: float
    wall_time_s: float
    max_node_speed_m_s: float
    max_platform_omega_rad_s: float
    platform_tilt_rad: float
    platform_twist_rad: float


def cache_key(params: RobotParams, settle: SettleOptions) -> str:
    """Short hash of everything that changes a steady state (parameters, settling test)."""
    text = repr(params) + repr(settle)
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def cache_path(out: Path, primitive: str, magnitude: float, key: str) -> Path:
    return out / f"spcs_{primitive}_m{magnitude:.3f}_{key}.npz"


def simulate_primitive(
    params: RobotParams, primitive: str, magnitude: float, settle: SettleOptions
) -> SteadyShape:
    """Run the robot to the steady state of ``primitive`` at ``magnitude`` in [0, 1]."""
    angles = primitive_angles(primitive, magnitude, params)
    res = solve_steady_state(params, angles, settle=settle, record=True)
    df = res.diagnostics
    assert df is not None
    n = params.n_rods
    pos = np.stack([node_positions(df, f"rod{i}/")[-1] for i in range(n)])
    dirs = np.stack([directors(df, f"rod{i}/")[-1] for i in range(n)])
    if abs(float(df["time"].iloc[-1]) - res.sim_time_s) > 0.5 * params.simulation.dt:
        raise RuntimeError("the last recorded sample is not the final steady state")
    return SteadyShape(
        primitive=primitive,
        magnitude=float(magnitude),
        positions=pos,
        element_directors=dirs,
        motor_angles=np.asarray(res.motor_angles_rad, dtype=np.float64),
        converged=bool(res.converged),
        sim_time_s=float(res.sim_time_s),
        wall_time_s=float(res.wall_time_s),
        max_node_speed_m_s=float(res.max_node_speed_m_s),
        max_platform_omega_rad_s=float(res.max_platform_omega_rad_s),
        platform_tilt_rad=float(res.platform_tilt_rad),
        platform_twist_rad=float(res.platform_twist_rad),
    )


def _savez(path: Path, arrays: dict[str, object]) -> None:
    with open(path, "wb") as f:  # a file object: savez would add ".npz" to a path without it
        np.savez(f, **arrays)  # type: ignore[arg-type]


def load_or_simulate(
    params: RobotParams,
    primitive: str,
    magnitude: float,
    settle: SettleOptions,
    out: Path | None,
    *,
    verbose: bool = True,
) -> SteadyShape:
    """Cached :func:`simulate_primitive` (``out=None``: no cache)."""
    path = None
    if out is not None:
        path = cache_path(out, primitive, magnitude, cache_key(params, settle))
        if path.exists():
            with np.load(path) as z:
                fields = {k: z[k] for k in z.files}
            scalars = {k: v.item() for k, v in fields.items() if v.ndim == 0}
            arrays = {k: v for k, v in fields.items() if v.ndim > 0}
            if "directors" in arrays:  # caches written before the field was renamed
                arrays["element_directors"] = arrays.pop("directors")
            return SteadyShape(**scalars, **arrays)
    t0 = time.perf_counter()
    shape = simulate_primitive(params, primitive, magnitude, settle)
    if verbose:
        print(
            f"  simulated {primitive:11s} m={magnitude:.2f}: t_sim={shape.sim_time_s:.2f} s, "
            f"converged={shape.converged}, max|v|={shape.max_node_speed_m_s:.1e} m/s, "
            f"wall {time.perf_counter() - t0:.1f} s",
            flush=True,
        )
    if path is not None:
        write_atomic(path, lambda tmp: _savez(tmp, dataclasses.asdict(shape)),
                     create_parents=True)
    return shape


# --------------------------------------------------------------------------------------------
# poses and fits
# --------------------------------------------------------------------------------------------
def base_pose(params: RobotParams, i: int) -> FloatArray:
    """Un-actuated base frame of rod ``i`` in the lab: origin at its base node, rotation
    ``R_z(a_i)`` (columns radial, tangential, +z = the rod's initial directors d1, d2, d3)."""
    a = params.rod_angle(i)
    B = np.eye(4)
    B[:3, :3] = [[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]]
    B[:3, 3] = params.rod_base(i)
    return B


def rod_poses(params: RobotParams, shape: SteadyShape, i: int) -> tuple[FloatArray, FloatArray]:
    """(s (25,), T (25, 4, 4)): element-centre poses of rod ``i`` in its un-actuated base frame."""
    return rod_element_poses(shape.positions[i], shape.element_directors[i], params.rod.length, base_pose(params, i))


def _initial_guesses(model: SPCSModel, s: FloatArray, T: FloatArray, phi0: float) -> list[FloatArray]:
    """Two LM starts: the rest configuration, and one with the CS strains (twist, stretch)
    estimated from the relative rotation of the end elements and the polyline length."""
    q_rest = np.zeros(model.n_q)
    q_rest[0] = phi0
    q_est = q_rest.copy()
    ds = s[-1] - s[0]
    Rrel = T[0, :3, :3].T @ T[-1, :3, :3]
    twist = math.atan2(Rrel[1, 0] - Rrel[0, 1], Rrel[0, 0] + Rrel[1, 1])
    stretch = float(np.sum(np.linalg.norm(np.diff(T[:, :3, 3], axis=0), axis=1))) / ds
    names = model.q_names
    if "kappa_z" in names:
        q_est[names.index("kappa_z")] = twist / ds
    if "sigma_z" in names:
        q_est[names.index("sigma_z")] = stretch - 1.0
    return [q_rest, q_est]


def fit_rod(
    s: FloatArray, T: FloatArray, length: float, n_segments: int, phi0: float | None, motor_angle: float
) -> tuple[FloatArray, FloatArray]:
    """LM fit of the default SPCS model with ``n_segments``; ``phi0`` fixed (a number) or free
    (None, started at ``motor_angle``).  Returns (q, fitted poses (25, 4, 4)); the better of two
    starts (:func:`_initial_guesses`) by the least-squares cost."""
    model = SPCSModel(length=length, n_segments=n_segments)
    best: tuple[float, FloatArray] | None = None
    w = 0.1 * length
    for q0 in _initial_guesses(model, s, T, motor_angle if phi0 is None else phi0):
        r = inverse_kinematics_lm(model, T, s, q0=q0, phi0=phi0)
        cost = r.position_rmse**2 + (w * r.rotation_rmse) ** 2
        if best is None or cost < best[0]:
            best = (cost, r.q)
    assert best is not None
    return best[1], model.forward(best[1], s)


@dataclass
class RodFit:
    """One rod's SPCS fit: the fitted configuration ``q_fit`` and the true / fitted element
    poses ``T_true`` / ``T_fit``."""

    primitive: str
    magnitude: float
    rod: int
    n_segments: int
    variant: str
    q_fit: FloatArray
    T_true: FloatArray
    T_fit: FloatArray


def fit_shapes(params: RobotParams, shapes: Sequence[SteadyShape], n_segments: Sequence[int] = N_SEGMENTS) -> list[RodFit]:
    """Fit every rod of every shape for every n_S and both phi0 variants."""
    fits: list[RodFit] = []
    for sh in shapes:
        for i in range(params.n_rods):
            s, T = rod_poses(params, sh, i)
            phi = float(sh.motor_angles[i])
            for nS in n_segments:
                for variant in VARIANTS:
                    q, Tf = fit_rod(s, T, params.rod.length, nS, phi if variant == "fixed" else None, phi)
                    fits.append(RodFit(sh.primitive, sh.magnitude, i, nS, variant, q, T, Tf))
    return fits


def metrics_table(fits: Sequence[RodFit], groups: dict[str, tuple[str, ...]] | None = None) -> pd.DataFrame:
    """Eq. 15-16 pooled per (primitive or group, n_S, variant): e_p [mm], e_quat, e_eul [rad]."""
    keys = {p: (p,) for p in {f.primitive for f in fits}} if groups is None else groups
    rows = []
    for name, members in keys.items():
        for nS in sorted({f.n_segments for f in fits}):
            for variant in VARIANTS:
                sel = [f for f in fits if f.primitive in members and f.n_segments == nS and f.variant == variant]
                if not sel:
                    continue
                m = error_metrics(np.stack([f.T_true for f in sel]), np.stack([f.T_fit for f in sel]))
                rows.append(
                    dict(
                        primitive=name,
                        n_S=nS,
                        n_q=SPCSModel(length=1.0, n_segments=nS).n_q - (1 if variant == "fixed" else 0),
                        variant=variant,
                        e_p_mm=1e3 * m.e_p,
                        e_quat=m.e_quat,
                        e_eul_x=m.e_eul[0],
                        e_eul_y=m.e_eul[1],
                        e_eul_z=m.e_eul[2],
                        n_poses=sum(len(f.T_true) for f in sel),
                    )
                )
    return pd.DataFrame(rows)


def end_element_strain_ratio(params: RobotParams, shapes: Sequence[SteadyShape]) -> float | None:
    """Mean (stretch of the first/last element) / (mean stretch of the interior elements) over
    the rods of the elongation shapes (None without any): the coupling's zero-padded strain
    average gives the end elements half the strain (docs/architecture.md)."""
    ratios = []
    l0 = params.rod.length / params.rod.n_elements
    for sh in shapes:
        if sh.primitive != "elongation":
            continue
        for x in sh.positions:
            st = np.linalg.norm(np.diff(x, axis=1), axis=0) / l0 - 1.0
            ratios.append(0.5 * (st[0] + st[-1]) / st[1:-1].mean())
    return float(np.mean(ratios)) if ratios else None


def run_study(
    magnitudes: Sequence[float],
    out: Path | None,
    primitives: Sequence[str] = PRIMITIVE_NAMES,
    params: RobotParams | None = None,
    settle: SettleOptions | None = None,
    n_segments: Sequence[int] = N_SEGMENTS,
    verbose: bool = True,
) -> tuple[list[SteadyShape], list[RodFit], pd.DataFrame, pd.DataFrame, list[str]]:
    """Simulate (or load) the steady states, fit them; returns (shapes, fits, per-primitive
    table, per-group table, descriptions of diverged runs)."""
    params = study_params() if params is None else params
    settle = STUDY_SETTLE if settle is None else settle
    shapes: list[SteadyShape] = []
    failed: list[str] = []
    for prim in primitives:
        for m in magnitudes:
            try:
                shapes.append(load_or_simulate(params, prim, float(m), settle, out, verbose=verbose))
            except SimulationDiverged as exc:  # reported, not fitted
                print(f"WARNING: {prim} m={m:g} diverged and is left out: {exc}", file=sys.stderr)
                failed.append(f"{prim} m={m:g}: {exc}")
    if not shapes:
        raise RuntimeError("no steady state to fit: every simulation diverged")
    unsettled = [f"{s.primitive}@{s.magnitude:g}" for s in shapes if not s.converged]
    if unsettled and verbose:
        print(f"WARNING: not settled: {', '.join(unsettled)}", file=sys.stderr)
    fits = fit_shapes(params, shapes, n_segments)
    per_primitive = metrics_table(fits)
    groups = {k: v for k, v in GROUPS.items() if any(p in primitives for p in v)}
    per_group = metrics_table(fits, groups)
    return shapes, fits, per_primitive, per_group, failed
