"""Compiled laws declared in one module: a law's table, kernel and tangent found by its type.

The built-in laws of the compiled engines are dispatched by the operator codes of the model's
programs (``OP_*`` in :mod:`hsa_elastica.physics.tables`): each has its table in
``ModelTables`` and a branch in :func:`~hsa_elastica.physics.forces.evaluate_forces`.  A law
declared here needs neither: its module (listed in :data:`LAW_MODULES`) defines

* its **table**, a ``NamedTuple`` of arrays with one row per operator: a ``slots`` field
  (rows, 4) int64, each row's :class:`RodSlot` (where its rod sits in the rod memory block),
  and the rows' parameters in arrays whose layout is the law's own (per-node data of rods of
  different lengths concatenated, with each row's offset);
* its **table builder** ``table(entries)``: the table of the operators ``entries``, a
  sequence of ``(operator, rod, slot)`` -- any number, none included (a model without the law
  holds its empty table, so that every model has the same types, below);
* its **kernel** ``kernel(table, row, t, rod)`` (``@njit(cache=True)``; ``rod`` a
  :class:`~hsa_elastica.physics.mount_kernels.SystemView` of the rod block or of one rod, so the
  same kernel serves PyElastica's operator and every compiled executor), which *adds* row
  ``row``'s forces [N] and couples [N m] to ``external_forces`` / ``external_torques`` of the
  row's nodes and elements,
* optionally its **tangent** ``tangent(table, row, t, rod, dfdx, dfdv)``: the exact derivative
  of each of the row's node forces with respect to that node's position and velocity, written
  into ``(3, 3, n_nodes)`` arrays (a node-local law; part of the registry of every law's
  tangent, :func:`hsa_elastica.physics.laws.all_laws`, checked against central differences of
  the kernel by ``tests/test_law_tangents.py``),
* its **operator** (the Elastica-native class users add with ``.using(...)``), and one
  :func:`register_law` call that ties them together.

:func:`compile_simulator <hsa_elastica.engines.compile.compile_simulator>` gathers the
operators of each registered law into that law's table and gives each operator a row
``(OP_LAW, law_key(law, row))`` of the synchronize program.  ``ModelTables.laws`` holds one
table per registered law, in the order of :func:`registered_laws` (by name), whether the model
uses the law or not: its type is the same for every model, so the engines' kernels compiled
once (the kernel table, :mod:`hsa_elastica.engines.kernel_table`) serve models with and without
the laws.  ``evaluate_forces`` calls :func:`apply_laws` on the tuple, which numba unrolls at
compile time, calling each table's kernel by the table's type (an ``overload``: the dispatch
costs nothing at run time, and the engines' cached kernels stay cached, which a tuple of
kernels passed as arguments would not: numba's cache does not hold functions that take
functions).  Why the tables are not typed lists of one-operator tables: numba types a tuple
holding a typed list in Python on every call (measured: 36 us more per call of a two-argument
kernel), which every engine call would pay.

What such a law may do (checked where it can be): act on the nodes and elements of its
rows' rods and on nothing else (the static solver's and the implicit integrator's Jacobian
pattern is the rod's band), and hold no memory (its kernel is evaluated many times per step by
Newton iterations and finite differences; a law with a history goes through the built-in
tables, whose memories the executors save and restore).  The static solver and the implicit
integrator assemble the laws' tangents into their Newton matrices (:func:`add_law_tangents`)
when every law with rows in the model has one, and difference the whole residual otherwise.
A row is evaluated where its ``(OP_LAW, key)`` is in the synchronize program
(:func:`apply_laws`): the static solver's finite-difference remainder drops those rows, so a
law whose tangent is assembled is not differenced as well.

Why such a law lives in a module of the package, listed in :data:`LAW_MODULES`: numba's cache
index of an engine kernel lists the types of every specialisation it holds, and the type of a
law's table names the table's class by its module.  Reading that index imports the module; a
process that cannot import it (a user's law defined in a script's directory, run from another)
fails on *every* call of the engine kernel, with or without the law (measured with numba 0.68:
the index load raises ``ModuleNotFoundError``).  A law defined in the package is importable
wherever the package is, and its source is part of the digest that keeps the package's cache in
step (:mod:`hsa_elastica.kernel_cache`).  The list makes the tuple of tables the same in every
process, whichever modules it has imported.  A user's own law outside the package runs on
PyElastica's operator path (``.using(...)``), and the compiler refuses it by name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numba import literal_unroll, njit, types
from numba.extending import overload
from numpy.typing import NDArray

from hsa_elastica.params.base import ParameterError
from hsa_elastica.physics.rod_contact_laws import csc_add
from hsa_elastica.physics.tables import OP_LAW

__all__ = ["LAW_KEY", "LAW_MODULES", "LAW_REGISTRY", "CompiledLaw", "RodSlot",
           "add_law_tangents", "apply_laws", "has_tangents", "law_for", "law_key", "law_rows",
           "law_slot", "law_tables", "one_rod_slot", "register_law", "registered_laws",
           "rod_slot_view", "slot_rows"]

#: the modules that declare the registered laws (each calls :func:`register_law` on import)
LAW_MODULES: tuple[str, ...] = ("hsa_elastica.physics.drag",)

#: a law's row ``row`` of the registered law number ``b`` is the program row
#: ``(OP_LAW, b * LAW_KEY + row)``
LAW_KEY = 1 << 20


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

    ``operator``: the Elastica operator class; ``table(entries)``: the law's table for the
    operators ``entries``, a sequence of ``(operator, rod, slot)`` (``rod`` a
    ``CosseratRod``, ``slot`` its :class:`RodSlot`), empty included; ``kernel``: the force
    kernel ``kernel(table, row, t, rod)``; ``tangent``: its node-local tangent kernel or None
    (then the executors difference the whole residual of a model with it); ``case``:
    ``rng -> (table, view)`` a random valid configuration (row 0 checked) for the tangent
    check, None without a tangent."""

    name: str
    operator: type
    table: Callable[[Sequence[tuple[Any, Any, RodSlot]]], tuple[Any, ...]]
    kernel: Any
    tangent: Any = None
    case: Callable[[np.random.Generator], tuple[Any, Any]] | None = None


