"""The velocity-proportional forces of the implicit integrator and their velocity tangents.

The explicit stepper applies its dampers after the kick; the implicit integrator
(:mod:`hsa_elastica.engines.implicit`) writes them as forces (:func:`damper_forces`, the
program of its ``DynamicTerms.damp_program``):

* PyElastica's ``AnalyticalLinearDamper`` (rod nodes / elements) and the body dampers: a
  velocity factor ``f`` per explicit step ``dt_table`` is the decay rate ``c = -ln(f) /
  dt_table`` (the tables hold ``c``), i.e. the force ``-m c v`` (node), the couple ``-(J/e) c
  omega`` (element, local frame; ``f**e`` with PyElastica's dilatation power: ``-(J/e) e c
  omega``), ``-m c v`` / ``-c J omega`` (body, its frame);
* the Kelvin-Voigt material damping
  (:func:`~hsa_elastica.physics.material_damping.kelvin_voigt_forces`);
* the rigid bodies' gyroscopic couple ``(J omega) x omega`` (body frame,
  :func:`gyroscopic_couples`), which the explicit path adds in ``rigid_body_accelerations``.

Their velocity tangents (the implicit Newton matrix's ``cv dF/dv``), from the same
coefficients: the linear and body dampers' diagonal blocks ``-m c I``, ``-(J_aa / e) c``
(element), ``-c J`` (body rotation) (:func:`damper_tangent`); the gyroscopic couple's
``[J omega]x - [omega]x J`` (:func:`gyroscopic_tangent`); the Kelvin-Voigt damping's band
(:func:`~hsa_elastica.physics.material_damping.kelvin_voigt_tangent`).  The blocks are added
into a matrix's values through a destination map ``dst[g, i, a, b]`` (group ``g``:
:data:`GROUP_NODE`, :data:`GROUP_ELEMENT`, :data:`GROUP_BODY_POS`, :data:`GROUP_BODY_ROT`;
index ``i`` of the node / element / body in its block; row component ``a``, column ``b``; -1:
not an entry).  Only the velocity dependence: at a fixed velocity the forces also move with
the pose (the masses' and inertias' directions), which the Newton matrix leaves out.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.material_damping import kelvin_voigt_forces
from hsa_elastica.physics.tables import (
    OP_DAMP_BODY,
    OP_DAMP_ROD,
    OP_MATERIAL_DAMPING,
    BodyBlockArrays,
    BodyDamperTable,
    MaterialDampingTable,
    RodBlockArrays,
    RodDamperTable,
)

__all__ = ["damper_forces", "damper_tangent", "gyroscopic_couples", "gyroscopic_tangent",
           "GROUP_NODE", "GROUP_ELEMENT", "GROUP_BODY_POS", "GROUP_BODY_ROT"]

GROUP_NODE, GROUP_ELEMENT, GROUP_BODY_POS, GROUP_BODY_ROT = 0, 1, 2, 3


# the coefficients' helpers take scalars: a record passed to a helper that numba does not
# inline is reference-counted array by array (measured: 15 -> 71 us per damper_forces call)
@njit(cache=True, inline="always")  # type: ignore[misc]
def _element_rate(c: float, power: bool, e: float, j: float) -> float:
    """``(J_aa / e) c`` (``e c`` with the dilatation power ``power``) [N m s] of an element of
    dilatation ``e`` and inertia ``J_aa = j``, decay rate ``c`` [1/s]."""
    ie = 1.0 / e
    if power:
        c *= e
    return c * j * ie


@njit(cache=True)  # type: ignore[misc]
def damper_forces(
    program: NDArray[np.int64], dr: RodDamperTable, db: BodyDamperTable,
    material: MaterialDampingTable, rod: RodBlockArrays, body: BodyBlockArrays,
) -> None:
    """The dampers of the rates program as forces (module doc) added to the systems'
    ``external_forces`` / ``external_torques``; ``dr`` / ``db`` hold decay rates [1/s]."""
    for p in range(program.shape[0]):
        code = program[p, 0]
        i = program[p, 1]
        if code == OP_DAMP_ROD:
            n0 = dr.node_start[i]
            e0 = dr.elem_start[i]
            for k in range(dr.translational.shape[1]):
                c = dr.translational[i, k] * rod.mass[n0 + k]
                for a in range(3):
                    rod.external_forces[a, n0 + k] -= c * rod.velocity[a, n0 + k]
            for k in range(dr.rotational.shape[2]):
                e_ = e0 + k
                for a in range(3):
                    rod.external_torques[a, e_] -= _element_rate(
                        dr.rotational[i, a, k], dr.power[i] != 0, rod.dilatation[e_],
                        rod.mass_second_moment_of_inertia[a, a, e_]) * rod.omega[a, e_]
        elif code == OP_MATERIAL_DAMPING:
            kelvin_voigt_forces(rod, material, i)
        elif code == OP_DAMP_BODY:
            b = db.body[i]
            ct = db.translational[i]
            cr = db.rotational[i]
            for a in range(3):
                body.external_forces[a, b] -= ct * body.mass[b] * body.velocity[a, b]
            for a in range(3):
                s = 0.0
                for c3 in range(3):
                    s += body.mass_second_moment_of_inertia[a, c3, b] * body.omega[c3, b]
                body.external_torques[a, b] -= cr * s


@njit(cache=True, inline="always")  # type: ignore[misc]
def _add(data: NDArray[np.float64], dst: NDArray[np.int64], g: int, i: int, a: int, b: int,
         value: float) -> None:
    """``value`` added into ``data`` at ``dst[g, i, a, b]`` (-1: not an entry)."""
    q = dst[g, i, a, b]
    if q >= 0:
        data[q] += value


@njit(cache=True)  # type: ignore[misc]
def damper_tangent(
    program: NDArray[np.int64], dr: RodDamperTable, db: BodyDamperTable,
    rod: RodBlockArrays, body: BodyBlockArrays, scale: float, dst: NDArray[np.int64],
    data: NDArray[np.float64],
) -> None:
    """``scale`` times the derivative of :func:`damper_forces`' linear and body dampers
    (``OP_DAMP_ROD``, ``OP_DAMP_BODY``; the Kelvin-Voigt rows are
    :func:`~hsa_elastica.physics.material_damping.kelvin_voigt_tangent`'s) with respect to
    the velocities of their nodes, elements (local angular velocities) and bodies (velocity,
    angular velocity in the body frame), added into ``data`` at ``dst`` (module doc)."""
    for p in range(program.shape[0]):
        code = program[p, 0]
        i = program[p, 1]
        if code == OP_DAMP_ROD:
            n0 = dr.node_start[i]
            e0 = dr.elem_start[i]
            for k in range(dr.translational.shape[1]):
                c = dr.translational[i, k] * rod.mass[n0 + k]
                for a in range(3):
                    _add(data, dst, GROUP_NODE, n0 + k, a, a, -scale * c)
            for k in range(dr.rotational.shape[2]):
                e_ = e0 + k
                for a in range(3):
                    _add(data, dst, GROUP_ELEMENT, e_, a, a, -scale * _element_rate(
                        dr.rotational[i, a, k], dr.power[i] != 0, rod.dilatation[e_],
                        rod.mass_second_moment_of_inertia[a, a, e_]))
        elif code == OP_DAMP_BODY:
            b = db.body[i]
            for a in range(3):
                _add(data, dst, GROUP_BODY_POS, b, a, a,
                     -scale * db.translational[i] * body.mass[b])
                for c3 in range(3):
                    _add(data, dst, GROUP_BODY_ROT, b, a, c3, -scale * db.rotational[i]
                         * body.mass_second_moment_of_inertia[a, c3, b])


@njit(cache=True, inline="always")  # type: ignore[misc]
def _spin(J: NDArray[np.float64], w: NDArray[np.float64], b: int) -> tuple[float, float, float]:
    """``J omega`` [kg m^2/s] of body ``b`` (body frame; ``J`` the bodies' inertias, ``w``
    their angular velocities)."""
    return (J[0, 0, b] * w[0, b] + J[0, 1, b] * w[1, b] + J[0, 2, b] * w[2, b],
            J[1, 0, b] * w[0, b] + J[1, 1, b] * w[1, b] + J[1, 2, b] * w[2, b],
            J[2, 0, b] * w[0, b] + J[2, 1, b] * w[1, b] + J[2, 2, b] * w[2, b])


@njit(cache=True)  # type: ignore[misc]
def gyroscopic_couples(body: BodyBlockArrays) -> None:
    """The bodies' gyroscopic couple ``(J omega) x omega`` [N m, body frame] added to their
    ``external_torques`` (the explicit path adds it in ``rigid_body_accelerations``)."""
    w = body.omega
    for b in range(body.mass.shape[0]):
        jw0, jw1, jw2 = _spin(body.mass_second_moment_of_inertia, body.omega, b)
        body.external_torques[0, b] += jw1 * w[2, b] - jw2 * w[1, b]
        body.external_torques[1, b] += jw2 * w[0, b] - jw0 * w[2, b]
        body.external_torques[2, b] += jw0 * w[1, b] - jw1 * w[0, b]


@njit(cache=True)  # type: ignore[misc]
def gyroscopic_tangent(body: BodyBlockArrays, scale: float, dst: NDArray[np.int64],
                       data: NDArray[np.float64]) -> None:
    """``scale`` times ``d((J omega) x omega) / d omega = [J omega]x - [omega]x J`` of every
    body (body frame) added into ``data`` at ``dst`` (module doc)."""
    J = body.mass_second_moment_of_inertia
    w = body.omega
    for b in range(body.mass.shape[0]):
        jw = _spin(body.mass_second_moment_of_inertia, body.omega, b)
        for a in range(3):
            a1 = (a + 1) % 3
            a2 = (a + 2) % 3
            for c in range(3):
                # row a of [Jw]x: e_a . (Jw x e_c); of [w]x J: (w x J e_c)_a
                v = 0.0
                if c == a2:
                    v += jw[a1]
                elif c == a1:
                    v -= jw[a2]
                v -= w[a1, b] * J[a2, c, b] - w[a2, b] * J[a1, c, b]
                _add(data, dst, GROUP_BODY_ROT, b, a, c, scale * v)
