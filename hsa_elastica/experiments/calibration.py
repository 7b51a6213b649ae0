"""Calibration of robot parameters against measured steady states (motion capture).

Data: CSV files with one row per settled pose (the format of the shipped
``hsa_elastica/data/*_steady_state.csv``): measured motor angles ``motor_angle_rad_j`` [rad]
in, the pose of the platform's marker body ``platform_{x,y,z}_m`` [m] and
``platform_q{x,y,z,w}`` (frame robot_base, scalar last) out; or the same quantities under the
output schema's names (``motor_angles_rad_j``, ``platform_marker_position_m_{x,y,z}``,
``platform_quaternion_xyzw_{x,y,z,w}``: a ``steady-state --angles-csv`` batch CSV).  See
:func:`load_runs`.

Model: for each pose the steady state of the robot (by default the static solver
:func:`hsa_elastica.robots.statics_api.solve_static_batch`, warm-started along each run; any
``steady_state_fn(params, angles)``, e.g. :func:`relaxation_steady_state_fn`) gives the simulated marker point
``platform_marker_position_m`` (``PlatformParams.marker_offset`` in the platform frame) and the
platform orientation.  An optional ``mocap.yaw`` [rad] rotates the simulated pose about the base
frame's +z into the motion-capture frame.

Residuals per pose, weighted (``POSITION_WEIGHT = 1 mm``, ``ANGLE_WEIGHT = 1 deg``)::

    r_pos = (p_sim - p_meas) / 1 mm                         (3 values)
    r_rot = rotvec(R_meas^T R_sim) / 1 deg                  (3 values, the orientation error)

minimised by ``scipy.optimize.least_squares`` (trust-region reflective, bounds) over the free
parameters, named by dotted paths into :class:`~hsa_elastica.params.RobotParams`
(``rod.C_eps``, ``rod.twist_rigidity``, ``rod.cap_length_top``, ``platform.marker_offset.z``,
``joint.k_tau`` ...) plus ``mocap.yaw``.  The optimiser works on scaled variables
``u = 1 + (value - start) / scale`` (``scale = |start|``; for a zero start a tenth of the
bounds' width, or 1e-3 of the SI unit for infinite bounds; 0.01 rad for ``mocap.yaw``), so
that the relative finite-difference step ``diff_step`` is a step of ``diff_step * scale`` for
every parameter.

Uncertainties: ``cov = s^2 (J^T J)^-1`` with ``s^2 = sum(r^2) / (m - n)`` (``m`` residuals,
``n`` parameters), ``J`` the Jacobian of the weighted residuals at the optimum; the reported
standard deviation is ``sqrt(diag(cov))``.  This assumes independent residuals of equal
variance; neighbouring poses of a sweep are correlated, so read them as lower bounds.
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.params import ParameterError, RobotParams

from hsa_elastica.experiments.mocap import (  # noqa: F401  (re-exported)
    MEASURED_COLUMNS,
    QUATERNION_NORM_RANGE,
    SCHEMA_MEASURED_COLUMNS,
    CalibrationError,
    MocapRun,
    load_mocap_run,
    load_run,
    load_runs,
)
from hsa_elastica.experiments.parameter_names import (  # noqa: F401  (re-exported)
    MOCAP_NAMES,
    check_names,
    fittable_names,
    get_value,
    with_values,
)
__all__ = [
    "CalibrationError",
    "MocapRun",
    "CalibrationResult",
    "POSITION_WEIGHT",
    "ANGLE_WEIGHT",
    "MEASURED_COLUMNS",
    "SCHEMA_MEASURED_COLUMNS",
    "load_run",
    "load_mocap_run",
    "load_runs",
    "get_value",
    "with_values",
    "default_steady_state_fn",
    "relaxation_steady_state_fn",
    "predict",
    "pose_errors",
    "run_rms",
    "check_names",
    "fittable_names",
    "check_bounds",
    "residuals",
    "calibrate",
]

POSITION_WEIGHT = 1e-3
"""Residual weight of a position error [m]: 1 mm counts as 1."""
ANGLE_WEIGHT = math.radians(1.0)
"""Residual weight of an orientation error [rad]: 1 deg counts as 1."""


SteadyStateFn = Callable[[RobotParams, NDArray[np.float64]], Any]


# --------------------------------------------------------------------------------------------
# model
# --------------------------------------------------------------------------------------------
def default_steady_state_fn() -> SteadyStateFn:
    """The static solver :func:`hsa_elastica.robots.statics_api.solve_static` (Newton on the
    static equations; it falls back to dynamic relaxation itself when Newton fails)."""
    from hsa_elastica.robots.statics_api import solve_static

    return solve_static  # type: ignore[return-value]


def relaxation_steady_state_fn() -> SteadyStateFn:
    """Dynamic relaxation (:func:`hsa_elastica.robots.steady_state.solve_steady_state`,
    ``record=False``); a run that diverges is repeated with half the time step and a ramp of
    at least 1 s."""
    from hsa_elastica.engines.timeloop import SimulationDiverged
    from hsa_elastica.robots import steady_state as ss

    def relax(params: RobotParams, angles: NDArray[np.float64]) -> Any:
        try:
            return ss.solve_steady_state(params, angles, record=False)
        except SimulationDiverged:
            # a fast ramp into a near-unstable pose can blow up; the steady state does not
            # depend on the path, so retry gently: half the step, a 1 s ramp
            sp = params.simulation
            gentle = params.replace(
                simulation=sp.replace(dt=0.5 * sp.dt, ramp_time=max(1.0, sp.ramp_time))
            )
            res = ss.solve_steady_state(gentle, angles, record=False)
            res.params = params
            return res

    return relax


def _rotz(yaw: float) -> NDArray[np.float64]:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def predict(
    params: RobotParams,
    run: MocapRun,
    steady_state_fn: SteadyStateFn | None = None,
    *,
    yaw: float = 0.0,
    mirror_branch: str = "dynamic",
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Simulated marker positions (N, 3) [m] and platform rotation matrices (N, 3, 3) of the
    poses of ``run``, rotated by ``yaw`` [rad] about +z into the motion-capture frame.

    ``steady_state_fn(params, angles) -> result`` (any object with
    ``platform_marker_position_m`` and ``platform_quaternion_xyzw``); None: the static solver
    in a warm-started batch (``solve_static_batch`` with ``mirror_branch``)."""
    if steady_state_fn is None:  # the static solver, each pose warm-started from the previous
        from hsa_elastica.robots.statics_api import solve_static_batch

        results = list(solve_static_batch(params, run.motor_angles, mirror_branch=mirror_branch))
    else:
        results = [steady_state_fn(params, np.asarray(a, dtype=np.float64)) for a in run.motor_angles]
    return _poses(results, yaw)


