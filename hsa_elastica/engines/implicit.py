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
(1 - alpha_m)/((1 - alpha_f) beta h^2) M`` by the static solver's coloured forward differences
(position and velocity of each column perturbed together), factorised by its bordered band LU
(Schur complement for the platform).  The factorisation is reused across steps (chord Newton)
and refreshed when an iteration contracts the residual by less than :attr:`ImplicitEngine.
slow_contraction`, after :attr:`ImplicitEngine.refresh_every` steps, or when a step fails.  A
step is accepted only when the max-norms of the force and couple rows are below
``tol_force`` [N] / ``tol_torque`` [N m]; a step that does not converge in ``max_iter``
iterations with a fresh Jacobian raises :class:`ImplicitStepFailed` (a ``ParameterError``
naming the step size and the time) and leaves the state at the start of the step.

Predictor: the algorithmic acceleration extrapolated linearly (``2 a_n - a_{n-1}``); a step
that fails is retried with ``a_{n+1} = a_n`` and then with constant velocity, with a fresh
Jacobian and backtracking on the weighted 2-norm of the residual, before it is refused.  A
motor's imposed angular velocity during a step is the secant of its angle schedule over the
step (the explicit stepper reads the rate at mid-step).  The coupling's twist filter
(``twist_filter_time``) advances once per step: every residual evaluation of a step starts the
filter from its state at the step's start.

:class:`ImplicitRobot` is the robot handle (same interface as
:class:`hsa_elastica.engines.fused.FastRobot`: ``run``, ``step``/``set_motor_angles``/``state``,
recorders, divergence checks); :func:`implicit_step` is the functional form ``(engine, dt)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.engines.compile import CompiledModel, FastPathUnsupported
from hsa_elastica.engines.fused import FastRobot, _schedule_table
from hsa_elastica.engines.implicit_kernels import (
    AlphaState,
    ChordBuffers,
    DynamicModel,
    DynamicTerms,
    FDBuffers,
    Increment,
    NewtonSettings,
    PackedLU,
    Pose,
    PoseBuffers,
    chord_steps,
    dynamic_fd_jacobian,
    dynamic_forces,
    set_pose,
)
from hsa_elastica.engines.statics import StaticSolver
from hsa_elastica.engines.statics_kernels import (
    KIND_BODY_POS,
    KIND_BODY_ROT,
    KIND_NODE,
    JacobianPattern,
    Unknowns,
)
from hsa_elastica.engines.statics_linalg import BorderedBandLU
from hsa_elastica.params import ParameterError
from hsa_elastica.physics.tables import (
    OP_DAMP_BODY,
    OP_DAMP_ROD,
    OP_END,
    OP_MATERIAL_DAMPING,
    OP_MOTOR,
    STATUS_STIFFNESS,
)

if TYPE_CHECKING:  # pragma: no cover
    from hsa_elastica.robots.builders import Robot
    from hsa_elastica.robots.handles import SingleRod
    from hsa_elastica.robots.stack import Stack

__all__ = [
    "DEFAULT_RHO_INF",
    "ImplicitEngine",
    "ImplicitRobot",
    "ImplicitStepFailed",
    "compiled_engine",
    "generalized_alpha",
    "implicit_step",
]

#: default spectral radius at infinite frequency (numerical dissipation of the stiff modes)
DEFAULT_RHO_INF = 0.8


class ImplicitStepFailed(ParameterError):
    """A step of the implicit integrator whose Newton iteration did not converge (the state is
    left at the start of the step).  ``dt`` [s] and ``time`` [s, start of the step]."""

    def __init__(self, dt: float, time: float, detail: str) -> None:
        self.dt = float(dt)
        self.time = float(time)
        super().__init__(
            f"simulation.dt = {dt:g} s is invalid for the implicit integrator at t = {time:.6g} s: "
            f"Newton did not converge ({detail}); use a smaller dt"
        )


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


