"""Consistent tangent of one contact point in the Newton matrices' unknowns: the contact
law's 3 x 3 blocks (:func:`~hsa_elastica.physics.contact_laws.contact_tangent`, ``D_x = d f /
d x`` and ``D_v = d f / d v`` at the point's state) carried to the unknowns the point's
position and velocity depend on, and to the generalised forces its force makes.

One point's block has the layout of a joint's
(:data:`~hsa_elastica.physics.joint_tangent.JOINT_BLOCK`: rows and columns a rod node
[``NODE``], a body's position [``BODY_POS``] and rotation increment [``BODY_ROT``, its own
frame, ``Q <- exp(-[w]) Q``]; the ``ELEMENT`` group is unused), so the static solver's and the
implicit integrator's joint scatter (:func:`~hsa_elastica.engines.statics_hybrid.
joint_tangents`) adds it where it adds a joint's.  Per row kind of the
:class:`~hsa_elastica.physics.tables.ContactTable` (``ids`` system kind, object body), with
``r`` the point's lever from the body's centre (lab), ``w = Q^T omega`` the body's lab angular
velocity, ``H`` the obstacle's signed-distance Hessian, ``R`` a sphere's radius:

* a rod node and a fixed obstacle: ``f(x_n, v_n)``; the node's rows and columns only;
* points fixed on a body (``BodyContact`` rims): ``x_p = x_b + r``, ``v_p = v_b + w x r``,
  ``r = Q^T r_local``; turning the body turns ``r`` (``dr/dW = -[r]``) and ``w x r``
  (``-[w x r]``); the body takes ``F = f`` and ``T = Q (r x f)``;
* a sphere's support point (``BodyContact`` with ``sphere_radius``): ``r = -R n(x_b)``, so
  ``dx_p/dx_b = I - R H`` and ``dr/dx_b = -R H``; the rotation enters through ``w`` only
  (``dw/dW = -[w]``);
* a rod node and a free object (``ObjectContact``; a sphere about its centre, a ``Cylinder``
  a capsule about its axis): the law at the node's position and its velocity relative to the
  object's surface point ``v_rel = v_n - v_o - w x r``, ``r`` the lever to that point; the
  node takes ``f``, the object ``-f`` and ``-Q (r x f)``
  (:mod:`~hsa_elastica.physics.object_contact_laws`).  A capsule's axis turns with the object:
  the law at the turned axis is the turned law at the node turned back, which adds the terms
  ``[x_n - x_o] Q^T`` (position), ``[v_rel] Q^T`` (velocity) and ``-[f] Q^T`` (the force) to
  its rotation columns (they cancel for a sphere);
* a body's point on a free object (``ObjectContact`` on a rigid body, ``BODY_OBJECT``): the
  object's law as for a rod's node at the point ``x_p = x_b + r_b``, ``v_p = v_b + w_b x
  r_b``; the point's columns carried to the body's position and rotation, which take the
  block's ``NODE`` and ``ELEMENT`` slots (``OWN_POS`` / ``OWN_ROT``: the block couples two
  bodies), and the body's rows ``f`` and ``Q_b (r_b x f)`` there;
* a sphere's support point with rolling resistance: the rolling couple's tangent added to the
  sphere's couple rows (:func:`~hsa_elastica.physics.object_contact_laws.
  rolling_couple_tangent`, from the point's ``df``).

A rod against a rod (``tables.ROD_ROD``) has no point block either: each element pair within
reach couples the four nodes of its two segments, and :func:`rod_pair_tangents` adds the
pair's 12 x 12 tangent (:func:`~hsa_elastica.physics.rod_contact_laws.segment_pair_tangent`)
into the Newton matrix's CSC values at those nodes directly.

With ``A = dx/dq``, ``B = dv/dq`` (the velocity's dependence on the pose at fixed velocity
unknowns), ``C = dv/dq'`` and ``L = dr/dq``: ``df/dq = D_x A + D_v B``, ``df/dq' = D_v C``;
the body's couple rows ``s Q ([r] df - [f] L)`` plus the frame's turn ``[T]`` (``s`` = +1 on
a body's own points, -1 on an object's).  The tangent is exact: the law's and the kinematics'
derivatives, nothing left out (``tests/test_statics_hybrid_contacts.py`` checks the Newton
matrices against differences of the whole residual).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.contact_laws import (
    CAPSULE,
    FAR_SMOOTHING_LENGTHS,
    ContactLaw,
    ContactOutput,
    ContactPoints,
    ObstacleGeometry,
    _hessian_entry,
    _scalars,
    _surface,
    body_point,
    contact_forces,
    contact_tangent,
    row_geometry,
    row_law,
    row_obstacle,
)
from hsa_elastica.physics.joint_tangent import BODY_POS, BODY_ROT, ELEMENT, JOINT_BLOCK, NODE
from hsa_elastica.physics.object_contact_laws import (
    object_geometry, object_scalars, rolling_couple_tangent)
from hsa_elastica.physics.rod_contact_laws import rod_rod_tangent
from hsa_elastica.physics.tables import ROD_ROD

__all__ = ["contact_point_block", "point_row", "rod_pair_tangents", "ROD_FIXED", "BODY_POINTS",
           "SPHERE_SUPPORT", "ROD_OBJECT", "BODY_OBJECT", "row_kind"]

#: the contact row kinds a point block is made for (:func:`row_kind`)
ROD_FIXED, BODY_POINTS, SPHERE_SUPPORT, ROD_OBJECT, BODY_OBJECT = 0, 1, 2, 3, 4

#: a body's points on an object (``BODY_OBJECT``) put the body's own position and rotation
#: in the block's ``NODE`` and ``ELEMENT`` slots, the object's in ``BODY_POS`` / ``BODY_ROT``
OWN_POS, OWN_ROT = NODE, ELEMENT


@njit(cache=True)  # type: ignore[misc]
def row_kind(ids: NDArray[np.int64], i: int) -> int:
    """The point-block kind of contact row ``i`` (``ContactTable.ids``): -1 if there is none
    (a rod against a rod, system kind ``tables.ROD_ROD``, whose element pairs couple four
    nodes each: their tangent is scattered by :func:`rod_pair_tangents`)."""
    if ids[i, 1] == ROD_ROD:
        return -1
    if ids[i, 1] == 0:
        if ids[i, 4] < 0:
            return ROD_FIXED
        return ROD_OBJECT
    if ids[i, 1] == 2:
        return SPHERE_SUPPORT
    return BODY_OBJECT if ids[i, 4] >= 0 else BODY_POINTS


@njit(cache=True)  # type: ignore[misc]
def rod_pair_tangents(
    rod: Any, c: Any, rows: NDArray[np.int64],
    csc: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]],
    scales: tuple[float, float], data: NDArray[np.float64],
) -> None:
    """The rod-rod contact ``rows`` (kind ``ROD_ROD``) of the contact table ``c``: their
    tangents ``sx K_x + sv K_v`` (``scales``) added into the CSC values ``data``
    (:func:`~hsa_elastica.physics.rod_contact_laws.rod_rod_tangent`, ``csc`` as there), at
    the rods' present positions and velocities (``rod``: a view of the block)."""
    index, par, pts, _ = c
    for i in rows:
        s, m, sb, mb = index[i, 0], index[i, 2], index[i, 3], index[i, 4]
        law = row_law(par, i)
        one = ContactPoints(rod.position[:, s : s + m], rod.velocity[:, s : s + m],
                            pts[i, 0, : m - 1], pts[i, 2, : m - 1])
        two = ContactPoints(rod.position[:, sb : sb + mb], rod.velocity[:, sb : sb + mb],
                            pts[i, 1, : mb - 1], pts[i, 3, : mb - 1])
        rod_rod_tangent(one, two, law, (s, sb), csc, scales, data)


