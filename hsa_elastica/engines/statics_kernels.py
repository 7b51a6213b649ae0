"""Numba kernels of the static solver (:mod:`hsa_elastica.engines.statics`).

:func:`residual` is the net force [N] / couple [N m] on every unknown of a compiled model at
rest, from :func:`hsa_elastica.physics.forces.evaluate_forces`; :func:`apply_increment` moves
the state along a vector of unknowns (rotations with the kinematic-update kernel, as the
dynamics turn elements); :func:`fd_jacobian` is the column-coloured forward-difference
Jacobian of :func:`residual`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.borrow import borrowed
from hsa_elastica.physics.forces import evaluate_forces
from hsa_elastica.physics.rod_kernels import kinematic_update_inplace
from hsa_elastica.physics.tables import BodyBlockArrays, ForcingTables, ModelTables, RodBlockArrays

__all__ = ["residual", "apply_increment", "fd_jacobian", "perturb_colour", "restore_colour", "Unknowns", "JacobianPattern",
           "JacobianBuffers", "KIND_NODE", "KIND_ELEMENT",
           "KIND_BODY_POS", "KIND_BODY_ROT", "KIND_SWING", "KIND_TWIST", "ROTATION_KINDS"]

KIND_NODE = 0
KIND_ELEMENT = 1  # three rotation components (local frame)
KIND_BODY_POS = 2
KIND_BODY_ROT = 3
KIND_SWING = 4  # element with its twist locked: rotations about local x and y (two unknowns)
KIND_TWIST = 5  # element turning about its own axis only: rotation about local z (one unknown)
#: kinds whose unknowns are rotations of rod elements
ROTATION_KINDS = (KIND_ELEMENT, KIND_SWING, KIND_TWIST)

#: forward-difference steps: position [m] and rotation [rad] (~sqrt(eps) of the unit scale
#: 0.1 m / 1 rad, so truncation and round-off errors are both ~1e-8 relative)
FD_STEP_POSITION = 1e-8
FD_STEP_ROTATION = 1e-7


# --------------------------------------------------------------------------------------------
# numba kernels
# --------------------------------------------------------------------------------------------
@njit(cache=True)  # type: ignore[misc]
def _rotate(director: NDArray[np.float64], k: int, w0: float, w1: float, w2: float,
            scratch: NDArray[np.float64]) -> None:
    """``director[:, :, k] <- R(w) director[:, :, k]`` with the kinematic-update kernel.

    The element is updated in a C-contiguous copy: a slice ``director[:, :, k : k + 1]`` is
    typed as a non-contiguous array, which would make numba compile a second specialisation
    of :func:`kinematic_update_inplace` next to the fused loop's (a longer cold start); the
    arithmetic, and so the result, is the same bit for bit."""
    omega = np.empty((3, 1))
    omega[0, 0] = w0
    omega[1, 0] = w1
    omega[2, 0] = w2
    nothing = np.empty((3, 0))
    element = np.empty((3, 3, 1))
    for a in range(3):
        for b in range(3):
            element[a, b, 0] = director[a, b, k]
    kinematic_update_inplace(1.0, nothing, element, nothing, omega, scratch)
    for a in range(3):
        for b in range(3):
            director[a, b, k] = element[a, b, 0]


class Unknowns(NamedTuple):
    """The static solver's unknowns: unknown ``j`` is component ``comp[j]`` of node / element /
    body ``row[j]`` (index in the block) of kind ``kind[j]`` (``KIND_*``)."""

    kind: NDArray[np.int64]
    row: NDArray[np.int64]
    comp: NDArray[np.int64]


class JacobianPattern(NamedTuple):
    """Finite-difference steps per unknown, the column colouring (columns
    ``cols[ptr[c]:ptr[c+1]]`` share no row) and the CSC sparsity pattern of the Jacobian."""

    steps: NDArray[np.float64]
    color_ptr: NDArray[np.int64]
    color_cols: NDArray[np.int64]
    indptr: NDArray[np.int64]
    indices: NDArray[np.int64]


class JacobianBuffers(NamedTuple):
    """``f0`` the residual at the state; ``f1``, ``saved``, ``scratch`` work; ``data`` the
    Jacobian's CSC values (output)."""

    f0: NDArray[np.float64]
    f1: NDArray[np.float64]
    saved: NDArray[np.float64]
    data: NDArray[np.float64]
    scratch: NDArray[np.float64]


