"""Static equilibrium of a single HSA rod (the Section II-C characterization set-ups).

:class:`RodStaticSolver` solves the static equations of the same discrete model that
:func:`~hsa_elastica.robots.builders.build_single_rod` integrates (one force evaluation,
:func:`hsa_elastica.physics.forces.evaluate_forces`, through
:class:`~hsa_elastica.engines.statics.StaticSolver`): the auxetic rest-length and stiffness laws
(Eq. 2-5, with the optional quadratic laws), the optional compression-softening axial law,
the base held by ``MotorAngleBC`` (angle imposed) or ``FreeTwistBC`` + ``BaseTwistTorque``
(torque imposed, angle solved), the distal end free, twist-locked (``DistalTwistLockBC``) or
fixed (``FixedConstraint``), and a force on the distal node.  One solver is built per set-up
and reused for any angle / torque / tip force (:func:`rod_static_solver` caches them).

Each solve starts from the straight rod and continues in the base angle (motor base) or the
base torque (free-twist base) in steps of at most 45 degrees (resp. a quarter of the torque),
so the result does not depend on earlier solves.  The solution's stability is tested as for
the robot (eigenvalues of ``M^-1 K``).  A solve that does not converge, or ends on an unstable
pose, is reported with ``converged = False`` (or ``stable = False``); ``fallback`` (a callable
returning a :class:`RodSteadyState`, e.g. a dynamic relaxation) is then called and its result
returned with ``method = "dynamic"``.
"""

from __future__ import annotations

import logging
import math
import time as _time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.engines import statics_stability
from hsa_elastica.engines.compile import compile_simulator
from hsa_elastica.engines.statics import StaticOutcome, StaticSolver
from hsa_elastica.params import ParameterError, RodParams, SimulationParams, check_motor_angles
from hsa_elastica.physics.actuation import twist_about_axis
from hsa_elastica.physics.compression_law import AxialCompressionLaw, AxialLawParams
from hsa_elastica.robots.builders import build_single_rod
from hsa_elastica.robots.single_rod import check_setup

__all__ = ["RodSteadyState", "RodStaticSolver", "rod_static_solver", "clear_rod_static_solvers",
           "solve_static_rod"]

log = logging.getLogger(__name__)

#: largest base-angle increment [rad] of the continuation from the straight rod
MAX_ANGLE_STEP = math.pi / 2
#: load steps of the torque continuation (free-twist base)
TORQUE_STEPS = 4


@dataclass
class RodSteadyState:
    """Steady state of a single rod (SI units, lab frame; the rod is built along +z).

    ``method``: ``"static"`` or ``"dynamic"`` (fallback); ``iterations``: Newton iterations;
    ``stable``: the static solution is stable (None: not tested / dynamic).
    ``base_angle_rad``: twist of element 0 about its axis; ``length_m``: tip z - base z;
    ``holding_torque_Nm``: the twist torque the base supplies, ``-couple_z[0] / e_v[0]^3``;
    ``distal_axial_force_N``: compression of the last element, ``-r_c (Q^T n)_z / e`` (the
    blocked force of a fixed distal end); ``positions_m`` (3, n+1), ``directors`` (3, 3, n).
    """

    converged: bool
    method: str
    iterations: int
    stable: bool | None
    wall_time_s: float
    base_angle_rad: float
    torque_Nm: float
    tip_force_N: NDArray[np.float64]
    length_m: float
    holding_torque_Nm: float
    distal_axial_force_N: float
    positions_m: NDArray[np.float64]
    directors: NDArray[np.float64]
    message: str = ""
    state: Any = None  # (base angle, solver state) of a static solution, for ``initial``


def check_rod_loads(tip_force: Any, angle: Any, torque: Any) -> NDArray[np.float64]:
    """The tip force [N] as a (3,) vector (a number: along +z), after checking it and that the
    base ``angle`` [rad] and ``torque`` [N m] are finite numbers (``ParameterError`` naming the
    argument otherwise)."""
    f = np.array(tip_force, dtype=np.float64).reshape(-1)
    if f.shape == (1,):
        f = np.array([0.0, 0.0, f[0]])
    if f.shape != (3,) or not np.all(np.isfinite(f)):
        raise ParameterError(f"tip_force = {tip_force!r} is invalid: must be a number or 3 finite numbers (N)")
    for name, v in (("angle", angle), ("torque", torque)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating)) or not math.isfinite(v):
            raise ParameterError(f"{name} = {v!r} is invalid: must be a finite number")
    return f