@njit(cache=True)  # type: ignore[misc]
def point_row(width: int, flat: int) -> tuple[int, int]:
    """``(row, point)`` of a point's flat index ``row * width + point`` (``width`` the
    table's ``points.shape[2]``): how the joint scatter's operation list names a point."""
    return flat // width, flat % width


@njit(cache=True, inline="always")  # type: ignore[misc]
def _skew_into(m: NDArray[np.float64], c0: int, s: float, a: Any) -> None:
    """``m[:, c0:c0+3] += s [a]``."""
    m[0, c0 + 1] -= s * a[2]
    m[0, c0 + 2] += s * a[1]
    m[1, c0] += s * a[2]
    m[1, c0 + 2] -= s * a[0]
    m[2, c0] -= s * a[1]
    m[2, c0 + 1] += s * a[0]


@njit(cache=True, inline="always")  # type: ignore[misc]
def _times_qt(m: NDArray[np.float64], c0: int, s: float, S: NDArray[np.float64],
              Q: NDArray[np.float64]) -> None:
    """``m[:, c0:c0+3] += s S Q^T`` (``S`` 3 x 3)."""
    for i in range(3):
        for j in range(3):
            m[i, c0 + j] += s * (S[i, 0] * Q[j, 0] + S[i, 1] * Q[j, 1] + S[i, 2] * Q[j, 2])