class ForceModel(NamedTuple):
    """The compiled model as the force kernels take it: the state (memory-block arrays), the
    law tables and programs, and the force evaluation's workspace (a
    :class:`~hsa_elastica.physics.rod_kernels.RodWork`) and status."""

    rod: RodBlockArrays
    body: BodyBlockArrays
    tables: ModelTables
    work: Any
    status: NDArray[np.float64]


@njit(cache=True, inline="always")  # type: ignore[misc]
def zero_external(rod: RodBlockArrays, body: BodyBlockArrays) -> None:
    """Zero the external forces and torques of the rods and bodies (before an evaluation)."""
    rod.external_forces[:] = 0.0
    rod.external_torques[:] = 0.0
    body.external_forces[:] = 0.0
    body.external_torques[:] = 0.0


@njit(cache=True, inline="always")  # type: ignore[misc]
def gather_forces(
    rod: RodBlockArrays, body: BodyBlockArrays, unknowns: Unknowns, out: NDArray[np.float64]
) -> None:
    """Net force [N] / couple [N m] of the present evaluation on each unknown into ``out``:
    internal plus external of rod nodes and elements, external of bodies."""
    kind, index, comp = unknowns
    for j in range(kind.shape[0]):
        i = index[j]
        a = comp[j]
        k = kind[j]
        if k == KIND_NODE:
            out[j] = rod.internal_forces[a, i] + rod.external_forces[a, i]
        elif k == KIND_BODY_POS:
            out[j] = body.external_forces[a, i]
        elif k != KIND_BODY_ROT:  # a rod element's rotation
            out[j] = rod.internal_torques[a, i] + rod.external_torques[a, i]
        else:
            out[j] = body.external_torques[a, i]


@njit(cache=True, inline="always")  # type: ignore[misc]
def perturb_translation(
    rod: RodBlockArrays, body: BodyBlockArrays, k: int, i: int, a: int, h: float,
    saved: NDArray[np.float64],
) -> bool:
    """A forward-difference column of a translation unknown (kind ``k``, node / body ``i``,
    component ``a``): its coordinate saved into ``saved[0, 0]`` and moved by ``h`` [m].
    Returns False (nothing done) for a rotation unknown."""
    if k == KIND_NODE:
        saved[0, 0] = rod.position[a, i]
        rod.position[a, i] += h
    elif k == KIND_BODY_POS:
        saved[0, 0] = body.position[a, i]
        body.position[a, i] += h
    else:
        return False
    return True


@njit(cache=True)  # type: ignore[misc]
def residual(
    angles: NDArray[np.float64], model: ForceModel, unknowns: Unknowns, out: NDArray[np.float64]
) -> bool:
    """Residual [N, N m] of the unknowns (``kind``/``index``/``comp``) at the current state
    (the records borrowed for the call, :func:`~hsa_elastica.physics.borrow.borrowed`)."""
    angles, model, unknowns, out = borrowed((angles, model, unknowns, out))
    rod, body, tables, work, status = model
    zero_external(rod, body)
    ok = evaluate_forces(
        0.0, angles, rod, body, tables.couplings, tables.joints, tables.motors, tables.ends,
        ForcingTables(tables.rod_gravity, tables.body_gravity, tables.loads, tables.compression,
                      tables.contacts, tables.laws),
        (tables.sync_program, tables.values_program), work, status,
    )
    gather_forces(rod, body, unknowns, out)
    return ok  # type: ignore[no-any-return]


@njit(cache=True)  # type: ignore[misc]
def apply_increment(
    dx: NDArray[np.float64], scale: float, rod: RodBlockArrays, body: BodyBlockArrays,
    unknowns: Unknowns, scratch: NDArray[np.float64],
) -> None:
    """Move the state by ``scale * dx`` (positions added, rotations applied per element/body;
    the three components of one rotation are consecutive unknowns)."""
    kind, index, comp = unknowns
    j = 0
    n = kind.shape[0]
    while j < n:
        k = kind[j]
        i = index[j]
        if k == KIND_NODE:
            rod.position[comp[j], i] += scale * dx[j]
            j += 1
        elif k == KIND_BODY_POS:
            body.position[comp[j], i] += scale * dx[j]
            j += 1
        elif k == KIND_ELEMENT:
            _rotate(rod.director, i, scale * dx[j], scale * dx[j + 1], scale * dx[j + 2], scratch)
            j += 3
        elif k == KIND_SWING:
            _rotate(rod.director, i, scale * dx[j], scale * dx[j + 1], 0.0, scratch)
            j += 2
        elif k == KIND_TWIST:
            _rotate(rod.director, i, 0.0, 0.0, scale * dx[j], scratch)
            j += 1
        else:
            _rotate(body.director, i, scale * dx[j], scale * dx[j + 1], scale * dx[j + 2], scratch)
            j += 3


