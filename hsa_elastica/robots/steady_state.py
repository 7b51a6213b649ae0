"""Steady states of an HSA robot: run from rest to given motor angles and stop once settled.

The robot (``robot.build_robot``) starts straight and at rest; each motor follows a ramp to its
target angle (``SimulationParams.ramp_time`` / ``ramp_shape`` unless ``ramp`` is given).  The
simulation advances in chunks of ``check_interval`` seconds with the fused loop
(``fast.FastRobot.run``, default) or the per-rod operators (``Robot.run``, i.e.
``simulation.run``; ``fast=False``); both give the same trajectory to round-off and keep the
divergence check.  On the implicit integrator the checks run inside its compiled loop
(:mod:`hsa_elastica.robots.settling_watch`: the same steps, tests and recordings bit for bit,
without a return to Python per check).  After every chunk that ends at or after the end of the ramp, the
*settling test* looks at

* every rod node speed ``|v|`` [m/s] and the platform speed ``|v_platform|`` [m/s]: all must be
  below ``tol_velocity``;
* the platform angular speed ``|omega_platform|`` [rad/s]: below ``tol_omega``;
* the residual force per unit mass that the velocity damping would be balancing if the robot
  were creeping, ``|v| (exp(c dt) - 1) / dt ~ c |v|`` [m/s^2]: below ``tol_residual`` (so a
  heavily damped robot that is slow but not yet at its equilibrium is not converged);
* on the compiled engines, the static residual of the pose (largest net force/couple with the
  velocities set to zero): below ``TOL_STATIC_RESIDUAL`` = 1e-3 N.

The robot counts as *converged* once the speed and creep bounds have held at every check for
``window`` seconds of simulated time in a row (a single slow instant at a turning point of an
oscillation does not pass) and the static residual is below its bound at the check that
completes the window; a residual above it starts the window again.  The run stops there (or at
``max_time``, then ``converged = False``).  A run that goes on after it settled
(``stop_when_settled=False``) tests the residual again once per window and at its last check.
The residual costs a force evaluation, about a third of an implicit step, and a robot whose
speeds stay below the bounds for a whole window moves too little for its force balance to
change between two tests (an unbalanced force of 1e-3 N takes a rod node of the paper robot,
0.74 g, or its 15 g platform past the default speed bound of 1e-4 m/s within 0.1 ms or 1.5 ms):
tested at every check, it was a quarter of a settled implicit run's loop.  With the default
damping (20 1/s) velocities decay like ``exp(-20 t)``, so a ramped run typically settles a few
tenths of a second after the ramp.

A settled pose is then tested for stability with the static solver's eigenvalues
(:func:`~hsa_elastica.robots.static_cache.pose_stability`, a Jacobian and a few eigenvalues at
the settled state): an unstable equilibrium (a divergence/buckling mode, e.g. an exactly
symmetric twist pose the dynamics never leave because round-off does not break the symmetry)
is reported with ``converged = False`` and ``stable = False``.  A run stops, not converged, as
soon as a rod has lost a whole turn of twist against its motor
(:func:`~hsa_elastica.robots.settling.lost_twist`).

The settling test does not establish that the equilibrium stays stable under an arbitrarily
long hold against a growing oscillation (flutter, which the static eigenvalues do not see):
with the paper's one-way coupling at damping 10 1/s the elongation primitive settles at 1.06 s on the same pose as at 50 1/s
(platform at 132.6885 mm), but held on, an oscillation grows from round-off (e-folding time
~0.1 s from ~2.6 s) and diverges at 4.5 s; no settling window of a practical length sees it.

The state reported is the one at the stopping time (not the last recorded sample); the same
state is appended to the diagnostics if the recorders did not sample it.

The engines
-----------
``fast=True`` (default) steps the robot with the compiled engine ``simulation.integrator``
selects (``"explicit"``: the fused loop :class:`hsa_elastica.robots.compiled.FastRobot`, same
trajectory as the per-rod operators to round-off, about 4x faster; ``"implicit"``:
:class:`hsa_elastica.robots.compiled.ImplicitRobot`); ``fast=False`` the reference per-rod
operators (``Robot.run``).  A simulator the fused loop cannot compile raises
``fast.FastPathUnsupported``.

The creep bound
---------------
``tol_residual`` [m/s^2] bounds the unbalanced force per unit mass that the velocity damping
would be balancing if the robot were creeping: at a quasi-static state the damper
``v *= exp(-c dt)`` removes ``v (exp(c dt) - 1) / dt ~ c v`` per step, which must equal the
residual force / mass.  A heavily damped robot that has not reached its equilibrium moves
slowly but is *not* in equilibrium; requiring ``|v| (exp(c dt) - 1) / dt < tol_residual`` for
every node and the platform (and the same with ``rotational_damping`` for the platform angular
speed, bound ``tol_residual / tol_velocity * tol_omega``) rules it out.  The default 5e-3
m/s^2 equals ``tol_velocity`` times the default damping 50 1/s, so at the default damping the
two tests agree.  On the fused path the force balance itself is checked too
(:func:`equilibrium_residual_ok`, static residual below :data:`TOL_STATIC_RESIDUAL`).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.io.columns import JSON_KEYS as _COLUMNS_JSON_KEYS, JsonObject
from hsa_elastica.params import (
    ParameterError,
    RobotParams,
    check_motor_angles,
    warn_mass_without_gravity,
)
from hsa_elastica.robots.builders import build_robot
from hsa_elastica.robots.settling import (
    DEFAULT_SETTLE,
    SettleOptions,
    build_and_settle,
    divergence_summary,
    raise_divergence,
    settle_span,
)
from hsa_elastica.robots.settling import relax as relax  # re-exported: the settling loop
from hsa_elastica.robots.settling_checks import (  # re-exported: the settling test and its outcome
    TOL_STATIC_RESIDUAL as TOL_STATIC_RESIDUAL,
    Relaxation as Relaxation,
    equilibrium_residual_ok as equilibrium_residual_ok,
    settling_state as settling_state,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

log = logging.getLogger(__name__)

__all__ = [
    "SteadyStateResult",
    "solve_steady_state",
    "settling_state",
    "JSON_KEYS",
    "marker_position",
    "relax",
    "Relaxation",
]

#: Keys of the ``steady-state --json`` object, in order: the names, units and frames of the one
#: output schema (:mod:`hsa_elastica.io.columns`, docs/outputs.md).
JSON_KEYS = _COLUMNS_JSON_KEYS


@dataclass
class SteadyStateResult:
    """Outcome of :func:`solve_steady_state` (SI units, frame ``robot_base``; names, units and
    frames of the output schema, :mod:`hsa_elastica.io.columns`).

    Attributes
    ----------
    converged : bool
        the settling test held for the whole window before ``max_time``.
    sim_time_s, wall_time_s : float
        simulated time at the stop [s] and wall-clock time of the run [s] (a dynamic run: of
        its simulation loop -- the steps, settling checks and recordings; a static solve: of
        the solve).
    setup_wall_time_s : float
        wall-clock time before the simulation loop of a dynamic run [s]: building the robot,
        compiling its model, the engine's set-up and loading its kernels from numba's cache
        (nan for a static solve).  :attr:`real_time_factor` = ``sim_time_s / wall_time_s``.
    motor_angles_rad : ndarray (n_rods,)
        target motor angles [rad] about each rod's +z.
    platform_position_m : ndarray (3,)
        platform centre of mass [m].
    platform_quaternion_xyzw : ndarray (4,)
        body -> robot_base rotation of the platform, scalar last, w >= 0.
    rod_tip_positions_m : ndarray (n_rods, 3)
        last node of each rod [m].
    max_node_speed_m_s : float
        largest rod node / platform speed at the stop [m/s].
    max_platform_omega_rad_s : float
        platform angular speed at the stop [rad/s].
    settle_time_s : float
        simulated time at which the final settling window started [s] (nan if none).
    n_steps : int
        number of time steps taken.
    params : RobotParams
        the parameters of the run.
    diagnostics : pandas.DataFrame or None
        the recorded DataFrame (None when ``record=False``).
    diverged : bool
        the run stopped on a ``SimulationFailed``: a blow-up (``SimulationDiverged``), a step
        the implicit integrator refused or a failed force law (then ``converged`` is False and
        the pose is the last one checked before the failure was found).
    divergence : dict or None
        ``{"time_s", "last_good_time_s", "system", "reason", "message"}`` of the failure
        (None unless ``diverged``).
    method : str
        ``"dynamic"`` (relaxation, this function) or ``"static"`` (Newton on the static
        equations, :func:`hsa_elastica.robots.statics_api.solve_static`).
    iterations : int
        Newton iterations of a static solve (0 for a dynamic one).
    stable : bool or None
        the static solution is stable (None: not tested); a dynamic result that settled on an
        unstable equilibrium has ``stable = False`` and ``converged = False``, else None.
    state : object
        the solver's full state of a static solve (warm start of the next one).
    cpu_time_s : float
        CPU time of this process spent on a static solve [s] (nan for a dynamic one); on a
        shared machine it is the one-core cost, unlike ``wall_time_s``.
    platform_marker_position_m : (3,) array
        the platform's tracked point (``params.platform.marker_offset`` in the platform frame)
        in the base frame [m]; computed from the pose when not given (:func:`marker_position`).
    symmetry : BrokenSymmetry or None
        the symmetries of the robot that map the motor angles to themselves and those the pose
        breaks (:func:`hsa_elastica.robots.symmetry.broken_symmetry`; set by the robot's
        solvers, :meth:`check_symmetry`); None: not tested (a stack's segments, a pose that is
        not finite).  Read through :attr:`symmetry_broken` and :attr:`symmetry_branch_m`.
    """

    converged: bool
    sim_time_s: float
    wall_time_s: float
    motor_angles_rad: NDArray[np.float64]
    platform_position_m: NDArray[np.float64]
    platform_quaternion_xyzw: NDArray[np.float64]
    rod_tip_positions_m: NDArray[np.float64]
    max_node_speed_m_s: float
    max_platform_omega_rad_s: float
    settle_time_s: float
    n_steps: int
    params: RobotParams
    diagnostics: "pd.DataFrame | None" = field(default=None, repr=False)
    diverged: bool = False
    divergence: dict[str, Any] | None = None
    method: str = "dynamic"
    iterations: int = 0
    stable: bool | None = None
    state: Any = field(default=None, repr=False)
    cpu_time_s: float = float("nan")
    platform_marker_position_m: NDArray[np.float64] | None = None
    symmetry: Any = field(default=None, repr=False)
    setup_wall_time_s: float = float("nan")

    def __post_init__(self) -> None:
        if self.platform_marker_position_m is None:
            self.platform_marker_position_m = marker_position(
                self.params, self.platform_position_m, self.platform_quaternion_xyzw
            )

    @property
    def real_time_factor(self) -> float | None:
        """Simulated time per wall-clock time of the simulation loop, ``sim_time_s /
        wall_time_s`` (None: a static solve, or no time measured)."""
        return real_time_factor(self.method, self.sim_time_s, self.wall_time_s)

    @property
    def platform_rotation(self) -> NDArray[np.float64]:
        """Body -> lab rotation matrix of the platform (columns = platform axes in lab)."""
        from hsa_elastica.io.render import quaternion_to_matrix  # pyvista is only imported to draw

        return quaternion_to_matrix(self.platform_quaternion_xyzw)

    @property
    def platform_tilt_rad(self) -> float:
        """Angle between the platform normal and lab +z [rad]."""
        return float(math.acos(max(-1.0, min(1.0, self.platform_rotation[2, 2]))))

    @property
    def platform_twist_rad(self) -> float:
        """Rotation of the platform about lab +z [rad] (yaw of its x axis, in (-pi, pi])."""
        r = self.platform_rotation
        return float(math.atan2(r[1, 0], r[0, 0]))

    def check_symmetry(self) -> None:
        """Set :attr:`symmetry` from the pose (a robot standing on its base; not a stack's
        segment, whose symmetries depend on the segments around it)."""
        from hsa_elastica.robots.symmetry import broken_symmetry

        pose = (self.platform_position_m, self.platform_quaternion_xyzw, self.rod_tip_positions_m)
        finite = all(np.all(np.isfinite(np.asarray(a, dtype=np.float64))) for a in pose)
        self.symmetry = broken_symmetry(self.params, self.motor_angles_rad, *pose) if finite else None

    @property
    def symmetry_broken(self) -> bool | None:
        """The motor angles are symmetric under a symmetry of the robot (the half turn about z,
        a mirror of the rod layout: :mod:`hsa_elastica.robots.symmetry`) that the pose breaks,
        so the pose's image under it is an equally valid equilibrium (a buckled branch that
        round-off chose, docs/stability.md); None: not tested."""
        return None if self.symmetry is None else self.symmetry.is_broken

    @property
    def symmetry_branch_m(self) -> NDArray[np.float64] | None:
        """Which branch a pose with :attr:`symmetry_broken` is: the platform centre minus the
        mean of its images under the command's symmetries [m] (robot base frame); the mirror
        branch has the opposite sign.  Zeros when no symmetry is broken, None: not tested."""
        return None if self.symmetry is None else self.symmetry.offset_m.copy()

    def to_json_dict(self) -> dict[str, Any]:
        """The ``steady-state --json`` object: exactly :data:`JSON_KEYS`, plain JSON types (a
        ``dict``; the old key ``actuation_angles_rad`` still reads, with a warning)."""
        return JsonObject({
            "motor_angles_rad": [float(a) for a in self.motor_angles_rad],
            "platform_position_m": [float(a) for a in self.platform_position_m],
            "platform_marker_position_m": [
                float(a) for a in np.asarray(self.platform_marker_position_m)
            ],
            "platform_quaternion_xyzw": [float(a) for a in self.platform_quaternion_xyzw],
            "rod_tip_positions_m": [[float(a) for a in row] for row in self.rod_tip_positions_m],
            "converged": bool(self.converged),
            "sim_time_s": float(self.sim_time_s),
            "wall_time_s": float(self.wall_time_s),
            "method": str(self.method),
            "symmetry_broken": self.symmetry_broken,
            "symmetry_branch_m": (None if self.symmetry_branch_m is None
                                  else [float(a) for a in self.symmetry_branch_m]),
        })

    def summary(self) -> dict[str, Any]:
        """Run-directory summary: the JSON keys plus diagnostics of the settling test."""
        out = self.to_json_dict()
        out.update(
            max_node_speed_m_s=float(self.max_node_speed_m_s),
            max_platform_omega_rad_s=float(self.max_platform_omega_rad_s),
            settle_time_s=None if math.isnan(self.settle_time_s) else float(self.settle_time_s),
            platform_tilt_rad=self.platform_tilt_rad,
            platform_twist_rad=self.platform_twist_rad,
            n_steps=int(self.n_steps),
            diverged=bool(self.diverged),
            iterations=int(self.iterations),
            stable=self.stable,
            **timing_keys(self.method, self.sim_time_s, self.wall_time_s, self.setup_wall_time_s),
        )
        if self.divergence is not None:
            out["divergence"] = dict(self.divergence)
        return out


def real_time_factor(method: str, sim_time_s: float, wall_time_s: float) -> float | None:
    """``sim_time_s / wall_time_s`` of a dynamic run (None: a static solve or no wall time)."""
    if method != "dynamic" or not wall_time_s > 0.0:
        return None
    return float(sim_time_s) / float(wall_time_s)


def timing_keys(method: str, sim_time_s: float, wall_time_s: float,
                setup_wall_time_s: float) -> dict[str, Any]:
    """The summary's ``setup_wall_time_s``, ``real_time_factor`` and ``command_wall_time_s``
    (null here: the command line fills it in when it writes the run)."""
    setup = float(setup_wall_time_s)
    return {"setup_wall_time_s": None if math.isnan(setup) else setup,
            "real_time_factor": real_time_factor(method, sim_time_s, wall_time_s),
            "command_wall_time_s": None}


def marker_position(
    params: RobotParams,
    position: NDArray[np.float64] | Sequence[float],
    quaternion_xyzw: NDArray[np.float64] | Sequence[float],
) -> NDArray[np.float64]:
    """Base-frame position [m] of the platform's tracked point: ``p + R(q) marker_offset`` with
    the platform centre ``p`` [m], its body -> robot_base quaternion ``q`` (x, y, z, w) and
    ``params.platform.marker_offset`` [m] in the platform frame."""
    from hsa_elastica.io.render_data import quaternion_to_matrix

    rot = quaternion_to_matrix(np.asarray(quaternion_xyzw, dtype=np.float64))
    offset = np.array(params.platform.marker_offset, dtype=np.float64)
    return np.asarray(position, dtype=np.float64) + rot @ offset


def solve_steady_state(
    params: RobotParams,
    motor_angles: Sequence[float] | NDArray[np.float64],
    *,
    settle: SettleOptions = DEFAULT_SETTLE,
    ramp: float | Callable[[float], float] | None = None,
    stop_when_settled: bool = True,
    record: bool = True,
    progress: bool = False,
    fast: bool = True,
) -> SteadyStateResult:
    """Run the robot from rest to ``motor_angles`` and stop once it has settled.

    Parameters
    ----------
    motor_angles : (n_rods,) [rad]
        Target motor angles (rotation of each rod base about its own +z, right-hand rule).
    settle : SettleOptions
        The settling test and its limits (:class:`~hsa_elastica.robots.settling.SettleOptions`):
        ``tol_velocity`` on every rod node speed and the platform speed (default 1e-4 m/s =
        0.1 mm/s), ``tol_omega`` on the platform angular speed (default 1e-3 rad/s),
        ``tol_residual`` the creep bound (module doc, "The creep bound"; default 5e-3
        m/s^2), ``window`` the simulated time the bounds must hold for, at every check
        (default 0.05 s), ``check_interval`` between two checks (default 2 ms; rounded to
        whole steps), ``max_time`` where the run gives up (``converged = False``; default
        ``ramp + 3 s``), ``max_speed`` the runaway guard (default 100 m/s, about the axial
        wave speed of the paper's rods: a faster node or platform raises
        ``SimulationDiverged`` while the state is still finite).
        :func:`~hsa_elastica.robots.steady_state_api.steady_state` also takes these as
        keywords.
    ramp : None, float [s] or callable
        Passed to :func:`robot.build_robot` (None: ``params.simulation.ramp_time``).  The
        settling test starts at the end of the ramp (for a callable: at t = 0).
    stop_when_settled : bool
        False: run to ``max_time`` (a fixed duration), still reporting if the test held over the last ``window``.
    record : bool
        Record diagnostics (``result.diagnostics``) at ``params.simulation.record_fps``.
    progress : bool
        tqdm bar in simulated seconds on stderr (a terminal only; it appears after 2 s).
    fast : bool
        True (default): the compiled engine ``simulation.integrator`` selects; False: the
        reference per-rod operators (``Robot.run``; module doc, "The engines").

    Raises
    ------
    ParameterError
        before simulating, for an invalid option (naming it and its range; ``max_time`` is at
        most :data:`hsa_elastica.params.MAX_STEPS` steps) or angles, a time step above the
        stability limit or a recording that would not fit in memory; ``SimulationFailed``
        (``SimulationDiverged``: a blow-up; ``ImplicitStepFailed``: a refused implicit step)
        with the partial result (``diverged=True``, diagnostics so far) as ``result``.
    """
    if not isinstance(params, RobotParams):
        raise ParameterError(f"params = {params!r} is invalid: must be a RobotParams")
    span = settle_span(settle, ramp=ramp, ramp_time=params.simulation.ramp_time,
                       dt=params.simulation.dt)
    angles = check_motor_angles(motor_angles, params.n_rods, ndim=1)
    warn_mass_without_gravity(params)
    sp = params.simulation
    robot, relaxed, diagnostics = build_and_settle(
        lambda: build_robot(params, [float(a) for a in angles], ramp=ramp, record=record),
        params, settling_state, settle, span, fast=fast,
        dampings=(sp.damping, sp.rotational_damping), record=record,
        stop_when_settled=stop_when_settled, progress=progress,
    )
    result = _dynamic_result(relaxed, robot, params, diagnostics)
    raise_divergence(relaxed, result)
    if result.converged and not params.environment.objects:  # (no static model with objects)
        _check_stability(result, robot, params)
    return result


def _dynamic_result(relaxed: Relaxation, robot: Any, params: RobotParams,
                    diagnostics: "pd.DataFrame | None") -> SteadyStateResult:
    """The :class:`SteadyStateResult` of a dynamic run: the relaxation's stopping state (the
    pose at the last good check if it failed), times, settling data and the symmetries the
    pose breaks (:meth:`SteadyStateResult.check_symmetry`)."""
    state, divergence = relaxed.state, relaxed.divergence
    result = SteadyStateResult(
        converged=bool(relaxed.converged),
        sim_time_s=float(relaxed.t) if divergence is None else divergence.time,
        wall_time_s=float(relaxed.wall_time_s),
        setup_wall_time_s=float(relaxed.setup_wall_time_s),
        motor_angles_rad=np.array(robot.motor_angles, dtype=np.float64),
        platform_position_m=state["platform_position_m"],
        platform_quaternion_xyzw=state["platform_quaternion_xyzw"],
        rod_tip_positions_m=state["rod_tip_positions_m"],
        max_node_speed_m_s=float(state["max_speed"]),
        max_platform_omega_rad_s=float(state["platform_omega"]),
        settle_time_s=math.nan if relaxed.settled_since is None else float(relaxed.settled_since),
        n_steps=relaxed.n_steps,
        params=params,
        diagnostics=diagnostics,
        diverged=divergence is not None,
        divergence=divergence_summary(divergence),
    )
    result.check_symmetry()
    return result


def _check_stability(result: SteadyStateResult, robot: Any, params: RobotParams) -> None:
    """A settled pose that is an unstable equilibrium is not converged (``stable = False``).

    Near a buckling point the unstable mode grows from round-off so slowly (e-folding times of
    seconds) that the robot stays on the symmetric pose for the whole settling window, while the
    static solver, which sees the negative eigenvalue, moves to the buckled branch: the paper
    robot's twist primitive at 1.18 rad per rod ended 9.4 mm apart.  The eigenvalues are those
    of :func:`~hsa_elastica.robots.static_cache.pose_stability` at the settled state."""
    from hsa_elastica.engines.compile import CompiledModel, compile_simulator
    from hsa_elastica.robots.static_cache import pose_stability

    model = getattr(robot, "model", None)
    if not isinstance(model, CompiledModel):
        model = compile_simulator(robot.simulator)
    lam = pose_stability(params, model, result.motor_angles_rad)
    if lam < 0.0:
        result.converged = False
        result.stable = False
        log.warning(
            "the robot settled at motor angles %s on an unstable equilibrium (smallest "
            "stability eigenvalue %.3g 1/s^2): not converged; a buckling mode grows from "
            "round-off, slower than the settling window",
            np.array2string(result.motor_angles_rad, precision=4), lam,
        )


def __getattr__(name: str) -> Any:
    """``robot_state``: the old name of :func:`settling_state` (DeprecationWarning; goes in the
    next release)."""
    if name == "robot_state":
        import warnings

        from hsa_elastica.params.base import HSADeprecationWarning

        warnings.warn("hsa_elastica.robots.steady_state.robot_state is now settling_state "
                      "(robot_state is the step API's state, engines.control.robot_state); the "
                      "old name goes in the next release", HSADeprecationWarning, stacklevel=2)
        return settling_state
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