@njit(cache=True, inline="always")  # type: ignore[misc]
def _skew_mat(out: NDArray[np.float64], a: Any) -> NDArray[np.float64]:
    """``out = [a]`` (returned)."""
    out[:] = 0.0
    _skew_into(out, 0, 1.0, a)
    return out


@njit(cache=True)  # type: ignore[misc]
def _hessian(gs: Any, x: Any, H: NDArray[np.float64]) -> None:
    """``H`` = the signed distance's Hessian of obstacle ``gs`` at ``x``."""
    _, n0, n1, n2, dist, interior = _surface(gs, x[0], x[1], x[2])
    for i in range(3):
        for j in range(3):
            H[i, j] = _hessian_entry(gs, (n0, n1, n2), dist, interior, i, j)


@njit(cache=True)  # type: ignore[misc]
def _kinematics(rod: Any, body: Any, c: Any, i: int, p: int, kind: int, m: Any) -> Any:
    """The point's law state and its derivatives in the unknowns: fills ``m = (x (3, 1),
    v (3, 1), A, B, C, L (3, 12), r (3,), work (3, 3 x 3))`` and returns ``(geometry record,
    body index, sign of the body's rows)``."""
    index, par, pts, _ = c
    x, v, A, B, C, L, r, w3 = m
    s = index[i, 0]
    A[:] = 0.0
    B[:] = 0.0
    C[:] = 0.0
    L[:] = 0.0
    r[:] = 0.0
    geom = row_obstacle(index, par, i)
    if kind == ROD_FIXED:
        for a in range(3):
            x[a, 0] = rod.position[a, s + p]
            v[a, 0] = rod.velocity[a, s + p]
            A[a, NODE + a] = 1.0
            C[a, NODE + a] = 1.0
        return geom, -1, 0.0
    b = index[i, 4] if kind == ROD_OBJECT or kind == BODY_OBJECT else s
    Q = body.director[:, :, b]
    om = body.omega[:, b]
    wl = np.empty(3)
    for a in range(3):
        wl[a] = Q[0, a] * om[0] + Q[1, a] * om[1] + Q[2, a] * om[2]
    T = w3[2]
    if kind == ROD_OBJECT or kind == BODY_OBJECT:
        return _object_kinematics(rod, body, c, i, p, b, wl, m), b, -1.0
    if kind == SPHERE_SUPPORT:
        _support_kinematics(body, _scalars(geom), par[i, 13], b, wl, m)
    else:  # BODY_POINTS: r = Q^T r_local
        _rim_kinematics(pts[i, 0:3, p], Q, wl, m)
    _skew_mat(T, r)
    _times_qt(C, BODY_ROT, -1.0, T, Q)  # d (w x r) / d omega = -[r] Q^T
    for a in range(3):
        C[a, BODY_POS + a] = 1.0
        x[a, 0] = body.position[a, b] + r[a]
        v[a, 0] = body.velocity[a, b] + (wl[(a + 1) % 3] * r[(a + 2) % 3]
                                         - wl[(a + 2) % 3] * r[(a + 1) % 3])
    return geom, b, 1.0


