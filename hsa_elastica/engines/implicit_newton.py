"""The implicit integrator's Newton iteration, in numba: one kernel, :func:`newton_steps`, takes
every step (chord iterations with the Jacobian reused across steps, Jacobian refreshes at the
present iterate and their factorisation, predictors, damped Newton, refusal with the state at
the step's start); the rules are in :mod:`hsa_elastica.engines.implicit`, the force evaluation,
the finite-difference Jacobian and the records in :mod:`hsa_elastica.engines.implicit_kernels`,
the bordered band LU in :mod:`hsa_elastica.engines.statics_linalg`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.engines.implicit_kernels import (
    AlphaState,
    ChordBuffers,
    DynamicModel,
    DynamicTerms,
    Increment,
    JacobianWork,
    NewtonSettings,
    Pose,
    dynamic_fd_jacobian,
    dynamic_forces,
    set_pose,
)
from hsa_elastica.engines.implicit_tangent import implicit_tangent_jacobian
from hsa_elastica.engines.statics_linalg import bordered_factor, bordered_solve
from hsa_elastica.physics.borrow import borrowed
from hsa_elastica.physics.auxetic_law import restore_step_memory, save_step_memory
from hsa_elastica.physics.forces import constrain_values
from hsa_elastica.physics.hysteresis import settle_play
from hsa_elastica.physics.tables import STATUS_STIFFNESS, BodyBlockArrays, RodBlockArrays

__all__ = ["newton_steps", "take_steps", "too_slow", "MAX_PLAY_PASSES"]

#: times a step converged on the hysteresis play's outputs of its predicted pose goes on with
#: the outputs of its converged pose (:func:`~hsa_elastica.physics.hysteresis.settle_play`);
#: a step whose outputs still moved at the last one ends with them (off the exact play by at
#: most that last correction)
MAX_PLAY_PASSES = 8


@njit(cache=True, inline="always")  # type: ignore[misc]
def _save_pose(q0: Pose, rod: RodBlockArrays, body: BodyBlockArrays) -> None:
    """The present pose into ``q0``."""
    q0.rod_position[:] = rod.position
    q0.rod_director[:] = rod.director
    q0.body_position[:] = body.position
    q0.body_director[:] = body.director


@njit(cache=True, inline="always")  # type: ignore[misc]
def _residual(f: NDArray[np.float64], mass: NDArray[np.float64], vdot: NDArray[np.float64],
              is_rot: NDArray[np.bool_], r: NDArray[np.float64]) -> tuple[float, float, float]:
    """``r = f - M vdot``; returns the max-norms of its force [N] and couple [N m] rows and
    the merit (max of the force rows and 100 x the couple rows)."""
    fmax = 0.0
    tmax = 0.0
    merit = 0.0
    for j in range(r.shape[0]):
        r[j] = f[j] - mass[j] * vdot[j]
        ar = abs(r[j])
        if is_rot[j]:
            tmax = max(tmax, ar)
            merit = max(merit, 100.0 * ar)
        else:
            fmax = max(fmax, ar)
            merit = max(merit, ar)
    return fmax, tmax, merit


@njit(cache=True, inline="always")  # type: ignore[misc]
def too_slow(theta: float, w: float, it: int, slow: float, max_iter: int) -> bool:
    """Whether a chord iteration contracting the scaled increment by ``theta`` per iteration
    (0: not measured yet), the last increment ``w`` (in units of the tolerance) after ``it``
    iterations, should get a fresh Jacobian: ``theta >= slow``, or convergence (``w theta^m /
    (1 - theta) <= 1``) predicted to need more than ``max_iter`` iterations in all."""
    if theta <= 0.0:
        return False
    if theta >= slow:
        return True
    need = w * theta / (1.0 - theta)
    if need <= 1.0:
        return False
    return it + math.log(need) / -math.log(theta) > max_iter


@njit(cache=True, inline="always")  # type: ignore[misc]
def _alpha_update(x: NDArray[np.float64], base: NDArray[np.float64], v: NDArray[np.float64],
                  a: NDArray[np.float64], vd: NDArray[np.float64], coef: NDArray[np.float64],
                  h: float, a1: NDArray[np.float64], v1: NDArray[np.float64],
                  vd1: NDArray[np.float64]) -> None:
    """Algorithmic acceleration, velocity and true acceleration at the end of the step from
    the increment ``x`` (the generalized-alpha relations of :mod:`hsa_elastica.engines.
    implicit`; ``coef[0:4]`` = ``alpha_m, alpha_f, gamma, beta`` of the settings)."""
    am = coef[0]
    af = coef[1]
    g = coef[2]
    b = coef[3]
    for j in range(x.shape[0]):
        a1[j] = (x[j] - base[j]) / (b * h * h)
        v1[j] = v[j] + h * (1.0 - g) * a[j] + h * g * a1[j]
        vd1[j] = ((1.0 - am) * a1[j] + am * a[j] - af * vd[j]) / (1.0 - af)


@njit(cache=True, inline="always")  # type: ignore[misc]
def _restore_start(q0: Pose, rod: RodBlockArrays, body: BodyBlockArrays, couplings: Any,
                   terms: DynamicTerms) -> None:
    """Pose, the twist filter's and the creep's and play's memory back to the step's start
    (a refused step taken again, in halves, must not advance the creep or the play twice)."""
    rod.position[:] = q0.rod_position
    rod.director[:] = q0.rod_director
    body.position[:] = q0.body_position
    body.director[:] = q0.body_director
    if terms.filter_saved.shape[0] > 0:
        couplings.kappa_vor[:] = terms.filter_saved
        couplings.last_time[:] = terms.filter_time0
    restore_step_memory(terms.memory_saved, couplings)


@njit(cache=True, inline="always")  # type: ignore[misc]
def _predictor(stage: int, h: float, b: float, base: NDArray[np.float64],
               v: NDArray[np.float64], a: NDArray[np.float64], x: NDArray[np.float64]) -> None:
    """Predictor ``stage`` of a step (see :mod:`hsa_elastica.engines.implicit`): 0 ``a_{n+1}
    = 0``, 1 ``a_{n+1} = a_n``, 2 constant velocity."""
    for j in range(x.shape[0]):
        if stage == 0:
            x[j] = base[j]
        elif stage == 1:
            x[j] = base[j] + h * h * b * a[j]
        else:
            x[j] = h * v[j]


# nogil: the GIL is released for the call, so that envs stepped on threads
# (hsa_elastica.envs.vector) run their steps side by side
@njit(cache=True, nogil=True)  # type: ignore[misc]
def newton_steps(
    n_steps: int, h: float, t0: float, angles: NDArray[np.float64],
    rates: NDArray[np.float64], model: DynamicModel, terms: DynamicTerms, ga: AlphaState,
    settings: NewtonSettings, q0: Pose, buf: ChordBuffers, jw: JacobianWork,
) -> int:
    """Up to ``n_steps`` generalized-alpha steps of ``h`` [s] from ``t0``, each solved by
    Newton with the Jacobian reused across steps (the one Newton iteration of the implicit
    integrator; the rules are in :mod:`hsa_elastica.engines.implicit`).  ``angles``/``rates``
    rows ``k + 1``: the motors at the end of step ``k``; ``ga`` updated in place.  A fresh
    Jacobian (:func:`implicit_tangent_jacobian` or :func:`dynamic_fd_jacobian`) is factorised here (:func:`bordered_factor`, into
    ``jw.lu``).  Returns the number of steps done; fewer than ``n_steps`` when a step failed
    (``jw.info[4]`` says why; the state is at that step's start, the residual of its last
    iterate in ``buf.r``).  The records are borrowed for the call
    (:func:`~hsa_elastica.physics.borrow.borrowed`: no reference counts in its loops)."""
    angles, rates, model, terms, ga, settings, q0, buf, jw = borrowed(
        (angles, rates, model, terms, ga, settings, q0, buf, jw))
    return take_steps(n_steps, h, t0, angles, rates, model, terms, ga, settings, q0, buf, jw)


# inlined into its two callers (newton_steps and the settling watch's loop), so that the watch
# links the step kernel itself, not newton_steps: the two compile side by side instead of one
# after the other (the cold parallel compile's longest chain of kernels 87 s shorter)
@njit(cache=True, inline="always")  # type: ignore[misc]
def take_steps(
    n_steps: int, h: float, t0: float, angles: NDArray[np.float64],
    rates: NDArray[np.float64], model: DynamicModel, terms: DynamicTerms, ga: AlphaState,
    settings: NewtonSettings, q0: Pose, buf: ChordBuffers, jw: JacobianWork,
) -> int:
    """:func:`newton_steps`' loop over :func:`_newton_step`."""
    jw.info[4] = 0
    for s in range(n_steps):
        t1 = t0 + (s + 1) * h
        if not _newton_step(h, t1, angles[s + 1], rates[s + 1], model, terms, ga, settings,
                            q0, buf, jw):
            return s
    return n_steps