class ImplicitEngine:
    """Generalized-alpha integrator of a fresh :class:`CompiledModel` (see the module doc).

    ``dt_table`` [s]: the time step the model's damper tables were built with (their per-step
    factors are turned into decay rates).  The engine owns the model's state arrays.
    """

    #: an iteration dividing the residual by less than 1 / this refreshes the Jacobian
    slow_contraction = 0.3
    #: steps after which the Jacobian is refreshed anyway
    refresh_every = 200
    #: unknown index -> where it is (e.g. ``"rod node 7"``), named in a refused step's message
    #: (set by :class:`ImplicitRobot` from the handle's system names)
    describe_unknown: Callable[[int], str] | None = None

    def __init__(self, model: CompiledModel, dt: float, *, dt_table: float,
                 rho_inf: float = DEFAULT_RHO_INF, tol_force: float = 1e-6,
                 tol_torque: float = 1e-8, max_iter: int = 20) -> None:
        dt = float(dt)
        if not (math.isfinite(dt) and dt > 0.0):
            raise ParameterError(f"simulation.dt = {dt!r} is invalid: must be a finite number > 0 (s)")
        self.dt = dt
        self.rho_inf = float(rho_inf)
        self.alpha_m, self.alpha_f, self.gamma, self.beta = generalized_alpha(rho_inf)
        self.tol_force = float(tol_force)
        self.tol_torque = float(tol_torque)
        self.max_iter = int(max_iter)
        self.model = model
        body = model.body_arrays
        J = body.mass_second_moment_of_inertia
        off = J * (1.0 - np.eye(3))[:, :, None]
        if J.size and np.any(np.abs(off) > 1e-12 * np.abs(J).max()):
            raise FastPathUnsupported("ImplicitEngine: a rigid body with a non-diagonal inertia")
        vel0 = [np.array(a, copy=True) for a in (model.rod_arrays.velocity, model.rod_arrays.omega,
                                                 body.velocity, body.omega)]
        self.solver = StaticSolver(model)  # layout, colouring, band LU; zeroes the velocities
        s = self.solver
        self.n = s.n
        prog = model.rates_program
        keep_bc = np.isin(prog[:, 0], (OP_MOTOR, OP_END)) if prog.size else np.zeros(0, bool)
        keep_d = np.isin(prog[:, 0], (OP_DAMP_ROD, OP_DAMP_BODY, OP_MATERIAL_DAMPING)) \
            if prog.size else np.zeros(0, bool)
        self.bc_program = np.ascontiguousarray(prog[keep_bc].reshape(-1, 2), dtype=np.int64)
        self.damp_program = np.ascontiguousarray(prog[keep_d].reshape(-1, 2), dtype=np.int64)
        # the colouring evaluated perturbed poses: one evaluation at the start pose (filter
        # off) puts the coupling's twist-filter memory back to the present strain
        s.evaluate(np.zeros(s.n_motors))
        c = model.couplings
        c.last_time[:] = 0.0
        self.filtered = bool(c.filter_time.shape[0] and np.any(c.filter_time > 0.0))
        self._filter_saved = c.kappa_vor.copy() if self.filtered else np.zeros((0, 0))
        self._filter_t0 = c.last_time.copy() if self.filtered else np.zeros(0)
        self._unknowns = Unknowns(s.kind, s.index, s.comp)
        self._model_args = DynamicModel(model.rod_arrays, model.body_arrays, model.tables,
                                        s.work, s.status)
        self.dt_table = float(dt_table)
        self._aux = self._make_aux()
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
        self._lu: Any = None
        self._jac_data: NDArray[np.float64] | None = None
        self._jac_shift: NDArray[np.float64] | None = None
        self._jac_age = 0
        self.time = 0.0
        self.n_jacobians = 0
        self.n_evaluations = 0
        self.n_steps = 0
        self.last_iterations = 0
        self._started = False
        self._packed: Any = None
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
        self._q0 = Pose(*(np.empty_like(a) for a in self._pose()))
        self._rot_rows = np.isin(s.kind, (1, 4, 5, KIND_BODY_ROT))
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
        self._coef = np.array([self.alpha_m, self.alpha_f, self.gamma, self.beta,
                               self.slow_contraction, self.max_iter], dtype=np.float64)
        self._tol = np.array([self.tol_force, self.tol_torque])
        self._settings = NewtonSettings(self._coef, self._tol, self._rot_rows, self._counts)

    # -- state -----------------------------------------------------------------------------
    def _make_aux(self) -> DynamicTerms:
        return DynamicTerms(self._unknowns, self.bc_program, self.damp_program, self.dt_table,
                            self._filter_saved, self._filter_t0)

    def _pose(self) -> tuple[NDArray[np.float64], ...]:
        m = self.model
        return (m.rod_arrays.position, m.rod_arrays.director, m.body_arrays.position,
                m.body_arrays.director)

    def extra_state(self) -> dict[str, np.ndarray]:
        """The integrator's own state beyond the model's arrays (copies): velocities, true,
        algorithmic and previous algorithmic accelerations of the unknowns, time [s], whether
        the initial acceleration is set, the Jacobian's age [steps] and the Jacobian and
        inertia shift it was factorised from (empty if none), so that :meth:`set_extra_state`
        re-makes the same factorisation and the run continues bitwise as if never stopped."""
        jd, js = self._jac_data, self._jac_shift
        keep = self._lu is not None and jd is not None and js is not None
        return {"ga_velocity": self.v.copy(), "ga_vdot": self.vdot.copy(),
                "ga_accel": self.a.copy(), "ga_accel_prev": self.a_prev.copy(),
                "ga_time": np.array([self.time]), "ga_started": np.array([int(self._started)]),
                "ga_jacobian_age": np.array([self._jac_age]),
                "ga_jacobian": jd.copy() if keep and jd is not None else np.zeros(0),
                "ga_jacobian_shift": js.copy() if keep and js is not None else np.zeros(0)}

    def set_extra_state(self, d: dict[str, np.ndarray]) -> None:
        """Restore :meth:`extra_state` (the model's arrays are restored by the caller)."""
        self.v[:] = d["ga_velocity"]
        self.vdot[:] = d["ga_vdot"]
        self.a[:] = d["ga_accel"]
        self.a_prev[:] = d["ga_accel_prev"]
        self.time = float(d["ga_time"][0])
        self._started = bool(d["ga_started"][0])
        self._jac_age = int(d["ga_jacobian_age"][0])
        self._lu, self._packed, self._jac_data, self._jac_shift = None, None, None, None
        if d["ga_jacobian"].size:
            import scipy.sparse as sp

            s = self.solver
            self._jac_data = np.array(d["ga_jacobian"], dtype=np.float64)
            self._jac_shift = np.array(d["ga_jacobian_shift"], dtype=np.float64)
            jac = sp.csc_matrix((self._jac_data.copy(), s.indices, s.indptr), shape=(s.n, s.n))
            self._lu = s.factorize(jac, self._jac_shift)

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

    def _factor(self, t: float, angles: NDArray[np.float64], rates: NDArray[np.float64],
                v: NDArray[np.float64], f0: NDArray[np.float64], x: NDArray[np.float64]) -> Any:
        s = self.solver
        h = self.dt
        cv = self.gamma / (self.beta * h)
        ca = (1.0 - self.alpha_m) / ((1.0 - self.alpha_f) * self.beta * h * h)
        f0 = f0.copy()
        mass = self.mass.copy()
        dynamic_fd_jacobian(
            t, angles, rates, v, self._model_args, self._aux, cv,
            JacobianPattern(s.steps, s.color_ptr, s.color_cols, s.indptr, s.indices),
            FDBuffers(f0, self._f1, self._mass1, self._saved, self._vsave, s.data,
                      self._rscratch),
            Increment(np.ascontiguousarray(x, dtype=np.float64), self._q0, self._first))
        self.n_jacobians += 1
        self._jac_age = 0
        import scipy.sparse as sp

        self._jac_data = s.data.copy()
        self._jac_shift = ca * mass
        jac = sp.csc_matrix((self._jac_data.copy(), s.indices, s.indptr), shape=(s.n, s.n))
        return s.factorize(jac, self._jac_shift)

    def _norms(self, r: NDArray[np.float64]) -> tuple[float, float]:
        ar = np.abs(r)
        rot = self._rot_rows
        return float(ar[~rot].max(initial=0.0)), float(ar[rot].max(initial=0.0))

    def _converged(self, r: NDArray[np.float64]) -> bool:
        fn, tn = self._norms(r)
        return fn <= self.tol_force and tn <= self.tol_torque

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

    # -- one step ------------------------------------------------------------------------------
    def step(self, angles: NDArray[np.float64], rates: NDArray[np.float64],
             angles0: NDArray[np.float64] | None = None,
             rates0: NDArray[np.float64] | None = None) -> float:
        """Advance by one step of :attr:`dt` to motor ``angles`` [rad] / ``rates`` [rad/s] at the
        step's end (``angles0``/``rates0``: at its start, for the initial acceleration of the
        first step).  Returns the new time [s]; raises :class:`ImplicitStepFailed`."""
        if not self._started:
            self.start(angles if angles0 is None else angles0,
                       rates if rates0 is None else rates0)
        h = self.dt
        t0 = self.time
        t1 = t0 + h
        am, af, g, b = self.alpha_m, self.alpha_f, self.gamma, self.beta
        v_n, a_n, vd_n = self.v.copy(), self.a.copy(), self.vdot.copy()
        base = h * v_n + (h * h * (0.5 - b)) * a_n
        for dst, src in zip(self._q0, self._pose()):
            np.copyto(dst, src)
        c = self.model.couplings
        if self.filtered:
            np.copyto(self._filter_saved, c.kappa_vor)
            np.copyto(self._filter_t0, c.last_time)
        # predictors: a_{n+1} = a_n, then (after a failure) constant velocity
        predictors = [base + (h * h * b) * (2.0 * a_n - self.a_prev), base + (h * h * b) * a_n,
                      h * v_n]
        stage = 0
        x = predictors[0]
        refreshed = False
        it = 0
        x_acc: NDArray[np.float64] | None = None  # last accepted iterate, its merit, the step
        merit_acc = math.inf
        dx = np.zeros(self.n)
        alpha = 1.0
        while True:
            self._set_pose(x)
            a1 = (x - base) / (b * h * h)
            v1 = v_n + h * (1.0 - g) * a_n + (h * g) * a1
            vd1 = ((1.0 - am) * a1 + am * a_n - af * vd_n) / (1.0 - af)
            f = self.forces(t1, angles, rates, v1)
            r = f - self.mass * vd1
            if self._converged(r):
                break
            merit = float(np.linalg.norm(np.where(self._rot_rows, 100.0 * r, r)))
            if not math.isfinite(merit):
                merit = math.inf
            if x_acc is not None and refreshed and not merit < merit_acc:
                # damped Newton: halve the step along the last direction
                alpha *= 0.5
                if alpha >= 1.0 / 64.0:
                    x = x_acc + alpha * dx
                    continue
                merit = math.inf
            if not math.isfinite(merit) or it >= self.max_iter:
                if stage + 1 >= len(predictors) or self._lu is None and not math.isfinite(merit) \
                        and refreshed:
                    self._fail(h, t0, it, r)
                stage += 1  # again from the next predictor with a fresh Jacobian
                x, self._lu, x_acc, merit_acc, alpha, refreshed = (
                    predictors[stage], None, None, math.inf, 1.0, False)
                continue
            slow = merit > self.slow_contraction * merit_acc
            if self._lu is None or slow or self._jac_age >= self.refresh_every:
                try:
                    self._lu = self._factor(t1, angles, rates, v1, f, x)
                except (RuntimeError, ValueError) as exc:
                    self._restore_start()
                    raise ImplicitStepFailed(h, t0, f"singular Jacobian ({exc})") from None
                refreshed = True
            dx = self._lu.solve(-r)
            x_acc, merit_acc, alpha = x.copy(), merit, 1.0
            x = x + dx
            it += 1
        self.last_iterations = it
        self.v[:] = v1
        self.a_prev[:] = self.a
        self.a[:] = a1
        self.vdot[:] = vd1
        self.time = t1
        self._jac_age += 1
        self.n_steps += 1
        return t1

    # -- many steps ---------------------------------------------------------------------------
    @staticmethod
    def _pack(lu: Any) -> PackedLU | None:
        """The bordered band LU as flat arrays for :func:`chord_steps` (None for SuperLU)."""
        if not isinstance(lu, BorderedBandLU):
            return None
        sv = lu.s
        idx, bptr, ab, abptr, ldab, kl, ku, piv, zs, zptr, cs = ([] for _ in range(11))
        bptr.append(0)
        abptr.append(0)
        zptr.append(0)
        for k, (ix, l, u) in enumerate(sv.blocks):
            band, p = lu.bands[k]
            idx.append(ix)
            bptr.append(bptr[-1] + ix.shape[0])
            ab.append(np.asarray(band).ravel(order="F"))
            abptr.append(abptr[-1] + band.size)
            ldab.append(band.shape[0])
            kl.append(l)
            ku.append(u)
            piv.append(np.asarray(p, dtype=np.int32))
            if sv.nb:
                zs.append(np.ascontiguousarray(lu.zs[k]).ravel())
                cs.append(np.ascontiguousarray(lu.cs[k]).ravel())
                zptr.append(zptr[-1] + lu.zs[k].size)
        cat = np.concatenate
        if sv.nb:
            slu, spiv = np.ascontiguousarray(lu.schur[0]), np.asarray(lu.schur[1], dtype=np.int64)
            zsa, csa = cat(zs), cat(cs)
        else:
            slu, spiv = np.zeros((0, 0)), np.zeros(0, dtype=np.int64)
            zsa = csa = np.zeros(0)
            zptr = [0] * (len(sv.blocks) + 1)
        return PackedLU(cat(idx).astype(np.int64), np.array(bptr, dtype=np.int64), cat(ab),
                np.array(abptr, dtype=np.int64), np.array(ldab, dtype=np.int64),
                np.array(kl, dtype=np.int64), np.array(ku, dtype=np.int64), cat(piv),
                zsa, np.array(zptr, dtype=np.int64), csa, sv.border.astype(np.int64), slu, spiv)

    def advance(self, angles: NDArray[np.float64], rates: NDArray[np.float64]) -> float:
        """``angles.shape[0] - 1`` steps; row ``k`` of ``angles`` [rad] / ``rates`` [rad/s]:
        the motors at ``time + k dt`` (row 0 only for the initial acceleration).  Chord
        steps run inside numba (:func:`chord_steps`); a step that needs a fresh Jacobian is
        taken by :meth:`step`.  Returns the new time [s]."""
        n = angles.shape[0] - 1
        if not self._started:
            self.start(angles[0], rates[0])
        k = 0
        while k < n:
            if self._lu is not None and self._packed is None:
                self._packed = self._pack(self._lu)
            budget = min(n - k, self.refresh_every - self._jac_age)
            if self._packed is not None and budget > 0:
                done = chord_steps(budget, self.dt, self.time, angles[k:], rates[k:],
                                   self._model_args, self._aux,
                                   AlphaState(self.v, self.a, self.vdot, self.a_prev),
                                   self._packed, self._settings, self._q0, self._buf)
                self.time = self.time + done * self.dt if done else self.time
                # the time of step k is t0 + k dt (as the kernel computes it)
                self._jac_age += done
                self.n_steps += done
                k += done
                if k >= n:
                    break
            self._lu = None
            self._packed = None
            self.step(angles[k + 1], rates[k + 1])
            k += 1
        return self.time

    def _fail(self, h: float, t0: float, it: int, r: NDArray[np.float64]) -> None:
        self._restore_start()
        fn, tn = self._norms(r)
        raise ImplicitStepFailed(h, t0, f"{it} iterations, residual {fn:.3g} N / {tn:.3g} N m"
                                 + self._worst(r))

    def _worst(self, r: NDArray[np.float64]) -> str:
        """``", largest at <where>"``: the unknown whose residual is furthest above its
        tolerance (the first non-finite one if any), named by :attr:`describe_unknown`."""
        if self.describe_unknown is None or r.size == 0:
            return ""
        bad = ~np.isfinite(r)
        scaled = np.abs(r) / np.where(self._rot_rows, self.tol_torque, self.tol_force)
        j = int(np.argmax(bad)) if bad.any() else int(np.argmax(scaled))
        return f", largest at {self.describe_unknown(j)}"

    def _set_pose(self, x: NDArray[np.float64]) -> None:
        set_pose(x, self._q0, self.model.rod_arrays, self.model.body_arrays, self._unknowns,
                 self._dbuf)

    def _restore_start(self) -> None:
        for dst, src in zip(self._pose(), self._q0):
            np.copyto(dst, src)
        self._lu = None
        if self.filtered:
            c = self.model.couplings
            np.copyto(c.kappa_vor, self._filter_saved)
            np.copyto(c.last_time, self._filter_t0)


