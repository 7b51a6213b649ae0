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
  ``(3, 3, n_nodes)`` arrays (a node-local law; part of the registry of every law's tangent,
  :func:`hsa_elastica.physics.laws.all_laws`, checked against central differences of the
  kernel by ``tests/test_law_tangents.py``),
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
integrator assemble the laws' tangents into their Newton matrices (:func:`add_law_tangents`)
when every registered law of the model has one, and difference the whole residual otherwise.
A law is evaluated where its row ``(OP_LAW, k)`` is in the synchronize program
(:func:`apply_laws`): the static solver's finite-difference remainder drops those rows, so a
law whose tangent is assembled is not differenced as well.

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
from numba import literal_unroll, njit, types
from numba.extending import overload
from numpy.typing import NDArray

from hsa_elastica.params.base import ParameterError
from hsa_elastica.physics.rod_contact_laws import csc_add
from hsa_elastica.physics.tables import OP_LAW

__all__ = ["LAW_REGISTRY", "CompiledLaw", "RodSlot", "add_law_tangents", "apply_laws",
           "has_tangents", "law_for", "one_rod_slot", "register_law", "rod_slot_view"]


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
    executors difference the whole residual of a model with it); ``case``: ``rng -> (table, view)`` a
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


@njit(cache=True)  # type: ignore[misc]
def _in_program(program: NDArray[np.int64], k: int) -> bool:
    """Whether the synchronize ``program`` has the row ``(OP_LAW, k)``."""
    for p in range(program.shape[0]):
        if program[p, 0] == OP_LAW and program[p, 1] == k:
            return True
    return False


def apply_laws(laws: tuple[Any, ...], t: float, rod: Any,
               program: NDArray[np.int64]) -> None:  # pragma: no cover
    """Each law ``k`` of the tuple ``laws`` (tables of registered laws) whose row
    ``(OP_LAW, k)`` is in the synchronize ``program``, at time ``t`` [s] on the rod block view
    ``rod``; nothing for an empty tuple.  (A program without a law's row leaves it out: the
    static solver's remainder, whose differences must not count a law whose tangent is
    assembled.)"""
    raise NotImplementedError("apply_laws is called from compiled code only")


@overload(apply_laws)  # type: ignore[misc]
def _apply_laws(laws: Any, t: Any, rod: Any, program: Any) -> Any:
    if not isinstance(laws, types.BaseTuple):
        return None
    if len(laws) == 0:
        def nothing(laws: Any, t: Any, rod: Any, program: Any) -> None:
            return None

        return nothing

    def impl(laws: Any, t: Any, rod: Any, program: Any) -> None:
        k = 0
        for table in literal_unroll(laws):
            if _in_program(program, k):
                law_force(table, t, rod)
            k += 1

    return impl


# -------------------------------------------------------------------------- the tangents
def has_tangents(laws: tuple[Any, ...]) -> bool:
    """Whether every table of ``laws`` (a model's ``ModelTables.laws``) belongs to a law with
    a tangent (then the executors assemble them, :func:`add_law_tangents`)."""
    return all(LAW_REGISTRY[type(table)].tangent is not None for table in laws)


def law_tangent(table: Any, t: float, rod: Any, csc: Any, scales: Any,
                data: Any) -> None:  # pragma: no cover - compiled only
    """The tangent of ``table``'s law added into a CSC matrix (:func:`add_law_tangents`)."""
    raise NotImplementedError("law_tangent is called from compiled code only")


@overload(law_tangent)  # type: ignore[misc]
def _law_tangent(table: Any, t: Any, rod: Any, csc: Any, scales: Any, data: Any) -> Any:
    if not isinstance(table, types.BaseNamedTuple):
        return None
    law = LAW_REGISTRY.get(getattr(table, "instance_class", None))  # type: ignore[arg-type]
    if law is None:
        return None
    tangent = law.tangent
    if tangent is None:  # never assembled (has_tangents), typed all the same
        def nothing(table: Any, t: Any, rod: Any, csc: Any, scales: Any, data: Any) -> None:
            return None

        return nothing

    def impl(table: Any, t: Any, rod: Any, csc: Any, scales: Any, data: Any) -> None:
        s, n = table.slot.node_start, table.slot.n_nodes
        dfdx, dfdv = np.empty((3, 3, n)), np.empty((3, 3, n))
        tangent(table, t, rod, dfdx, dfdv)
        unknown, indptr, indices = csc
        sx, sv = scales
        for k in range(n):
            for a in range(3):
                r = unknown[s + k, a]
                if r < 0:
                    continue
                for b in range(3):
                    c = unknown[s + k, b]
                    if c >= 0:
                        csc_add(indptr, indices, r, c, sx * dfdx[a, b, k] + sv * dfdv[a, b, k],
                                data)

    return impl


def add_law_tangents(laws: tuple[Any, ...], t: float, rod: Any, csc: Any, scales: Any,
                     data: Any) -> None:  # pragma: no cover - compiled only
    """``sx d f / d x + sv d f / d v`` (``scales`` = (sx, sv)) of every law of ``laws`` at
    time ``t`` [s], at the present positions and velocities of the rod block view ``rod``,
    added into the CSC values ``data`` of the Newton matrix: ``csc`` = (``unknown``
    (n_nodes, 3), the unknown of each node's component, -1 where held; the pattern's
    ``indptr`` and sorted ``indices``).  Each law's node-local tangent fills the diagonal
    3 x 3 blocks of its nodes (the static solver: sx 1, sv 0; the implicit integrator:
    sx 1, sv the step's ``cv``).  Nothing for an empty tuple."""
    raise NotImplementedError("add_law_tangents is called from compiled code only")


@overload(add_law_tangents)  # type: ignore[misc]
def _add_law_tangents(laws: Any, t: Any, rod: Any, csc: Any, scales: Any, data: Any) -> Any:
    if not isinstance(laws, types.BaseTuple):
        return None
    if len(laws) == 0:
        def nothing(laws: Any, t: Any, rod: Any, csc: Any, scales: Any, data: Any) -> None:
            return None

        return nothing

    def impl(laws: Any, t: Any, rod: Any, csc: Any, scales: Any, data: Any) -> None:
        for table in literal_unroll(laws):
            law_tangent(table, t, rod, csc, scales, data)

    return impl
