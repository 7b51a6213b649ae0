"""The contact table's rows on the compiled engines: :func:`apply_contact` (docs/contact.md,
"On the compiled engines").

One row is a ``RodContact``, ``BodyContact``, ``ObjectContact`` or ``RodRodContact`` of the
model (:class:`~hsa_elastica.physics.tables.ContactTable`).  A row's loop visits its points
once and, per point, calls the step every contact loop of the package calls: against a fixed
obstacle :func:`~hsa_elastica.physics.contact_laws.obstacle_point`, against an object
:func:`~hsa_elastica.physics.object_contact_laws.object_point`, a rigid body's point placed by
:func:`~hsa_elastica.physics.contact_laws.body_point`.  The loops index the blocks' arrays
and the table's columns directly: a slice of an array, or an array taken out of a record, is
an atomic reference count in numba's generated code, and those counts, not the law's
arithmetic, were most of a row's cost (``benchmarks/contact_cost.py --rows``).  The operator
classes (:mod:`hsa_elastica.physics.contact`, :mod:`hsa_elastica.physics.object_contact`)
loop over their own points with the same per-point steps
(:func:`~hsa_elastica.physics.contact_laws.contact_forces`,
:func:`~hsa_elastica.physics.object_contact_laws.object_contact_forces`).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.contact_laws import (
    FAR_SMOOTHING_LENGTHS,
    ContactOutput,
    ContactPoints,
    body_point,
    body_spin,
    obstacle_point,
    row_geometry,
    row_law,
    row_obstacle,
)
from hsa_elastica.physics.mount_kernels import SystemView
from hsa_elastica.physics.object_contact_laws import (
    add_couple,
    object_point,
    object_scalars,
    react,
    rolling_couple,
    support_point,
)
from hsa_elastica.physics.rod_contact_laws import rod_rod_forces
from hsa_elastica.physics.tables import OP_CONTACT, ROD_ROD, ContactTable

__all__ = ["apply_contact", "apply_contact_run"]


@njit(cache=True, inline="always")  # type: ignore[misc]
def _write(output: NDArray[np.float64], i: int, p: int, f: tuple[float, float, float],
           gap: float, slip: float) -> None:
    """Point ``p`` of row ``i``'s output: force [N], gap [m], tangential speed [m/s]."""
    output[i, 0, p], output[i, 1, p], output[i, 2, p] = f
    output[i, 3, p] = gap
    output[i, 4, p] = slip


@njit(cache=True, inline="always")  # type: ignore[misc]
def _moment(t: tuple[float, float, float], r: tuple[float, float, float],
            f: tuple[float, float, float]) -> tuple[float, float, float]:
    """``t + r x f``: a body's couple summed over its points."""
    return (t[0] + (r[1] * f[2] - r[2] * f[1]),
            t[1] + (r[2] * f[0] - r[0] * f[2]),
            t[2] + (r[0] * f[1] - r[1] * f[0]))


#: the three loops of the rows: a rod's nodes (kind 0), a body's points or a sphere's support
#: point (kinds 1 and 2), a pair of rods (``ROD_ROD``)
NODES, POINTS, PAIRS = 0, 1, 2


@njit(cache=True, inline="always")  # type: ignore[misc]
def _loop(kind: int) -> int:
    """Which loop applies a row of ``kind``: :data:`NODES`, :data:`POINTS` or :data:`PAIRS`."""
    if kind == ROD_ROD:
        return PAIRS
    return NODES if kind == 0 else POINTS