@njit(cache=True)  # type: ignore[misc]
def _object_kinematics(rod: Any, body: Any, c: Any, i: int, p: int, b: int,
                       wl: NDArray[np.float64], m: Any) -> ObstacleGeometry:
    """:func:`_kinematics` of a rod node on the free object ``b`` (lab angular velocity
    ``wl``): the velocity relative to the object's surface point, ``r`` the lever to it;
    returns the object's geometry (a sphere about its centre, a ``Cylinder``'s capsule along
    its axis) at its present pose.  A capsule turns with the object (lab turn ``Q^T W``): the
    law at the turned axis is the turned law at the node turned back, so the position and
    the velocity the law sees take ``[x_n - x_o] Q^T`` and ``[v_rel] Q^T`` (the force's own
    turn, ``-[f] Q^T``, is added by :func:`contact_point_block`); a sphere's law does not
    change under its turn about the centre (those three terms cancel)."""
    index, par, pts, _ = c
    x, v, A, B, C, L, r, w3 = m
    J, S, T = w3[0], w3[1], w3[2]
    Q = body.director[:, :, b]
    s, kind = index[i, 0], index[i, 3]
    capsule = kind == CAPSULE
    # the object's obstacle at its present pose, as the force evaluation builds it
    geom = object_geometry(body.position, body.director, b, (kind, par[i, 6], par[i, 7]),
                           np.empty(6))
    own = index[i, 1] != 0  # a body's point (BODY_OBJECT), not a rod's node
    xn, vn = np.empty(3), np.empty(3)
    if own:
        _own_point(body, s, pts[i, 0:3, p], xn, vn)
    else:
        xn[:] = rod.position[:, s + p]
        vn[:] = rod.velocity[:, s + p]
    phi, n0, n1, n2, _, _ = _surface(_scalars(geom), xn[0], xn[1], xn[2])
    nv = (n0, n1, n2)
    d = (xn[0] - body.position[0, b], xn[1] - body.position[1, b], xn[2] - body.position[2, b])
    for a in range(3):
        r[a] = d[a] - phi * nv[a]
        x[a, 0] = xn[a]
    # v_rel = v_n - v_o - w x r
    v[0, 0] = vn[0] - body.velocity[0, b] - (wl[1] * r[2] - wl[2] * r[1])
    v[1, 0] = vn[1] - body.velocity[1, b] - (wl[2] * r[0] - wl[0] * r[2])
    v[2, 0] = vn[2] - body.velocity[2, b] - (wl[0] * r[1] - wl[1] * r[0])
    # J = d (x - phi n) / d x = I - n n^T - phi H: the surface point follows the node (R H on
    # a sphere); L = d r / dq = J on the node, -J on the object's position
    _hessian(_scalars(geom), xn, J)
    for a in range(3):
        for k in range(3):
            J[a, k] = (1.0 if a == k else 0.0) - nv[a] * nv[k] - phi * J[a, k]
    for a in range(3):
        A[a, NODE + a] = 1.0
        A[a, BODY_POS + a] = -1.0
        C[a, NODE + a] = 1.0
        C[a, BODY_POS + a] = -1.0
        for k in range(3):
            L[a, NODE + k] = J[a, k]
            L[a, BODY_POS + k] = -J[a, k]
    if capsule:
        _times_qt(A, BODY_ROT, 1.0, _skew_mat(T, d), Q)
        for a in range(3):  # d r / dW = (J [d] - [r]) Q^T
            for k in range(3):
                T[a, k] = (J[a, 0] * _sk(d, 0, k) + J[a, 1] * _sk(d, 1, k)
                           + J[a, 2] * _sk(d, 2, k) - _sk(r, a, k))
        _times_qt(L, BODY_ROT, 1.0, T, Q)
    # B = d v_rel / dq = -[w] L, and on the rotation -[r] [w] Q^T (d w / dW = -[w] Q^T)
    _skew_mat(S, wl)
    for a in range(3):
        for q in range(JOINT_BLOCK):
            B[a, q] = -(S[a, 0] * L[0, q] + S[a, 1] * L[1, q] + S[a, 2] * L[2, q])
    for a in range(3):
        for k in range(3):
            T[a, k] = -(_sk(r, a, 0) * S[0, k] + _sk(r, a, 1) * S[1, k]
                        + _sk(r, a, 2) * S[2, k])
            if capsule:
                T[a, k] += _sk(v[:, 0], a, k)
    _times_qt(B, BODY_ROT, 1.0, T, Q)
    _times_qt(C, BODY_ROT, 1.0, _skew_mat(T, r), Q)  # d v_rel / d omega = [r] Q^T
    if own:
        _carry_to_body(body, s, xn, w3, (A, B, C, L))
    return geom


