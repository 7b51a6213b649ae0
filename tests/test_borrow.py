"""Borrowed records (``hsa_elastica.physics.borrow``): same data, same types, no counting.

The engines borrow their records at the top of every kernel Python calls; what must hold is
that a borrowed array is the caller's array (writes land in it, reads see it), that the types
are unchanged (the callees' compiled specialisations are the same ones), that the arrays'
reference counts are not touched, and that an array going back to Python is the original
object.  The engines' trajectories being bit for bit those of counted records is checked by the
implicit, fused and static tests against their references.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, typeof, types
from numba.core import cgutils
from numba.extending import intrinsic
from numpy.typing import NDArray

from hsa_elastica.physics.borrow import borrowed


class _Inner(NamedTuple):
    a: NDArray[np.float64]
    k: int


class _Outer(NamedTuple):
    inner: _Inner
    b: NDArray[np.int64]
    x: float


@njit  # type: ignore[misc]
def _write_through(rec: _Outer) -> float:
    r = borrowed(rec)
    r.inner.a[1] = 7.5
    r.b[0] += r.inner.k
    s = 0.0
    for i in range(r.inner.a.shape[0]):  # a slice of a borrowed array in a loop
        s += r.inner.a[i:].sum()
    return s + r.x


@intrinsic  # type: ignore[misc]
def _has_meminfo(typingctx, a):  # type: ignore[no-untyped-def]
    """Whether array ``a`` carries a memory-info block (what numba counts references on)."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        array = context.make_array(signature.args[0])(context, builder, value=args[0])
        return builder.not_(cgutils.is_null(builder, array.meminfo))

    return types.boolean(a), codegen


@njit  # type: ignore[misc]
def _meminfo_seen(rec: _Outer) -> tuple[bool, bool, bool]:
    r = borrowed(rec)
    return _has_meminfo(rec.b), _has_meminfo(r.b), _has_meminfo(r.inner.a[1:])


@njit  # type: ignore[misc]
def _give_back(a: NDArray[np.float64]) -> NDArray[np.float64]:
    return borrowed(a)  # type: ignore[no-any-return]


def test_writes_land_in_the_callers_arrays() -> None:
    a = np.arange(4.0)
    b = np.array([1, 2], dtype=np.int64)
    rec = _Outer(_Inner(a, 3), b, 0.5)
    s = _write_through(rec)
    expected = np.array([0.0, 7.5, 2.0, 3.0])
    assert a[1] == 7.5 and b[0] == 4  # the caller's arrays were written
    assert s == sum(expected[i:].sum() for i in range(4)) + 0.5


@njit  # type: ignore[misc]
def _give_back_all(rec: _Outer) -> _Outer:
    return borrowed(rec)  # type: ignore[no-any-return]


def test_types_unchanged() -> None:
    rec = _Outer(_Inner(np.zeros(3), 1), np.zeros(2, dtype=np.int64), 1.0)
    back = _give_back_all(rec)
    # same numba type (the callees' specialisations are the same), the same arrays
    assert typeof(back) == typeof(rec)
    assert back.inner.a is rec.inner.a and back.b is rec.b
    assert (back.inner.k, back.x) == (rec.inner.k, rec.x)


def test_array_given_back_is_the_original() -> None:
    a = np.ones(5)
    assert _give_back(a) is a


def test_counting_is_off_for_the_borrowed_arrays_only() -> None:
    rec = _Outer(_Inner(np.zeros(3), 1), np.zeros(2, dtype=np.int64), 1.0)
    counted, borrowed_b, borrowed_slice = _meminfo_seen(rec)
    assert counted and not borrowed_b and not borrowed_slice