@njit(cache=True, inline="always")  # type: ignore[misc]
def _begin_step(h: float, b: float, model: DynamicModel, terms: DynamicTerms, ga: AlphaState,
                q0: Pose, buf: ChordBuffers) -> None:
    """Keep the step's start (pose, twist-filter, creep and play memory), ``base = h v_n +
    h^2 (1/2 - beta) a_n`` and the first predictor ``a_{n+1} = 0`` in ``buf.x``."""
    _save_pose(q0, model.rod, model.body)
    if terms.filter_saved.shape[0] > 0:
        terms.filter_saved[:] = model.tables.couplings.kappa_vor
        terms.filter_time0[:] = model.tables.couplings.last_time
    save_step_memory(model.tables.couplings, terms.memory_saved)
    v, a = ga.v, ga.a
    base = buf.base
    for j in range(v.shape[0]):
        base[j] = h * v[j] + h * h * (0.5 - b) * a[j]
    _predictor(0, h, b, base, v, a, buf.x)


@njit(cache=True, inline="always")  # type: ignore[misc]
def _fail(code: int, it: int, q0: Pose, model: DynamicModel, terms: DynamicTerms,
          info: NDArray[np.int64]) -> bool:
    """A refused step: the state back to its start, ``info[4] = code``; returns False."""
    _restore_start(q0, model.rod, model.body, model.tables.couplings, terms)
    info[4] = code
    info[5] = it
    return False