class RodStaticSolver:
    """Static solver of one single-rod set-up (see module doc).

    ``base``: ``"motor"`` | ``"free_twist"``; ``distal``: ``"free"`` | ``"twist_locked"`` |
    ``"fixed"`` (as :func:`build_single_rod`); ``axial_law``: optional
    :class:`AxialLawParams` (an asymmetric law adds :class:`AxialCompressionLaw`);
    ``sim_params``: only its ``gravity`` matters here.
    """

    def __init__(self, rod_params: RodParams, *, base: str = "motor",
                 distal: str = "twist_locked", axial_law: AxialLawParams | None = None,
                 sim_params: SimulationParams | None = None) -> None:
        if not isinstance(rod_params, RodParams):
            raise ParameterError(f"rod_params = {rod_params!r} is invalid: must be a RodParams")
        check_setup(base, distal)
        if axial_law is not None and not isinstance(axial_law, AxialLawParams):
            raise ParameterError(f"axial_law = {axial_law!r} is invalid: must be an AxialLawParams")
        self.rod_params, self.base, self.distal = rod_params, base, distal
        with_law = axial_law is not None and not axial_law.is_symmetric
        h = build_single_rod(rod_params, sim_params, base=base, angle=0.0, torque=0.0,
                             distal=distal, tip_force=np.zeros(3), record=False,
                             finalize=False, check_dt=False)
        if with_law:
            assert axial_law is not None
            h.simulator.add_forcing_to(h.rod).using(
                AxialCompressionLaw, **AxialCompressionLaw.kwargs_for(rod_params, axial_law))
        h.simulator.finalize()
        self.model = compile_simulator(h.simulator)
        self.solver = StaticSolver(self.model)
        self.straight = self.solver.pose()
        self.reference = np.ascontiguousarray(self.model.rod_arrays.director[:, :, 0].copy())
        loads = self.model.tables.loads
        self._tip_row = int(np.nonzero(loads.node >= 0)[0][-1])
        rows = [k for k, _ in self.model.inputs.scheduled_loads]
        self._torque_row = rows[0] if rows else -1
        self._law_row = 0 if with_law else -1

    # -- loads -----------------------------------------------------------------------------
    def _set_loads(self, torque: float, tip_force: NDArray[np.float64]) -> None:
        loads = self.model.tables.loads
        loads.force[self._tip_row] = tip_force
        if self._torque_row >= 0:
            loads.torque[self._torque_row] = torque

    # -- solve -----------------------------------------------------------------------------
    def solve(self, *, angle: float = 0.0, torque: float = 0.0,
              tip_force: float | Sequence[float] | NDArray[np.float64] = 0.0,
              check_stability: bool = True, initial: RodSteadyState | None = None,
              fallback: Callable[[], RodSteadyState] | None = None) -> RodSteadyState:
        """Equilibrium at base ``angle`` [rad] (motor base) or base ``torque`` [N m] about +z
        (free-twist base), with ``tip_force`` [N] on the distal node (a number: along +z).
        ``initial``: a static result of this solver to start from (Newton from its pose,
        e.g. the same angle under another tip force) instead of the straight rod; if that
        fails the solve restarts from the straight rod.
        Raises ``ParameterError`` on non-finite input."""
        wall0 = _time.perf_counter()
        f = check_rod_loads(tip_force, angle, torque)
        check_motor_angles([angle], 1, field="angle")
        s = self.solver
        self._set_loads(float(torque), f)
        if self.base == "motor":
            angles = np.array([float(angle)])
            out = None
            if initial is not None:
                if initial.state is None or initial.state[2] is not self:
                    raise ParameterError("initial is invalid: must be a static result of this solver")
                s.set_pose(initial.state[1])
                out = s.solve(angles, start=np.array([initial.state[0]]), steps=1,
                              max_halvings=2, check_stability=check_stability)
            if out is None or not out.converged:
                s.set_pose(self.straight)
                steps = max(1, math.ceil(abs(float(angle)) / MAX_ANGLE_STEP))
                out = s.solve(angles, start=np.zeros(1), steps=steps,
                              check_stability=check_stability)
        else:
            s.set_pose(self.straight)
            out = self._torque_continuation(float(torque), f, check_stability)
            angles = np.zeros(0)
        if out.converged and out.stable is not False:
            return self._result(out, angles, float(torque), f, _time.perf_counter() - wall0)
        reason = out.message or "not converged"
        if fallback is None:
            res = self._result(out, angles, float(torque), f, _time.perf_counter() - wall0)
            res.converged = False
            res.message = reason
            return res
        log.warning("static solve of a single rod (angle %.4g rad, torque %.4g N m): %s; "
                    "falling back to the dynamics", angle, torque, reason)
        dyn = fallback()
        dyn.method = "dynamic"
        dyn.iterations = int(out.iterations)
        dyn.wall_time_s = _time.perf_counter() - wall0
        return dyn

    def _torque_continuation(self, torque: float, f: NDArray[np.float64],
                             check_stability: bool) -> StaticOutcome:
        """Newton along the base torque from 0 (halving the step on failure)."""
        s, none = self.solver, np.zeros(0)
        done, ds, total, halvings = 0.0, 1.0 / TORQUE_STEPS, 0, 0
        while done < 1.0 - 1e-12:
            nxt = min(1.0, done + ds)
            state = s.pose()
            self._set_loads(nxt * torque, f)
            ok, it = s.newton(none)
            total += it
            if ok:
                done = nxt
                continue
            s.set_pose(state)
            halvings += 1
            if halvings > 6:
                fn, tn = s.norms(s.evaluate(none))
                return StaticOutcome(False, total, fn, tn, message="continuation failed", angles=none)
            ds *= 0.5
        fn, tn = s.norms(s.evaluate(none))
        out = StaticOutcome(True, total, fn, tn, angles=none)
        if check_stability:
            statics_stability.stabilize(s, out, None)
        return out

    def _result(self, out: StaticOutcome, angles: NDArray[np.float64], torque: float,
                f: NDArray[np.float64], wall: float) -> RodSteadyState:
        self.solver.evaluate(angles)  # the arrays of the solution (not of a Jacobian probe)
        rod = self.model.rod_arrays
        ne = self.model.tables.couplings.printed_lengths.shape[1]
        n_lab = rod.director[:, :, ne - 1].T @ rod.internal_stress[:, ne - 1]
        factor = 1.0
        if self._law_row >= 0:
            factor = float(self.model.tables.compression.work[self._law_row, 4, ne - 1])
        return RodSteadyState(
            converged=bool(out.converged),
            method="static",
            iterations=int(out.iterations),
            stable=out.stable,
            wall_time_s=float(wall),
            base_angle_rad=float(twist_about_axis(
                self.reference, np.ascontiguousarray(rod.director[:, :, 0]))),
            torque_Nm=torque,
            tip_force_N=f.copy(),
            length_m=float(rod.position[2, ne] - rod.position[2, 0]),
            holding_torque_Nm=float(-rod.internal_couple[2, 0] / rod.voronoi_dilatation[0] ** 3),
            distal_axial_force_N=float(-factor * n_lab[2] / rod.dilatation[ne - 1]),
            positions_m=rod.position[:, : ne + 1].copy(),
            directors=rod.director[:, :, :ne].copy(),
            message=out.message,
            state=(float(angles[0]) if angles.size else 0.0, self.solver.pose(), self),
        )


