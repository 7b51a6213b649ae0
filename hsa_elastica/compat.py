"""The only place that touches PyElastica 1.0 internals (private names and layouts).

PyElastica 1.0 builds operators inside ``finalize()`` and keeps them, bound, in private
"feature group" lists; memory blocks hold the systems' arrays as views.  The fused stepper and
the static solver compile a finalized simulator into tables (:mod:`hsa_elastica.engines.compile`)
and need to read both.  Everything that depends on those private details is here, so that a
PyElastica release that changes them breaks one small module, loudly (:class:`CompatError`),
not the physics silently.  Written against pyelastica 1.0.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from elastica._rotations import _inv_rotate
from elastica.rod.cosserat_rod import (
    _update_accelerations,
    _zeroed_out_external_forces_and_torques,
)
from numpy.typing import NDArray

__all__ = [
    "CompatError",
    "block_offset",
    "bound_operator",
    "callback_instance",
    "compiled_entry",
    "damper_coefficients",
    "feature_group",
    "inv_rotate",
    "memory_blocks",
    "numba_cache_has_entry",
    "numba_cache_holds",
    "numba_linked_libraries",
    "numba_uses_cache",
    "set_body_inertia",
    "update_accelerations",
    "zeroed_out_external_forces_and_torques",
]

#: feature groups of PyElastica 1.0's ``BaseSystemCollection``, by public role
_GROUPS = {
    "synchronize": "_feature_group_synchronize",
    "constrain_values": "_feature_group_constrain_values",
    "constrain_rates": "_feature_group_constrain_rates",
    "damping": "_feature_group_damping",
    "callback": "_feature_group_callback",
}


#: PyElastica's numba kernel ``log(Q_{k+1} Q_k^T)`` of consecutive directors, (3, 3, n) -> (3, n-1)
#: rotation vectors [rad] (``elastica._rotations._inv_rotate``).
inv_rotate = _inv_rotate
#: PyElastica's numba kernel of the rod's translational and angular accelerations
#: (``elastica.rod.cosserat_rod._update_accelerations``).
update_accelerations = _update_accelerations
#: PyElastica's numba kernel that zeroes a system's external forces and torques in place
#: (``elastica.rod.cosserat_rod._zeroed_out_external_forces_and_torques``).
zeroed_out_external_forces_and_torques = _zeroed_out_external_forces_and_torques


class CompatError(TypeError):
    """The simulator does not have the PyElastica 1.0 layout this package was written for."""


def feature_group(simulator: Any, role: str) -> list[Any]:
    """The bound operators of one of PyElastica 1.0's feature groups, in call order.

    ``role`` is one of ``synchronize``, ``constrain_values``, ``constrain_rates``, ``damping``,
    ``callback``.
    """
    group = getattr(simulator, _GROUPS[role], None)
    if group is None:
        raise CompatError(
            f"the simulator has no PyElastica 1.0 feature group {_GROUPS[role]!r} "
            "(hsa-elastica's compiled engines are written against pyelastica 1.0)"
        )
    return list(group)


def bound_operator(op: Any) -> tuple[Any, str, dict[str, Any]]:
    """``functools.partial(instance.method, **kwargs)`` -> (instance, method name, kwargs)."""
    if not isinstance(op, functools.partial) or not hasattr(op.func, "__self__"):
        raise CompatError(f"unrecognised operator {op!r}")
    return op.func.__self__, op.func.__name__, dict(op.keywords)


def callback_instance(op: Any) -> Any:
    """The callback object behind a bound callback of the ``callback`` feature group."""
    inst = getattr(getattr(op, "func", None), "__self__", None)
    return getattr(inst, "target", inst)


def block_offset(view: NDArray[np.float64], block: NDArray[np.float64]) -> int:
    """Index offset along the last axis of ``view`` inside ``block`` (both C-ordered rows)."""
    if not np.shares_memory(view, block):
        raise CompatError("a system's arrays are not views into its memory block")
    delta = view.__array_interface__["data"][0] - block.__array_interface__["data"][0]
    offset, rest = divmod(delta, block.strides[-1])
    if rest != 0 or not 0 <= offset < block.shape[-1]:
        raise CompatError("unexpected memory-block layout")
    return int(offset)


def damper_coefficients(damper: Any) -> tuple[Any, Any] | None:
    """Per-step velocity factors ``(translational, rotational)`` of a linear damper, or None.

    PyElastica's ``AnalyticalLinearDamper`` keeps them in private attributes; the package's
    rigid-body damper exposes them publicly.
    """
    from elastica.dissipation import AnalyticalLinearDamper

    if isinstance(damper, AnalyticalLinearDamper):
        return damper._translational_damping_coefficient, damper._rotational_damping_coefficient
    factors = getattr(damper, "velocity_factors", None)
    return None if factors is None else tuple(factors)


def set_body_inertia(body: Any, diagonal: Any) -> None:
    """Give a PyElastica rigid body (before ``finalize()``) the mass second moment of inertia
    ``diag(diagonal)`` [kg m^2] in its own frame (director rows), and its inverse: the
    ``(3, 3, 1)`` arrays ``mass_second_moment_of_inertia`` and
    ``inv_mass_second_moment_of_inertia`` the memory block copies at ``finalize()``."""
    d = np.asarray(diagonal, dtype=np.float64).reshape(3)
    if not np.all(d > 0.0):
        raise CompatError(f"set_body_inertia: diagonal {d.tolist()} must be positive")
    if np.shape(body.mass_second_moment_of_inertia) != (3, 3, 1):
        raise CompatError("set_body_inertia: the body's mass_second_moment_of_inertia is not "
                          "PyElastica 1.0's (3, 3, 1) layout")
    body.mass_second_moment_of_inertia = np.diag(d).reshape(3, 3, 1)
    body.inv_mass_second_moment_of_inertia = np.diag(1.0 / d).reshape(3, 3, 1)


def memory_blocks(simulator: Any) -> list[Any]:
    """The finalized simulator's memory blocks (``final_systems()``)."""
    return list(simulator.final_systems())


