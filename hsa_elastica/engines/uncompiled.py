"""Kernels run as plain Python while they are neither compiled nor in numba's cache.

A solver that evaluates a kernel only a few times (the static solver checking a settled pose)
runs it as the plain Python of the same function rather than compiling it: well under a
second instead of 1-7 s of compilation per kernel on a cold start.  The operations
are the same IEEE ones in the same order, so the results are the same bit for bit
(``tests/test_statics.py``).
"""

from __future__ import annotations

import types
from typing import Any

from hsa_elastica.compat import numba_cache_has_entry

__all__ = ["ready", "plain", "PLAIN_MODULES"]

#: kernels known to be compiled in this process or in numba's on-disk cache
_READY: set[Any] = set()
#: plain-Python versions made so far (:func:`plain`)
_PLAIN: dict[Any, Any] = {}
#: modules whose kernels :func:`plain` runs as Python too when a plain kernel calls them and
#: they are not compiled: the static solver's own (the force kernels of ``physics`` are
#: compiled by every run that moves)
PLAIN_MODULES = ("hsa_elastica.engines.statics_kernels",)


def ready(kernel: Any) -> bool:
    """True if calling the numba ``kernel`` runs machine code without compiling it first."""
    if kernel not in _READY and (kernel.overloads or numba_cache_has_entry(kernel)):
        _READY.add(kernel)
    return kernel in _READY


def plain(kernel: Any) -> Any:
    """The plain Python of the numba ``kernel`` (``.py_func``), whose calls to the kernels of
    :data:`PLAIN_MODULES` that are not :func:`ready` go to their plain Python too: called from
    Python, each of them would otherwise be compiled with its CPython wrapper for the model's
    records, 1-2 s apiece on a cold start."""
    fn = _PLAIN.get(kernel)
    if fn is None:
        py = kernel.py_func
        glob = dict(py.__globals__)
        for name in py.__code__.co_names:
            callee = glob.get(name)
            callee_py = getattr(callee, "py_func", None)
            if (callee_py is not None and getattr(callee_py, "__module__", "") in PLAIN_MODULES
                    and not ready(callee)):
                glob[name] = plain(callee)
        fn = types.FunctionType(py.__code__, glob, py.__name__, py.__defaults__,
                                py.__closure__)
        _PLAIN[kernel] = fn
    return fn