@njit(cache=True)  # type: ignore[misc]
def fd_jacobian(
    angles: NDArray[np.float64], model: ForceModel, unknowns: Unknowns,
    pattern: JacobianPattern, buffers: JacobianBuffers,
) -> None:
    """Forward-difference Jacobian ``dF/dx`` into ``data`` (CSC pattern ``indptr``/``indices``).

    Columns of one colour (``color_cols[color_ptr[c]:color_ptr[c+1]]``) share no row and are
    perturbed together (:func:`perturb_colour`); the state is restored exactly (saved copies)
    after each colour (:func:`restore_colour`).  For a one-off Jacobian,
    :meth:`~hsa_elastica.engines.statics.StaticSolver.jacobian` runs the same three kernels
    from Python.  The records are borrowed for the call
    (:func:`~hsa_elastica.physics.borrow.borrowed`).
    """
    angles, model, unknowns, pattern, buffers = borrowed(
        (angles, model, unknowns, pattern, buffers))
    rod = model.rod
    body = model.body
    for c in range(pattern.color_ptr.shape[0] - 1):
        perturb_colour(rod, body, unknowns, pattern, c, buffers.saved, buffers.scratch)
        residual(angles, model, unknowns, buffers.f1)
        restore_colour(rod, body, unknowns, pattern, c, buffers.saved, buffers.f0, buffers.f1,
                       buffers.data)


@njit(cache=True)  # type: ignore[misc]
def perturb_colour(
    rod: RodBlockArrays,
    body: BodyBlockArrays,
    unknowns: Unknowns,
    pattern: JacobianPattern,
    c: int,
    saved: NDArray[np.float64],
    scratch: NDArray[np.float64],
) -> None:
    """First half of a forward-difference colour: save the coordinates of colour ``c``'s
    columns into ``saved`` and move each by its step (positions [m] added, rotations [rad]
    applied to the element or body)."""
    kind = unknowns.kind
    index = unknowns.row
    comp = unknowns.comp
    steps = pattern.steps
    for p in range(pattern.color_ptr[c], pattern.color_ptr[c + 1]):
        j = pattern.color_cols[p]
        i = index[j]
        a = comp[j]
        h = steps[j]
        k = kind[j]
        if perturb_translation(rod, body, k, i, a, h, saved[p]):
            continue
        if k != KIND_BODY_ROT:
            saved[p] = rod.director[:, :, i]
            _rotate(rod.director, i, h if a == 0 else 0.0, h if a == 1 else 0.0,
                    h if a == 2 else 0.0, scratch)
        else:
            saved[p] = body.director[:, :, i]
            _rotate(body.director, i, h if a == 0 else 0.0, h if a == 1 else 0.0,
                    h if a == 2 else 0.0, scratch)


@njit(cache=True)  # type: ignore[misc]
def restore_colour(
    rod: RodBlockArrays,
    body: BodyBlockArrays,
    unknowns: Unknowns,
    pattern: JacobianPattern,
    c: int,
    saved: NDArray[np.float64],
    f0: NDArray[np.float64],
    f1: NDArray[np.float64],
    data: NDArray[np.float64],
) -> None:
    """Second half of a forward-difference colour (static and implicit Jacobians alike): put
    back the saved coordinates of colour ``c``'s columns exactly and write their columns
    ``(f1 - f0) / h`` into the CSC values ``data``."""
    kind = unknowns.kind
    index = unknowns.row
    comp = unknowns.comp
    steps = pattern.steps
    indptr = pattern.indptr
    indices = pattern.indices
    for p in range(pattern.color_ptr[c], pattern.color_ptr[c + 1]):
        j = pattern.color_cols[p]
        i = index[j]
        a = comp[j]
        k = kind[j]
        if k == KIND_NODE:
            rod.position[a, i] = saved[p, 0, 0]
        elif k == KIND_BODY_POS:
            body.position[a, i] = saved[p, 0, 0]
        elif k != KIND_BODY_ROT:
            rod.director[:, :, i] = saved[p]
        else:
            body.director[:, :, i] = saved[p]
        inv = 1.0 / steps[j]
        for q in range(indptr[j], indptr[j + 1]):
            r = indices[q]
            data[q] = (f1[r] - f0[r]) * inv