@njit(cache=True)  # type: ignore[misc]
def _node_rows(c: ContactTable, i0: int, i1: int, rod: SystemView, body: SystemView) -> None:
    """Rows ``i0 .. i1 - 1`` of the table, each of kind 0: the rod's nodes ``s .. s + m - 1``
    of the block against the row's fixed obstacle, or against the obstacle object
    ``index[i, 4]`` carries (its reaction ``-f`` and couple ``-r x f`` added to the object)."""
    index, par, pts, output = c
    y, u, fr = rod.position, rod.velocity, rod.external_forces
    x, v, om, q, fo, to = body
    for i in range(i0, i1):
        law = row_law(par, i)
        far = FAR_SMOOTHING_LENGTHS * law.smoothing_length
        s, m, o = index[i, 0], index[i, 2], index[i, 4]
        if o < 0:
            gs = row_geometry(index, par, i)
            for p in range(m):
                k = s + p
                f0, f1, f2, g, slip = obstacle_point(gs, (y[0, k], y[1, k], y[2, k]),
                                                     (u[0, k], u[1, k], u[2, k]), pts[i, 9, p],
                                                     pts[i, 10, p], law, far)
                _write(output, i, p, (f0, f1, f2), g, slip)
                fr[0, k] += f0
                fr[1, k] += f1
                fr[2, k] += f2
            continue
        os = object_scalars(x, q, o, (index[i, 3], par[i, 6], par[i, 7]))
        w = body_spin(q, om, o)
        t = (0.0, 0.0, 0.0)
        for p in range(m):
            k = s + p
            f0, f1, f2, g, slip, r = object_point(
                os, x, v, o, w, (y[0, k], y[1, k], y[2, k]), (u[0, k], u[1, k], u[2, k]),
                pts[i, 9, p], pts[i, 10, p], law, far)
            _write(output, i, p, (f0, f1, f2), g, slip)
            fr[0, k] += f0
            fr[1, k] += f1
            fr[2, k] += f2
            if g > far:  # no force: no reaction
                continue
            t = react(fo, o, (f0, f1, f2), r, t)
        add_couple(to, q, o, t)


@njit(cache=True)  # type: ignore[misc]
def _point_rows(c: ContactTable, i0: int, i1: int, body: SystemView) -> None:
    """Rows ``i0 .. i1 - 1`` of the table, each of kind 1 (the points ``points[i, 0:3]`` fixed
    in body ``s``) or 2 (a sphere's support point on the row's obstacle) against the fixed
    obstacle or the object ``index[i, 4]``: the points' forces and their moment about the
    body's centre added to the body, the object's reaction to the object; a sphere's rolling
    resistance."""
    index, par, pts, output = c
    x, v, om, q, fb, tb = body
    for i in range(i0, i1):
        law = row_law(par, i)
        far = FAR_SMOOTHING_LENGTHS * law.smoothing_length
        s, kind, m, o = index[i, 0], index[i, 1], index[i, 2], index[i, 4]
        gs = row_geometry(index, par, i)
        if kind == 2:  # (a sphere's support row is always on a fixed obstacle)
            pts[i, 0, 0], pts[i, 1, 0], pts[i, 2, 0] = support_point(gs, x, q, s, par[i, 13])
        w = body_spin(q, om, s)
        wo = w
        if o >= 0:
            gs = object_scalars(x, q, o, (index[i, 3], par[i, 6], par[i, 7]))
            wo = body_spin(q, om, o)
        t = (0.0, 0.0, 0.0)
        to = (0.0, 0.0, 0.0)
        for p in range(m):
            y0, y1, y2, u0, u1, u2 = body_point(x, v, q, s, w,
                                                (pts[i, 0, p], pts[i, 1, p], pts[i, 2, p]))
            if o >= 0:
                f0, f1, f2, g, slip, r = object_point(gs, x, v, o, wo, (y0, y1, y2),
                                                      (u0, u1, u2), pts[i, 9, p],
                                                      pts[i, 10, p], law, far)
                if g <= far:
                    to = react(fb, o, (f0, f1, f2), r, to)
            else:
                f0, f1, f2, g, slip = obstacle_point(gs, (y0, y1, y2), (u0, u1, u2),
                                                     pts[i, 9, p], pts[i, 10, p], law, far)
            _write(output, i, p, (f0, f1, f2), g, slip)
            fb[0, s] += f0
            fb[1, s] += f1
            fb[2, s] += f2
            t = _moment(t, (y0 - x[0, s], y1 - x[1, s], y2 - x[2, s]), (f0, f1, f2))
        if o >= 0:
            add_couple(tb, q, o, to)
        add_couple(tb, q, s, t)
        if kind == 2 and par[i, 14] > 0.0:  # a sphere's rolling resistance
            rolling_couple((x, q, om, tb), s, row_obstacle(index, par, i), output[i, 0:3, :1],
                           (par[i, 14], par[i, 13], law.slip_velocity))