#: the registered laws by table class and by operator class
LAW_REGISTRY: dict[type, CompiledLaw] = {}
_BY_OPERATOR: dict[type, CompiledLaw] = {}


def register_law(law: CompiledLaw, table_class: type) -> CompiledLaw:
    """Make ``law`` (whose tables are ``table_class`` instances, a ``NamedTuple`` with a
    ``slots`` field) known to the compiler and to :func:`apply_laws`; returns it.  Raises
    ParameterError for a table class without ``slots``, one defined outside the modules of
    :data:`LAW_MODULES` (module doc) or an operator class already taken."""
    fields = getattr(table_class, "_fields", ())
    if "slots" not in fields:
        raise ParameterError(
            f"register_law: table_class = {table_class.__name__} is invalid: must be a NamedTuple "
            "with a 'slots' field ((rows, 4) int64: each row's RodSlot)")
    taken = _BY_OPERATOR.get(law.operator)
    if taken is not None and taken.name != law.name:
        raise ParameterError(
            f"register_law: operator = {law.operator.__name__} is invalid: already the operator "
            f"of the law {taken.name!r}")
    if table_class.__module__ not in LAW_MODULES:
        raise ParameterError(
            f"register_law: table_class = {table_class.__module__}.{table_class.__name__} is "
            f"invalid: must be defined in one of LAW_MODULES = {LAW_MODULES} (modules of the "
            "package, which every process can import and imports alike)")
    LAW_REGISTRY[table_class] = law
    _BY_OPERATOR[law.operator] = law
    return law


def registered_laws() -> tuple[CompiledLaw, ...]:
    """Every registered law, by name (each module of :data:`LAW_MODULES` imported first): the
    order of ``ModelTables.laws``."""
    for module in LAW_MODULES:
        importlib.import_module(module)
    return tuple(sorted(LAW_REGISTRY.values(), key=lambda law: law.name))


def law_for(operator: Any) -> CompiledLaw | None:
    """The registered law of an operator instance (by its exact class), or None."""
    registered_laws()
    return _BY_OPERATOR.get(type(operator))


def law_tables(entries: dict[str, list[tuple[Any, Any, RodSlot]]]) -> tuple[Any, ...]:
    """``ModelTables.laws``: the table of every registered law (:func:`registered_laws`'
    order) from its operators in ``entries`` (by the law's name; none: its empty table)."""
    return tuple(law.table(entries.get(law.name, [])) for law in registered_laws())


def law_key(law: CompiledLaw, row: int) -> int:
    """The program row ``(OP_LAW, key)`` of ``law``'s row ``row``."""
    return registered_laws().index(law) * LAW_KEY + row