def numba_cache_has_entry(dispatcher: Any) -> bool:
    """True if numba's on-disk cache holds a compiled entry of ``dispatcher`` (an
    ``@njit(cache=True)`` function) for its current source, i.e. its first call will load
    machine code instead of compiling.  Reads numba's cache index (private API; written
    against numba 0.59-0.61); returns False when that cannot be read."""
    try:
        index = dispatcher._cache._cache_file._load_index()
    except Exception:  # noqa: BLE001 - any numba layout change: report a cold cache
        return False
    return bool(index)


def numba_cache_holds(dispatcher: Any, signature: tuple[Any, ...]) -> bool:
    """True if numba's on-disk cache holds ``dispatcher`` compiled for ``signature`` (a tuple
    of numba types) and its current source: the cache index's key (private API; numba
    0.59-0.68); False when that cannot be read."""
    try:
        cache = dispatcher._cache
        key = cache._index_key(signature, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # noqa: BLE001 - any numba layout change: report it not cached
        return False


def numba_uses_cache(dispatcher: Any) -> bool:
    """True if ``dispatcher`` writes to numba's on-disk cache (``cache=True``)."""
    from numba.core.caching import NullCache

    cache = getattr(dispatcher, "_cache", None)
    return cache is not None and not isinstance(cache, NullCache)


def numba_linked_libraries(library: Any) -> tuple[Any, ...]:
    """The code libraries numba linked into a compiled kernel's ``library`` (those of the
    kernels it calls; private attribute, empty if absent)."""
    return tuple(getattr(library, "_linking_libraries", ()))


def compiled_entry(dispatcher: Any, args: tuple[Any, ...]) -> Any:
    """The compiled entry point of the numba ``dispatcher`` for the types of ``args`` (compiled,
    or loaded from numba's cache, if needed; not called).  An operator that calls a kernel
    with a record argument at every step calls this instead of the dispatcher: the
    dispatcher resolves the argument types at every call, ~6 us for a NamedTuple of 33 arrays
    (numba's ``Dispatcher.compile``)."""
    import numba

    return dispatcher.compile(tuple(numba.typeof(a) for a in args))