def _poses(results: Sequence[Any], yaw: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Marker positions (N, 3) and platform rotations (N, 3, 3) of steady-state results,
    rotated by ``yaw`` about +z."""
    from hsa_elastica.io.render import quaternion_to_matrix

    rz = _rotz(yaw)
    pos = np.empty((len(results), 3))
    rot = np.empty((len(results), 3, 3))
    for k, res in enumerate(results):
        pos[k] = rz @ np.asarray(res.platform_marker_position_m, dtype=np.float64)
        rot[k] = rz @ quaternion_to_matrix(np.asarray(res.platform_quaternion_xyzw))
    return pos, rot


def _weighted(run: MocapRun, pos: NDArray[np.float64], rot: NDArray[np.float64]) -> NDArray[np.float64]:
    dp, dr = pose_errors(run, pos, rot)
    return np.hstack([dp / POSITION_WEIGHT, dr / ANGLE_WEIGHT]).ravel()


def pose_errors(
    run: MocapRun, pos: NDArray[np.float64], rot: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Position error (N, 3) [m] and orientation error rotation vectors (N, 3) [rad] of the
    simulated poses against the measured ones (``rotvec(R_meas^T R_sim)``)."""
    from scipy.spatial.transform import Rotation

    meas = Rotation.from_quat(run.quaternion)
    err = (meas.inv() * Rotation.from_matrix(rot)).as_rotvec()
    return pos - run.position, err


def residuals(
    params: RobotParams,
    runs: Sequence[MocapRun],
    steady_state_fn: SteadyStateFn | None = None,
    *,
    yaw: float = 0.0,
) -> NDArray[np.float64]:
    """Weighted residual vector (6 per pose: position / 1 mm, orientation / 1 deg)."""
    return np.concatenate([_weighted(run, *predict(params, run, steady_state_fn, yaw=yaw))
                           for run in runs])


def run_rms(r: NDArray[np.float64], runs: Sequence[MocapRun]) -> dict[str, tuple[float, float]]:
    """Per run: (position RMS [mm], orientation RMS [deg]) of the weighted residuals ``r``
    (RMS of the error vector norms)."""
    out: dict[str, tuple[float, float]] = {}
    i = 0
    for run in runs:
        block = r[i:i + 6 * len(run)].reshape(len(run), 6)
        i += 6 * len(run)
        pos = float(np.sqrt(np.mean(np.sum(block[:, :3] ** 2, axis=1))))
        ang = float(np.sqrt(np.mean(np.sum(block[:, 3:] ** 2, axis=1))))
        out[run.name] = (pos, ang)
    return out


# --------------------------------------------------------------------------------------------
# least squares
# --------------------------------------------------------------------------------------------
@dataclass
class CalibrationResult:
    """Outcome of :func:`calibrate` (SI values; RMS in mm and deg).  Attribute names are the
    ``calibrate --json`` keys of the output schema (:mod:`hsa_elastica.io.columns`) where the
    quantity is the same; ``rms`` and ``rms_start`` are the deprecated names of
    ``rms_mm_deg`` and ``rms_start_mm_deg`` (removed in the next release)."""

    params: RobotParams  # fitted robot (mocap.* not included)
    names: list[str]
    start: NDArray[np.float64]
    values: NDArray[np.float64]
    std: NDArray[np.float64]  # sqrt(diag(cov)), same units as values
    correlation: NDArray[np.float64]  # (n, n)
    rms_start_mm_deg: dict[str, tuple[float, float]]  # run -> (mm, deg)
    rms_mm_deg: dict[str, tuple[float, float]]
    cost: float  # 0.5 sum(r^2) at the optimum
    n_residuals: int
    n_evaluations: int
    wall_time_s: float
    success: bool
    message: str
    bounds: list[tuple[float, float]] = field(default_factory=list)

    @property
    def rms(self) -> dict[str, tuple[float, float]]:
        """Deprecated name of :attr:`rms_mm_deg`."""
        _deprecated("CalibrationResult.rms", "rms_mm_deg")
        return self.rms_mm_deg

    @property
    def rms_start(self) -> dict[str, tuple[float, float]]:
        """Deprecated name of :attr:`rms_start_mm_deg`."""
        _deprecated("CalibrationResult.rms_start", "rms_start_mm_deg")
        return self.rms_start_mm_deg

    @property
    def fitted(self) -> dict[str, float]:
        """``{name: value}`` of the free parameters (incl. ``mocap.yaw``)."""
        return dict(zip(self.names, (float(v) for v in self.values)))

    def report(self) -> str:
        """Human-readable summary: parameters with 1-sigma, per-run RMS before/after."""
        lines = ["parameter                      start            fitted         1-sigma"]
        for n, a, b, s in zip(self.names, self.start, self.values, self.std):
            lines.append(f"{n:28s} {a:14.6g} {b:14.6g} {s:14.3g}")
        lines.append("run                                       RMS start (mm, deg)   RMS fitted (mm, deg)")
        for run, (pm, pd) in self.rms_mm_deg.items():
            sm, sd = self.rms_start_mm_deg[run]
            lines.append(f"{run:42s} {sm:8.2f} {sd:8.2f}        {pm:8.2f} {pd:8.2f}")
        lines.append(
            f"{self.n_evaluations} model evaluations, {self.wall_time_s:.0f} s, "
            f"{'converged' if self.success else 'NOT converged'}: {self.message}"
        )
        return "\n".join(lines)

    def to_json_dict(self) -> dict[str, Any]:
        """The result as plain JSON types; a non-finite number (an unbounded side of
        ``bounds``, an undetermined ``std`` or correlation) is ``null``: JSON has no inf/nan."""
        return _json_safe({
            "parameters": {
                n: {"start": float(a), "value": float(b), "std": float(s),
                    "bounds": [float(lo), float(hi)]}
                for n, a, b, s, (lo, hi) in zip(
                    self.names, self.start, self.values, self.std, self.bounds
                )
            },
            "correlation": self.correlation.tolist(),
            "rms_start_mm_deg": {k: list(v) for k, v in self.rms_start_mm_deg.items()},
            "rms_mm_deg": {k: list(v) for k, v in self.rms_mm_deg.items()},
            "cost": self.cost,
            "n_residuals": self.n_residuals,
            "n_evaluations": self.n_evaluations,
            "wall_time_s": self.wall_time_s,
            "success": self.success,
            "message": self.message,
        })


def _deprecated(old: str, new: str) -> None:
    import warnings

    from hsa_elastica.params.base import HSADeprecationWarning

    warnings.warn(f"{old} is deprecated: use .{new} (the calibrate --json key); the old name "
                  "goes in the next release", HSADeprecationWarning, stacklevel=3)


class _StaticModel:
    """Weighted residuals of the scaled variables ``u`` (``x = x0 + (u - 1) scale``) and their
    finite-difference Jacobian (see :func:`calibrate`)."""

    def __init__(self, params: RobotParams, runs: Sequence[MocapRun], names: list[str],
                 x0: NDArray[np.float64], scale: NDArray[np.float64], fn: SteadyStateFn | None,
                 diff_step: float, verbose: bool, mirror_branch: str = "dynamic") -> None:
        self.params, self.runs, self.names = params, list(runs), names
        self.x0, self.scale, self.fn = x0, scale, fn
        self.diff_step, self.verbose = diff_step, verbose
        self.mirror_branch = mirror_branch
        self.n_eval = 0
        self.n_jac = 0
        self.last: list[Any] | None = None
        self.angles = np.vstack([r.motor_angles for r in self.runs])
        self.memo: dict[bytes, tuple[NDArray[np.float64], list[Any] | None]] = {}

    def unpack(self, u: NDArray[np.float64]) -> tuple[RobotParams, float]:
        x = self.x0 + (u - 1.0) * self.scale
        vals = dict(zip(self.names, (float(v) for v in x)))
        return with_values(self.params, vals), vals.get("mocap.yaw", 0.0)

    def _residual_of(self, results: Sequence[Any], yaw: float) -> NDArray[np.float64]:
        pos, rot = _poses(results, yaw)
        out, i = [], 0
        for run in self.runs:
            out.append(_weighted(run, pos[i:i + len(run)], rot[i:i + len(run)]))
            i += len(run)
        return np.concatenate(out)

    def fun(self, u: NDArray[np.float64]) -> NDArray[np.float64]:
        key = np.asarray(u, dtype=np.float64).tobytes()
        if key in self.memo:  # least_squares evaluates the start point again
            return self.memo[key][0]
        self.n_eval += 1
        p, yaw = self.unpack(u)
        if self.fn is None:
            from hsa_elastica.robots.statics_api import solve_static_batch

            # each pose from its solution at the previous parameters (the first time: along a
            # nearest-neighbour tour): stays on the branch found before, without asking the
            # dynamics again at every evaluation which mirror branch a buckled pose takes
            results: list[Any] | None = list(
                solve_static_batch(p, self.angles, initial=self.last,
                                   mirror_branch=self.mirror_branch)
            )
            self.last = results
            r = self._residual_of(results, yaw)  # type: ignore[arg-type]
        else:
            results = None
            r = residuals(p, self.runs, self.fn, yaw=yaw)
        while len(self.memo) >= 3:  # keep the accepted point when a trial step is rejected
            self.memo.pop(next(iter(self.memo)))
        self.memo[key] = (r, results)
        if self.verbose:
            x = self.x0 + (u - 1.0) * self.scale
            print(f"  eval {self.n_eval}: cost {0.5 * float(r @ r):.6g} at "
                  + ", ".join(f"{n}={v:.6g}" for n, v in zip(self.names, x)), flush=True)
        return r

    def jac(self, u: NDArray[np.float64], hi: NDArray[np.float64] | None = None
            ) -> NDArray[np.float64]:
        from hsa_elastica.robots.statics_api import linearize, solve_static_batch, solve_static_near

        u = np.asarray(u, dtype=np.float64)
        r0 = self.fun(u)
        self.n_jac += 1
        results = self.memo[u.tobytes()][1]
        assert results is not None
        p0, _ = self.unpack(u)
        usable = [bool(res.method == "static" and res.converged) for res in results]
        lus = [linearize(p0, res) if ok else None for res, ok in zip(results, usable)]
        jac = np.empty((r0.size, u.size))
        for i in range(u.size):
            h = self.diff_step * max(1.0, abs(float(u[i])))
            if hi is not None and u[i] + h > hi[i]:
                h = -h
            ui = u.copy()
            ui[i] += h
            p, yaw = self.unpack(ui)
            near = solve_static_near(p, [r for r, ok in zip(results, usable) if ok],
                                     [lu for lu in lus if lu is not None])
            it = iter(near)
            perturbed: list[Any] = [next(it) if ok else None for ok in usable]
            missing = [k for k, res in enumerate(perturbed) if res is None]
            if missing:  # not converged by chord steps (or no static base): full solves
                full = solve_static_batch(p, self.angles[missing], order="given",
                                          initial=[results[k] for k in missing],
                                          mirror_branch=self.mirror_branch)
                for k, res in zip(missing, full):
                    perturbed[k] = res
            jac[:, i] = (self._residual_of(perturbed, yaw) - r0) / h
        return jac


def _json_safe(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None (recursively)."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _scale(name: str, start: float, bounds: tuple[float, float] = (-math.inf, math.inf)) -> float:
    if name == "mocap.yaw":
        return 0.01
    if start != 0.0:
        return abs(start)
    width = bounds[1] - bounds[0]
    return 0.1 * width if math.isfinite(width) else 1e-3


def _valid(params: RobotParams, name: str, value: float) -> str | None:
    """None if ``params`` with ``name = value`` is a valid robot, else the error message."""
    try:
        with_values(params, {name: value})
    except ParameterError as exc:
        return str(exc)
    return None


def check_bounds(
    params: RobotParams, names: Sequence[str], bounds: dict[str, tuple[float, float]] | None
) -> list[tuple[float, float]]:
    """Bounds of each free parameter: given ones are checked (start inside, robot valid at
    both finite ends); defaults are ``[start/10, 10 start]`` for a positive start,
    ``[10 start, start/10]`` for a negative one, ``(-inf, inf)`` for zero (``[0, inf)`` when
    negative values are invalid) and ``[-pi, pi]`` for ``mocap.yaw``."""
    bounds = dict(bounds or {})
    unknown = [n for n in bounds if n not in names]
    if unknown:
        raise CalibrationError(f"bounds given for parameter(s) not free: {', '.join(unknown)}")
    out = []
    for n in names:
        x0 = get_value(params, n)
        if n in bounds:
            lo, hi = (float(v) for v in bounds[n])
            if not lo < hi or not lo <= x0 <= hi:
                raise CalibrationError(
                    f"bounds of {n}: [{lo:g}, {hi:g}] must satisfy lower < upper and contain the "
                    f"start value {x0:g}"
                )
        elif n == "mocap.yaw":
            lo, hi = -math.pi, math.pi
        elif x0 > 0.0:
            lo, hi = x0 / 10.0, x0 * 10.0
        elif x0 < 0.0:
            lo, hi = x0 * 10.0, x0 / 10.0
        else:
            lo = 0.0 if _valid(params, n, -1e-9) is not None else -math.inf
            hi = math.inf
        for end in (lo, hi):
            if n not in MOCAP_NAMES and math.isfinite(end):
                msg = _valid(params, n, end)
                if msg is not None:
                    raise CalibrationError(f"bound {n} = {end:g} makes the robot invalid: {msg}")
        out.append((lo, hi))
    return out


def calibrate(
    params: RobotParams,
    runs: Sequence[MocapRun],
    free: Sequence[str],
    *,
    bounds: dict[str, tuple[float, float]] | None = None,
    steady_state_fn: SteadyStateFn | None = None,
    start: dict[str, float] | None = None,
    diff_step: float = 1e-3,
    max_nfev: int = 30,
    xtol: float = 1e-4,
    ftol: float = 1e-6,
    fast_jacobian: bool = True,
    mirror_branch: str = "dynamic",
    verbose: bool = False,
) -> CalibrationResult:
    """Least-squares fit of the dotted parameters ``free`` to the measured ``runs``.

    ``start`` overrides start values (e.g. ``{"mocap.yaw": 0.02}``); ``bounds`` as in
    :func:`check_bounds`; ``diff_step`` is the relative finite-difference step of the
    Jacobian; ``max_nfev`` bounds the number of residual evaluations (each simulates every
    pose once; ``max_nfev=1`` takes no step and only reports the residuals and the
    uncertainties at the start).  ``xtol``, ``ftol``: stopping tolerances of
    ``scipy.optimize.least_squares``.

    With the static solver (``steady_state_fn=None``) the Jacobian is by forward differences
    (step ``diff_step`` of the scaled variables, inward at a bound) in which every perturbed
    pose is solved from the same pose at the current parameters by chord iterations with its
    factorised static Jacobian (:func:`~hsa_elastica.robots.statics_api.solve_static_near`):
    the perturbed poses stay on the branch of the current ones and cost a few residual
    evaluations each instead of Newton solves (``fast_jacobian=False``: scipy's own
    ``2-point`` differences of full solves).  ``mirror_branch``: which of two mirror-image
    buckled poses a static solve keeps (:func:`~hsa_elastica.robots.statics_api.solve_static`;
    ``"gravity"`` avoids a dynamic relaxation per buckling pose for a robot whose gravity
    has a lateral component).  Each evaluation starts every pose from its solution at the
    previous parameters, so a pose stays on the branch found first.  Raises :class:`CalibrationError` on bad names or
    bounds.
    """
    from scipy.optimize import least_squares

    names = list(free)
    params, x0 = _start(params, names, start)
    bnds = check_bounds(params, names, bounds)
    scale = np.array([_scale(n, float(v), b) for n, v, b in zip(names, x0, bnds)])
    fn = steady_state_fn
    n_poses = sum(len(r) for r in runs)
    if n_poses == 0:
        raise CalibrationError("no poses to fit")

    if verbose:  # every input is checked: say what is fitted before the first evaluation
        print(f"  fitting {', '.join(names)} to {n_poses} poses (at most {max_nfev} "
              "evaluations)", flush=True)
    model = _StaticModel(params, runs, names, x0, scale, fn, diff_step, verbose, mirror_branch)
    wall0 = _time.perf_counter()
    lo = 1.0 + (np.array([b[0] for b in bnds]) - x0) / scale
    hi = 1.0 + (np.array([b[1] for b in bnds]) - x0) / scale
    u0 = np.ones(len(names))
    r0 = model.fun(u0)
    sol = least_squares(
        model.fun, u0,
        jac=(lambda u: model.jac(u, hi)) if fn is None and fast_jacobian else "2-point",
        bounds=(lo, hi), diff_step=diff_step, max_nfev=max_nfev,
        xtol=xtol, ftol=ftol, x_scale=1.0, method="trf",
    )
    message = str(sol.message) + (f" ({model.n_jac} chord-step Jacobians)" if model.n_jac else "")
    wall = _time.perf_counter() - wall0
    r = np.asarray(sol.fun)
    std, corr = _uncertainties(r, np.asarray(sol.jac) / scale[None, :])
    return CalibrationResult(
        params=model.unpack(np.asarray(sol.x))[0], names=names, start=x0,
        values=x0 + (np.asarray(sol.x) - 1.0) * scale, std=std, correlation=corr,
        rms_start_mm_deg=run_rms(r0, runs), rms_mm_deg=run_rms(r, runs), cost=float(sol.cost),
        n_residuals=r.size, n_evaluations=model.n_eval, wall_time_s=wall,
        success=bool(sol.success), message=message, bounds=bnds,
    )


def _start(params: RobotParams, names: list[str],
           start: dict[str, float] | None) -> tuple[RobotParams, NDArray[np.float64]]:
    """The parameters with the ``start`` values of the robot's own names put in (the mocap
    frame's are not robot parameters) and the start values of the free ``names``, after
    checking every name (:class:`CalibrationError`)."""
    check_names(params, names)
    if start:
        check_names(params, list(start))
        params = with_values(params, {k: v for k, v in start.items() if k not in MOCAP_NAMES})
    x0 = np.array([
        float(start[n]) if start and n in start else get_value(params, n) for n in names
    ])
    return params, x0


def _uncertainties(r: NDArray[np.float64],
                   jac: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Standard deviations and correlation matrix (NaN entries of a zero deviation set to 0)
    of the fitted values from the residuals ``r`` and their Jacobian ``jac`` = d r / d x at
    the solution: covariance ``s^2 (J^T J)^+`` with ``s^2 = r.r / max(m - n, 1)``."""
    m, n = r.size, jac.shape[1]
    s2 = float(r @ r) / max(m - n, 1)
    cov = s2 * np.linalg.pinv(jac.T @ jac)
    std = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.outer(std, std)
    return std, np.nan_to_num(corr)