@njit(cache=True, inline="always")  # type: ignore[misc]
def _merit(ok: bool, r: NDArray[np.float64], is_rot: NDArray[np.bool_]) -> float:
    """Weighted 2-norm of the residual (couples x 100); inf if the evaluation failed."""
    merit = 0.0
    for j in range(r.shape[0]):
        rj = 100.0 * r[j] if is_rot[j] else r[j]
        merit += rj * rj
    merit = math.sqrt(merit)
    if not ok or not np.isfinite(merit):
        merit = np.inf
    return merit


@njit(cache=True, inline="always")  # type: ignore[misc]
def _refresh(t1: float, ang: NDArray[np.float64], rat: NDArray[np.float64], model: DynamicModel,
             terms: DynamicTerms, cv: float, ca: float, q0: Pose, buf: ChordBuffers,
             jw: JacobianWork) -> bool:
    """A fresh Jacobian at the iterate ``buf.x`` (residual ``buf.f``), factorised into
    ``jw.lu``; False if the factorisation is singular."""
    info = jw.info
    jw.fd.f0[:] = buf.f
    if jw.tangent.enabled[0]:
        implicit_tangent_jacobian(t1, ang, rat, buf.v1, model, terms, cv, jw.tangent,
                                  jw.fd.data)
    else:
        dynamic_fd_jacobian(t1, ang, rat, buf.v1, model, terms, cv, jw.pattern, jw.fd,
                            Increment(buf.x, q0, jw.first))
    mass = buf.mass
    for j in range(mass.shape[0]):
        jw.shift[j] = ca * mass[j]
    info[2] += 1
    info[1] = 0
    if not bordered_factor(jw.fd.data, jw.shift, jw.plan, jw.lu):
        info[0] = 0
        return False
    info[0] = 1
    return True


