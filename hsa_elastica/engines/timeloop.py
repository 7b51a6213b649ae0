"""Time loop with a divergence check that keeps what was recorded.

:func:`run` advances a finalized PyElastica 1.0 simulator with ``timestepper.step(simulator,
time, dt)`` and, every ``check_every`` steps (and after the last step), checks every rod and
rigid body for a blow-up (:func:`find_runaway`): non-finite positions or velocities, a node
(or body) faster than ``max_speed`` [m/s], or a rod whose centreline is longer than
``max_stretch`` times its rest length -- the last two catch an explosion while the state is
still finite (a rod seen at 923 mm, ~8x its length, with finite numbers). A blow-up raises
:class:`SimulationDiverged` naming the simulated time, the system and the reason; the recorders
(``recording.py``) are untouched, so their DataFrames still hold every sample taken before.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.params import (
    ALPHA_C, MAX_STEPS, JointParams, ParameterError, RobotParams, RodParams, check_run_length,
    integrator,
)

__all__ = [
    "SimulationFailed",
    "SimulationDiverged",
    "SolverFailed",
    "run",
    "find_runaway",
    "runaway_suspect",
    "max_stable_dt",
    "check_time_step",
    "DEFAULT_MAX_SPEED",
    "DEFAULT_MAX_STRETCH",
]

#: m/s, default runaway speed bound: about the axial wave speed sqrt(E/rho) of the paper rods;
#: the robot's physical speeds are below 1 m/s.
DEFAULT_MAX_SPEED = 100.0
#: default bound on (centreline length / rest length) of a rod; the auxetic elongation is
#: already in the rest length, so an intact rod stays within a few per cent of 1.
DEFAULT_MAX_STRETCH = 2.0


# --------------------------------------------------------------------------------------------
# stability limit of the explicit integrator
# --------------------------------------------------------------------------------------------
def _twist_samples(rod: RodParams) -> list[float]:
    """Handed twist strains [rad/m] at which the stiffness laws are evaluated: 0 and 9 points
    over the clipped range ``[eps_min, eps_max] / C_eps`` of Eq. 2-5 (just 0 if C_eps = 0)."""
    if rod.C_eps == 0.0:
        return [0.0]
    lo, hi = rod.eps_min / rod.C_eps, rod.eps_max / rod.C_eps
    return [0.0, *np.linspace(lo, hi, 9).tolist()]


def _laws_at(rod: RodParams, k: float) -> tuple[float, float, float, float, float]:
    """``(E, G, B_xy, B_z, 1 + eps)`` of Eq. 2-5 at handed twist strain ``k`` [rad/m]."""
    eps = min(max(rod.C_eps * k + rod.C_eps2 * k * k, rod.eps_min), rod.eps_max)
    return (
        rod.youngs_modulus + rod.E_slope * k + rod.E_quad * k * k,
        rod.shear_modulus + rod.G_slope * k,
        rod.B_xy + rod.bend_rigidity_slope * k,
        rod.B_z + rod.twist_rigidity_slope * k + rod.twist_rigidity_quad * k * k,
        1.0 + eps,
    )


def _omega_max(stiffness: NDArray[np.float64], inertia: NDArray[np.float64]) -> float:
    """Highest natural frequency [rad/s] of ``M x'' + K x = 0`` (M diagonal)."""
    scale = 1.0 / np.sqrt(inertia)
    return float(math.sqrt(max(np.linalg.eigvalsh(scale[:, None] * stiffness * scale[None, :])[-1], 0.0)))


def _chain_modes(rod: RodParams, k_tip: float, k_tip_rot: float, twist: float) -> dict[str, float]:
    """Highest frequency [rad/s] of the axial, lateral (shear + bend) and twist motions of one
    straight rod, linearised about the straight state at handed twist strain ``twist``
    [rad/m] (moduli of Eq. 5 and rest length ``l (1 + eps)`` of Eq. 2-3 there): node 0 and
    element 0 held by the motor, the tip node on a spring ``k_tip`` [N/m] and the tip element
    on ``k_tip_rot`` [N m/rad] (the platform joint, Eqs. 6-7; the platform itself is ~40x
    heavier than a node and is treated as fixed).  Masses and inertias as the rod builder sets
    them from the printed element length l: node mass rho A l (half at the tip), element
    inertia rho l diag(I, I, 2I)."""
    n = rod.n_elements
    l_print = rod.length / n
    area, inertia_2 = rod.area, rod.second_moment
    m = np.full(n, rod.density * area * l_print)
    m[-1] *= 0.5
    e_mod, g_mod, b_xy, b_z, stretch = _laws_at(rod, twist)
    l = l_print * stretch  # rest length of an element (and of a Voronoi domain)

    def chain(k: float, size: int) -> NDArray[np.float64]:
        # springs k between consecutive dofs, the first dof also tied to the fixed base
        K = np.zeros((size, size))
        idx = np.arange(size)
        K[idx, idx] = 2.0 * k
        K[idx[:-1], idx[:-1] + 1] = K[idx[:-1] + 1, idx[:-1]] = -k
        K[-1, -1] = k
        return K

    axial = chain(e_mod * area / l, n)
    axial[-1, -1] += k_tip
    # lateral: node displacements u_1..u_n and element rotations th_1..th_{n-1}; shear strain
    # of element e is (u_{e+1} - u_e) / l - th_e (energy S l gamma^2 / 2), bending between
    # neighbouring elements (B / l) (th_{e+1} - th_e)^2 / 2
    shear = ALPHA_C * g_mod * area
    size = 2 * n - 1
    lateral = np.zeros((size, size))
    for e in range(n):
        g = np.zeros(size)
        if e > 0:
            g[e - 1] -= 1.0 / l
            g[n + e - 1] -= 1.0
        g[e] += 1.0 / l
        lateral += shear * l * np.outer(g, g)
    lateral[n:, n:] += chain(b_xy / l, n - 1)
    lateral[n - 1, n - 1] += k_tip
    lateral[-1, -1] += k_tip_rot
    lateral_inertia = np.concatenate([m, np.full(n - 1, rod.density * l_print * inertia_2)])
    torsion = chain(b_z / l, n - 1)
    torsion[-1, -1] += k_tip_rot
    return {
        "axial": _omega_max(axial, m),
        "shear/bend": _omega_max(lateral, lateral_inertia),
        "twist": _omega_max(torsion, np.full(n - 1, rod.density * l_print * 2.0 * inertia_2)),
    }


#: Safety factor on ``2 / omega_max``, calibrated on the fused stepper (elongation primitive,
#: 1.5 s): the paper robot is stable at 0.985 of the linear estimate (3.6e-5 s) and diverges
#: at 1.0 (3.65e-5 s); with 50 elements stable at 0.97, diverging at 1.0; with k_F = 5e6 N/m
#: stable at 0.96, diverging at 0.97 (the platform and the joint's lever arms, left out of the
#: chain model, raise the highest frequency by ~4 %).
DT_SAFETY = 0.95


def max_stable_dt(params: RobotParams | RodParams, joint: JointParams | None = None) -> tuple[float, str]:
    """Largest stable time step [s] of the explicit Position-Verlet integrator, and its mode.

    Position Verlet is stable for an undamped linear mode of angular frequency ``omega`` iff
    ``omega dt < 2``.  The highest frequencies of an HSA rod are those of its discretisation:
    the axial, shear/bend and twist waves of one element (``omega ~ 2 sqrt(E A / l / (rho A l))
    = 2 c / l``, ``c = sqrt(E / rho)``) and the tip node held by the platform joint spring
    ``k_F`` (Eq. 6) next to the last element.  :func:`_chain_modes` computes the exact highest
    frequency of each linearised chain of the straight rod, with the moduli of Eq. 5 and the
    rest lengths of Eq. 2-3 at twist strains sampled over the whole clipped range (the
    stiffest wins), and the limit is ``DT_SAFETY * 2 / omega_max`` (see :data:`DT_SAFETY` for the calibration).  For
    the paper robot with defaults: 2 / omega_max = 3.65e-5 s (axial chain + joint spring),
    limit 3.47e-5 s; the default dt = 3e-5 s is below it.  Velocity damping
    (``v *= exp(-c dt)``) is unconditionally stable and does not change the limit.

    ``params`` is a :class:`RobotParams` (rods + joints) or a :class:`RodParams` (a single rod;
    ``joint`` optionally adds the platform joint).  Returns ``(dt_max, mode)``.
    """
    if isinstance(params, RobotParams):
        rod, joint = params.rod, params.joint
    elif isinstance(params, RodParams):
        rod = params
    else:
        raise ParameterError(f"max_stable_dt: params = {params!r} must be RobotParams or RodParams")
    k_tip = 0.0 if joint is None else joint.k_F
    k_rot = 0.0 if joint is None else joint.k_tau
    omega, mode = 0.0, "axial"
    for twist in _twist_samples(rod):
        for name, w in _chain_modes(rod, k_tip, k_rot, twist).items():
            if w > omega:
                omega, mode = w, name
    return (math.inf if omega == 0.0 else DT_SAFETY * 2.0 / omega), mode


def check_time_step(
    dt: float, params: RobotParams | RodParams, joint: JointParams | None = None
) -> float:
    """Refuse ``dt`` [s] above :func:`max_stable_dt` with a :class:`ParameterError` naming
    ``simulation.dt``, the estimate and the allowed range; returns ``dt``.  Robot parameters
    whose ``simulation.integrator`` has no stability limit (``integrator(sim).checks_stability_limit``
    False: the implicit integrator refuses a step whose Newton iterations do not converge
    instead) are not limited."""
    sim = getattr(params, "simulation", None)
    if sim is not None and not integrator(sim).checks_stability_limit:
        return dt
    limit, mode = max_stable_dt(params, joint)
    if not dt <= limit:
        raise ParameterError(
            f"simulation.dt = {dt!r} is invalid: must be > 0 and <= {limit:.3g} s, the largest "
            f"stable step of the explicit Position-Verlet integrator estimated from the "
            f"parameters ({mode} waves of the rod elements"
            + (" and the joint spring k_F" if joint is not None or isinstance(params, RobotParams) else "")
            + "); a larger step diverges or gives wrong results"
        )
    return dt


class SimulationFailed(RuntimeError):
    """A run that started and could not go on: a blow-up (:class:`SimulationDiverged`), a step
    the implicit integrator refused
    (:class:`~hsa_elastica.engines.implicit.ImplicitStepFailed`) or a solver that failed
    (:class:`SolverFailed`).  A runtime failure, never bad input: the command line exits 1
    and keeps what was recorded.

    Attributes
    ----------
    time : float
        Simulated time [s] at which the failure was found.
    name : str
        What failed (a system, e.g. ``"rod 2 (left-handed)"``, or ``"implicit integrator"``).
    last_good_time : float
        Simulated time [s] of the last state known to be good (NaN if unknown).
    reason : str
        What went wrong, e.g. ``"has non-finite positions or velocities"``.
    result : Any
        Set by callers that keep a partial outcome (e.g. ``solve_steady_state``'s result).
    """

    def __init__(self, time: float, name: str, last_good_time: float | None = None,
                 reason: str = "failed", message: str | None = None) -> None:
        self.time = float(time)
        self.name = str(name)
        self.reason = str(reason)
        self.last_good_time = float("nan") if last_good_time is None else float(last_good_time)
        self.result: Any = None
        super().__init__(message if message is not None
                         else f"{self.name} {self.reason} at t = {self.time:.6g} s")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.time, self.name, self.last_good_time, self.reason, str(self)))


class SolverFailed(SimulationFailed, FloatingPointError):
    """A force law or solver that failed during a run (e.g. a non-positive stiffness), with
    the time [s] of the last good state; also a ``FloatingPointError``, as before."""


class SimulationDiverged(SimulationFailed):
    """Raised by :func:`run` when a system's state blows up (see :func:`find_runaway`).

    Attributes
    ----------
    time : float
        Simulated time [s] of the check that found the non-finite state (the blow-up happened
        after ``last_good_time``).
    name : str
        Name of the first offending system (e.g. ``"rod 2 (left-handed)"``).
    last_good_time : float
        Simulated time [s] of the previous successful check.
    reason : str
        What the check found, e.g. ``"has non-finite positions or velocities"`` or
        ``"has a node moving at 312 m/s (max_speed = 100 m/s)"``.
    """

    def __init__(
        self,
        time: float,
        name: str,
        last_good_time: float | None = None,
        reason: str = "has non-finite positions or velocities",
    ) -> None:
        msg = f"simulation diverged: {name} {reason} at t = {float(time):.6g} s"
        if last_good_time is not None:
            msg += f" (last good state checked at t = {float(last_good_time):.6g} s)"
        super().__init__(time, name, last_good_time, reason, msg)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.time, self.name, self.last_good_time, self.reason))


def _is_memory_block(system: Any) -> bool:
    # PyElastica appends its memory blocks to the system list at finalize; they alias the
    # user's systems and are not checked separately.
    return hasattr(system, "n_systems") or type(system).__name__.startswith("MemoryBlock")


def _user_systems(simulator: Any) -> list[Any]:
    if hasattr(simulator, "systems"):
        systems = list(simulator.systems())
    else:
        systems = [simulator[i] for i in range(len(simulator))]
    # static systems (e.g. a contact Plane) have no state to check
    return [
        s for s in systems if not _is_memory_block(s) and hasattr(s, "velocity_collection")
    ]


def _default_name(index: int, system: Any, kind_counts: dict[str, int]) -> str:
    is_rod = hasattr(system, "rest_lengths")
    kind = "rod" if is_rod else "rigid body"
    k = kind_counts.get(kind, 0)
    kind_counts[kind] = k + 1
    return f"{kind} {k} (system {index}, {type(system).__name__})"


def _names(
    systems: list[Any], systems_names: Mapping[Any, str] | Sequence[str] | None
) -> list[str]:
    counts: dict[str, int] = {}
    defaults = [_default_name(i, s, counts) for i, s in enumerate(systems)]
    if systems_names is None:
        return defaults
    if isinstance(systems_names, Mapping):
        names = []
        for i, s in enumerate(systems):
            name = None
            for key, value in systems_names.items():
                if key is s or (isinstance(key, (int, np.integer)) and int(key) == i):
                    name = value
                    break
            names.append(defaults[i] if name is None else str(name))
        return names
    if isinstance(systems_names, str) or len(systems_names) != len(systems):
        raise ParameterError(
            f"systems_names must be a mapping or a sequence of {len(systems)} names "
            f"(one per system, in the order they were appended), got {systems_names!r}"
        )
    return [str(n) for n in systems_names]


def check_bound(name: str, value: float, unit: str) -> float:
    v = float(value)
    if math.isnan(v) or v <= 0.0:
        raise ParameterError(f"run(): {name} = {value!r} is invalid: must be > 0 ({unit}; inf = off)")
    return v


def find_runaway(
    systems: Sequence[Any],
    *,
    max_speed: float = DEFAULT_MAX_SPEED,
    max_stretch: float = DEFAULT_MAX_STRETCH,
) -> tuple[int, str] | None:
    """First system (index, reason) that has blown up, or None.

    Checked in order for each system: non-finite positions or velocities; a node (rod) or
    centre of mass (rigid body) speed ``|v|`` above ``max_speed`` [m/s]; for rods (systems with
    ``rest_lengths``), a centreline length ``sum |x_{i+1} - x_i|`` above ``max_stretch`` times
    the rest length ``sum rest_lengths`` (for an HSA rod the rest length includes the auxetic
    elongation of Eq. 3, so the bound does not fire on actuation).  ``inf`` disables a bound.
    """
    v2_max = max_speed * max_speed
    for i, s in enumerate(systems):
        x = s.position_collection
        v = s.velocity_collection
        if not (np.isfinite(x).all() and np.isfinite(v).all()):
            return i, "has non-finite positions or velocities"
        if math.isfinite(max_speed):
            v2 = float(np.max(np.einsum("ij,ij->j", v, v)))
            if v2 > v2_max:
                return i, (
                    f"has a node moving at {math.sqrt(v2):.4g} m/s (max_speed = {max_speed:g} m/s)"
                )
        rest = getattr(s, "rest_lengths", None)
        if rest is not None and math.isfinite(max_stretch) and x.shape[1] > 1:
            d = np.diff(x, axis=1)
            length = float(np.sum(np.sqrt(np.einsum("ij,ij->j", d, d))))
            rest_length = float(np.sum(rest))
            if length > max_stretch * rest_length:
                return i, (
                    f"is {length * 1e3:.4g} mm long, {length / rest_length:.3g} times its rest "
                    f"length {rest_length * 1e3:.4g} mm (max_stretch = {max_stretch:g})"
                )
    return None


@njit(cache=True)  # type: ignore[misc]
def runaway_suspect(x: NDArray[np.float64], v: NDArray[np.float64],
                    rest: NDArray[np.float64], v2_max: float, max_stretch: float) -> bool:
    """Whether :func:`find_runaway` may flag the system with positions ``x`` (3, n) [m],
    velocities ``v`` [m/s] and ``rest`` lengths [m] (empty: not a rod): the same tests in one
    compiled pass, with a relative margin of 1e-12 on the bounds (the sums' order differs from
    numpy's), so that False means :func:`find_runaway` returns None for it (its cheap
    pre-check between a compiled engine's calls; True: ask :func:`find_runaway`)."""
    n = x.shape[1]
    for j in range(n):
        for a in range(3):
            if not (math.isfinite(x[a, j]) and math.isfinite(v[a, j])):
                return True
    if math.isfinite(v2_max):
        lim = v2_max * (1.0 - 1e-12)
        for j in range(v.shape[1]):
            if v[0, j] * v[0, j] + v[1, j] * v[1, j] + v[2, j] * v[2, j] > lim:
                return True
    if rest.shape[0] > 0 and n > 1 and math.isfinite(max_stretch):
        length = 0.0
        for j in range(n - 1):
            d0 = x[0, j + 1] - x[0, j]
            d1 = x[1, j + 1] - x[1, j]
            d2 = x[2, j + 1] - x[2, j]
            length += math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        if length > max_stretch * rest.sum() * (1.0 - 1e-12):
            return True
    return False


def run(
    simulator: Any,
    timestepper: Any,
    *,
    duration: float,
    dt: float,
    time: float = 0.0,
    progress: bool = False,
    check_every: int = 200,
    systems_names: Mapping[Any, str] | Sequence[str] | None = None,
    on_diverge: Callable[[SimulationDiverged], None] | None = None,
    max_speed: float = DEFAULT_MAX_SPEED,
    max_stretch: float = DEFAULT_MAX_STRETCH,
) -> float:
    """Advance a finalized simulator by ``duration`` [s] with steps of ``dt`` [s].

    ``n = ceil(duration / dt)`` steps (to a relative tolerance of 1e-9, so ``1.0 / 1e-4``
    gives exactly 10000 steps) are taken with ``timestepper.step(simulator, time, dt)``; the
    return value is the final simulated time ``time + n dt`` as PyElastica accumulated it.
    Pass it as ``time`` to continue a run.

    Every ``check_every`` steps and after the last step, all rods and rigid bodies are checked
    for a blow-up (:func:`find_runaway`: non-finite state, a speed above ``max_speed`` [m/s,
    default 100], a rod longer than ``max_stretch`` times its rest length [default 2]; ``inf``
    disables a bound). The first offending system raises
    :class:`SimulationDiverged` with the simulated time and its name: ``systems_names`` maps
    systems (the objects, or their append-order index) to names, or lists one name per system
    in append order; default names are ``"rod 0 (system 0, CosseratRod)"`` etc.
    ``on_diverge(exc)``, if given, is called just before the exception is raised (e.g. to save
    partial diagnostics). Recorders keep their samples either way.

    ``progress=True`` shows a tqdm bar in simulated seconds (silent when stderr is not a TTY).
    """
    duration, dt = _check_run(duration, dt, time, check_every)
    v_max = check_bound("max_speed", max_speed, "m/s")
    stretch = check_bound("max_stretch", max_stretch, "dimensionless ratio")

    n_steps = int(math.ceil(duration / dt * (1.0 - 1e-9)))
    systems = _user_systems(simulator)
    names = _names(systems, systems_names)
    bar = _progress_bar(duration) if progress else None
    t = np.float64(time)
    last_good = float(t)
    done = 0
    try:
        while done < n_steps:
            chunk = min(int(check_every), n_steps - done)
            for _ in range(chunk):
                t = timestepper.step(simulator, t, dt)
            done += chunk
            bad = find_runaway(systems, max_speed=v_max, max_stretch=stretch)
            if bad is not None:
                exc = SimulationDiverged(float(t), names[bad[0]], last_good, bad[1])
                if on_diverge is not None:
                    on_diverge(exc)
                raise exc
            last_good = float(t)
            if bar is not None:
                bar.update(chunk * dt)
    finally:
        if bar is not None:
            bar.close()
    return float(t)


def _check_run(duration: float, dt: float, time: float, check_every: int) -> tuple[float, float]:
    """:func:`run`'s ``duration`` [s] and ``dt`` [s] as floats, after checking them, ``time``
    [s] and ``check_every`` (``ParameterError`` naming the first bad one and its range)."""
    duration = float(duration)
    dt = float(dt)
    if not (math.isfinite(duration) and duration >= 0.0):
        raise ParameterError(f"run(): duration = {duration!r} is invalid: must be a finite number >= 0 (s)")
    if not (math.isfinite(dt) and dt > 0.0):
        raise ParameterError(f"run(): dt = {dt!r} is invalid: must be a finite number > 0 (s)")
    if duration > MAX_STEPS * dt:
        check_run_length(duration, dt, "run(): duration")  # the one cap on a run's length
    if isinstance(check_every, bool) or not isinstance(check_every, (int, np.integer)) or check_every < 1:
        raise ParameterError(f"run(): check_every = {check_every!r} is invalid: must be an integer >= 1 (steps)")
    if not math.isfinite(float(time)):
        raise ParameterError(f"run(): time = {time!r} is invalid: must be a finite number (s)")
    return duration, dt


def _progress_bar(duration: float) -> Any:
    """The tqdm bar of :func:`run`, in simulated seconds (silent when stderr is not a TTY)."""
    from hsa_elastica.io.progress import progress_bar

    return progress_bar(
        total=duration,
        unit="s",
        desc="simulated",
        bar_format="{l_bar}{bar}| {n:.4g}/{total:.4g} s [{elapsed}<{remaining}]",
    )