@njit(cache=True)  # type: ignore[misc]
def _pair_rows(c: ContactTable, i0: int, i1: int, rod: SystemView) -> None:
    """Rows ``i0 .. i1 - 1`` of the table, each of kind ``ROD_ROD``: rod A (from node ``s``,
    ``m`` nodes) against rod B (``index[i, 3:5]``;
    :func:`~hsa_elastica.physics.rod_contact_laws.rod_rod_forces`), the force added to A's
    nodes, the reactions to B's."""
    index, par, pts, output = c
    fa = rod.external_forces
    for i in range(i0, i1):
        s, m, sb, mb = index[i, 0], index[i, 2], index[i, 3], index[i, 4]
        one = ContactPoints(rod.position[:, s : s + m], rod.velocity[:, s : s + m],
                            pts[i, 0, : m - 1], pts[i, 2, : m - 1])
        two = ContactPoints(rod.position[:, sb : sb + mb], rod.velocity[:, sb : sb + mb],
                            pts[i, 1, : mb - 1], pts[i, 3, : mb - 1])
        pair_out = ContactOutput(output[i, 0:3, :m], output[i, 3, : m - 1],
                                 output[i, 4, : m - 1])
        rod_rod_forces(one, two, row_law(par, i), fa[:, sb : sb + mb], pair_out)
        for k in range(3):
            for p in range(m):
                fa[k, s + p] += pair_out.force[k, p]


@njit(cache=True, inline="always")  # type: ignore[misc]
def _rows(c: ContactTable, i0: int, i1: int, rod: SystemView, body: SystemView) -> None:
    """Rows ``i0 .. i1 - 1`` of the table, all applied by the same loop, in order.

    Each loop is a kernel of its own, called once per run of its rows: inlined into one
    kernel, the three loops and the contact laws under them took 34-42 s of a first run's
    compile CPU (numba types an inlined function again in every caller), as three kernels
    14-20 s, compiled side by side; a call per row instead of per run cost 0.16 us a row."""
    loop = _loop(c.ids[i0, 1])
    if loop == PAIRS:
        _pair_rows(c, i0, i1, rod)
    elif loop == NODES:
        _node_rows(c, i0, i1, rod, body)
    else:
        _point_rows(c, i0, i1, body)


@njit(cache=True)  # type: ignore[misc]
def apply_contact(c: ContactTable, i: int, rod: SystemView, body: SystemView) -> None:
    """``RodContact.apply_forces`` / ``BodyContact.apply_forces`` /
    ``ObjectContact.apply_forces`` / ``RodRodContact.apply_forces`` of row ``i``: the contact
    forces of the row's points (written to the row's ``output``: force, gap, tangential
    speed) added to the rod's nodes or reduced to the body's force and torque; against an
    object its reaction added to the object.  ``rod`` / ``body``: views of the blocks
    (:func:`~hsa_elastica.physics.mount_kernels.block_view`; the whole block records passed to
    a kernel cost ~4 us per call in argument passing)."""
    _rows(c, i, i + 1, rod, body)


@njit(cache=True)  # type: ignore[misc]
def apply_contact_run(
    c: ContactTable, program: NDArray[np.int64], p: int, rod: SystemView, body: SystemView
) -> None:
    """:func:`apply_contact` on the rows of the ``OP_CONTACT`` entries of ``program`` from
    entry ``p`` on, in order, up to the first entry of another operator: the force
    evaluation calls it once per run of contacts (a call takes the table and the views once;
    per row it was ~10 % of the rows' cost).  Consecutive rows of the table that the same
    loop applies go to that loop in one call."""
    n = program.shape[0]
    q = p
    while q < n and program[q, 0] == OP_CONTACT:
        i0 = program[q, 1]
        loop = _loop(c.ids[i0, 1])
        i1 = i0 + 1
        q += 1
        while (q < n and program[q, 0] == OP_CONTACT and program[q, 1] == i1
               and _loop(c.ids[i1, 1]) == loop):
            i1 += 1
            q += 1
        _rows(c, i0, i1, rod, body)