@njit(cache=True, inline="always")  # type: ignore[misc]
def _newton_update(buf: ChordBuffers, jw: JacobianWork, is_rot: NDArray[np.bool_],
                   inv_pos: float, inv_rot: float) -> float:
    """``dx = -J^-1 r``, the iterate kept in ``jw.x_acc``, ``x += dx``; returns the max-norm of
    the scaled increment."""
    r, dx, x = buf.r, buf.dx, buf.x
    n = r.shape[0]
    for j in range(n):
        r[j] = -r[j]
    bordered_solve(jw.lu, r, dx, buf.work)
    for j in range(n):
        r[j] = -r[j]
    jw.x_acc[:] = x
    w = 0.0
    for j in range(n):
        x[j] += dx[j]
        w = max(w, abs(dx[j]) * (inv_rot if is_rot[j] else inv_pos))
    return w


@njit(cache=True, inline="always")  # type: ignore[misc]
def _end_step(h: float, ang: NDArray[np.float64], model: DynamicModel, terms: DynamicTerms,
              ga: AlphaState, coef: NDArray[np.float64], q0: Pose, buf: ChordBuffers) -> None:
    """The accepted iterate's pose, with the imposed values (motor bases, rod ends) at the
    step's end as an evaluation leaves them (``set_pose`` put back the step start's), and its
    end-of-step accelerations and velocity."""
    tables = model.tables
    set_pose(buf.x, q0, model.rod, model.body, terms.unknowns, buf.pose)
    constrain_values(tables.values_program, tables.motors, ang, model.rod, tables.ends,
                     model.body)
    _alpha_update(buf.x, buf.base, ga.v, ga.a, ga.vdot, coef, h, buf.a1, buf.v1, buf.vd1)


@njit(cache=True, inline="always")  # type: ignore[misc]
def _accept(theta: float, it: int, ga: AlphaState, coef: NDArray[np.float64],
            buf: ChordBuffers, info: NDArray[np.int64]) -> None:
    """A converged step: the contraction rate carried to the next step (``coef[6]``), the
    counters, and the end-of-step velocity and accelerations into ``ga``."""
    coef[6] = min(max(theta, coef[7]), 0.99)
    info[1] += 1
    info[5] = it
    v, a, vd, a_prev = ga
    for j in range(v.shape[0]):
        v[j] = buf.v1[j]
        a_prev[j] = a[j]
        a[j] = buf.a1[j]
        vd[j] = buf.vd1[j]


