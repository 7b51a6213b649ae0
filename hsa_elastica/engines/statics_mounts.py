"""The rigid motor mounts' part of the hybrid Newton Jacobian
(:mod:`hsa_elastica.engines.statics_hybrid`) and of the implicit integrator's Newton matrix
(:mod:`hsa_elastica.engines.implicit_tangent`): the chain rule of a rod base held on a body.

A :class:`~hsa_elastica.physics.rigid_mounts.MotorMountBC` holds a rod's node ``n`` at a body
point and its element ``e`` in the body's frame (kernel
:func:`~hsa_elastica.physics.rigid_mounts.mount_values`): ``x_n = x_b + Q_b^T o`` and
``Q_e = A Q_b`` with ``A = R_z(phi)^T Q_e0 Q_b0^T`` fixed by the motor angle.  Neither is an
unknown; both follow the body's unknowns, its position ``x_b`` and rotation ``w`` (the
solver's increment ``Q_b <- exp(-[w]) Q_b``, a local rotation vector as for the rod's
elements).  To first order a body increment ``(dx, w)`` moves the held coordinates (node
position ``dx_n``, element rotation ``v`` with ``Q_e <- exp(-[v]) Q_e``) by

    ``dx_n = dx - [r] Q_b^T w``,   ``v = A w``   (``r = x_n - x_b``, ``A = Q_e Q_b^T``),

a 6 x 6 map ``C``.  So (1) the rod band's columns of the held node and element, times ``C``,
are the columns of the body's unknowns.  The mount's reaction
(:func:`~hsa_elastica.physics.rigid_mounts.mount_reaction`) hands the net force ``F`` on the
held node and couple ``tau`` on the held element to the body: ``F`` on its position rows,
``T = o x (Q_b F) + A^T tau`` on its rotation rows (body frame, ``o = Q_b r``): ``C^T`` times
the band's rows of the held node and element.  So (2) those rows, times ``C^T``, add into the
body's rows, and (3) the body-body block takes ``C^T B_hh C`` plus the turn of the lever
``d T / d w = [o] [Q_b F]`` (the held node's force at the state, gravity included).  The
same ``C`` carries a band of velocity tangents (the Kelvin-Voigt damping's, whose forces on
the held base are not handed over): ``mount_rates`` moves the held node at ``v_b + (Q_b^T
omega) x r`` and turns the element at ``A omega``.

Only angle-driven mounts are covered: a :class:`~hsa_elastica.physics.rigid_mounts.TwistMountBC`
re-reads the element's twist relative to the turned body (a lock's gradient, as
:func:`~hsa_elastica.physics.actuation.twist_lock_gradient`), which is not written here; a
model with one keeps the differences of the whole residual.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.engines.statics_kernels import KIND_BODY_POS, KIND_BODY_ROT
from hsa_elastica.physics.rod_tangent import HALF_BANDWIDTH

__all__ = ["mount_chain", "mount_entries"]

WIDTH = 2 * HALF_BANDWIDTH + 1


@njit(cache=True)  # type: ignore[misc]
def _chain_map(model: Any, i: int, c: NDArray[np.float64], o: NDArray[np.float64]) -> None:
    """The map ``C`` (6 x 6: held node position, held element rotation <- body position,
    body rotation; module doc) of motor row ``i`` into ``c``, its body-frame lever into
    ``o`` [m], from the present state (the held base as the mount put it)."""
    rod, body, m = model.rod, model.body, model.tables.motors
    b, n, e = m.body[i], m.node[i], m.element[i]
    q = body.director
    ed = rod.director
    r0 = rod.position[0, n] - body.position[0, b]
    r1 = rod.position[1, n] - body.position[1, b]
    r2 = rod.position[2, n] - body.position[2, b]
    c[:] = 0.0
    for a in range(3):
        c[a, a] = 1.0
        o[a] = q[a, 0, b] * r0 + q[a, 1, b] * r1 + q[a, 2, b] * r2
    for k in range(3):  # -[r] Q_b^T: column k is -r x (row k of Q_b)
        c[0, 3 + k] = -(r1 * q[k, 2, b] - r2 * q[k, 1, b])
        c[1, 3 + k] = -(r2 * q[k, 0, b] - r0 * q[k, 2, b])
        c[2, 3 + k] = -(r0 * q[k, 1, b] - r1 * q[k, 0, b])
    for a in range(3):  # A = Q_e Q_b^T
        for k in range(3):
            c[3 + a, 3 + k] = (ed[a, 0, e] * q[k, 0, b] + ed[a, 1, e] * q[k, 1, b]
                               + ed[a, 2, e] * q[k, 2, b])


@njit(cache=True, inline="always")  # type: ignore[misc]
def _entry(rows: NDArray[np.float64], lr: int, lc: int) -> float:
    """The band's entry (local row ``lr``, local column ``lc``); zero outside the band."""
    d = lc - lr
    if d < -HALF_BANDWIDTH or d > HALF_BANDWIDTH:
        return 0.0
    return rows[lr, d + HALF_BANDWIDTH]  # type: ignore[no-any-return]