@njit(cache=True, inline="always")  # type: ignore[misc]
def _own_point(body: Any, s: int, loc: Any, xp: NDArray[np.float64],
               vp: NDArray[np.float64]) -> None:
    """Position and velocity (lab) of the point ``loc`` (its frame) of body ``s``:
    ``x_s + r``, ``v_s + w x r``, ``r = Q^T loc``."""
    Q, om = body.director[:, :, s], body.omega[:, s]
    r = np.empty(3)
    wl = np.empty(3)
    for a in range(3):
        r[a] = Q[0, a] * loc[0] + Q[1, a] * loc[1] + Q[2, a] * loc[2]
        wl[a] = Q[0, a] * om[0] + Q[1, a] * om[1] + Q[2, a] * om[2]
    for a in range(3):
        xp[a] = body.position[a, s] + r[a]
        vp[a] = body.velocity[a, s] + (wl[(a + 1) % 3] * r[(a + 2) % 3]
                                       - wl[(a + 2) % 3] * r[(a + 1) % 3])


@njit(cache=True, inline="always")  # type: ignore[misc]
def _carry_to_body(body: Any, s: int, xp: NDArray[np.float64], w3: NDArray[np.float64],
                   mats: Any) -> None:
    """A body's point (``BODY_OBJECT``): the columns :func:`_object_kinematics` wrote for the
    point's own position and velocity (the ``NODE`` slot) carried to body ``s``'s unknowns,
    its position (``OWN_POS`` = ``NODE``: ``d x_p / d x_s = I``) and rotation (``OWN_ROT``,
    ``D = d x_p / dW = -[r] Q^T``, ``r = x_p - x_s``): ``M[:, OWN_ROT] = M[:, NODE] D`` for
    ``A``, ``L`` and ``B``; the point's velocity ``v_s + w x r`` adds ``-[w x r] Q^T`` to
    ``B``'s and ``D`` to ``C``'s (``d v_p / d omega = -[r] Q^T``)."""
    A, B, C, L = mats
    D, S = w3[1], w3[2]
    Q, om = body.director[:, :, s], body.omega[:, s]
    r = (xp[0] - body.position[0, s], xp[1] - body.position[1, s], xp[2] - body.position[2, s])
    wl = np.empty(3)
    for a in range(3):
        wl[a] = Q[0, a] * om[0] + Q[1, a] * om[1] + Q[2, a] * om[2]
    wr = (wl[1] * r[2] - wl[2] * r[1], wl[2] * r[0] - wl[0] * r[2], wl[0] * r[1] - wl[1] * r[0])
    for a in range(3):  # D = -[r] Q^T, S = -[w x r] Q^T
        for k in range(3):
            D[a, k] = -(_sk(r, a, 0) * Q[k, 0] + _sk(r, a, 1) * Q[k, 1] + _sk(r, a, 2) * Q[k, 2])
            S[a, k] = -(_sk(wr, a, 0) * Q[k, 0] + _sk(wr, a, 1) * Q[k, 1]
                        + _sk(wr, a, 2) * Q[k, 2])
    for M in (A, L, B):
        for a in range(3):
            n0, n1, n2 = M[a, NODE], M[a, NODE + 1], M[a, NODE + 2]
            for k in range(3):
                M[a, OWN_ROT + k] = n0 * D[0, k] + n1 * D[1, k] + n2 * D[2, k]
    for a in range(3):
        for k in range(3):
            B[a, OWN_ROT + k] += S[a, k]
            C[a, OWN_ROT + k] = D[a, k]


