"""One entry point for "where does it settle?": :func:`steady_state` for a robot, a stack of
robots or a single rod, statically (Newton on the static equations, the default) or
dynamically (relaxation of the dynamics from rest), returning one result type,
:class:`SteadyState` (per-segment data as a list).

It dispatches to the solvers of :mod:`hsa_elastica.robots` -- ``solve_static`` /
``solve_static_batch`` / ``solve_steady_state`` (robot), ``solve_stack_steady_state`` (stack,
either method), ``solve_static_rod`` (single rod) -- with the options given as keywords.  Those
solvers are importable from their modules only (no longer from the package top level).
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.params import ParameterError, RobotParams, RodParams
from hsa_elastica.robots.settling import SettleOptions, check_settle

__all__ = ["SteadyState", "steady_state", "METHODS"]

METHODS = ("static", "dynamic")


@dataclass
class SteadyState:
    """Result of :func:`steady_state` (SI units, robot base frame `robot_base`).

    ``segments``: per segment, bottom first, that segment's result with the solvers' field
    names (a robot stage: :class:`~hsa_elastica.robots.steady_state.SteadyStateResult` --
    ``platform_position_m``, ``platform_quaternion_xyzw``, ``rod_tip_positions_m``,
    ``motor_angles_rad``, ...; a single rod: :class:`~hsa_elastica.robots.rod_statics.
    RodSteadyState` -- ``positions_m``, ``length_m``, ``holding_torque_Nm``, ...); one entry for
    a robot or a rod.  ``relative_poses[k]``: ``(position (3,) [m], rotation (3, 3))`` of platform
    ``k`` in the frame of platform ``k - 1`` (a stack; empty otherwise).  ``converged``,
    ``method`` (``"static"`` or ``"dynamic"``: the method that produced the result, after a
    fallback), ``stable`` (None: not checked), ``wall_time_s`` [s]; ``detail``: the solver's own
    result object (diagnostics, settling data).  ``symmetry_broken`` / ``symmetry_branch_m``
    (a robot; None for a stack or a rod): the motor angles are symmetric under a symmetry of the
    robot that the pose breaks, so its mirror image is an equally valid equilibrium, and which
    branch this is (:mod:`hsa_elastica.robots.symmetry`).
    """

    converged: bool
    method: str
    stable: bool | None
    wall_time_s: float
    segments: list[Any]
    relative_poses: list[Any] = field(default_factory=list)
    detail: Any = field(default=None, repr=False)

    @property
    def top(self) -> Any:
        """The last segment's result (the robot's or the rod's own for one segment)."""
        return self.segments[-1]

    @property
    def symmetry_broken(self) -> bool | None:
        """A robot's :attr:`SteadyStateResult.symmetry_broken` (None: a stack, a rod, not tested)."""
        return getattr(self.detail, "symmetry_broken", None)

    @property
    def symmetry_branch_m(self) -> NDArray[np.float64] | None:
        """A robot's :attr:`SteadyStateResult.symmetry_branch_m` [m] (None: a stack, a rod, not
        tested)."""
        return getattr(self.detail, "symmetry_branch_m", None)


def _robot(result: Any, segments: Sequence[Any] | None = None,
           relative_poses: Sequence[Any] = ()) -> SteadyState:
    """:class:`SteadyState` of a solver's ``result`` (a robot's, a rod's or a stack's, with its
    ``segments`` and ``relative_poses``)."""
    return SteadyState(
        converged=bool(result.converged), method=str(result.method), stable=result.stable,
        wall_time_s=float(result.wall_time_s),
        segments=[result] if segments is None else list(segments),
        relative_poses=list(relative_poses), detail=result,
    )


