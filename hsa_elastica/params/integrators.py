"""The time integrators of the compiled engines, in one registry.

``SimulationParams.integrator`` names one of :data:`INTEGRATORS`; every other module asks
:func:`integrator` for the record of that name (what the integrator needs and allows) instead
of comparing names:

* ``checks_stability_limit``: ``dt`` is limited by the explicit stability estimate
  (:func:`hsa_elastica.engines.timeloop.check_time_step` refuses a larger one); False for an
  integrator that refuses a step it cannot take instead (the implicit Newton iteration).
* ``default_dt`` [s]: the step a caller switching to this integrator uses when none is given
  (``--integrator implicit`` on explicit parameters, the Gymnasium envs); None: the
  parameters' own ``dt``.
* ``operator_path``: the per-rod operator path (``Robot.run``, a single rod's operators,
  ``--reference``) integrates with this scheme (PyElastica's Position Verlet); False: only a
  compiled engine steps it.
* :meth:`Integrator.build`: the compiled handle stepping a robot, stack or single rod with it
  (:func:`hsa_elastica.robots.compiled.compiled_engine`).  The handle types live above this
  layer: :mod:`hsa_elastica.robots.compiled` registers them (:func:`register_handle`) when it
  is imported.

The registry lives with the parameters (the lowest layer) so that ``SimulationParams`` can
validate the name against it and every layer above can ask it.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping

from hsa_elastica.params.base import DEFAULT_IMPLICIT_DT, ParameterError

#: ``(robot, simulation params or None, chunk) -> compiled handle``
HandleFactory = Callable[[Any, Any, int], Any]


@dataclass(frozen=True)
class Integrator:
    """What one time integrator of the compiled engines needs and allows (see the module doc)."""

    name: str
    summary: str
    checks_stability_limit: bool
    default_dt: float | None
    operator_path: bool
    #: the kernel table's command (:mod:`hsa_elastica.engines.kernel_table`) whose kernels a
    #: run on this integrator compiles besides its CLI command's (None: none)
    kernel_table: str | None = None

    def build(self, robot: Any, sim: Any, *, chunk: int) -> Any:
        """The compiled handle stepping ``robot`` with this integrator; ``sim`` is its
        ``SimulationParams`` (None: the defaults), ``chunk`` the steps per engine call."""
        factory = _HANDLES.get(self.name)
        if factory is None:
            raise RuntimeError(
                f"no compiled handle is registered for the {self.name!r} integrator "
                "(hsa_elastica.robots.compiled registers them when it is imported)"
            )
        return factory(robot, sim, chunk)


#: name -> record; the first entry is the default of ``SimulationParams.integrator``
INTEGRATORS: Mapping[str, Integrator] = MappingProxyType({
    "explicit": Integrator(
        name="explicit",
        summary="the fused Position-Verlet stepper (dt at most the stability estimate)",
        checks_stability_limit=True,
        default_dt=None,
        operator_path=True,
    ),
    "implicit": Integrator(
        name="implicit",
        summary="the generalized-alpha integrator (any dt whose Newton iterations converge)",
        checks_stability_limit=False,
        default_dt=DEFAULT_IMPLICIT_DT,
        operator_path=False,
        kernel_table="primitive-implicit",
    ),
})

#: the registered names, the default first
INTEGRATOR_NAMES: tuple[str, ...] = tuple(INTEGRATORS)
DEFAULT_INTEGRATOR: str = INTEGRATOR_NAMES[0]

_HANDLES: dict[str, HandleFactory] = {}


def integrator(which: Any = None) -> Integrator:
    """The record of an integrator: ``which`` is its name, an object with an ``integrator``
    attribute (``SimulationParams``) or None (both of the latter default to
    :data:`DEFAULT_INTEGRATOR`).  An unknown name raises :class:`ParameterError`."""
    name = which if isinstance(which, str) or which is None else getattr(
        which, "integrator", None)
    record = INTEGRATORS.get(DEFAULT_INTEGRATOR if name is None else name)
    if record is None:
        raise ParameterError(
            f"integrator = {name!r} is invalid: must be one of {INTEGRATOR_NAMES}")
    return record


def register_handle(name: str, factory: HandleFactory) -> None:
    """Make ``factory`` the compiled handle of the registered integrator ``name``."""
    integrator(name)  # a registered name
    _HANDLES[name] = factory
