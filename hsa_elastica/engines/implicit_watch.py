"""A settling watch inside the implicit integrator's compiled loop: many checks per call.

The dynamic steady states (:mod:`hsa_elastica.robots.settling`) test the state every
``check_interval`` (2 ms: every step at the implicit integrator's 2 ms step).  Returning to
Python for each check costs more than the step (a call of the Newton kernel unpacks some
hundred arrays, ~45 us; the test itself ~50 us more), so :func:`watched_steps` runs a whole
batch of checks in one numba call: after each check's steps it applies, in compiled code, the
same tests in the same order as the Python loop, on the same arrays:

1. the divergence pre-check of every watched system
   (:func:`~hsa_elastica.engines.timeloop.runaway_suspect`, what a handle checks after each
   engine call);
2. lost turns of twist (:func:`~hsa_elastica.physics.actuation.winding_defect` of each rod
   held by a motor in the lab, at the motor's angle at the check);
3. the settling test: largest node / body speed, largest body angular speed, the creep
   bounds; the settling window; and, at the check that completes the window, then once per
   window while the run stays settled and at the run's last check, the static residual of
   the pose (:func:`~hsa_elastica.engines.residual_check.pose_residual`; a residual above its
   bound restarts the window).

A check that needs Python (a suspected divergence, a lost turn, the run settled and asked to
stop) ends the call there and says so (:data:`CHECK_SUSPECT`, :data:`CHECK_LOST`,
:data:`CHECK_SETTLED`); the caller then asks the exact Python functions
(``find_runaway``, ``lost_twist``), which decide.  The state of every check that passed is kept
(:class:`LastGood`), the pose a diverged run reports.

The check's steps are the steps the Python loop would take in one engine call, with the
same time arithmetic (``t + n dt`` per check), so the trajectory is the same bit for bit.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.engines.implicit import ImplicitStepFailed
from hsa_elastica.engines.implicit_newton import take_steps
from hsa_elastica.engines.residual_check import ResidualRecord, pose_residual
from hsa_elastica.engines.timeloop import runaway_suspect
from hsa_elastica.io.sample_kernels import SamplePlan, take_samples
from hsa_elastica.physics.actuation import winding_defect
from hsa_elastica.physics.borrow import borrowed
from hsa_elastica.physics.tables import BodyBlockArrays, JointTable, RodBlockArrays

__all__ = [
    "CHECK_FAILED",
    "CHECK_LOST",
    "CHECK_PASSED",
    "CHECK_SETTLED",
    "CHECK_SUSPECT",
    "LastGood",
    "Samples",
    "SettleWatch",
    "check_state",
    "load_row",
    "run_checks",
    "save_row",
    "settle_test",
    "twist_lost",
    "watched_steps",
]

#: outcomes of a check (and of :func:`watched_steps`: every check passed)
CHECK_PASSED = 0
#: a watched system may have diverged (ask ``find_runaway``); the check went no further
CHECK_SUSPECT = 1
#: a rod may have lost a turn of twist (ask ``lost_twist``); the settling test not applied
CHECK_LOST = 2
#: the settling window is complete and the run is to stop there
CHECK_SETTLED = 3
#: a step was refused by Newton (:func:`watched_steps` only; the state at that step's start)
CHECK_FAILED = 4

# rows of SettleWatch.limits
L_TOL_V, L_TOL_W, L_TOL_R, L_CREEP_T, L_CREEP_R, L_TOL_RW = 0, 1, 2, 3, 4, 5
L_RAMP_END, L_WINDOW, L_TOL_STATIC, L_V2_MAX, L_STRETCH, L_STOP, L_TOL_WINDING = (
    6, 7, 8, 9, 10, 11, 12)
L_LAST = 13
N_LIMITS = 14


class SettleWatch(NamedTuple):
    """What a check watches and its bounds (see the module doc).

    ``node_range`` / ``elem_range`` (k, 2): nodes and elements ``[start, end)`` of each watched
    rod in the rod block; ``body`` (b,): the watched bodies (a robot's platform, a stack's
    platforms); ``twist_col`` (m,): motor-angle column of each rod checked for lost twist,
    ``twist_elems`` (m, 2) its elements, ``twist_ref`` (m, 3, 3) its motor's reference
    director; ``limits`` (:data:`N_LIMITS`,): tol_velocity [m/s], tol_omega [rad/s],
    tol_residual [m/s^2], the creep factors [1/s], ``tol_residual / tol_velocity * tol_omega``,
    ``ramp_end - dt/2`` [s], ``window - dt/2`` [s], the static residual bound [N, N m],
    ``max_speed**2``, ``max_stretch``, stop when settled (1/0), the lost-twist bound [rad],
    ``t_max - dt/2`` [s] (the run's last check); ``state``: start of the settling window [s]
    (nan: none), converged (1/0), time [s] from which the static residual is due again."""

    node_range: NDArray[np.int64]
    elem_range: NDArray[np.int64]
    body: NDArray[np.int64]
    twist_col: NDArray[np.int64]
    twist_elems: NDArray[np.int64]
    twist_ref: NDArray[np.float64]
    limits: NDArray[np.float64]
    state: NDArray[np.float64]


class LastGood(NamedTuple):
    """Copies of the rod and body blocks' positions, velocities, directors and angular
    velocities at the last check that passed."""

    rod_position: NDArray[np.float64]
    rod_velocity: NDArray[np.float64]
    rod_director: NDArray[np.float64]
    rod_omega: NDArray[np.float64]
    body_position: NDArray[np.float64]
    body_velocity: NDArray[np.float64]
    body_director: NDArray[np.float64]
    body_omega: NDArray[np.float64]


@njit(cache=True)  # type: ignore[misc]
def _suspect(rod: RodBlockArrays, body: BodyBlockArrays, w: SettleWatch) -> bool:
    """The divergence pre-check of every watched rod and body (contiguous copies, as the
    handle passes them)."""
    v2, stretch = w.limits[L_V2_MAX], w.limits[L_STRETCH]
    for k in range(w.node_range.shape[0]):
        n0, n1 = w.node_range[k, 0], w.node_range[k, 1]
        e0, e1 = w.elem_range[k, 0], w.elem_range[k, 1]
        if runaway_suspect(np.ascontiguousarray(rod.position[:, n0:n1]),
                           np.ascontiguousarray(rod.velocity[:, n0:n1]),
                           np.ascontiguousarray(rod.rest_lengths[e0:e1]), v2, stretch):
            return True
    none = np.zeros(0)
    for b in w.body:
        if runaway_suspect(np.ascontiguousarray(body.position[:, b:b + 1]),
                           np.ascontiguousarray(body.velocity[:, b:b + 1]), none, v2, stretch):
            return True
    return False


@njit(cache=True)  # type: ignore[misc]
def twist_lost(rod: RodBlockArrays, angles: NDArray[np.float64], w: SettleWatch) -> bool:
    """Whether a watched rod's twist defect reaches the lost-twist bound (or is nan)."""
    for k in range(w.twist_col.shape[0]):
        e0, e1 = w.twist_elems[k, 0], w.twist_elems[k, 1]
        d = winding_defect(np.ascontiguousarray(w.twist_ref[k]),
                           np.ascontiguousarray(rod.director[:, :, e0:e1]), angles[w.twist_col[k]])
        if not abs(d) < w.limits[L_TOL_WINDING]:
            return True
    return False


@njit(cache=True)  # type: ignore[misc]
def _speeds(rod: RodBlockArrays, body: BodyBlockArrays, w: SettleWatch) -> tuple[float, float]:
    """Largest node speed of the watched rods and speed of the watched bodies [m/s], largest
    angular speed of the watched bodies [rad/s] (as numpy's norms: per node the sum of the squares in
    order, per body vector a dot product)."""
    speed = 0.0
    for k in range(w.node_range.shape[0]):
        top = -np.inf
        for j in range(w.node_range[k, 0], w.node_range[k, 1]):
            s = math.sqrt(rod.velocity[0, j] * rod.velocity[0, j]
                          + rod.velocity[1, j] * rod.velocity[1, j]
                          + rod.velocity[2, j] * rod.velocity[2, j])
            top = max(top, s)
        speed = top if k == 0 else max(speed, top)
    omega = 0.0
    for i in range(w.body.shape[0]):
        v = np.ascontiguousarray(body.velocity[:, w.body[i]])
        speed = max(speed, math.sqrt(np.dot(v, v)))
        om = np.ascontiguousarray(body.omega[:, w.body[i]])
        omega = max(omega, math.sqrt(np.dot(om, om)))
    return speed, omega


@njit(cache=True, inline="always")  # type: ignore[misc]
def settle_test(t: float, angles: NDArray[np.float64], rod: RodBlockArrays,
                body: BodyBlockArrays, joints: JointTable, w: SettleWatch,
                check: ResidualRecord) -> bool:
    """The settling test at time ``t`` [s] (motor ``angles`` [rad]) and its window
    (``w.state``); True when the window is complete and the run is to stop."""
    lim, st = w.limits, w.state
    speed, omega = _speeds(rod, body, w)
    calm = (speed < lim[L_TOL_V] and omega < lim[L_TOL_W] and speed * lim[L_CREEP_T] < lim[L_TOL_R]
            and omega * lim[L_CREEP_R] < lim[L_TOL_RW])
    if t >= lim[L_RAMP_END] and calm:
        if math.isnan(st[0]):
            st[0] = t
            st[2] = -np.inf
        converged = t - st[0] >= lim[L_WINDOW]
        if converged and (t >= st[2] or t >= lim[L_LAST]):  # the force balance (module doc)
            fn, tn = pose_residual(rod, body, joints, angles, check)
            worst = tn if tn > fn else fn  # noqa: FURB136 (Python's max(fn, tn): nan only if fn is)
            if not worst < lim[L_TOL_STATIC]:
                st[0] = np.nan
                st[1] = 0.0
                return False
            st[2] = t + lim[L_WINDOW]
        st[1] = 1.0 if converged else 0.0
        return converged and lim[L_STOP] != 0.0
    st[0] = np.nan
    st[1] = 0.0
    return False


@njit(cache=True)  # type: ignore[misc]
def _keep(rod: RodBlockArrays, body: BodyBlockArrays, good: LastGood) -> None:
    good.rod_position[:] = rod.position
    good.rod_velocity[:] = rod.velocity
    good.rod_director[:] = rod.director
    good.rod_omega[:] = rod.omega
    good.body_position[:] = body.position
    good.body_velocity[:] = body.velocity
    good.body_director[:] = body.director
    good.body_omega[:] = body.omega


@njit(cache=True, inline="always")  # type: ignore[misc]
def check_state(t: float, angles: NDArray[np.float64], rod: RodBlockArrays,
                body: BodyBlockArrays, joints: JointTable, w: SettleWatch,
                check: ResidualRecord, good: LastGood, stage: int) -> int:
    """The tests of one check at time ``t`` [s], motor ``angles`` [rad], from ``stage`` on
    (0: all; 1: after the divergence pre-check; 2: the settling test only); the outcome
    (``CHECK_*``).  A check that passes (or settles) is kept in ``good``."""
    if stage <= 0 and _suspect(rod, body, w):
        return CHECK_SUSPECT
    if stage <= 1 and twist_lost(rod, angles, w):
        return CHECK_LOST
    settled = settle_test(t, angles, rod, body, joints, w, check)
    _keep(rod, body, good)
    return CHECK_SETTLED if settled else CHECK_PASSED


class Samples(NamedTuple):
    """The recordings of a batch: ``flags[c]`` = 1 where check ``c`` ends on a recording step;
    ``arrays``: (flat views of) the model's state arrays, copied at those checks into the rows
    of ``rows`` (see :func:`save_row`; a ``rows`` of no columns: no copies); ``plan``: the
    recorders' samples taken there by :func:`~hsa_elastica.io.sample_kernels.take_samples`
    (:func:`~hsa_elastica.io.sample_kernels.no_samples`: none)."""

    flags: NDArray[np.int64]
    arrays: tuple[NDArray[np.float64], ...]  # float64 1-D views
    rows: NDArray[np.float64]
    plan: SamplePlan


@njit(cache=True)  # type: ignore[misc]
def save_row(arrays: tuple[NDArray[np.float64], ...], row: NDArray[np.float64]) -> None:
    """The arrays, one after the other, into ``row``."""
    k = 0
    for a in arrays:
        n = a.shape[0]
        row[k:k + n] = a
        k += n


@njit(cache=True)  # type: ignore[misc]
def load_row(arrays: tuple[NDArray[np.float64], ...], row: NDArray[np.float64]) -> None:
    """:func:`save_row` undone: ``row`` back into the arrays."""
    k = 0
    for a in arrays:
        n = a.shape[0]
        a[:] = row[k:k + n]
        k += n


@njit(cache=True)  # type: ignore[misc]
def watched_steps(
    steps: NDArray[np.int64], h: float, t0: float, angles: NDArray[np.float64],
    rates: NDArray[np.float64], engine: Any, watch: SettleWatch, check: ResidualRecord,
    good: LastGood, samples: Samples, out: NDArray[np.float64],
) -> int:
    """Checks of ``steps[c]`` generalized-alpha steps of ``h`` [s] each from ``t0`` [s], each
    followed by the tests of the module doc.  ``angles`` / ``rates``: the motors at the table
    times (row 0 at ``t0``, then each step's end); ``engine``: the Newton kernel's records
    ``(model, terms, ga, settings, q0, buf, jw)``
    (:func:`~hsa_elastica.engines.implicit_newton.newton_steps`).

    A check that ends on a recording step (``samples.flags``) first copies the model's state
    into the next row of ``samples.rows`` (before its tests, as the recorders sample before
    the handle's checks).

    Returns the outcome (``CHECK_*``) with ``out = [checks completed, time after them [s],
    steps done in the check that stopped the call, rows recorded]``: for :data:`CHECK_FAILED` the check
    ``out[0]`` stopped after ``out[2]`` of its steps, at time ``out[1] + out[2] h``; for the
    other stops the check ``out[0] - 1`` ended at ``out[1]``.  The records are borrowed for
    the call (:func:`~hsa_elastica.physics.borrow.borrowed`)."""
    angles, rates, engine, watch, check, good, samples, out = borrowed(
        (angles, rates, engine, watch, check, good, samples, out))
    model, terms, ga, settings, q0, buf, jw = engine
    rod, body, joints = model.rod, model.body, model.tables.joints
    t = t0
    row = 0
    for c in range(steps.shape[0]):
        n = steps[c]
        done = take_steps(n, h, t, np.ascontiguousarray(angles[row:row + n + 1]),
                          np.ascontiguousarray(rates[row:row + n + 1]), model, terms, ga,
                          settings, q0, buf, jw)
        if done < n:
            out[0], out[1], out[2] = c, t, done
            return CHECK_FAILED
        t = t + n * h
        row += n
        out[0], out[1], out[2] = c + 1, t, n
        if samples.flags[c]:
            k = int(out[3])
            if samples.rows.shape[1] > 0:
                save_row(samples.arrays, samples.rows[k])
            take_samples(rod, body, samples.plan, k)
            out[3] += 1
        code = check_state(t, angles[row], rod, body, joints, watch, check, good, 0)
        if code != CHECK_PASSED:
            return code
    return CHECK_PASSED


def _step_times(steps: NDArray[np.int64], t: float, dt: float) -> NDArray[np.float64]:
    """``t`` and the end time of every step of checks of ``steps[c]`` steps [s], as one engine
    call per check computes them: check ``c`` starts where the one before ended (``end + n
    dt``, added up in order: a cumulative sum) and its step ``k`` ends at ``start + k dt``."""
    n = np.asarray(steps, dtype=np.int64)
    starts = np.cumsum(np.concatenate(([float(t)], n * float(dt))))[:-1]
    k = np.arange(1, int(n.sum()) + 1, dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
    return np.concatenate(([float(t)], np.repeat(starts, n) + float(dt) * k.astype(np.float64)))


def run_checks(engine: Any, steps: NDArray[np.int64], t: float, watch: SettleWatch,
               check: ResidualRecord, good: LastGood, samples: Samples,
               out: NDArray[np.float64]) -> tuple[int, int, float]:
    """Checks of ``steps[c]`` steps each of the implicit ``engine``
    (:class:`~hsa_elastica.engines.implicit.ImplicitEngine`, no scheduled loads) from ``t``
    [s] (:func:`watched_steps`), with the motor tables and time arithmetic of one
    ``engine.run_steps(steps[c], ...)`` per check.  Returns ``(outcome, checks done, time
    [s])``; ``out[3]``: rows of ``samples`` recorded.  A refused step is taken in halves as ``run_steps`` does (:attr:`max_halvings`):
    its check is then done without its tests (outcome :data:`CHECK_FAILED`: the caller tests
    it); raises :class:`~hsa_elastica.engines.implicit.ImplicitStepFailed` as ``run_steps``."""
    dt = engine.dt
    engine.time = t
    times = _step_times(steps, t, dt)
    values, rates = engine.motor_rows(times)
    if not engine._started:
        engine.start(values[0], rates[0])
    engine._info[3] = engine.refresh_every
    out[:] = 0.0
    code = int(watched_steps(np.ascontiguousarray(steps, dtype=np.int64), dt, t, values, rates,
                             engine.newton_records(), watch, check, good, samples, out))
    done = int(out[0])
    engine.time = float(out[1])
    engine.n_steps += int(np.sum(steps[:done]))
    engine.account(0, 0)  # the counters
    if code != CHECK_FAILED:
        return code, done, engine.time
    row = int(np.sum(steps[:done]))
    n = int(steps[done])
    table = (times[row:row + n + 1], values[row:row + n + 1], rates[row:row + n + 1])
    try:
        engine.account(int(out[2]), n)
    except ImplicitStepFailed:
        if engine.max_halvings <= 0:
            raise
    t_new = engine.run_table(*table, refused=True)
    return CHECK_FAILED, done + 1, t_new
