"""State snapshots of a running engine: copy, restore, save and load everything that determines
the future of a simulation.

A snapshot (:class:`Snapshot`) holds copies of

* every array of the state (the rods' and rigid bodies' memory blocks: positions, directors,
  velocities, angular velocities, rest configuration, ...),
* the engine's internal state: the fused stepper's law tables (twist filter memory of the
  couplings, joint rest orientations, damper workspaces, ...), or, for the operator time loop,
  the state the operators keep between steps (array and scalar attributes of every operator:
  printed geometry and filter memory of ``AuxeticCoupling``, rest orientation of
  ``PlatformJoint``, ...),
* the time [s], the motor schedules (the callables ``t -> angle`` / ``t -> torque`` of every
  motor, so their phase follows the restored time) and the step API's command and control
  clock,
* whatever the engine's optional hook ``extra_state()`` returns (a dict of arrays, restored by
  ``set_extra_state(d)``): an engine with state of its own adds it there
  (:class:`~hsa_elastica.robots.compiled.ImplicitRobot`: the generalized-alpha velocities and
  accelerations of its unknowns and the Jacobian its chord factorisation was made from, which
  the restore factorises again).

Restoring a snapshot and stepping gives bitwise the same trajectory as never having stopped
(``tests/test_snapshot.py``: operator time loop, fused stepper, implicit integrator).  The step API
(:class:`~hsa_elastica.engines.control.ControlMixin`) exposes ``get_state()``,
``set_state(state)``, ``save_state(path)`` and ``load_state(path)`` on every robot handle.
A snapshot belongs to the robot it was taken from (same model, same discretisation): restoring
it into another robot raises :class:`~hsa_elastica.params.ParameterError`.

Files are Python pickles (the schedules are Python objects): load only files you wrote.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.params import ParameterError

__all__ = ["Snapshot", "copy_attributes", "restore_attributes", "copy_arrays", "restore_arrays"]

#: format of a saved snapshot (bumped when the layout changes)
FORMAT = 1

#: attribute values copied from an operator (arrays are copied, these are kept by value)
_SCALARS = (bool, int, float, complex, str, type(None), np.number, np.bool_)


@dataclass
class Snapshot:
    """Everything that determines the future of one robot (see the module doc)."""

    time: float
    arrays: dict[str, NDArray[Any]]
    objects: list[dict[str, Any]]
    schedules: list[dict[str, Any]]
    control: dict[str, Any]
    extra: dict[str, NDArray[Any]] = field(default_factory=dict)
    engine: str = ""
    format: int = FORMAT


def copy_arrays(named: dict[str, NDArray[Any]]) -> dict[str, NDArray[Any]]:
    """Copies of the arrays ``named``."""
    return {k: np.array(v, copy=True) for k, v in named.items()}


def restore_arrays(live: dict[str, NDArray[Any]], saved: dict[str, NDArray[Any]]) -> None:
    """Write ``saved`` into the arrays ``live`` in place (same names, shapes and dtypes)."""
    if set(live) != set(saved):
        raise ParameterError("state is invalid: it was taken from another model (its arrays differ)")
    for k, arr in live.items():
        s = saved[k]
        if s.shape != arr.shape or s.dtype != arr.dtype:
            raise ParameterError(
                f"state is invalid: array {k!r} has shape {s.shape}, the model {arr.shape}"
            )
    for k, arr in live.items():
        np.copyto(arr, saved[k])


def _copy_value(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple table
        return type(value)(*(_copy_value(v) for v in value))
    return value


def _stateful(value: Any) -> bool:
    if isinstance(value, (np.ndarray, *_SCALARS)):
        return True
    return isinstance(value, tuple) and hasattr(value, "_fields") and all(
        isinstance(v, np.ndarray) for v in value
    )


def copy_attributes(obj: Any) -> dict[str, Any]:
    """Copies of the instance attributes of ``obj`` that can hold state between steps: arrays,
    NamedTuples of arrays and scalars (other objects -- systems, schedules, laws -- are
    configuration, not state)."""
    return {k: _copy_value(v) for k, v in vars(obj).items() if _stateful(v)}


def _restore_value(current: Any, saved: Any) -> Any:
    """``saved`` written into ``current`` in place where possible (views into it stay valid),
    else a copy of ``saved``."""
    if (
        isinstance(current, np.ndarray) and isinstance(saved, np.ndarray)
        and current.shape == saved.shape and current.dtype == saved.dtype
        and current.flags.writeable
    ):
        np.copyto(current, saved)
        return current
    if (
        isinstance(current, tuple) and hasattr(current, "_fields")
        and type(current) is type(saved)
    ):
        return type(current)(*(_restore_value(c, s) for c, s in zip(current, saved)))
    return _copy_value(saved)


def restore_attributes(obj: Any, saved: dict[str, Any]) -> None:
    """Give ``obj`` the attributes ``saved`` by :func:`copy_attributes` again (arrays written in
    place); stateful attributes created after the snapshot are removed (None-valued ones, such
    as a cache not filled yet, are left)."""
    live = vars(obj)
    for k in [k for k, v in live.items() if v is not None and _stateful(v) and k not in saved]:
        delattr(obj, k)
    for k, v in saved.items():
        setattr(obj, k, _restore_value(live.get(k), v))


def save(state: Snapshot, path: str | Path) -> None:
    """Write ``state`` to ``path`` (a pickle; the schedules must be picklable)."""
    if not isinstance(state, Snapshot):
        raise ParameterError(f"state = {state!r} is invalid: must be a Snapshot (get_state())")
    try:
        data = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise ParameterError(
            f"state is invalid for save_state: a motor schedule cannot be written ({exc}); use "
            "numbers or Ramp schedules"
        ) from exc
    Path(path).write_bytes(data)


def load(path: str | Path) -> Snapshot:
    """The snapshot written by :func:`save` to ``path``."""
    try:
        state = pickle.loads(Path(path).read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError) as exc:
        raise ParameterError(f"path = {str(path)!r} is invalid: not a readable state file ({exc})") from exc
    if not isinstance(state, Snapshot) or state.format != FORMAT:
        raise ParameterError(
            f"path = {str(path)!r} is invalid: not a state file of format {FORMAT} (save_state)"
        )
    return state