@njit(cache=True)  # type: ignore[misc]
def _support_kinematics(body: Any, gs: Any, R: float, b: int, wl: NDArray[np.float64],
                        m: Any) -> None:
    """:func:`_kinematics` of sphere ``b``'s support point (radius ``R``) on the obstacle
    ``gs``: ``r = -R n(x_b)``, the rotation through ``w`` only."""
    x, v, A, B, C, L, r, w3 = m
    H, S, T = w3[0], w3[1], w3[2]
    Q = body.director[:, :, b]
    xb = body.position[:, b]
    _, n0, n1, n2, _, _ = _surface(gs, xb[0], xb[1], xb[2])
    r[0], r[1], r[2] = -R * n0, -R * n1, -R * n2
    _hessian(gs, xb, H)
    _skew_mat(S, wl)
    for a in range(3):
        for k in range(3):
            A[a, BODY_POS + k] = (1.0 if a == k else 0.0) - R * H[a, k]
            L[a, BODY_POS + k] = -R * H[a, k]
            B[a, BODY_POS + k] = -R * (S[a, 0] * H[0, k] + S[a, 1] * H[1, k]
                                       + S[a, 2] * H[2, k])
    # d (w x r) / dW = [r] [w] Q^T
    _skew_mat(T, r)
    for a in range(3):
        for k in range(3):
            S[a, k] = (T[a, 0] * _sk(wl, 0, k) + T[a, 1] * _sk(wl, 1, k)
                       + T[a, 2] * _sk(wl, 2, k))
    _times_qt(B, BODY_ROT, 1.0, S, Q)


@njit(cache=True)  # type: ignore[misc]
def _rim_kinematics(loc: Any, Q: NDArray[np.float64], wl: NDArray[np.float64], m: Any) -> None:
    """:func:`_kinematics` of a point ``loc`` fixed in a body's frame ``Q``."""
    x, v, A, B, C, L, r, w3 = m
    S, T = w3[1], w3[2]
    for a in range(3):
        r[a] = Q[0, a] * loc[0] + Q[1, a] * loc[1] + Q[2, a] * loc[2]
    _skew_mat(T, r)
    _times_qt(A, BODY_ROT, -1.0, T, Q)
    wr = (wl[1] * r[2] - wl[2] * r[1], wl[2] * r[0] - wl[0] * r[2],
          wl[0] * r[1] - wl[1] * r[0])
    _times_qt(B, BODY_ROT, -1.0, _skew_mat(S, wr), Q)
    _times_qt(L, BODY_ROT, -1.0, T, Q)
    for a in range(3):
        A[a, BODY_POS + a] = 1.0


@njit(cache=True, inline="always")  # type: ignore[misc]
def _sk(a: Any, i: int, j: int) -> float:
    """``[a][i, j]``."""
    if i == j:
        return 0.0
    if i == 0:
        return -a[2] if j == 1 else a[1]
    if i == 1:
        return a[2] if j == 0 else -a[0]
    return -a[1] if j == 0 else a[0]


@njit(cache=True)  # type: ignore[misc]
def _far(rod: Any, body: Any, c: Any, i: int, p: int, kind: int) -> bool:
    """Whether point ``p`` of row ``i`` is beyond the law's reach (no force, no tangent:
    :data:`~hsa_elastica.physics.contact_laws.FAR_SMOOTHING_LENGTHS`), from its position
    alone and without allocating: most points of a scene are far at any time."""
    index, par, pts, _ = c
    s = index[i, 0]
    gs = row_geometry(index, par, i)
    radius = pts[i, 9, p]
    if kind == ROD_FIXED or kind == ROD_OBJECT:
        x0, x1, x2 = rod.position[0, s + p], rod.position[1, s + p], rod.position[2, s + p]
    elif kind == SPHERE_SUPPORT:  # the support point's gap is the centre's less the radius
        x0, x1, x2 = body.position[0, s], body.position[1, s], body.position[2, s]
        radius = par[i, 13]
    else:
        x0, x1, x2, _, _, _ = body_point(body.position, body.velocity, body.director, s,
                                         (0.0, 0.0, 0.0), (pts[i, 0, p], pts[i, 1, p],
                                                           pts[i, 2, p]))
    if kind == ROD_OBJECT or kind == BODY_OBJECT:  # the object's obstacle at its pose
        gs = object_scalars(body.position, body.director, index[i, 4],
                            (index[i, 3], par[i, 6], par[i, 7]))
    phi = _surface(gs, x0, x1, x2)[0]
    return phi - radius > FAR_SMOOTHING_LENGTHS * par[i, 9]  # type: ignore[no-any-return]