@njit(cache=True)  # type: ignore[misc]
def _body_block(model: Any, i: int, held: NDArray[np.int64], rows: NDArray[np.float64],
                c: NDArray[np.float64], o: NDArray[np.float64],
                out: NDArray[np.float64]) -> None:
    """``C^T B_hh C`` plus the lever's turn ``[o] [Q_b F]`` (module doc, (3)) into ``out``."""
    bc = np.zeros((6, 6))
    for m in range(6):
        for k in range(6):
            s = 0.0
            for p in range(6):
                s += _entry(rows, held[m], held[p]) * c[p, k]
            bc[m, k] = s
    for a in range(6):
        for k in range(6):
            s = 0.0
            for m in range(6):
                s += c[m, a] * bc[m, k]
            out[a, k] = s
    rod, body, mt = model.rod, model.body, model.tables.motors
    b, n = mt.body[i], mt.node[i]
    q = body.director
    f = rod.internal_forces[:, n] + rod.external_forces[:, n]
    g = np.empty(3)
    for a in range(3):
        g[a] = q[a, 0, b] * f[0] + q[a, 1, b] * f[1] + q[a, 2, b] * f[2]
    # [o] [g] = g o^T - (o . g) I
    og = o[0] * g[0] + o[1] * g[1] + o[2] * g[2]
    for a in range(3):
        for k in range(3):
            out[3 + a, 3 + k] += g[a] * o[k] - (og if a == k else 0.0)


@njit(cache=True)  # type: ignore[misc]
def mount_chain(model: Any, plan: Any, r: int, rows: NDArray[np.float64], scale: float,
                held_rows: bool, data: NDArray[np.float64]) -> None:
    """``scale`` times the rigid mounts' chain rule (module doc) of rod ``r``'s tangent band
    ``rows`` (6 ne + 3 local rows, :data:`WIDTH` diagonals) added into the CSC values
    ``data``: (1) the free rows' entries in the held columns carried to the body's columns;
    with ``held_rows`` (the elastic band: the reaction hands the held rows' load to the
    body) also (2) the held rows carried to the body's rows and (3) the body-body block.
    ``plan`` a ``HybridPlan``: mounts ``mount_ptr[r] ..`` (motor rows ``mount_motor``, band
    rows of the held node and element ``mount_held``, body-body positions ``mount_dst``),
    each with the free local unknowns ``side_local[side_ptr[k] ..]`` near its base and their
    positions ``side_dst`` (6 in the body's columns, 6 in its rows; -1: not an entry)."""
    c = np.empty((6, 6))
    o = np.empty(3)
    block = np.empty((6, 6))
    for k in range(plan.mount_ptr[r], plan.mount_ptr[r + 1]):
        i = plan.mount_motor[k]
        held = plan.mount_held[k]
        _chain_map(model, i, c, o)
        for p in range(plan.side_ptr[k], plan.side_ptr[k + 1]):
            u = plan.side_local[p]
            for col in range(6):
                s = 0.0
                t = 0.0
                for m in range(6):
                    s += _entry(rows, u, held[m]) * c[m, col]
                    t += c[m, col] * _entry(rows, held[m], u)
                d = plan.side_dst[p, col]
                if d >= 0:
                    data[d] += scale * s
                d = plan.side_dst[p, 6 + col]
                if held_rows and d >= 0:
                    data[d] += scale * t
        if not held_rows:
            continue
        _body_block(model, i, held, rows, c, o, block)
        for a in range(6):
            for col in range(6):
                d = plan.mount_dst[k, 6 * a + col]
                if d >= 0:
                    data[d] += scale * block[a, col]


def mount_entries(solver: Any, pos: dict[tuple[int, int], int],
                  rods: list[tuple[int, int, NDArray[np.int64]]]) -> dict[str, NDArray[np.int64]]:
    """The rigid mounts' entries of :func:`mount_chain`, per rod of ``rods`` (``(start,
    n_elems, local)``: :func:`~hsa_elastica.engines.statics_build.rod_locals`), as int64
    arrays named as the ``HybridPlan`` fields; ``pos`` the full pattern's positions."""
    motors = solver.tables.motors
    kind, index, comp = solver.kind, solver.index, solver.comp
    ptr, motor, held_rows, body_dst, side_ptr, side_local, side_dst = [0], [], [], [], [0], [], []
    for s, ne, local in rods:
        for i in np.nonzero((motors.body >= 0) & (motors.element >= s)
                            & (motors.element < s + ne))[0].tolist():
            b = int(motors.body[i])
            unknown = [int(j) for g in (KIND_BODY_POS, KIND_BODY_ROT) for a in range(3)
                       for j in np.nonzero((kind == g) & (index == b) & (comp == a))[0]]
            cells: list[int | None] = list(unknown) if len(unknown) == 6 else [None] * 6
            hn, he = 6 * (int(motors.node[i]) - s), 6 * (int(motors.element[i]) - s) + 3
            held = [hn, hn + 1, hn + 2, he, he + 1, he + 2]
            near = sorted({u for h in held for u in range(max(0, h - HALF_BANDWIDTH),
                                                          min(local.shape[0], h + HALF_BANDWIDTH + 1))
                           if local[u] >= 0})

            def at(row: int | None, col: int | None) -> int:
                return -1 if row is None or col is None else pos.get((row, col), -1)

            for u in near:
                side_local.append(u)
                side_dst.append([at(int(local[u]), x) for x in cells]
                                + [at(x, int(local[u])) for x in cells])
            motor.append(i)
            held_rows.append(held)
            body_dst.append([at(x, y) for x in cells for y in cells])
            side_ptr.append(len(side_local))
        ptr.append(len(motor))
    i64 = np.int64
    return {"mount_ptr": np.array(ptr, i64), "mount_motor": np.array(motor, i64),
            "mount_held": np.array(held_rows, i64).reshape(-1, 6),
            "mount_dst": np.array(body_dst, i64).reshape(-1, 36),
            "side_ptr": np.array(side_ptr, i64), "side_local": np.array(side_local, i64),
            "side_dst": np.array(side_dst, i64).reshape(-1, 12)}
