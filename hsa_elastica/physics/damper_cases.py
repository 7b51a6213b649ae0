"""Random valid configurations of the velocity-proportional laws of the implicit integrator
(:mod:`hsa_elastica.physics.rate_dampers`, the Kelvin-Voigt damping's
:func:`~hsa_elastica.physics.material_damping.kelvin_voigt_forces`) for the registry of the
laws' tangents (:mod:`hsa_elastica.physics.laws`): their forces from the force kernels, their
velocity tangents from the tangent kernels.

Scales: the rod of :func:`~hsa_elastica.physics.law_cases.rod_case` (6 elements of 0.1 m / 6,
bent, twisted, stretched and sheared, full shear matrices) moving at ~0.1 m/s and ~1 rad/s;
retardation times of 1-10 ms; decay rates of 1-100 1/s; a platform-sized body (0.1 kg, a full
inertia tensor of ~1e-4 kg m^2) turning at ~3 rad/s.  The position tangents are not
registered (the Newton matrix leaves the dampers' pose dependence out): ``tangent`` is None.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.physics.law_cases import LawCase, _rod_block, _rod_forces
from hsa_elastica.physics.material_damping import (
    WORK_ROWS,
    kelvin_voigt_forces,
    kelvin_voigt_tangent,
)
from hsa_elastica.physics.rate_dampers import (
    GROUP_BODY_POS,
    GROUP_BODY_ROT,
    GROUP_ELEMENT,
    GROUP_NODE,
    damper_forces,
    damper_tangent,
    gyroscopic_couples,
    gyroscopic_tangent,
)
from hsa_elastica.physics.rod_tangent import HALF_BANDWIDTH, band_to_dense
from hsa_elastica.physics.tables import (
    OP_DAMP_BODY,
    OP_DAMP_ROD,
    BodyBlockArrays,
    BodyDamperTable,
    MaterialDampingTable,
    RodBlockArrays,
    RodDamperTable,
)

__all__ = ["kelvin_voigt_case", "rod_damper_case", "body_damper_case", "gyroscopic_case"]

Array = NDArray[np.float64]
N_ELEMS = 6


def _material_table(n_rows: int, n: int, rng: np.random.Generator) -> MaterialDampingTable:
    """``n_rows`` rows (0 or 1) of Kelvin-Voigt damping on a rod of ``n`` elements."""
    i0 = np.zeros(n_rows, np.int64)
    return MaterialDampingTable(i0, i0.copy(), i0.copy(), np.full(n_rows, n, np.int64),
                                10.0 ** rng.uniform(-3.0, -2.0, (n_rows, 4)),
                                np.full(n_rows, 1e-5), np.zeros((n_rows, 2), np.int64),
                                np.zeros((n_rows, WORK_ROWS, n + 1)))


def _body(rng: np.random.Generator) -> BodyBlockArrays:
    """One body of 0.1 kg, a full inertia tensor, moving at ~0.1 m/s and ~3 rad/s."""
    a = rng.normal(size=(3, 3))
    J = 1e-4 * (np.eye(3) + 0.1 * a @ a.T)
    z2, z3 = np.zeros((3, 1)), np.zeros((2, 3, 1))
    return BodyBlockArrays(z2.copy(), 0.1 * rng.normal(size=(3, 1)), 3.0 * rng.normal(size=(3, 1)),
                           np.eye(3)[:, :, None].copy(), z3.copy(), z3.copy(), z2.copy(),
                           z2.copy(), z2.copy(), z2.copy(), np.full(1, 0.1), J[:, :, None].copy(),
                           np.asarray(np.linalg.inv(J), np.float64)[:, :, None].copy())


def _rod_dst(n: int) -> NDArray[np.int64]:
    """``dst`` of the rate dampers' blocks into a dense (6 n + 3)^2 matrix, the rod's layout
    (node ``k`` at ``6 k``, element ``k`` at ``6 k + 3``)."""
    size = 6 * n + 3
    dst = -np.ones((4, n + 1, 3, 3), np.int64)
    for k in range(n + 1):
        for a in range(3):
            for b in range(3):
                dst[GROUP_NODE, k, a, b] = (6 * k + a) * size + 6 * k + b
                if k < n:
                    dst[GROUP_ELEMENT, k, a, b] = (6 * k + 3 + a) * size + 6 * k + 3 + b
    return dst


def _body_dst() -> NDArray[np.int64]:
    """``dst`` of a body's blocks into a dense 6 x 6 matrix (position 0-2, rotation 3-5)."""
    dst = -np.ones((4, 1, 3, 3), np.int64)
    for a in range(3):
        for b in range(3):
            dst[GROUP_BODY_POS, 0, a, b] = a * 6 + b
            dst[GROUP_BODY_ROT, 0, a, b] = (3 + a) * 6 + 3 + b
    return dst