@njit(cache=True)  # type: ignore[misc]
def contact_point_block(
    rod: Any, body: Any, c: Any, flat: int, velocity: bool, out: NDArray[np.float64],
) -> bool:
    """The tangent of contact point ``flat`` (:func:`point_row`) of the contact table ``c``
    added into ``out`` (12, 12; module doc): with respect to the unknowns at the present
    velocities, or with ``velocity`` to the unknowns' velocities.  ``rod`` / ``body``: views of
    the blocks (``SystemView``).  False (nothing added) for a point beyond the law's reach
    (:func:`_far`) or a row kind without a block."""
    index, par, pts, _ = c
    i, p = point_row(pts.shape[2], flat)
    kind = row_kind(index, i)
    if kind < 0 or _far(rod, body, c, i, p, kind):
        return False
    law = row_law(par, i)
    x, v = np.empty((3, 1)), np.empty((3, 1))
    A, B, C, L = (np.empty((3, JOINT_BLOCK)), np.empty((3, JOINT_BLOCK)),
                  np.empty((3, JOINT_BLOCK)), np.empty((3, JOINT_BLOCK)))
    r, w3 = np.empty(3), np.empty((3, 3, 3))
    geom, b, sign = _kinematics(rod, body, c, i, p, kind, (x, v, A, B, C, L, r, w3))
    point = ContactPoints(x, v, pts[i, 9, p : p + 1], pts[i, 10, p : p + 1])
    dx, dv = np.empty((3, 3, 1)), np.empty((3, 3, 1))
    contact_tangent(point, geom, law, dx, dv)
    df = np.zeros((3, JOINT_BLOCK))
    for a in range(3):
        for q in range(JOINT_BLOCK):
            if velocity:
                df[a, q] = dv[a, 0, 0] * C[0, q] + dv[a, 1, 0] * C[1, q] + dv[a, 2, 0] * C[2, q]
            else:
                df[a, q] = (dx[a, 0, 0] * A[0, q] + dx[a, 1, 0] * A[1, q]
                            + dx[a, 2, 0] * A[2, q] + dv[a, 0, 0] * B[0, q]
                            + dv[a, 1, 0] * B[1, q] + dv[a, 2, 0] * B[2, q])
    carried = kind == ROD_OBJECT or kind == BODY_OBJECT
    if carried and index[i, 3] == CAPSULE and not velocity:
        _turned_force(body.director[:, :, b], point, geom, law, w3[2], df)
    if kind == ROD_FIXED or kind == ROD_OBJECT:
        out[NODE : NODE + 3, :] += df
    if kind == BODY_OBJECT:
        s0 = index[i, 0]  # the body whose point this is
        _own_rows(body.director[:, :, s0], point, geom, law, x[:, 0], body.position[:, s0], df,
                  velocity, w3[0], out)
    if b >= 0:
        _body_rows(body.director[:, :, b], point, geom, law, r, df, L, sign, velocity, out)
    if kind == SPHERE_SUPPORT and par[i, 14] > 0.0:  # the sphere's rolling resistance
        res = ContactOutput(np.empty((3, 1)), np.empty(1), np.empty(1))
        contact_forces(point, geom, law, res)
        rolling_couple_tangent((body.position, body.director, body.omega), b, geom, res.force,
                               df, (par[i, 14], par[i, 13], law.slip_velocity), velocity, out)
    return True


@njit(cache=True, inline="always")  # type: ignore[misc]
def _turned_force(Q: NDArray[np.float64], point: ContactPoints, geom: ObstacleGeometry,
                  law: ContactLaw, work: NDArray[np.float64], df: NDArray[np.float64]) -> None:
    """``df[:, BODY_ROT] += -[f] Q^T``: a capsule object's force turns with it
    (:func:`_object_kinematics`)."""
    res = ContactOutput(np.empty((3, 1)), np.empty(1), np.empty(1))
    contact_forces(point, geom, law, res)
    _times_qt(df, BODY_ROT, -1.0, _skew_mat(work, res.force[:, 0]), Q)


