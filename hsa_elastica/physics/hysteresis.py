"""Rate-independent hysteresis of the auxetic coupling: a Prandtl-Ishlinskii play operator on
the handed twist strain that drives the rest-length law (optional, not in the paper).

The rest strain of Eq. 2-3 follows the element average ``x`` of the handed twist strain
(Eq. 4) [rad/m].  With hysteresis on, it follows instead

    ``y = x + w (F_r[x] - x)``,   ``F_r[x]: m <- clip(m, x - r, x + r)``, ``F_r[x] = m``,

a play (backlash) operator ``F_r`` of half-width ``r`` [rad/m] (``RodParams.hysteresis_width``)
weighted by ``w`` in (0, 1] (``hysteresis_weight``): a fraction ``w`` of the strain lags the
twist by up to ``r`` and waits, after every reversal of the twist, until the twist has moved
``2 r`` back.  Driven by a triangle wave of amplitude ``A > r`` the pair ``(x, y)`` traces a
parallelogram: loading ``y = x - w r``, unloading ``y = x + w r``, the switches flat
(slope ``1 - w``) over ``2 r`` of twist; loop area ``4 w r (A - r)`` in (rad/m)^2.  It is
rate-independent (a slow and a fast ramp give one loop) and has no time constant; ``r = 0``
is the law without hysteresis exactly (``F_0[x] = x``, so ``y = x`` bit for bit).

The memory ``m`` (one value per element, ``CouplingTable.play``) is a state of the law like
the creep strain.  The first evaluation at a new time takes the memory of the previous time
(the play's output at that time's latest evaluation) and computes the play's output ``F`` at
its input (:func:`advance_play`); the evaluations at that time read ``y = x + w (F - x)``
with that ``F``.  The explicit steppers evaluate once per step: the exact play, step by
step.  The implicit integrator's first evaluation of a step is at its predicted pose: Newton
solves the step with ``F`` of the prediction, ``y`` linear in ``x`` (slope ``1 - w``, the
slope its Jacobian carries, whichever side of the play's kink), then :func:`settle_play`
replaces ``F`` by the play's output at the converged pose and Newton goes on from there,
until ``F`` is the play's output at the step's end pose to Newton's tolerance: the play is
implicit in the step (a fixed point on ``F``; each pass a Newton iteration or two from the
converged pose, on the same Jacobian).  (``F`` of the prediction alone made the sliding part
of the play an explicit, extrapolated feedback that self-excited the rods' stretch-twist
oscillation where the twist hovered at an edge of the play: a motion-capture replay at ``r
= w = 0.5`` refused and halved hundreds of steps after 200 s.)  The memory a step leaves is
the play at its last evaluation.  The static solver freezes the memory (``play_frozen =
1``) and evaluates the play itself: a static equilibrium is the one reached from the memory
by a monotone change of the twist.

The slope ``dy/dx = 1 - w + w s`` with ``s = 1`` while the play slides (``m`` on or beyond
an edge of ``[x - r, x + r]``) and ``0`` inside the play; on an edge it is the one-sided
slope of continued loading, the side a step that just slid ends on
(:func:`play_output`, used by the static solver's rest-length law and its tangent alike).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.params import MAX_PLAY_WIDTH, invalid_parameter, is_finite_number
from hsa_elastica.physics.tables import CouplingTable, PlayRow

__all__ = ["play", "play_output", "play_clock", "advance_play_arrays", "advance_play",
           "hysteretic_input", "play_row", "hysteretic_twist", "settle_play", "check_hysteresis"]


def check_hysteresis(owner: str, width: Any, weight: Any, reciprocal: Any = False) -> None:
    """The play's parameters of ``owner`` (a class name): ``hysteresis_width`` [rad/m] in
    ``[0, MAX_PLAY_WIDTH]``, ``hysteresis_weight`` [-] in ``[0, 1]``, ``> 0`` when the width
    is, and 0 with the passive model (``reciprocal``: a hysteretic rest length has no
    energy); raises ``ParameterError`` naming the field and its range in one line."""
    for name, value, upper, unit in (("hysteresis_width", width, MAX_PLAY_WIDTH, "rad/m"),
                                     ("hysteresis_weight", weight, 1.0, "-")):
        if isinstance(value, bool) or not is_finite_number(value) or not 0.0 <= float(value) <= upper:
            raise invalid_parameter(owner, name, value, f"a finite number in [0, {upper:g}] ({unit})")
    if float(width) > 0.0 and float(weight) == 0.0:
        raise invalid_parameter(owner, "hysteresis_weight", weight,
                                "in (0, 1] (-) when hysteresis_width > 0")
    if reciprocal and float(weight) > 0.0:
        raise invalid_parameter(owner, "hysteresis_weight", weight,
                                "0 (-) when the coupling is passive (a hysteretic rest length has no energy)")


@njit(cache=True, inline="always")  # type: ignore[misc]
def play(memory: float, x: float, width: float) -> float:
    """The play operator's new output ``clip(memory, x - width, x + width)`` for the input
    ``x`` [rad/m] (``width`` >= 0, same unit)."""
    return min(max(memory, x - width), x + width)


@njit(cache=True, inline="always")  # type: ignore[misc]
def play_output(
    memory: float, x: float, width: float, weight: float
) -> tuple[float, float]:
    """``(y, dy/dx)`` of the weighted play at the input ``x`` [rad/m] from ``memory`` (module
    docstring): ``y = x + weight (play(memory, x, width) - x)``; the slope is
    ``1 - weight`` strictly inside the play, ``1`` on or beyond its edges (sliding)."""
    f = play(memory, x, width)
    inside = x - width < memory < x + width
    return x + weight * (f - x), (1.0 - weight if inside else 1.0)


@njit(cache=True, inline="always")  # type: ignore[misc]
def play_clock(c: CouplingTable, i: int) -> int:
    """The play clock of row ``i`` of ``c`` at an evaluation at ``c.last_time[i]`` (set by the
    caller), advanced; returns what :func:`advance_play_arrays` does with the row's arrays:
    0 nothing (a frozen row, the static solver, reads the memory and writes nothing), 1 the
    output at the latest evaluation only (a later evaluation at the same time keeps ``F``), 2
    also ``F`` from the same memory (a time earlier than the last one: a step taken again in
    halves), 3 first the memory from the latest output of the earlier time, then both (the
    first evaluation at a later time; ``c.play_last[i]`` becomes that time)."""
    if c.play_frozen[i] != 0:
        return 0
    now = c.last_time[i]
    last = c.play_last[i]
    if now == last:
        return 1
    c.play_last[i] = now
    return 3 if now > last else 2


@njit(cache=True, inline="always")  # type: ignore[misc]
def advance_play_arrays(clock: int, memory: NDArray[np.float64], trial: NDArray[np.float64],
                        x: NDArray[np.float64], width: float) -> None:
    """The play's arrays of one row at the element inputs ``x`` [rad/m] as ``clock`` says
    (:func:`play_clock`): ``trial[:n]`` the play's output ``F`` of this time, ``trial[n:]``
    its output at this (the latest) evaluation, ``memory`` the memory [rad/m]."""
    n = x.shape[0]
    if clock == 0:
        return
    if clock == 3:
        for k in range(n):
            memory[k] = trial[n + k]
    if clock >= 2:
        for k in range(n):
            trial[k] = play(memory[k], x[k], width)
    for k in range(n):
        trial[n + k] = play(memory[k], x[k], width)


@njit(cache=True, inline="always")  # type: ignore[misc]
def advance_play(c: CouplingTable, i: int, x: NDArray[np.float64]) -> None:
    """The play of row ``i`` of ``c`` at this evaluation, the element inputs ``x`` [rad/m]
    (:func:`play_clock`, then :func:`advance_play_arrays`).

    ``c.play_trial[i]`` holds two rows of ``n`` elements: ``[:n]`` the play's output ``F``
    of this time, ``[n:]`` its output at the latest evaluation.  At the first evaluation at a
    time ``c.last_time[i]`` (set by the caller) later than the last one, ``c.play_last[i]``,
    the latest output of the earlier time becomes the memory ``c.play[i]``, and ``F =
    play(memory, x, width)``; later evaluations at the same time keep ``F`` (the implicit
    integrator corrects it, :func:`settle_play`).  An evaluation at an earlier time (a step
    taken again in halves) computes ``F`` again from the same memory.  A frozen row
    (``play_frozen``, the static solver) reads the memory and writes nothing."""
    memory, trial, width = c.play[i], c.play_trial[i], c.play_width[i]
    advance_play_arrays(play_clock(c, i), memory, trial, x, width)


@njit(cache=True, inline="always")  # type: ignore[misc]
def hysteretic_input(x: float, weight: float, frozen: int, width: float, memory: float,
                     trial: float) -> tuple[float, float]:
    """``(y, dy/dx)`` of one element at the input ``x`` [rad/m], its play's ``memory`` and
    ``trial`` (its ``F`` of this time) [rad/m], the play's ``weight``, ``width`` and
    ``frozen`` flag (:class:`~hsa_elastica.physics.tables.PlayRow`): the twist strain the
    rest-length law sees.  A frozen row (the static solver): :func:`play_output` from the
    memory (the play's slope, 1 - w inside, 1 sliding).  A dynamic row: ``x + w (F - x)``
    with the play output ``F`` of this time (:func:`advance_play`; the exact play at the
    explicit steppers' single evaluation), slope ``1 - w``.  With the law off (``weight =
    0``) ``(x, 1)``."""
    if weight == 0.0:
        return x, 1.0
    if frozen != 0:
        return play_output(memory, x, width, weight)  # type: ignore[no-any-return]
    return x + weight * (trial - x), 1.0 - weight


@njit(cache=True, inline="always")  # type: ignore[misc]
def play_row(c: CouplingTable, i: int) -> PlayRow:
    """Row ``i`` of ``c``'s play, its clock advanced (:func:`play_clock`) when the law is on."""
    weight = c.play_weight[i]
    return PlayRow(c.play[i], c.play_trial[i], c.play_width[i], weight, c.play_frozen[i],
                   play_clock(c, i) if weight != 0.0 else 0)


@njit(cache=True, inline="always")  # type: ignore[misc]
def hysteretic_twist(c: CouplingTable, i: int, e: int, x: float) -> tuple[float, float]:
    """:func:`hysteretic_input` of element ``e`` of row ``i`` of ``c`` at the input ``x``
    [rad/m] (the row's clock not advanced)."""
    return hysteretic_input(  # type: ignore[no-any-return]
        x, c.play_weight[i], c.play_frozen[i], c.play_width[i], c.play[i][e], c.play_trial[i][e]
    )


@njit(cache=True)  # type: ignore[misc]
def settle_play(c: CouplingTable, tol_rotation: float) -> bool:
    """After the implicit integrator converged a step on the play outputs ``F`` of its
    dynamic rows: every element whose ``F`` misses the play's output at the latest
    evaluation by more than ``tol_rotation`` [rad] over the element's printed length (a
    twist strain [rad/m] below Newton's tolerance) gets that output as its ``F``.  Returns
    True if an ``F`` changed (the step must be solved on, from the converged pose)."""
    changed = False
    for i in range(c.play_weight.shape[0]):
        if c.play_weight[i] == 0.0 or c.play_frozen[i] != 0:
            continue
        buf = c.play_trial[i]
        n = c.play[i].shape[0]
        printed = c.printed_lengths[i]
        for k in range(n):
            if abs(buf[k] - buf[n + k]) * printed[k] > tol_rotation:
                buf[k] = buf[n + k]
                changed = True
    return changed