def _rod_law_case(rng: np.random.Generator, apply: Callable[[RodBlockArrays], None],
                  tangent: Callable[[RodBlockArrays, Array], None]) -> LawCase:
    """:class:`LawCase` of a rod's velocity law ``apply(rod)`` (adds to its external loads)
    with its velocity tangent ``tangent(rod, dense)`` (adds into ``dense``); the strains read
    are those of the rod's internal forces at the (moved) pose."""
    b = _rod_block(N_ELEMS, rng)
    n = 6 * N_ELEMS + 3
    base = (b.position.copy(), b.director.copy())
    v0, w0 = 0.1 * rng.normal(size=b.velocity.shape), rng.normal(size=b.omega.shape)

    def forces(dx: Array, dv: Array) -> Array:
        _rod_forces(b, base, dx, None)  # the pose and its strains
        b.velocity[:] = v0 + np.reshape(np.r_[dv, np.zeros(3)], (N_ELEMS + 1, 6))[:, :3].T
        b.omega[:] = w0 + np.reshape(dv[3:], (N_ELEMS, 6))[:, :3].T
        b.external_forces[:] = 0.0
        b.external_torques[:] = 0.0
        apply(b)
        out = np.zeros(n)
        for k in range(N_ELEMS + 1):
            out[6 * k : 6 * k + 3] = b.external_forces[:, k]
        for k in range(N_ELEMS):
            out[6 * k + 3 : 6 * k + 6] = b.external_torques[:, k]
        return out

    def velocity_tangent() -> Array:
        zero = np.zeros(n)
        forces(zero, zero)
        out = np.zeros((n, n))
        tangent(b, out)
        return out

    steps = np.tile(np.r_[np.full(3, 1e-6 * float(np.mean(b.rest_lengths))), np.full(3, 1e-6)],
                    N_ELEMS + 1)[:n]
    # linear in the velocities: the steps need only beat the round-off
    vsteps = np.tile(np.r_[np.full(3, 1e-2), np.full(3, 1e-1)], N_ELEMS + 1)[:n]
    return LawCase(n, lambda dx: forces(dx, np.zeros(n)), None, steps,
                   lambda dv: forces(np.zeros(n), dv), velocity_tangent, vsteps)


def kelvin_voigt_case(rng: np.random.Generator) -> LawCase:
    """The Kelvin-Voigt material damping of a rod (:func:`kelvin_voigt_forces`), its velocity
    tangent from :func:`kelvin_voigt_tangent`'s band."""
    table = _material_table(1, N_ELEMS, rng)

    def tangent(rod: RodBlockArrays, out: Array) -> None:
        band = np.zeros((out.shape[0], 2 * HALF_BANDWIDTH + 1))
        kelvin_voigt_tangent(rod, table, 0, band)
        dense = np.empty_like(out)
        band_to_dense(band, dense)
        out += dense

    return _rod_law_case(rng, lambda rod: kelvin_voigt_forces(rod, table, 0), tangent)


def _empty_body_damper() -> BodyDamperTable:
    return BodyDamperTable(np.zeros(0, np.int64), np.zeros(0), np.zeros(0))


def rod_damper_case(rng: np.random.Generator) -> LawCase:
    """PyElastica's linear damper on a rod (decay rates 1-100 1/s, the dilatation power on),
    as :func:`damper_forces` applies it, its tangent from :func:`damper_tangent`."""
    n = N_ELEMS
    dr = RodDamperTable(np.zeros(1, np.int64), np.zeros(1, np.int64),
                        10.0 ** rng.uniform(0.0, 2.0, (1, n + 1)),
                        10.0 ** rng.uniform(0.0, 2.0, (1, 3, n)), np.ones(1, np.int64))
    program = np.array([[OP_DAMP_ROD, 0]], np.int64)
    db, material, body = _empty_body_damper(), _material_table(0, n, rng), _body(rng)
    dst = _rod_dst(n)

    def tangent(rod: RodBlockArrays, out: Array) -> None:
        damper_tangent(program, dr, db, rod, body, 1.0, dst, out.reshape(-1))

    return _rod_law_case(
        rng, lambda rod: damper_forces(program, dr, db, material, rod, body), tangent)


def _body_case(rng: np.random.Generator, apply: Callable[[BodyBlockArrays], None],
               tangent: Callable[[BodyBlockArrays, Array], None]) -> LawCase:
    """:class:`LawCase` of a body's velocity law on its six unknowns (velocity, angular
    velocity in the body frame)."""
    body = _body(rng)
    v0, w0 = body.velocity.copy(), body.omega.copy()

    def forces(dv: Array) -> Array:
        body.velocity[:, 0] = v0[:, 0] + dv[:3]
        body.omega[:, 0] = w0[:, 0] + dv[3:]
        body.external_forces[:] = 0.0
        body.external_torques[:] = 0.0
        apply(body)
        return np.r_[body.external_forces[:, 0], body.external_torques[:, 0]]

    def velocity_tangent() -> Array:
        forces(np.zeros(6))
        out = np.zeros((6, 6))
        tangent(body, out.reshape(-1))
        return out

    return LawCase(6, lambda dx: forces(np.zeros(6)), None, np.full(6, 1e-6), forces,
                   velocity_tangent, np.r_[np.full(3, 1e-2), np.full(3, 1e-1)])


def body_damper_case(rng: np.random.Generator) -> LawCase:
    """A body damper (decay rates 1-100 1/s) as :func:`damper_forces` applies it."""
    db = BodyDamperTable(np.zeros(1, np.int64), 10.0 ** rng.uniform(0.0, 2.0, 1),
                         10.0 ** rng.uniform(0.0, 2.0, 1))
    program = np.array([[OP_DAMP_BODY, 0]], np.int64)
    rod = _rod_block(2, rng)  # (not read: no rod rows)
    dr = RodDamperTable(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 3)),
                        np.zeros((0, 3, 2)), np.zeros(0, np.int64))
    material, dst = _material_table(0, 2, rng), _body_dst()
    return _body_case(
        rng, lambda body: damper_forces(program, dr, db, material, rod, body),
        lambda body, out: damper_tangent(program, dr, db, rod, body, 1.0, dst, out))


def gyroscopic_case(rng: np.random.Generator) -> LawCase:
    """A body's gyroscopic couple ``(J omega) x omega`` (:func:`gyroscopic_couples`);
    quadratic in the velocities, so central differences are exact up to round-off."""
    dst = _body_dst()
    return _body_case(rng, gyroscopic_couples,
                      lambda body, out: gyroscopic_tangent(body, 1.0, dst, out))
