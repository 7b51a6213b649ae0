"""A handle to an operator that PyElastica builds inside ``finalize()`` (:class:`OperatorRef`):
the builders hand out their couplings, boundary conditions, joints, recorders and contact
forcings through it."""

from __future__ import annotations

import inspect
from typing import Any, Generic, TypeVar

__all__ = ["OperatorRef"]

T = TypeVar("T")


class OperatorRef(Generic[T]):
    """Handle to an operator that PyElastica instantiates at ``finalize()``.

    PyElastica 1.0's ``.using(cls, ...)`` stores the class and builds the instance inside
    ``finalize()`` without returning it.  :meth:`capture` returns a thin subclass of ``cls``
    (same signature) whose constructor records the new instance here, so builders can hand out
    the coupling, boundary conditions, joints and recorders after ``finalize()``.
    """

    def __init__(self) -> None:
        self._instance: T | None = None

    @property
    def instance(self) -> T:
        """The operator instance (raises before ``finalize()``)."""
        if self._instance is None:
            raise RuntimeError("operator not instantiated yet: call simulator.finalize() first")
        return self._instance

    @property
    def ready(self) -> bool:
        """True once PyElastica instantiated the operator."""
        return self._instance is not None

    def capture(self, cls: type[T]) -> type[T]:
        ref = self

        def __init__(obj: Any, *args: Any, **kwargs: Any) -> None:
            cls.__init__(obj, *args, **kwargs)  # type: ignore[misc]
            ref._instance = obj

        captured = type(cls.__name__, (cls,), {"__init__": __init__, "__doc__": cls.__doc__})
        # keep PyElastica's signature check (inspect.signature(cls).bind(...)) meaningful
        captured.__signature__ = inspect.signature(cls)  # type: ignore[attr-defined]
        captured.__module__ = cls.__module__
        captured.__qualname__ = cls.__qualname__
        return captured