def law_slot(laws: tuple[Any, ...], key: int) -> RodSlot:
    """The :class:`RodSlot` of the law row ``key`` (:func:`law_key`) of ``laws``."""
    return RodSlot(*(int(x) for x in laws[key // LAW_KEY].slots[key % LAW_KEY]))


def slot_rows(slots: Sequence[RodSlot]) -> NDArray[np.int64]:
    """A table's ``slots`` field, (rows, 4) int64, from each row's :class:`RodSlot`."""
    return np.array([tuple(s) for s in slots], dtype=np.int64).reshape(-1, 4)


def has_tangents(laws: tuple[Any, ...]) -> bool:
    """Whether every law of ``laws`` (a model's ``ModelTables.laws``) with rows has a tangent
    (then the executors assemble them, :func:`add_law_tangents`)."""
    return all(LAW_REGISTRY[type(table)].tangent is not None
               for table in laws if table.slots.shape[0] > 0)


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
def _law_of(table: Any) -> CompiledLaw | None:
    if not isinstance(table, types.BaseNamedTuple):
        return None
    return LAW_REGISTRY.get(getattr(table, "instance_class", None))  # type: ignore[arg-type]


def law_force(table: Any, row: int, t: float, rod: Any) -> None:  # pragma: no cover
    """The kernel of ``table``'s law (resolved at compile time by the table's type)."""
    raise NotImplementedError("law_force is called from compiled code only")


@overload(law_force)  # type: ignore[misc]
def _law_force(table: Any, row: Any, t: Any, rod: Any) -> Any:
    law = _law_of(table)
    if law is None:
        return None
    kernel = law.kernel

    def impl(table: Any, row: Any, t: Any, rod: Any) -> None:
        kernel(table, row, t, rod)

    return impl


@njit(cache=True)  # type: ignore[misc]
def _in_program(program: NDArray[np.int64], key: int) -> bool:
    """Whether the synchronize ``program`` has the row ``(OP_LAW, key)``."""
    for p in range(program.shape[0]):
        if program[p, 0] == OP_LAW and program[p, 1] == key:
            return True
    return False


def apply_laws(laws: tuple[Any, ...], t: float, rod: Any,
               program: NDArray[np.int64]) -> None:  # pragma: no cover
    """Each row of each law of the tuple ``laws`` (one table per registered law) whose row
    ``(OP_LAW, key)`` is in the synchronize ``program``, at time ``t`` [s] on the rod block
    view ``rod``.  (A program without a row leaves it out: the static solver's remainder, whose
    differences must not count a law whose tangent is assembled.)"""
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
        b = 0
        for table in literal_unroll(laws):
            for row in range(table.slots.shape[0]):
                if _in_program(program, b * LAW_KEY + row):
                    law_force(table, row, t, rod)
            b += 1

    return impl


def law_rows(laws: tuple[Any, ...]) -> int:  # pragma: no cover - compiled only
    """The number of rows of every law of ``laws`` together (0: no law in the model)."""
    raise NotImplementedError("law_rows is called from compiled code only")


@overload(law_rows)  # type: ignore[misc]
def _law_rows(laws: Any) -> Any:
    if not isinstance(laws, types.BaseTuple):
        return None
    if len(laws) == 0:
        def nothing(laws: Any) -> int:
            return 0

        return nothing

    def impl(laws: Any) -> int:
        n = 0
        for table in literal_unroll(laws):
            n += table.slots.shape[0]
        return n

    return impl


# -------------------------------------------------------------------------- the tangents
def law_tangent(table: Any, t: float, rod: Any, csc: Any, scales: Any,
                data: Any) -> None:  # pragma: no cover - compiled only
    """The tangent of ``table``'s law added into a CSC matrix (:func:`add_law_tangents`)."""
    raise NotImplementedError("law_tangent is called from compiled code only")


@overload(law_tangent)  # type: ignore[misc]
def _law_tangent(table: Any, t: Any, rod: Any, csc: Any, scales: Any, data: Any) -> Any:
    law = _law_of(table)
    if law is None:
        return None
    tangent = law.tangent
    if tangent is None:  # never assembled (has_tangents), typed all the same
        def nothing(table: Any, t: Any, rod: Any, csc: Any, scales: Any, data: Any) -> None:
            return None

        return nothing

    def impl(table: Any, t: Any, rod: Any, csc: Any, scales: Any, data: Any) -> None:
        unknown, indptr, indices = csc
        sx, sv = scales
        for row in range(table.slots.shape[0]):
            s, n = table.slots[row, 0], table.slots[row, 1]
            dfdx, dfdv = np.empty((3, 3, n)), np.empty((3, 3, n))
            tangent(table, row, t, rod, dfdx, dfdv)
            for k in range(n):
                for a in range(3):
                    r = unknown[s + k, a]
                    if r < 0:
                        continue
                    for b in range(3):
                        c = unknown[s + k, b]
                        if c >= 0:
                            csc_add(indptr, indices, r, c,
                                    sx * dfdx[a, b, k] + sv * dfdv[a, b, k], data)

    return impl


def add_law_tangents(laws: tuple[Any, ...], t: float, rod: Any, csc: Any, scales: Any,
                     data: Any) -> None:  # pragma: no cover - compiled only
    """``sx d f / d x + sv d f / d v`` (``scales`` = (sx, sv)) of every row of every law of
    ``laws`` at time ``t`` [s], at the present positions and velocities of the rod block view
    ``rod``, added into the CSC values ``data`` of the Newton matrix: ``csc`` = (``unknown``
    (n_nodes, 3), the unknown of each node's component, -1 where held; the pattern's
    ``indptr`` and sorted ``indices``).  Each row's node-local tangent fills the diagonal
    3 x 3 blocks of its nodes (the static solver: sx 1, sv 0; the implicit integrator:
    sx 1, sv the step's ``cv``).  Nothing for tables without rows."""
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