def implicit_step(engine: ImplicitEngine, angles: NDArray[np.float64],
                  rates: NDArray[np.float64] | None = None) -> float:
    """One step of ``engine`` (its model and state) to motor ``angles`` [rad] at the step's
    end (``rates`` [rad/s], default 0); returns the new time [s]."""
    a = np.asarray(angles, dtype=np.float64)
    r = np.zeros_like(a) if rates is None else np.asarray(rates, dtype=np.float64)
    return engine.step(a, r)


class ImplicitRobot(FastRobot):
    """A robot, a stack or a single rod built by the builders, stepped by
    :class:`ImplicitEngine` at the handle's ``dt``: same interface as
    :class:`~hsa_elastica.engines.fused.FastRobot` (``run``, ``set_motor_angles``/``step``/
    ``state``, recorders, divergence checks; a refused step names the unknown with the largest
    residual by the handle's system names).

    ``rho_inf``: spectral radius of the generalized-alpha scheme; ``dt_table``: the step the
    damper tables were built with (default the robot's ``dt``).
    """

    def __init__(self, robot: Robot | Stack | SingleRod, *, rho_inf: float = DEFAULT_RHO_INF,
                 chunk: int = 500, dt_table: float | None = None, **kwargs: Any) -> None:
        super().__init__(robot, chunk=chunk)
        self.engine = ImplicitEngine(
            self.model, self.dt, dt_table=self.dt if dt_table is None else float(dt_table),
            rho_inf=rho_inf, **kwargs)
        self.engine.describe_unknown = self._unknown_names()

    def _unknown_names(self) -> Callable[[int], str]:
        """Unknown index -> ``"<system> node i"`` / ``"<system> element i"`` / ``"<body>"``,
        with the names divergence reports use (``named_systems()`` of the handle, else
        ``rod{i}`` / ``platform``)."""
        from hsa_elastica import compat

        named = getattr(self.robot, "named_systems", None)
        if callable(named):
            table = dict(named())
        else:  # a robot (a single rod and a stack name their systems)
            robot: Any = self.robot
            table = {rod: f"rod{i}" for i, rod in enumerate(robot.rods)}
            table[robot.platform] = "platform"
        rod, body = self.rod_arrays, self.body_arrays
        rods: list[tuple[int, int, int, int, str]] = []
        bodies: dict[int, str] = {}
        for system, name in table.items():
            if hasattr(system, "rest_lengths"):  # a rod (a rigid body has n_elems too)
                n0 = compat.block_offset(system.position_collection, rod.position)
                e0 = compat.block_offset(system.director_collection, rod.director)
                ne = int(system.n_elems)
                rods.append((n0, n0 + ne + 1, e0, e0 + ne, name))
            elif system is not None and body.position.shape[1]:
                bodies[compat.block_offset(system.position_collection, body.position)] = name
        s = self.engine.solver
        kind, index = s.kind, s.index

        def describe(j: int) -> str:
            k, i = int(kind[j]), int(index[j])
            if k in (KIND_BODY_POS, KIND_BODY_ROT):
                return bodies.get(i, f"body {i}")
            node = k == KIND_NODE
            for n0, n1, e0, e1, name in rods:
                if node and n0 <= i < n1:
                    return f"{name} node {i - n0}"
                if not node and e0 <= i < e1:
                    return f"{name} element {i - e0}"
            return f"{'node' if node else 'element'} {i} of the rod block"

        return describe

    def extra_state(self) -> dict[str, np.ndarray]:
        """See :meth:`ImplicitEngine.extra_state`."""
        return self.engine.extra_state()

    def set_extra_state(self, d: dict[str, np.ndarray]) -> None:
        """See :meth:`ImplicitEngine.set_extra_state`."""
        self.engine.set_extra_state(d)

    def _advance(self, n: int, t: float) -> float:
        try:
            return self._advance_steps(n, t)
        except ImplicitStepFailed:
            # the state is at the start of the refused step: so is the handle's time
            self.time = self.engine.time
            raise

    def _advance_steps(self, n: int, t: float) -> float:
        m = len(self._motor_bcs)
        eng = self.engine
        times = t + self.dt * np.arange(0, n + 1, dtype=np.float64)
        values = np.empty((n + 1, m))
        rates = np.empty((n + 1, m))
        col_v = np.empty(n + 1)
        col_r = np.empty(n + 1)
        for i, bc in enumerate(self._motor_bcs):
            angle, rate = (bc.angle, bc.angle_rate) if hasattr(bc, "angle") else (bc.torque, None)
            if i < self.motor_table.has_rate.shape[0]:
                self.motor_table.has_rate[i] = rate is not None
            _schedule_table(angle, rate, times, col_v, col_r)
            values[:, i] = col_v
            # the angular velocity imposed during step k: the secant of the angle table (the
            # rate at mid-step to O(h^2), as the explicit stepper reads it; a schedule's own
            # rate at the step's end is zero at the last step of a linear ramp that is still
            # turning the motor)
            rates[0, i] = col_r[0]
            rates[1:, i] = np.diff(col_v) / self.dt if rate is not None else 0.0
        eng.time = t
        if not self.model.scheduled_loads:
            return float(eng.advance(values, rates))
        # a BaseTwistTorque schedule (single-rod set-ups): its load row holds the torque at
        # the step's end (where the scheme evaluates the forces), one step per call; the
        # initial acceleration of a first step takes the torque at its start
        loads = self.model.loads
        for k in range(n):
            first = k == 0 and not eng._started
            for row, op in self.model.scheduled_loads:
                loads.torque[row] = float(op.torque(float(times[k])))
            if first:
                eng.start(values[0], rates[0])
            for row, op in self.model.scheduled_loads:
                loads.torque[row] = float(op.torque(float(times[k + 1])))
            eng.advance(values[k:k + 2], rates[k:k + 2])
        return float(eng.time)


def _simulation_params(robot: Any) -> Any:
    """The ``SimulationParams`` of a robot (``params.simulation``), of a stack's first
    segment (``params[0].simulation``) or of a single rod (``sim_params``); None if it has
    none."""
    if getattr(robot, "sim_params", None) is not None:
        return robot.sim_params
    p = getattr(robot, "params", None)
    if isinstance(p, (tuple, list)) and p:
        p = p[0]
    return getattr(p, "simulation", None)


def compiled_engine(robot: Robot | Stack | SingleRod, *, chunk: int = 500) -> FastRobot:
    """The compiled engine selected by the robot's ``simulation.integrator`` (a single rod's
    ``sim_params.integrator``): a
    :class:`~hsa_elastica.engines.fused.FastRobot` (``"explicit"``) or an
    :class:`ImplicitRobot` with ``simulation.implicit_rho_inf`` (``"implicit"``)."""
    sim = _simulation_params(robot)
    if sim is not None and getattr(sim, "integrator", "explicit") == "implicit":
        return ImplicitRobot(robot, rho_inf=float(sim.implicit_rho_inf), chunk=chunk)
    return FastRobot(robot, chunk=chunk)
