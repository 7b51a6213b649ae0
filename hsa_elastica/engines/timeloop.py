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
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from hsa_elastica.params import ParameterError

__all__ = ["SimulationDiverged", "run", "find_runaway", "DEFAULT_MAX_SPEED", "DEFAULT_MAX_STRETCH"]

#: m/s, default runaway speed bound: about the axial wave speed sqrt(E/rho) of the paper rods;
#: the robot's physical speeds are below 1 m/s.
DEFAULT_MAX_SPEED = 100.0
#: default bound on (centreline length / rest length) of a rod; the auxetic elongation is
#: already in the rest length, so an intact rod stays within a few per cent of 1.
DEFAULT_MAX_STRETCH = 2.0


class SimulationDiverged(RuntimeError):
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
        self.time = float(time)
        self.name = str(name)
        self.reason = str(reason)
        self.last_good_time = float("nan") if last_good_time is None else float(last_good_time)
        msg = f"simulation diverged: {self.name} {self.reason} at t = {self.time:.6g} s"
        if last_good_time is not None:
            msg += f" (last good state checked at t = {self.last_good_time:.6g} s)"
        super().__init__(msg)

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
    return [s for s in systems if not _is_memory_block(s)]


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
    duration = float(duration)
    dt = float(dt)
    if not (math.isfinite(duration) and duration >= 0.0):
        raise ParameterError(f"run(): duration = {duration!r} is invalid: must be a finite number >= 0 (s)")
    if not (math.isfinite(dt) and dt > 0.0):
        raise ParameterError(f"run(): dt = {dt!r} is invalid: must be a finite number > 0 (s)")
    if isinstance(check_every, bool) or not isinstance(check_every, (int, np.integer)) or check_every < 1:
        raise ParameterError(f"run(): check_every = {check_every!r} is invalid: must be an integer >= 1 (steps)")
    if not math.isfinite(float(time)):
        raise ParameterError(f"run(): time = {time!r} is invalid: must be a finite number (s)")
    v_max = check_bound("max_speed", max_speed, "m/s")
    stretch = check_bound("max_stretch", max_stretch, "dimensionless ratio")

    n_steps = int(math.ceil(duration / dt * (1.0 - 1e-9)))
    systems = _user_systems(simulator)
    names = _names(systems, systems_names)

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=duration,
            unit="s",
            unit_scale=False,
            desc="simulated",
            bar_format="{l_bar}{bar}| {n:.4g}/{total:.4g} s [{elapsed}<{remaining}]",
            disable=not sys.stderr.isatty(),
        )

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