# a kernel of its own, not inlined into newton_steps: inlined, the one function LLVM optimises
# grows by the whole step and its cold compile took twice as long (benchmarks/compile_cost.py)
@njit(cache=True)  # type: ignore[misc]
def _newton_step(h: float, t1: float, ang: NDArray[np.float64], rat: NDArray[np.float64],
                 model: DynamicModel, terms: DynamicTerms, ga: AlphaState,
                 settings: NewtonSettings, q0: Pose, buf: ChordBuffers, jw: JacobianWork,
                 ) -> bool:
    """One step of :func:`newton_steps` ending at ``t1`` [s], motors ``ang`` [rad] / ``rat``
    [rad/s]; False (and ``jw.info[4]``) if it is refused."""
    coef, tol, is_rot, counts = settings
    b, slow, max_iter = coef[3], coef[4], int(coef[5])
    cv = coef[2] / (b * h)
    ca = (1.0 - coef[0]) / ((1.0 - coef[1]) * b * h * h)
    x, f, r, dx, info = buf.x, buf.f, buf.r, buf.dx, jw.info
    _begin_step(h, b, model, terms, ga, q0, buf)
    # fresh_at_acc: factorised at x_acc (dx a Newton step); stale: refresh at the next iterate;
    # theta_step: this step's contraction (0: none yet); passes: play corrections (MAX_PLAY_PASSES)
    stage, it, passes = 0, 0, 0
    fresh_at_acc, stale, have_acc = False, False, False
    merit_acc, alpha, theta, theta_step, w_prev = np.inf, 1.0, coef[6], 0.0, np.inf
    while True:
        set_pose(x, q0, model.rod, model.body, terms.unknowns, buf.pose)
        _alpha_update(x, buf.base, ga.v, ga.a, ga.vdot, coef, h, buf.a1, buf.v1, buf.vd1)
        ok = dynamic_forces(t1, ang, rat, buf.v1, model, terms, f, buf.mass)
        counts[0] += 1
        fmax, tmax, _ = _residual(f, buf.mass, buf.vd1, is_rot, r)
        if ok and fmax <= tol[0] and tmax <= tol[1]:
            if passes < MAX_PLAY_PASSES and settle_play(model.tables.couplings, tol[3]):
                # converged on play outputs that are not the converged pose's: on with these
                passes += 1
                have_acc, merit_acc, alpha, w_prev, theta_step = False, np.inf, 1.0, np.inf, 0.0
                continue
            break
        if not ok and model.status[0] == STATUS_STIFFNESS:  # a law refused the state
            return _fail(3, it, q0, model, terms, info)
        merit = _merit(ok, r, is_rot)
        if have_acc and not merit < merit_acc:
            if not fresh_at_acc:
                # the chord direction made things worse: back to the last iterate and a
                # Jacobian there (a Newton step)
                x[:] = jw.x_acc
                have_acc, merit_acc, alpha, stale = False, np.inf, 1.0, True
                continue
            alpha *= 0.5  # damped Newton: halve the step along the Newton direction
            if alpha >= 1.0 / 64.0:
                for j in range(x.shape[0]):
                    x[j] = jw.x_acc[j] + alpha * dx[j]
                continue
            merit = np.inf
        if not np.isfinite(merit) or it >= max_iter:
            if stage + 1 >= 3:
                return _fail(1, it, q0, model, terms, info)
            stage += 1  # again from the next predictor with a fresh Jacobian
            _predictor(stage, h, b, buf.base, ga.v, ga.a, x)
            info[0] = 0
            have_acc, merit_acc, alpha, it, w_prev, theta_step = False, np.inf, 1.0, 0, np.inf, 0.0
            continue
        fresh_at_acc = False
        if info[0] == 0 or stale or info[1] >= info[3] or too_slow(
                theta_step, w_prev, it, slow, max_iter):
            if not _refresh(t1, ang, rat, model, terms, cv, ca, q0, buf, jw):
                return _fail(2, it, q0, model, terms, info)
            fresh_at_acc, stale, w_prev, theta_step = True, False, np.inf, 0.0
        w = _newton_update(buf, jw, is_rot, 1.0 / tol[2], 1.0 / tol[3])
        merit_acc, alpha, have_acc = merit, 1.0, True
        it += 1
        # increment test (Hairer & Wanner, Solving ODEs II, Sec. IV.8): the error left
        # after this update is about theta / (1 - theta) |dx| in the scaled norm
        if w_prev < np.inf and w_prev > 0.0:
            theta = w / w_prev
            theta_step = theta
        if theta < 1.0 and w * theta / (1.0 - theta) <= 1.0 and np.isfinite(w):
            if passes < MAX_PLAY_PASSES and settle_play(model.tables.couplings, tol[3]):
                passes += 1  # as above, from the updated iterate
                have_acc, merit_acc, alpha, w_prev, theta_step = False, np.inf, 1.0, np.inf, 0.0
                continue
            _end_step(h, ang, model, terms, ga, coef, q0, buf)
            break
        w_prev = w
    _accept(theta, it, ga, coef, buf, info)
    return True