def _angles(motor_angles: Any) -> NDArray[np.float64]:
    try:
        return np.asarray(motor_angles, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(
            f"motor_angles = {motor_angles!r} is invalid: must be numbers (rad)"
        ) from None


def _call(solver: Callable[..., Any], chosen: str, options: dict[str, Any], *args: Any,
          **fixed: Any) -> Any:
    """``solver(*args, **fixed, **options)`` once every key of ``options`` is one of the
    solver's keywords (else ``ParameterError`` naming it and the solver's keywords: a keyword
    of the other method must not surface as a ``TypeError``).  A solver that takes ``settle``
    (a :class:`~hsa_elastica.robots.settling.SettleOptions`) also takes its fields as
    keywords: they replace those of ``settle`` (or of the solver's default)."""
    parameters = inspect.signature(solver).parameters
    named = [p.name for p in parameters.values()
             if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    accepted = [name for name in named[len(args):] if name not in fixed]
    takes_any = any(p.kind == p.VAR_KEYWORD for p in parameters.values())  # a wrapper passes them on
    options = dict(options)
    if "settle" in accepted:
        settle_fields = [f.name for f in dataclasses.fields(SettleOptions)]
        accepted += settle_fields
        flat = {k: options.pop(k) for k in settle_fields if k in options}
        if flat:
            base = check_settle(options.get("settle", parameters["settle"].default))
            options["settle"] = dataclasses.replace(base, **flat)
    unknown = [] if takes_any else [k for k in options if k not in accepted]
    if unknown:
        raise ParameterError(
            f"steady_state(method={chosen!r}): keyword {unknown[0]!r} is invalid: "
            f"{solver.__name__} takes {', '.join(accepted)}"
        )
    return solver(*args, **fixed, **options)


def steady_state(
    system_or_params: Any,
    motor_angles: Any,
    *,
    method: str = "static",
    **options: Any,
) -> Any:
    """Steady state of a robot, a stack or a single rod at ``motor_angles`` [rad].

    ``system_or_params``: :class:`~hsa_elastica.params.RobotParams` (a robot; ``motor_angles``
    one per rod, or an ``(n_poses, n_rods)`` array: then a list of results, solved along a
    nearest-neighbour tour with warm starts, as ``solve_static_batch``), a sequence of
    ``RobotParams`` (a stack, bottom first; ``motor_angles`` one sequence per segment),
    :class:`~hsa_elastica.params.RodParams` (a single rod; ``motor_angles`` its base angle, a
    number), or a built handle (``Robot`` / ``Stack``: its parameters are used, the handle
    itself is not run).  ``method``: ``"static"`` (default) or ``"dynamic"``.
    ``options``: keywords of the solver used (``solve_static``, ``solve_static_batch``,
    ``solve_steady_state``, ``solve_stack_steady_state``, ``solve_static_rod``; a single rod's
    dynamic relaxation: :func:`hsa_elastica.robots.rod_relaxation.relax_rod`, whose
    ``sim_params.integrator = "implicit"`` steps the implicit integrator).  The dynamic solvers'
    settling test is one :class:`~hsa_elastica.robots.settling.SettleOptions` (``settle=``);
    its fields may also be given as keywords (``max_time=2.0``, ``tol_velocity=1e-5``), which
    replace those of ``settle`` or of the solver's default.  A keyword the
    solver does not take (e.g. ``max_time`` with ``method="static"``) and a value out of its
    range raise ``ParameterError`` naming the keyword, before any work.
    """
    if method not in METHODS:
        raise ParameterError(f"method = {method!r} is invalid: must be one of {METHODS}")
    params = getattr(system_or_params, "params", system_or_params)
    if isinstance(params, RobotParams):
        return _robot_steady_state(params, _angles(motor_angles), method, options)
    if isinstance(params, RodParams):
        angle = _angles(motor_angles).reshape(-1)
        if angle.size != 1:
            raise ParameterError(
                f"motor_angles = {motor_angles!r} is invalid for a single rod: must be one angle (rad)"
            )
        if method == "dynamic":
            from hsa_elastica.robots.rod_relaxation import relax_rod

            rod = _call(relax_rod, method, options, params, angle=float(angle[0]))
        else:
            from hsa_elastica.robots.rod_statics import solve_static_rod

            rod = _call(solve_static_rod, method, options, params, angle=float(angle[0]))
        return _robot(rod)
    if isinstance(params, Sequence) and params and all(isinstance(p, RobotParams) for p in params):
        from hsa_elastica.robots.stack_steady_state import solve_stack_steady_state

        stack = _call(solve_stack_steady_state, method, options, list(params), motor_angles,
                      method=method)
        return _robot(stack, stack.segments, stack.relative_poses)
    raise ParameterError(
        f"system_or_params = {type(system_or_params).__name__} is invalid: must be RobotParams, "
        "a sequence of RobotParams (a stack), RodParams, or a built Robot / Stack"
    )


def _robot_steady_state(
    params: RobotParams, angles: NDArray[np.float64], method: str, options: dict[str, Any]
) -> Any:
    if angles.ndim == 2:
        if method == "static":
            from hsa_elastica.robots.statics_api import solve_static_batch

            return [_robot(r) for r in _call(solve_static_batch, method, options, params, angles)]
        from hsa_elastica.robots.steady_state import solve_steady_state

        return [_robot(_call(solve_steady_state, method, options, params, a)) for a in angles]
    if method == "static":
        from hsa_elastica.robots.statics_api import solve_static

        return _robot(_call(solve_static, method, options, params, angles))
    from hsa_elastica.robots.steady_state import solve_steady_state

    return _robot(_call(solve_steady_state, method, options, params, angles))