_CACHE: "OrderedDict[Any, RodStaticSolver]" = OrderedDict()


def rod_static_solver(rod_params: RodParams, *, base: str = "motor",
                      distal: str = "twist_locked", axial_law: AxialLawParams | None = None
                      ) -> RodStaticSolver:
    """A :class:`RodStaticSolver` of the set-up, cached (the last 64 set-ups)."""
    key = (rod_params, base, distal, axial_law)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    solver = RodStaticSolver(rod_params, base=base, distal=distal, axial_law=axial_law)
    _CACHE[key] = solver
    while len(_CACHE) > 64:
        _CACHE.popitem(last=False)
    return solver


def clear_rod_static_solvers() -> None:
    """Forget the cached solvers of :func:`rod_static_solver`: the next call builds its
    solver again (after changing a module default a solver reads at construction, such as
    :data:`hsa_elastica.engines.statics.DEFAULT_JACOBIAN`)."""
    _CACHE.clear()


def solve_static_rod(rod_params: RodParams, *, angle: float = 0.0, torque: float = 0.0,
                     base: str = "motor", distal: str = "twist_locked",
                     tip_force: float | Sequence[float] | NDArray[np.float64] = 0.0,
                     axial_law: AxialLawParams | None = None, check_stability: bool = True,
                     initial: RodSteadyState | None = None,
                     fallback: Callable[[], RodSteadyState] | None = None) -> RodSteadyState:
    """Static steady state of a single rod: :meth:`RodStaticSolver.solve` on the cached
    solver of the set-up (``base``, ``distal``, ``axial_law``); see the module doc."""
    check_motor_angles([angle], 1, field="angle")  # before the solver is built
    solver = rod_static_solver(rod_params, base=base, distal=distal, axial_law=axial_law)
    return solver.solve(angle=angle, torque=torque, tip_force=tip_force,
                        check_stability=check_stability, initial=initial, fallback=fallback)
