"""Compiled laws declared in one module: a law's table, kernel and tangent found by its type.

The built-in laws of the compiled engines are dispatched by the operator codes of the model's
programs (``OP_*`` in :mod:`hsa_elastica.physics.tables`): each has its table in
``ModelTables`` and a branch in :func:`~hsa_elastica.physics.forces.evaluate_forces`.  A law
declared here needs neither: its module defines

* its **table**, a ``NamedTuple`` of arrays and numbers with a ``slot`` field
  (:class:`RodSlot`: where its rod sits in the rod memory block),
* its **kernel** ``kernel(table, t, rod)`` (``@njit(cache=True)``; ``rod`` a
  :class:`~hsa_elastica.physics.mount_kernels.SystemView` of the rod block or of one rod, so the
  same kernel serves PyElastica's operator and every compiled executor), which *adds* the law's
  forces [N] and couples [N m] to ``external_forces`` / ``external_torques`` of the slot's
  nodes and elements,
* optionally its **tangent** ``tangent(table, t, rod, dfdx, dfdv)``: the exact derivative of
  each node's force with respect to that node's position and velocity, written into
  ``(3, 3, n_nodes)`` arrays (a node-local law; checked against central differences of the
  kernel for every registered law by ``tests/test_compiled_laws.py``),
* its **operator** (the Elastica-native class users add with ``.using(...)``), and one
  :func:`register_law` call that ties them together.

:func:`compile_simulator <hsa_elastica.engines.compile.compile_simulator>` turns each operator of
a registered type into one table (``ModelTables.laws``, a tuple: one entry per operator and
rod) and a row ``(OP_LAW, k)`` of the synchronize program; ``evaluate_forces`` calls
:func:`apply_laws` on the tuple, which numba unrolls at compile time, calling each table's
kernel by the table's type (an ``overload``: the dispatch costs nothing at run time, and the
engines' cached kernels stay cached, which a tuple of kernels passed as arguments would not:
numba's cache does not hold functions that take functions).

What such a law may do (checked where it can be): act on the nodes and elements of its one rod
and on nothing else (the static solver's and the implicit integrator's Jacobian pattern is
the rod's band), and hold no memory (its kernel is evaluated many times per step by Newton
iterations and finite differences; a law with a history goes through the built-in tables,
whose memories the executors save and restore).  The static solver and the implicit
integrator difference the residual of a model with such a law (their tangent assembly does not
take these laws' tangents yet).

Why such a law lives in a module of the package: numba's cache index of an engine kernel
lists the types of every specialisation it holds, and the type of a law's table names the
table's class by its module.  Reading that index imports the module; a process that cannot
import it (a user's law defined in a script's directory, run from another) fails on *every*
call of the engine kernel, with or without the law (measured with numba 0.68: the index load
raises ``ModuleNotFoundError``).  A law defined in the package is importable wherever the
package is, and its source is part of the digest that keeps the package's cache in step
(:mod:`hsa_elastica.kernel_cache`).  A user's own law outside the package runs on PyElastica's
operator path (``.using(...)``), and the compiler refuses it by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numba import literal_unroll, types
from numba.extending import overload

from hsa_elastica.params.base import ParameterError

__all__ = ["LAW_REGISTRY", "CompiledLaw", "RodSlot", "apply_laws", "law_for", "one_rod_slot",
           "register_law", "rod_slot_view"]


class RodSlot(NamedTuple):
    """Where a law's rod sits in the rod memory block: its first node and element and their
    counts (an operator's one-rod table: 0, n_nodes, 0, n_elements)."""

    node_start: int
    n_nodes: int
    elem_start: int
    n_elems: int


@dataclass(frozen=True)
class CompiledLaw:
    """A law the compiled engines run from its own module (see the module doc).

    ``operator``: the Elastica operator class; ``table(operator, rod, slot)``: the law's table
    for one operator acting on ``rod`` (a ``CosseratRod``) at ``slot`` (:class:`RodSlot`);
    ``kernel``: the force kernel; ``tangent``: its node-local tangent kernel or None (then the
    executors difference it, as they do anyway today); ``case``: ``rng -> (table, view)`` a
    random valid configuration for the tangent check, None without a tangent."""

    name: str
    operator: type
    table: Callable[[Any, Any, RodSlot], tuple[Any, ...]]
    kernel: Any
    tangent: Any = None
    case: Callable[[np.random.Generator], tuple[Any, Any]] | None = None


#: where a registered law's table class must be defined (module doc)
PACKAGE_PREFIX = "hsa_elastica."

#: the registered laws by table class and by operator class
LAW_REGISTRY: dict[type, CompiledLaw] = {}
_BY_OPERATOR: dict[type, CompiledLaw] = {}


def register_law(law: CompiledLaw, table_class: type) -> CompiledLaw:
    """Make ``law`` (whose tables are ``table_class`` instances, a ``NamedTuple`` with a
    ``slot`` field) known to the compiler and to :func:`apply_laws`; returns it.  Raises
    ParameterError for a table class without ``slot``, one defined outside the package (module
    doc) or an operator class already taken."""
    fields = getattr(table_class, "_fields", ())
    if "slot" not in fields:
        raise ParameterError(
            f"register_law: table_class = {table_class.__name__} is invalid: must be a NamedTuple "
            "with a 'slot' field (RodSlot)")
    taken = _BY_OPERATOR.get(law.operator)
    if taken is not None and taken.name != law.name:
        raise ParameterError(
            f"register_law: operator = {law.operator.__name__} is invalid: already the operator "
            f"of the law {taken.name!r}")
    if not table_class.__module__.startswith(PACKAGE_PREFIX):
        raise ParameterError(
            f"register_law: table_class = {table_class.__module__}.{table_class.__name__} is "
            f"invalid: must be defined in a module of the package ({PACKAGE_PREFIX}*), which "
            "every process can import")
    LAW_REGISTRY[table_class] = law
    _BY_OPERATOR[law.operator] = law
    return law


def law_for(operator: Any) -> CompiledLaw | None:
    """The registered law of an operator instance (by its exact class), or None."""
    return _BY_OPERATOR.get(type(operator))


def rod_slot_view(rod: Any) -> Any:
    """The :class:`~hsa_elastica.physics.mount_kernels.SystemView` of one ``CosseratRod``
    (what an operator passes to its law's kernel)."""
    from hsa_elastica.physics.mount_kernels import SystemView

    return SystemView(rod.position_collection, rod.velocity_collection, rod.omega_collection,
                      rod.director_collection, rod.external_forces, rod.external_torques)


def one_rod_slot(rod: Any) -> RodSlot:
    """The :class:`RodSlot` of a rod on its own (an operator's table)."""
    return RodSlot(0, int(rod.position_collection.shape[1]), 0,
                   int(rod.director_collection.shape[2]))


# -------------------------------------------------------------------------- the dispatch
def law_force(table: Any, t: float, rod: Any) -> None:  # pragma: no cover - compiled only
    """The kernel of ``table``'s law (resolved at compile time by the table's type)."""
    raise NotImplementedError("law_force is called from compiled code only")


@overload(law_force)  # type: ignore[misc]
def _law_force(table: Any, t: Any, rod: Any) -> Any:
    if not isinstance(table, types.BaseNamedTuple):
        return None
    law = LAW_REGISTRY.get(getattr(table, "instance_class", None))  # type: ignore[arg-type]
    if law is None:
        return None
    kernel = law.kernel

    def impl(table: Any, t: Any, rod: Any) -> None:
        kernel(table, t, rod)

    return impl


def apply_laws(laws: tuple[Any, ...], t: float, rod: Any) -> None:  # pragma: no cover
    """Every law of the tuple ``laws`` (tables of registered laws) at time ``t`` [s] on the rod
    block view ``rod``; nothing for an empty tuple."""
    raise NotImplementedError("apply_laws is called from compiled code only")


@overload(apply_laws)  # type: ignore[misc]
def _apply_laws(laws: Any, t: Any, rod: Any) -> Any:
    if not isinstance(laws, types.BaseTuple):
        return None
    if len(laws) == 0:
        def nothing(laws: Any, t: Any, rod: Any) -> None:
            return None

        return nothing

    def impl(laws: Any, t: Any, rod: Any) -> None:
        for table in literal_unroll(laws):
            law_force(table, t, rod)

    return impl
