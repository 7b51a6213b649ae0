"""Records whose arrays a compiled call borrows: no reference counts inside the engines' loops.

numba counts references to every array a compiled function holds: a kernel given a record
(a NamedTuple of arrays, :class:`~hsa_elastica.physics.tables.RodBlockArrays` has 34) adds one
to each array's count on entry and takes it back on exit, and an array sliced inside a loop
does the same per slice.  Each count is an atomic add on the array's memory-info block
(a few ns), and numba's pruning pass removes a pair only when no other release lies between
its two ends, which in a kernel with loops and callees is rare.  One force evaluation of the
four-rod robot counted some 1000 of them: 8-9 of its 20-21 us (``benchmarks/profile_eval.py``).

The arrays of a compiled model are owned by Python objects (the engine's records) that live
for the whole of any compiled call made on them, so inside that call the counts are not
needed.  :func:`borrowed` returns the same records with each array's memory-info pointer set
to null (numba's own ``carray`` views have none either): counting on such an array is a
no-op, and nothing else changes -- the data pointer, shape, strides, the Python parent (what
numba returns when the array goes back to Python) and the types are those of the argument,
so the callees' compiled specialisations are the same ones.

The rules that make it safe: borrow only the arguments of a kernel that is not inlined
(its caller, Python or compiled, holds them until the call returns; an inlined kernel's
arguments may be temporaries its caller releases inside the merged code), never an array the
call allocates, and let no borrowed array outlive the call (not stored in a container that is
returned, not returned as a view).
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from numba import types
from numba.core import cgutils
from numba.extending import lower_builtin, type_callable

__all__ = ["borrowed"]

R = TypeVar("R")


def _without_counts(context: Any, builder: Any, ty: Any, value: Any) -> Any:
    """``value`` of numba type ``ty`` with the memory-info pointer of every array in it null."""
    if isinstance(ty, types.Array):
        field = context.data_model_manager[ty].get_field_position("meminfo")
        null = cgutils.get_null_value(builder.extract_value(value, field).type)
        return builder.insert_value(value, null, field)
    if isinstance(ty, types.BaseTuple):
        out = value
        members: tuple[Any, ...] = tuple(cast(Any, ty))
        for k, member in enumerate(members):
            item = _without_counts(context, builder, member, builder.extract_value(value, k))
            out = builder.insert_value(out, item, k)
        return out
    return value


def borrowed(records: R) -> R:
    """``records`` (an array, or a tuple / NamedTuple of arrays, records and scalars, nested)
    with reference counting off for every array in it, for the rest of the compiled call
    (module doc).  In Python (a kernel run uncompiled) the records themselves."""
    return records


# In compiled code ``borrowed`` is typed and lowered directly, as numba's own builtins are
# (``type_callable`` / ``lower_builtin``): an ``@overload(inline="always")`` whose
# implementation called an intrinsic compiled that implementation on its own for every record
# type and inlined its IR: about 9 s of compile CPU per call site on the model's tables
# (a kernel taking the paper robot's ModelTables compiled in 10.9 s with the call, 1.7 s
# without it); typed and lowered here it adds nothing measurable (1.4-1.5 s).
@type_callable(borrowed)  # type: ignore[misc]
def _type_borrowed(context: Any) -> Any:
    def typer(records: Any) -> Any:
        return records

    return typer


@lower_builtin(borrowed, types.Any)  # type: ignore[misc]
def _lower_borrowed(context: Any, builder: Any, signature: Any, args: Any) -> Any:
    return _without_counts(context, builder, signature.args[0], args[0])
