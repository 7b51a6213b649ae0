"""Time loop with a divergence check that keeps what was recorded.

:func:`run` advances a finalized PyElastica 1.0 simulator with ``timestepper.step(simulator,
time, dt)`` and, every ``check_every`` steps (and after the last step), checks every rod and
rigid body for non-finite positions or velocities. A blow-up raises
:class:`SimulationDiverged` naming the simulated time and the system; the recorders
(``recording.py``) are untouched, so their DataFrames still hold every sample taken before.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from hsa_elastica.params import ParameterError

__all__ = ["SimulationDiverged", "run"]


class SimulationDiverged(RuntimeError):
    """Raised by :func:`run` when a system's state becomes non-finite.

    Attributes
    ----------
    time : float
        Simulated time [s] of the check that found the non-finite state (the blow-up happened
        after ``last_good_time``).
    name : str
        Name of the first offending system (e.g. ``"rod 2 (left-handed)"``).
    last_good_time : float
        Simulated time [s] of the previous successful check.
    """

    def __init__(self, time: float, name: str, last_good_time: float | None = None) -> None:
        self.time = float(time)
        self.name = str(name)
        self.last_good_time = float("nan") if last_good_time is None else float(last_good_time)
        msg = (
            f"simulation diverged: {self.name} has non-finite positions or velocities at "
            f"t = {self.time:.6g} s"
        )
        if last_good_time is not None:
            msg += f" (last finite state checked at t = {self.last_good_time:.6g} s)"
        super().__init__(msg)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.time, self.name, self.last_good_time))


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


def _first_non_finite(systems: list[Any]) -> int:
    for i, s in enumerate(systems):
        if not (np.isfinite(s.position_collection).all() and np.isfinite(s.velocity_collection).all()):
            return i
    return -1


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
) -> float:
    """Advance a finalized simulator by ``duration`` [s] with steps of ``dt`` [s].

    ``n = ceil(duration / dt)`` steps (to a relative tolerance of 1e-9, so ``1.0 / 1e-4``
    gives exactly 10000 steps) are taken with ``timestepper.step(simulator, time, dt)``; the
    return value is the final simulated time ``time + n dt`` as PyElastica accumulated it.
    Pass it as ``time`` to continue a run.

    Every ``check_every`` steps and after the last step, all rods and rigid bodies are checked
    for non-finite positions or velocities. The first offending system raises
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
            bad = _first_non_finite(systems)
            if bad >= 0:
                exc = SimulationDiverged(float(t), names[bad], last_good)
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
