"""Implicit time stepping of a compiled HSA model: Lie-group generalized-alpha with Newton.

Scheme (Arnold & Bruels 2007, "Convergence of the generalized-alpha scheme for constrained
mechanical systems", Multibody Syst. Dyn. 18; its Lie-group form as used for Cosserat rods by
Grazioso et al., "A geometrically exact model for soft continuum robots: the finite element
deformation space formulation", Soft Robotics 2019, Sec. "time integration").  The unknowns
are those of the static solver (:mod:`hsa_elastica.engines.statics`): free node positions,
rotation increments of free elements (local frame, applied as PyElastica's kinematic update,
``Q <- exp(dtheta) Q``) and body poses.  Per unknown, with velocity ``v`` (node velocity, lab;
element / body angular velocity, local/body frame: the Lie algebra), true acceleration
``vdot`` and algorithmic acceleration ``a``, one step of ``h`` is::

    dq      = h v_n + h^2 (1/2 - beta) a_n + h^2 beta a_{n+1}       (q_{n+1} = q_n o exp(dq))
    v_{n+1} = v_n + h (1 - gamma) a_n + h gamma a_{n+1}
    (1 - alpha_m) a_{n+1} + alpha_m a_n = (1 - alpha_f) vdot_{n+1} + alpha_f vdot_n
    M vdot_{n+1} = F(q_{n+1}, v_{n+1}, t_{n+1})

with ``alpha_m = (2 rho - 1) / (rho + 1)``, ``alpha_f = rho / (rho + 1)``, ``gamma = 1/2 +
alpha_f - alpha_m``, ``beta = (gamma + 1/2)^2 / 4`` from the spectral radius at infinite
frequency ``rho = rho_inf`` in [0, 1] (1: no numerical dissipation, 0: asymptotic
annihilation of the stiff modes; second order for every rho).  ``F`` is the one force
evaluation of the package (:func:`hsa_elastica.physics.forces.evaluate_forces`) plus the
velocity-dependent forces the explicit stepper applies as dampers
(:mod:`hsa_elastica.engines.implicit_kernels`), all at the end of the step, i.e. implicit.

Newton on ``dq`` (residual ``R = F - M vdot``): the Jacobian ``dF/dq + gamma/(beta h) dF/dv -
(1 - alpha_m)/((1 - alpha_f) beta h^2) M`` from the laws' tangents (``jacobian="tangent"``,
:mod:`~hsa_elastica.engines.implicit_tangent`) or by the static solver's coloured forward
differences (``"fd"``: position and velocity of each column perturbed together), factorised
in the static solver's bordered band layout (band LU per rod, Schur complement for the
platform).  The factorisation is
reused across steps (chord Newton).  The whole iteration -- predictor, chord steps, Jacobian
refreshes and their factorisation, the retries -- is one numba kernel
(:func:`~hsa_elastica.engines.implicit_newton.newton_steps`); :meth:`ImplicitEngine.step` and
:meth:`ImplicitEngine.advance` call it (one step, or a control interval's steps per call).

Convergence is judged on the increments, scaled by ``tol_position`` [m] (node and body
positions) and ``tol_rotation`` [rad] (rotation increments): with ``w_k`` the max-norm of the
``k``-th scaled increment and ``theta = w_k / w_{k-1}`` its contraction rate (for the first
iteration of a step the rate of the step before), the error left after the update is about
``theta / (1 - theta) w_k`` (Hairer & Wanner, *Solving ODEs II*, Sec. IV.8), and the step is
accepted when that is <= 1 -- the accepted iterate is not evaluated again.  The defaults,
1e-7 m and 1e-5 rad (1e-7 m across a 10 mm element), are 1e3 below the issue's pose
tolerance (0.1 mm; measured: 0.0006 mm RMS from the explicit stepper on the primitives,
docs/performance.md); a residual whose force / couple rows are below ``tol_force`` [N] /
``tol_torque`` [N m] is accepted as well (a state at rest).  The Jacobian is refreshed when the
contraction rate exceeds :attr:`ImplicitEngine.slow_contraction_tangent` (tangents: a matrix
costs 2.5-3.3 evaluations on the robot) or :attr:`ImplicitEngine.slow_contraction` (differences: 30-78) or
predicts more than ``max_iter`` iterations, when a chord step makes the residual's weighted
2-norm grow (refreshed at the last iterate: a Newton step, backtracked by halving if it too
fails to decrease the norm), after :attr:`ImplicitEngine.refresh_every` steps, or when a step
fails; a step that does not converge raises :class:`ImplicitStepFailed` (a runtime failure,
:class:`~hsa_elastica.engines.timeloop.SimulationFailed`, naming the step size and the time)
and leaves the state at the start of the step.

Predictor: ``a_{n+1} = 0`` (``dq = h v_n + h^2 (1/2 - beta) a_n``): the stiff modes that the
scheme damps (axial waves, 9 kHz) alternate the sign of their algorithmic acceleration from
step to step, which the linear extrapolation ``2 a_n - a_{n-1}`` amplifies (on HSARobot-v0
at 2e-3 s with smooth commands: 22 against 46 Jacobians and 5.6 against 6.9 evaluations per
step).  A step that fails is retried with ``a_{n+1} = a_n`` and then with constant velocity,
with a fresh Jacobian, before it is refused.  With :attr:`ImplicitEngine.max_halvings` > 0
(the Gymnasium envs: :data:`ENV_MAX_HALVINGS`) a refused step is taken again as two steps of
half its size, and so on down to ``dt / 2**max_halvings``, then the run goes on at ``dt``
(generalized-alpha allows a change of step: ``v`` and ``a`` carry over, the Jacobian is made
again for the new size); every step taken converged, and one refused at the smallest size
raises as above.  A
motor's imposed angular velocity during a step is the secant of its angle schedule over the
step (the explicit stepper reads the rate at mid-step).  The coupling's twist filter
(``twist_filter_time``) advances once per step: every residual evaluation of a step starts the
filter from its state at the step's start.

:class:`ImplicitEngine` is an engine of ``(model, dt)`` as the fused stepper
(:class:`~hsa_elastica.engines.fused.Engine`: :meth:`ImplicitEngine.run_steps` under the model's
motor schedules); the robot handle around it is :class:`hsa_elastica.robots.compiled.ImplicitRobot` (``run``,
``step``/``set_motor_angles``/``state``, recorders, divergence checks); :func:`implicit_step` is
the functional form ``(engine, dt)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.engines.compile import CompiledModel, FastPathUnsupported
from hsa_elastica.engines.fused import _schedule_table
from hsa_elastica.engines.implicit_kernels import (
    AlphaState,
    ChordBuffers,
    DynamicModel,
    DynamicTerms,
    FDBuffers,
    JacobianWork,
    NewtonSettings,
    Pose,
    PoseBuffers,
    damping_rates,
    dynamic_forces,
)
from hsa_elastica.engines.implicit_newton import newton_steps
from hsa_elastica.engines.implicit_tangent import empty_tangent, make_implicit_tangent
from hsa_elastica.engines.statics import StaticSolver
from hsa_elastica.engines.statics_build import specialisation
from hsa_elastica.engines.timeloop import SimulationFailed
from hsa_elastica.engines.statics_linalg import FactorPlan, PackedLU, bordered_factor, packed_lu
from hsa_elastica.engines.statics_kernels import KIND_BODY_ROT, JacobianPattern, Unknowns
from hsa_elastica.params import DEFAULT_MAX_HALVINGS, MAX_HALVINGS, ParameterError
from hsa_elastica.physics.auxetic_law import step_memory
from hsa_elastica.physics.tables import (OP_DAMP_BODY, OP_DAMP_ROD, OP_END, OP_MATERIAL_DAMPING,
                                         OP_MOTOR, STATUS_STIFFNESS)

__all__ = ["DEFAULT_JACOBIAN", "DEFAULT_RHO_INF", "JACOBIANS", "ENV_MAX_HALVINGS",
           "ImplicitEngine", "ImplicitStepFailed", "generalized_alpha", "implicit_step"]

#: :attr:`ImplicitEngine.max_halvings` of the Gymnasium envs, the default of
#: ``simulation.max_halvings``: a training run is not stopped by one command the step size
#: cannot follow (a refused 2 ms step is retried down to 0.125 ms)
ENV_MAX_HALVINGS = DEFAULT_MAX_HALVINGS
#: default spectral radius at infinite frequency (numerical dissipation of the stiff modes)
DEFAULT_RHO_INF = 0.8
#: the Newton matrices of :class:`ImplicitEngine` (``jacobian=``, the first the default): the
#: laws' tangents (:mod:`hsa_elastica.engines.implicit_tangent`) or differences of the residual
JACOBIANS = ("tangent", "fd")
DEFAULT_JACOBIAN = JACOBIANS[0]
#: contraction rate assumed for the first iteration of the first step
THETA_START = 0.5


class ImplicitStepFailed(SimulationFailed):
    """A step of the implicit integrator whose Newton iteration did not converge (the state is
    left at the start of the step): a runtime failure of a run that started
    (:class:`~hsa_elastica.engines.timeloop.SimulationFailed`), not bad input -- whether a
    step converges is only known by taking it.  ``dt`` [s] and ``time`` [s, start of the
    step, the last good state]."""

    def __init__(self, dt: float, time: float, detail: str) -> None:
        self.dt = float(dt)
        self.detail = str(detail)
        super().__init__(
            time, "implicit integrator", time,
            f"refused a step of {dt:g} s: Newton did not converge ({detail})",
            f"simulation.dt = {dt:g} s was refused by the implicit integrator at "
            f"t = {float(time):.6g} s: Newton did not converge ({detail}); use a smaller dt or "
            "more simulation.max_halvings",
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (_refused_step, (self.dt, self.time, self.detail, str(self)))


def _refused_step(dt: float, time: float, detail: str, message: str) -> ImplicitStepFailed:
    """An :class:`ImplicitStepFailed` with its message (the unpickling of one, e.g. from a
    Dask worker: a halved step's message names the step it came from)."""
    exc = ImplicitStepFailed(dt, time, detail)
    exc.args = (message,)
    return exc


def generalized_alpha(rho_inf: float) -> tuple[float, float, float, float]:
    """``(alpha_m, alpha_f, gamma, beta)`` of Chung & Hulbert's generalized-alpha scheme for the
    spectral radius ``rho_inf`` in [0, 1] (see the module doc)."""
    r = float(rho_inf)
    if not (math.isfinite(r) and 0.0 <= r <= 1.0):
        raise ParameterError(
            f"simulation.implicit_rho_inf = {rho_inf!r} is invalid: must be in [0, 1]")
    am = (2.0 * r - 1.0) / (r + 1.0)
    af = r / (r + 1.0)
    g = 0.5 + af - am
    b = 0.25 * (g + 0.5) ** 2
    return am, af, g, b


def _checked_arguments(jacobian: str, dt: float, max_halvings: Any) -> float:
    """``dt`` as a float after checking the engine's arguments (``ParameterError`` naming the
    first bad one)."""
    if jacobian not in JACOBIANS:
        raise ParameterError(f"jacobian = {jacobian!r} is invalid: must be one of "
                             + ", ".join(repr(k) for k in JACOBIANS))
    dt = float(dt)
    if not (math.isfinite(dt) and dt > 0.0):
        raise ParameterError(f"simulation.dt = {dt!r} is invalid: must be a finite number > 0 (s)")
    if isinstance(max_halvings, bool) or not isinstance(max_halvings, (int, np.integer)) \
            or not 0 <= max_halvings <= MAX_HALVINGS:
        raise ParameterError(f"simulation.max_halvings = {max_halvings!r} is invalid: must be "
                             f"an integer in [0, {MAX_HALVINGS}]")
    return dt


class ImplicitEngine:
    """Generalized-alpha integrator of a fresh :class:`CompiledModel` (see the module doc).

    ``dt_table`` [s]: the time step the model's damper tables were built with (their per-step
    factors are turned into decay rates); ``jacobian``: one of :data:`JACOBIANS` (default
    :data:`DEFAULT_JACOBIAN`).  The engine owns the model's state arrays."""

    #: a chord iteration contracting the scaled increment by more than this per iteration
    #: (or predicted to need more than ``max_iter`` iterations) refreshes a Jacobian made by
    #: differences (``"fd"``: a matrix costs 30-78 evaluations) / from the tangents (2.5-3.3)
    slow_contraction, slow_contraction_tangent = 0.9, 0.4
    #: smallest contraction rate assumed for the first iteration of a step
    theta_min = 0.05
    #: steps after which the Jacobian is refreshed anyway
    refresh_every = 200
    #: a refused step is taken again as two steps of half its size, nested at most this many
    #: times (smallest step ``dt / 2**max_halvings``) before it is refused; 0 (the engine's
    #: default): refused at once.  The robots of :func:`~hsa_elastica.robots.compiled.compiled_engine`
    #: (CLI, ``build_fast_robot``, the Gymnasium envs) take ``simulation.max_halvings`` (default 4)
    max_halvings = 0
    _halving = False  # inside a halved step (see _halve)
    #: unknown index -> where it is (e.g. ``"rod node 7"``), named in a refused step's message
    #: (set by :class:`ImplicitRobot` from the handle's system names)
    describe_unknown: Callable[[int], str] | None = None

    def __init__(self, model: CompiledModel, dt: float, *, dt_table: float,
                 rho_inf: float = DEFAULT_RHO_INF, tol_force: float = 1e-6,
                 tol_torque: float = 1e-8, tol_position: float = 1e-7,
                 tol_rotation: float = 1e-5, max_iter: int = 20, max_halvings: int = 0,
                 jacobian: str | None = None) -> None:
        jacobian = DEFAULT_JACOBIAN if jacobian is None else jacobian  # read at the call
        self.dt = dt = _checked_arguments(jacobian, dt, max_halvings)
        self.max_halvings = int(max_halvings)
        self.rho_inf = float(rho_inf)
        self.alpha_m, self.alpha_f, self.gamma, self.beta = generalized_alpha(rho_inf)
        self.tol_force = float(tol_force)
        self.tol_torque = float(tol_torque)
        self.max_iter = int(max_iter)
        self.tol_position = float(tol_position)
        self.tol_rotation = float(tol_rotation)
        self.model = model
        body = model.body_arrays
        J = body.mass_second_moment_of_inertia
        off = J * (1.0 - np.eye(3))[:, :, None]
        if J.size and np.any(np.abs(off) > 1e-12 * np.abs(J).max()):
            raise FastPathUnsupported("ImplicitEngine: a rigid body with a non-diagonal inertia")
        vel0 = [np.array(a, copy=True) for a in (model.rod_arrays.velocity, model.rod_arrays.omega,
                                                 body.velocity, body.omega)]
        # layout, colouring, band LU; zeroes the velocities (its own Jacobian is not used)
        self.solver = StaticSolver(model, jacobian="fd")
        s = self.solver
        self.n = s.n
        prog = model.tables.rates_program
        keep_bc = np.isin(prog[:, 0], (OP_MOTOR, OP_END)) if prog.size else np.zeros(0, bool)
        keep_d = np.isin(prog[:, 0], (OP_DAMP_ROD, OP_DAMP_BODY, OP_MATERIAL_DAMPING)) \
            if prog.size else np.zeros(0, bool)
        self.bc_program = np.ascontiguousarray(prog[keep_bc].reshape(-1, 2), dtype=np.int64)
        self.damp_program = np.ascontiguousarray(prog[keep_d].reshape(-1, 2), dtype=np.int64)
        # the colouring evaluated perturbed poses: one evaluation at the start pose (filter
        # off) puts the coupling's twist-filter memory back to the present strain
        s.evaluate(np.zeros(s.n_motors))
        c = model.tables.couplings
        c.last_time[:] = 0.0
        self.filtered = bool(c.filter_time.shape[0] and np.any(c.filter_time > 0.0))
        self._filter_saved = c.kappa_vor.copy() if self.filtered else np.zeros((0, 0))
        self._filter_t0 = c.last_time.copy() if self.filtered else np.zeros(0)
        self._unknowns = Unknowns(s.kind, s.index, s.comp)
        self._model_args = DynamicModel(model.rod_arrays, model.body_arrays, model.tables,
                                        s.work, s.status)
        self.dt_table = float(dt_table)
        self._aux = self._make_aux()
        self.n_colors_rates = self.n_colors_joints = 0  # the tangent matrix's colours
        self._tangent = make_implicit_tangent(self) if jacobian == "tangent" else None
        #: the Newton matrix in use: "tangent" (:mod:`~hsa_elastica.engines.implicit_tangent`)
        #: or "fd" (asked for, or a model the tangents do not cover)
        self.jacobian = "fd" if self._tangent is None else "tangent"
        n = self.n
        self.v = np.zeros(n)
        # the velocities the model held (e.g. a kicked platform) are the initial ones: back
        # into the arrays, read at the first step (so a kick after construction counts too)
        for dst, src in zip((model.rod_arrays.velocity, model.rod_arrays.omega, body.velocity,
                             body.omega), vel0):
            np.copyto(dst, src)
        self.vdot = np.zeros(n)
        self.a = np.zeros(n)
        self.a_prev = np.zeros(n)
        self._jac_age = 0
        self.time = 0.0
        self.n_jacobians = 0
        self.n_evaluations = 0
        self.n_steps = 0
        #: refused steps taken again as two half steps (:attr:`max_halvings`)
        self.n_halved = 0
        self.last_iterations = 0
        self._started = False
        self._newton: Callable[..., int] | None = None  # newton_steps' specialisation
        self._allocate()

    def _allocate(self) -> None:
        """Work arrays of the kernels (the records they take)."""
        s, n = self.solver, self.n
        rod, body = self.model.rod_arrays, self.model.body_arrays
        self.mass = np.zeros(n)
        self.f = np.zeros(n)
        self._f1 = np.zeros(n)
        self._mass1 = np.zeros(n)
        self._saved = np.zeros((n, 3, 3))
        self._vsave = np.zeros(n)
        self._rscratch = np.empty((3, 3, 1))
        self._counts = np.zeros(1, dtype=np.int64)
        self._q0 = Pose(*(np.empty_like(a) for a in self.model.state.pose))
        self._rot_rows = np.isin(s.kind, (1, 4, 5, KIND_BODY_ROT))
        self._inv_scale = np.where(self._rot_rows, 1.0 / self.tol_rotation, 1.0 / self.tol_position)
        # first unknown of each unknown's element / body (rotation components are consecutive)
        self._first = np.arange(n, dtype=np.int64)
        for j in range(1, n):
            if s.kind[j] == s.kind[j - 1] and s.index[j] == s.index[j - 1]:
                self._first[j] = self._first[j - 1]
        self._dbuf = PoseBuffers(
            np.zeros_like(rod.position), np.zeros((3, rod.director.shape[2])),
            np.zeros_like(body.position), np.zeros((3, body.director.shape[2])),
            np.zeros((3, 3, rod.director.shape[2])), np.zeros((3, 3, body.director.shape[2])))
        w = [np.zeros(n) for _ in range(10)]
        self._buf = ChordBuffers(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9],
                                 self._dbuf)
        # coef[6]: the contraction rate carried from step to step (state, see extra_state)
        slow = self.slow_contraction if self._tangent is None else self.slow_contraction_tangent
        self._coef = np.array([self.alpha_m, self.alpha_f, self.gamma, self.beta, slow,
                               self.max_iter, THETA_START, self.theta_min], dtype=np.float64)
        self._tol = np.array([self.tol_force, self.tol_torque, self.tol_position,
                              self.tol_rotation])
        self._settings = NewtonSettings(self._coef, self._tol, self._rot_rows, self._counts)
        self._ga = AlphaState(self.v, self.a, self.vdot, self.a_prev)
        self._lu, plan = self._factor_plan()
        # info: [0] factorisation held, [1] its age, [2] Jacobians made, [3] refresh_every,
        # [4] status of the last call, [5] iterations of the last step (JacobianWork)
        self._info = np.array([0, 0, 0, self.refresh_every, 0, 0], dtype=np.int64)
        self._jw = JacobianWork(
            JacobianPattern(s.steps, s.color_ptr, s.color_cols, s.indptr, s.indices),
            FDBuffers(np.zeros(n), self._f1, self._mass1, self._saved, self._vsave,
                      np.zeros_like(s.data), self._rscratch),
            self._first, plan, np.zeros(n), np.zeros(n), self._info, self._lu,
            empty_tangent(n) if self._tangent is None else self._tangent)

    def _factor_plan(self) -> tuple[PackedLU, FactorPlan]:
        """The packed bordered band LU and where the Jacobian's values go in it, from the
        static solver's band layout (:func:`~hsa_elastica.engines.statics_linalg.packed_lu`)."""
        s = self.solver
        return packed_lu(s.band, s.n, s.indptr, s.indices)

    # -- state -----------------------------------------------------------------------------
    def _make_aux(self) -> DynamicTerms:
        t = self.model.tables
        return DynamicTerms(self._unknowns, self.bc_program, self.damp_program, self.dt_table,
                            self._filter_saved, self._filter_t0, *damping_rates(
                                t.rod_dampers, t.body_dampers, self.dt_table), step_memory(t.couplings))

    def extra_state(self) -> dict[str, np.ndarray]:
        """The integrator's own state beyond the model's arrays (copies): velocities, true,
        algorithmic and previous algorithmic accelerations of the unknowns, time [s], whether
        the initial acceleration is set, the Jacobian's age [steps] and the Jacobian and
        inertia shift it was factorised from (empty if none), so that :meth:`set_extra_state`
        re-makes the same factorisation and the run continues bitwise as if never stopped."""
        info = self._info
        keep = bool(info[0])
        return {"ga_velocity": self.v.copy(), "ga_vdot": self.vdot.copy(),
                "ga_accel": self.a.copy(), "ga_accel_prev": self.a_prev.copy(),
                "ga_time": np.array([self.time]), "ga_started": np.array([int(self._started)]),
                "ga_jacobian_age": np.array([int(info[1])]),
                "ga_contraction": np.array([self._coef[6]]),
                "ga_jacobian": self._jw.fd.data.copy() if keep else np.zeros(0),
                "ga_jacobian_shift": self._jw.shift.copy() if keep else np.zeros(0)}

    def set_extra_state(self, d: dict[str, np.ndarray]) -> None:
        """Restore :meth:`extra_state` (the model's arrays are restored by the caller)."""
        self.v[:] = d["ga_velocity"]
        self.vdot[:] = d["ga_vdot"]
        self.a[:] = d["ga_accel"]
        self.a_prev[:] = d["ga_accel_prev"]
        self.time = float(d["ga_time"][0])
        self._started = bool(d["ga_started"][0])
        self._jac_age = int(d["ga_jacobian_age"][0])
        self._info[1] = self._jac_age
        self._coef[6] = float(d["ga_contraction"][0]) if "ga_contraction" in d else THETA_START
        self._info[0] = 0
        if d["ga_jacobian"].size:
            jw = self._jw
            jw.fd.data[:] = d["ga_jacobian"]
            jw.shift[:] = d["ga_jacobian_shift"]
            self._info[0] = int(bordered_factor(jw.fd.data, jw.shift, jw.plan, self._lu))

    # -- evaluations ---------------------------------------------------------------------------
    @property
    def evaluations(self) -> int:
        """Force evaluations so far (Newton iterations, Jacobian columns excluded)."""
        return self.n_evaluations + int(self._counts[0])

    def forces(self, t: float, angles: NDArray[np.float64], rates: NDArray[np.float64],
               v: NDArray[np.float64]) -> NDArray[np.float64]:
        """:func:`~hsa_elastica.engines.implicit_kernels.dynamic_forces` at the present pose
        (into :attr:`f`, inertias into :attr:`mass`)."""
        self.n_evaluations += 1
        ok = dynamic_forces(t, angles, rates, v, self._model_args, self._aux, self.f, self.mass)
        if not ok:
            st = self.solver.status
            if st[0] == STATUS_STIFFNESS:
                raise FloatingPointError(
                    f"AuxeticCoupling.stiffness of coupling {int(st[1])} gave a non-positive "
                    f"stiffness ({st[2]:.6g}) at t = {st[3]:.6g} s")
            self.f[:] = np.nan
        return self.f

    def _norms(self, r: NDArray[np.float64]) -> tuple[float, float]:
        ar = np.abs(r)
        rot = self._rot_rows
        return float(ar[~rot].max(initial=0.0)), float(ar[rot].max(initial=0.0))

    def start(self, angles: NDArray[np.float64], rates: NDArray[np.float64]) -> None:
        """Initial velocities of the unknowns from the model's arrays and the consistent
        initial acceleration ``vdot_0 = M^-1 F(q_0, v_0)`` (= ``a_0``)."""
        s, m = self.solver, self.model
        arrays = {0: m.rod_arrays.velocity, 2: m.body_arrays.velocity,
                  KIND_BODY_ROT: m.body_arrays.omega}
        for j in range(self.n):
            k = int(s.kind[j])
            self.v[j] = arrays.get(k, m.rod_arrays.omega)[int(s.comp[j]), int(s.index[j])]
        f = self.forces(self.time, angles, rates, self.v)
        if not np.all(np.isfinite(f)):
            raise ImplicitStepFailed(self.dt, self.time, "non-finite forces at the start")
        self.vdot[:] = f / self.mass
        self.a[:] = self.vdot
        self.a_prev[:] = self.vdot
        self._started = True

    # -- steps ------------------------------------------------------------------------------
    def step(self, angles: NDArray[np.float64], rates: NDArray[np.float64],
             angles0: NDArray[np.float64] | None = None,
             rates0: NDArray[np.float64] | None = None) -> float:
        """Advance by one step of :attr:`dt` to motor ``angles`` [rad] / ``rates`` [rad/s] at the
        step's end (``angles0``/``rates0``: at its start, for the initial acceleration of the
        first step).  Returns the new time [s]; raises :class:`ImplicitStepFailed`."""
        a1 = np.asarray(angles, dtype=np.float64)
        r1 = np.asarray(rates, dtype=np.float64)
        a0 = a1 if angles0 is None else np.asarray(angles0, dtype=np.float64)
        r0 = r1 if rates0 is None else np.asarray(rates0, dtype=np.float64)
        return self.advance(np.stack([a0, a1]), np.stack([r0, r1]))

    def advance(self, angles: NDArray[np.float64], rates: NDArray[np.float64]) -> float:
        """``angles.shape[0] - 1`` steps; row ``k`` of ``angles`` [rad] / ``rates`` [rad/s]:
        the motors at ``time + k dt`` (row 0 only for the initial acceleration).  The steps,
        their Newton iterations and Jacobian refreshes run inside numba
        (:func:`~hsa_elastica.engines.implicit_newton.newton_steps`).  Returns the new time
        [s]; raises :class:`ImplicitStepFailed` (the state at the refused step's start)."""
        n = angles.shape[0] - 1
        if not self._started:
            self.start(angles[0], rates[0])
        self._info[3] = self.refresh_every
        args = (n, float(self.dt), float(self.time), angles, rates, *self.newton_records())
        # motor tables of C-contiguous float64: the kernel's specialisation for these records,
        # called without the dispatcher's typing of them (~100 us a call on the robot,
        # statics_build.specialisation); else the dispatcher
        call: Callable[..., int] = newton_steps
        if all(a.dtype == np.float64 and a.ndim == 2 and a.flags.c_contiguous
               for a in (angles, rates)):
            if self._newton is None:
                self._newton = specialisation(newton_steps, args)
            call = self._newton
        done = call(*args)
        return self.account(done, n)

    def newton_records(self) -> tuple[Any, ...]:
        """The records :func:`~hsa_elastica.engines.implicit_newton.newton_steps` takes after
        the motor tables: ``(model, terms, ga, settings, q0, buf, jw)``."""
        return (self._model_args, self._aux, self._ga, self._settings, self._q0, self._buf,
                self._jw)

    def account(self, done: int, n: int) -> float:
        """After a call of the Newton kernel from :attr:`time` that took ``done`` of ``n``
        steps: the time and counters; raises :class:`ImplicitStepFailed` (or
        ``FloatingPointError``) if a step was refused.  Returns the new time [s]."""
        info = self._info
        # the time of step k is t0 + k dt (as the kernel computes it)
        self.time = self.time + done * self.dt if done else self.time
        self.n_steps += done
        self._jac_age = int(info[1])
        self.n_jacobians = int(info[2])
        self.last_iterations = int(info[5])
        if done < n:
            info[0] = 0
            status = int(info[4])
            if status == 3:
                st = self.solver.status
                raise FloatingPointError(
                    f"AuxeticCoupling.stiffness of coupling {int(st[1])} gave a non-positive "
                    f"stiffness ({st[2]:.6g}) at t = {st[3]:.6g} s")
            if status == 2:
                raise ImplicitStepFailed(self.dt, self.time, "singular Jacobian")
            r = self._buf.r
            fn, tn = self._norms(r)
            raise ImplicitStepFailed(self.dt, self.time, f"{int(info[5])} iterations, residual "
                                     f"{fn:.3g} N / {tn:.3g} N m" + self._worst(r))
        return float(self.time)

    def run_steps(self, n: int, t: float) -> float:
        """``n`` steps from ``t`` [s] under the motor schedules of ``model.inputs.motor_bcs`` (the
        :class:`~hsa_elastica.engines.fused.Engine` interface); returns the new time [s]."""
        model = self.model
        times = t + self.dt * np.arange(0, n + 1, dtype=np.float64)
        values, rates = self.motor_rows(times)
        self.time = t
        if not model.inputs.scheduled_loads:
            return self.run_table(times, values, rates)
        # a BaseTwistTorque schedule (single-rod set-ups): its load row holds the torque at
        # the step's end (where the scheme evaluates the forces), one step per call; the
        # initial acceleration of a first step takes the torque at its start
        loads = model.tables.loads
        for k in range(n):
            first = k == 0 and not self._started
            for row, op in model.inputs.scheduled_loads:
                loads.torque[row] = float(op.torque(float(times[k])))
            if first:
                self.start(values[0], rates[0])
            for row, op in model.inputs.scheduled_loads:
                loads.torque[row] = float(op.torque(float(times[k + 1])))
            self.advance(values[k:k + 2], rates[k:k + 2])
        return float(self.time)

    def motor_rows(self, times: NDArray[np.float64]
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The motor commands [rad] at ``times`` [s] (rows) under the model's schedules, and
        the angular velocities [rad/s] imposed during the step ending at each row (row 0: the
        schedule's rate at ``times[0]``, for the initial acceleration)."""
        m = len(self.model.inputs.motor_bcs)
        n1 = times.shape[0]
        values = np.empty((n1, m))
        rates = np.empty((n1, m))
        col_v = np.empty(n1)
        col_r = np.empty(n1)
        for i, (angle, rate) in enumerate(self.model.motor_schedules()):
            _schedule_table(angle, rate, times, col_v, col_r)
            values[:, i] = col_v
            # the angular velocity imposed during step k: the secant of the angle table (the
            # rate at mid-step to O(h^2), as the explicit stepper reads it; a schedule's own
            # rate at the step's end is zero at the last step of a linear ramp that is still
            # turning the motor)
            rates[0, i] = col_r[0]
            rates[1:, i] = np.diff(col_v) / self.dt if rate is not None else 0.0
        return values, rates

    def run_table(self, times: NDArray[np.float64], values: NDArray[np.float64],
                  rates: NDArray[np.float64], first: int = 0, *, refused: bool = False) -> float:
        """The steps of the motor table ``values`` / ``rates`` at ``times`` from row ``first``
        (the state at :attr:`time` = ``times[first]``); a refused step is taken in halves
        (:attr:`max_halvings`).  ``refused``: the step from :attr:`time` was just refused (the
        state at its start): start with its halves.  Returns the new time [s]."""
        while True:
            if not refused:
                try:
                    return float(self.advance(values[first:], rates[first:]))
                except ImplicitStepFailed:
                    if self.max_halvings <= 0:
                        raise
            refused = False
            # the state is at the refused step's start: that step in halves, then on
            first += int(round((self.time - times[first]) / self.dt)) + 1
            self._halve()

    def _halve(self) -> None:
        """The step of :attr:`dt` from :attr:`time` that was refused (the state at its start)
        as two steps of half the size (each may be halved again, :attr:`max_halvings` levels
        in all).  Every step taken converged; a half step that is refused at the last level
        raises :class:`ImplicitStepFailed` naming its size and time."""
        h = self.dt
        t_k = self.time
        outermost = not self._halving
        self.dt, self.max_halvings, self._halving = 0.5 * h, self.max_halvings - 1, True
        self._info[0] = 0  # the factorisation belongs to the step size
        try:
            self.run_steps(2, t_k)
            self.n_halved += 1
        except ImplicitStepFailed as exc:
            if outermost:  # say which step the refused half step came from
                exc.args = (f"{exc.args[0]} (a step of {h:g} s at t = {t_k:.6g} s, halved "
                            f"down to {exc.dt:g} s)",)
            raise
        finally:
            self._halving = not outermost
            self.dt, self.max_halvings = h, self.max_halvings + 1
            self._info[0] = 0
        self.time = t_k + h

    def _worst(self, r: NDArray[np.float64]) -> str:
        """``", largest at <where>"``: the unknown whose residual is furthest above its
        tolerance (the first non-finite one if any), named by :attr:`describe_unknown`."""
        if self.describe_unknown is None or r.size == 0:
            return ""
        bad = ~np.isfinite(r)
        scaled = np.abs(r) / np.where(self._rot_rows, self.tol_torque, self.tol_force)
        j = int(np.argmax(bad)) if bad.any() else int(np.argmax(scaled))
        return f", largest at {self.describe_unknown(j)}"


def implicit_step(engine: ImplicitEngine, angles: NDArray[np.float64],
                  rates: NDArray[np.float64] | None = None) -> float:
    """One step of ``engine`` (its model and state) to motor ``angles`` [rad] at the step's
    end (``rates`` [rad/s], default 0); returns the new time [s]."""
    a = np.asarray(angles, dtype=np.float64)
    r = np.zeros_like(a) if rates is None else np.asarray(rates, dtype=np.float64)
    return engine.step(a, r)