@njit(cache=True, inline="always")  # type: ignore[misc]
def _own_rows(Q: NDArray[np.float64], point: ContactPoints, geom: ObstacleGeometry,
              law: ContactLaw, xp: Any, xs: Any, df: NDArray[np.float64], velocity: bool,
              work: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    """The rows of the body whose point touches an object (``BODY_OBJECT``; its unknowns in
    the ``OWN_POS`` / ``OWN_ROT`` slots): force ``df``, couple ``Q ([r] df - [f] L)`` with
    ``r = x_p - x_s`` and ``L = d r / dq = -[r] Q^T`` on its rotation, and (positions) the
    frame's turn ``[T]``, ``T = Q (r x f)``, as :func:`_body_rows` for a body's own points."""
    out[OWN_POS : OWN_POS + 3, :] += df
    r = (xp[0] - xs[0], xp[1] - xs[1], xp[2] - xs[2])
    f = np.zeros(3)
    if not velocity:
        res = ContactOutput(np.empty((3, 1)), np.empty(1), np.empty(1))
        contact_forces(point, geom, law, res)
        f[:] = res.force[:, 0]
    m = np.empty((3, JOINT_BLOCK))  # [r] df, then - [f] L on the rotation's columns
    for a in range(3):
        for q in range(JOINT_BLOCK):
            m[a, q] = _sk(r, a, 0) * df[0, q] + _sk(r, a, 1) * df[1, q] + _sk(r, a, 2) * df[2, q]
    if not velocity:  # [f] [r] Q^T
        for a in range(3):
            for k in range(3):
                work[a, k] = (_sk(f, a, 0) * _sk(r, 0, k) + _sk(f, a, 1) * _sk(r, 1, k)
                              + _sk(f, a, 2) * _sk(r, 2, k))
        _times_qt(m, OWN_ROT, 1.0, work, Q)
    for a in range(3):
        for q in range(JOINT_BLOCK):
            out[OWN_ROT + a, q] += Q[a, 0] * m[0, q] + Q[a, 1] * m[1, q] + Q[a, 2] * m[2, q]
    if velocity:
        return
    t = (r[1] * f[2] - r[2] * f[1], r[2] * f[0] - r[0] * f[2], r[0] * f[1] - r[1] * f[0])
    tb = np.empty(3)
    for a in range(3):
        tb[a] = Q[a, 0] * t[0] + Q[a, 1] * t[1] + Q[a, 2] * t[2]
    for a in range(3):
        for k in range(3):
            out[OWN_ROT + a, OWN_ROT + k] += _sk(tb, a, k)


@njit(cache=True)  # type: ignore[misc]
def _body_rows(
    Q: NDArray[np.float64], point: ContactPoints, geom: ObstacleGeometry, law: ContactLaw,
    r: NDArray[np.float64], df: NDArray[np.float64], L: NDArray[np.float64], sign: float,
    velocity: bool, out: NDArray[np.float64],
) -> None:
    """The body's rows of a point's block: force ``sign df``, couple ``sign Q ([r] df - [f]
    L)`` and (positions) the frame's turn ``[T]``, ``T = sign Q (r x f)``."""
    out[BODY_POS : BODY_POS + 3, :] += sign * df
    f = np.zeros(3)
    if not velocity:
        res = ContactOutput(np.empty((3, 1)), np.empty(1), np.empty(1))
        contact_forces(point, geom, law, res)
        f[:] = res.force[:, 0]
    m = np.empty((3, JOINT_BLOCK))  # [r] df - [f] L (lab)
    for a in range(3):
        for q in range(JOINT_BLOCK):
            m[a, q] = (_sk(r, a, 0) * df[0, q] + _sk(r, a, 1) * df[1, q] + _sk(r, a, 2) * df[2, q]
                       - _sk(f, a, 0) * L[0, q] - _sk(f, a, 1) * L[1, q] - _sk(f, a, 2) * L[2, q])
    for a in range(3):
        for q in range(JOINT_BLOCK):
            out[BODY_ROT + a, q] += sign * (Q[a, 0] * m[0, q] + Q[a, 1] * m[1, q]
                                            + Q[a, 2] * m[2, q])
    if velocity:
        return
    t = (r[1] * f[2] - r[2] * f[1], r[2] * f[0] - r[0] * f[2], r[0] * f[1] - r[1] * f[0])
    tb = np.empty(3)
    for a in range(3):
        tb[a] = sign * (Q[a, 0] * t[0] + Q[a, 1] * t[1] + Q[a, 2] * t[2])
    for a in range(3):
        for k in range(3):
            out[BODY_ROT + a, BODY_ROT + k] += _sk(tb, a, k)
