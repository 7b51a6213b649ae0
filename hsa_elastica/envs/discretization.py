"""The Gymnasium envs' discretization: elements per rod, internal step and Newton's tolerances
(``"coarse"``, the paper robot's default, or ``"full"``, the parameters as given), and the
check of the internal and control steps at construction (:class:`~hsa_elastica.envs.HSARobotEnv`,
:class:`~hsa_elastica.envs.HSAStackEnv`)."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from hsa_elastica.params import (
    DEFAULT_IMPLICIT_DT,
    ParameterError,
    RobotParams,
    check_run_length,
)
from hsa_elastica.params import integrator as integrator_record

__all__ = ["COARSE_NEWTON_TOLERANCES", "DISCRETIZATIONS", "IMPLICIT_DT", "check_steps",
           "discretized"]

#: internal step [s] of the implicit integrator (``integrator="implicit"``) when ``dt`` is not
#: given: the recommended step of docs/performance.md (sway mode within 0.6 % in frequency
#: and 1.2 % in damping; pose within 0.1 um of the explicit stepper on the primitives),
#: :data:`hsa_elastica.params.DEFAULT_IMPLICIT_DT`
IMPLICIT_DT = DEFAULT_IMPLICIT_DT
#: ``discretization`` -> (elements per rod, internal step [s]); None: as in the params
DISCRETIZATIONS: dict[str, tuple[int | None, float | None]] = {
    "coarse": (10, 6e-5),
    "full": (None, None),
}
#: Newton's tolerances of the implicit integrator in the ``"coarse"`` discretization,
#: ``simulation.implicit_tol_position`` [m] and ``implicit_tol_rotation`` [rad]: 10 times the
#: library's defaults, still 100 times below the integrator's pose accuracy target (0.1 mm), for
#: a model whose 10 elements per rod are far coarser than that (docs/performance.md,
#: "Environments"); ``"full"`` keeps the parameters' own
COARSE_NEWTON_TOLERANCES = (1e-6, 1e-4)


def check_steps(
    owner: str, segments: Sequence[RobotParams], control_dt: Any, dt_given: bool
) -> float:
    """The env's internal step of ``segments`` (shared by the stages) checked against the
    explicit integrator's stability limit, and ``control_dt`` [s] as a float: at least one
    internal step and at most :data:`~hsa_elastica.params.MAX_STEPS` of them (the cap of every
    run); ``ParameterError`` naming ``owner.dt`` / ``owner.control_dt`` and the range, at
    construction (a ``control_dt`` of 1e9 s asked for 121 TiB at the first step)."""
    from hsa_elastica.engines.timeloop import check_time_step

    internal = segments[0].simulation.dt
    for p in segments:
        try:
            check_time_step(p.simulation.dt, p)
        except ParameterError as exc:
            where = "" if dt_given else " (the discretization's internal step; pass a smaller dt)"
            detail = str(exc).split(" is invalid: ", 1)[-1]
            raise ParameterError(f"{owner}.dt = {p.simulation.dt!r}{where} is invalid: {detail}") from None
    return check_run_length(control_dt, internal, f"{owner}.control_dt", minimum=internal)


def discretized(
    segments: list[RobotParams], owner: str, *, discretization: str | None, given: bool,
    integrator: str | None, n_elements: int | None, dt: float | None,
) -> tuple[str, list[RobotParams]]:
    """The env's ``discretization`` (default ``"full"`` for ``given`` parameters, else
    ``"coarse"``; ``ParameterError`` naming ``owner`` for an unknown one) and ``segments`` with
    it applied: ``integrator``, then ``n_elements`` and ``dt`` [s] (each the discretization's
    default when None; the implicit integrator's default step is :data:`IMPLICIT_DT`)."""
    if discretization is None:
        discretization = "full" if given else "coarse"
    if discretization not in DISCRETIZATIONS:
        raise ParameterError(
            f"{owner}.discretization = {discretization!r} is invalid: must be one of "
            f"{', '.join(repr(k) for k in DISCRETIZATIONS)}"
        )
    default_elements, default_dt = DISCRETIZATIONS[discretization]

    def simulation(p: RobotParams, **changes: Any) -> RobotParams:
        return dataclasses.replace(p, simulation=dataclasses.replace(p.simulation, **changes))

    if integrator is not None:  # SimulationParams validates it
        segments = [simulation(p, integrator=integrator) for p in segments]
    default_dt = integrator_record(segments[0].simulation).default_dt or default_dt
    n_elements = default_elements if n_elements is None else n_elements
    dt = default_dt if dt is None else dt
    if n_elements is not None:  # RodParams validates it
        segments = [dataclasses.replace(p, rod=dataclasses.replace(p.rod, n_elements=n_elements))
                    for p in segments]
    if dt is not None:
        segments = [simulation(p, dt=dt) for p in segments]
    if discretization == "coarse":
        tol_position, tol_rotation = COARSE_NEWTON_TOLERANCES
        segments = [simulation(p, implicit_tol_position=tol_position,
                               implicit_tol_rotation=tol_rotation) for p in segments]
    return discretization, segments
