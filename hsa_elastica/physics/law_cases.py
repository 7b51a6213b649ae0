"""Random valid configurations of the registered laws (:mod:`hsa_elastica.physics.laws`):
each builder takes a ``numpy`` random generator and returns a :class:`LawCase` whose forces
come from the law's force kernel and whose tangent from its tangent kernel.

Scales (so that a check on them means something for the robot): rods of 0.1 m, radius 5 mm,
E = 1 MPa, bent, twisted, stretched and sheared; contact inside the smoothing zone with
friction; joints with the paper's gains (k_F = 5e5 N/m, k_tau = 20 N m/rad), dampers, moving
systems, orientation errors up to ~1 rad and off-set attachment points of centimetres.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.physics.auxetic_law import auxetic_update
from hsa_elastica.physics.auxetic_tangent import auxetic_tangent_band, auxetic_tangent_work
from hsa_elastica.physics.compression_law import WORK_ROWS as COMPRESSION_WORK_ROWS
from hsa_elastica.physics.compression_law import (
    CompressionRow,
    compression_law_forces,
    compression_tangent_band,
)
from hsa_elastica.physics.contact_laws import (
    ContactLaw,
    ContactOutput,
    ContactPoints,
    ObstacleGeometry,
    contact_forces,
    contact_tangent,
)
from hsa_elastica.physics.joint_tangent import (
    JOINT_BLOCK,
    joint_force_tangent,
    joint_force_velocity_tangent,
    joint_torque_tangent,
    joint_torque_velocity_tangent,
    tangent_scratch,
)
from hsa_elastica.physics.joints import joint_force_kernel, joint_torque_kernel
from hsa_elastica.physics.mount_kernels import motor_torque_kernel
from hsa_elastica.physics.rod_contact_laws import segment_pair_forces, segment_pair_tangent
from hsa_elastica.physics.mounts import (
    free_twist_rest_orientation,
    mount_rest_orientation,
    mount_torque_tangent,
    twist_mount_torque_tangent,
)
from hsa_elastica.physics.rod_kernels import (
    internal_forces_inplace,
    internal_torques_inplace,
    kinematic_update_inplace,
    rod_work,
    rotation_log_inplace,
)
from hsa_elastica.physics.rod_tangent import (
    HALF_BANDWIDTH,
    RodTangentState,
    band_to_dense,
    rod_tangent_band,
    tangent_work,
)
from hsa_elastica.physics.tables import CouplingTable, RodBlockArrays

__all__ = ["LawCase", "turn", "rod_case", "auxetic_case", "contact_case", "joint_case",
           "motor_mount_case", "twist_mount_case", "rod_contact_case", "node_law_case"]

Array = NDArray[np.float64]


class LawCase(NamedTuple):
    """One random valid configuration of a law with ``n`` unknowns: ``forces(dx)`` its
    generalised forces [N, N m] after moving the configuration by ``dx`` (from the
    configuration itself, each call), ``tangent()`` ``d forces / d dx`` at ``dx = 0`` (n, n)
    from the law's tangent kernel (None for a law without one), ``steps`` the central
    differences' step per unknown [m or rad]; for a law with a velocity tangent,
    ``velocity_forces(dv)`` its forces after changing the unknowns' velocities by ``dv``
    [m/s or rad/s, the element's and body's angular velocities in their own frames],
    ``velocity_tangent()`` ``d forces / d dv`` at ``dv = 0`` from its velocity tangent
    kernel and ``velocity_steps`` the differences' steps."""

    n: int
    forces: Callable[[Array], Array]
    tangent: Callable[[], Array] | None
    steps: Array
    velocity_forces: Callable[[Array], Array] | None = None
    velocity_tangent: Callable[[], Array] | None = None
    velocity_steps: Array | None = None


def turn(director: Array, k: int, w: Array) -> None:
    """``director[:, :, k] <- exp(-[w]) director[:, :, k]``: the static solver's rotation
    increment ``w`` [rad] (local frame), with the kinematic-update kernel at dt = 1."""
    element = np.ascontiguousarray(director[:, :, k : k + 1])
    kinematic_update_inplace(1.0, np.empty((3, 0)), element, np.empty((3, 0)),
                             np.ascontiguousarray(w, dtype=np.float64).reshape(3, 1),
                             np.empty((3, 3, 1)))
    director[:, :, k] = element[:, :, 0]


def _rotation(rng: np.random.Generator, size: float) -> Array:
    """A random rotation matrix of angle up to ``size`` [rad]."""
    d = np.eye(3)[:, :, None].copy()
    turn(d, 0, size * rng.uniform(-1.0, 1.0, 3))
    return np.ascontiguousarray(d[:, :, 0])


# --------------------------------------------------------------------------------------------
# rods: internal forces (and the one-way auxetic law's rest configuration)
# --------------------------------------------------------------------------------------------
def _rod_block(n: int, rng: np.random.Generator) -> RodBlockArrays:
    """A deformed single-rod block of ``n`` elements (no ghosts): random node displacements of
    10 % of an element, element rotations up to 0.4 rad, random rest strains and curvatures,
    full symmetric positive definite shear and bend matrices on every other element."""
    from elastica.rod.cosserat_rod import CosseratRod

    rod = CosseratRod.straight_rod(n, np.zeros(3), np.array([0.0, 0.0, 1.0]),
                                   np.array([1.0, 0.0, 0.0]), 0.1, 5e-3, 1000.0,
                                   youngs_modulus=1e6, shear_modulus=1e6 / 3.0)
    nn = n + 1
    fields: dict[str, Any] = {
        "position": rod.position_collection, "director": rod.director_collection,
        "velocity": np.zeros((3, nn)), "omega": np.zeros((3, n)), "v_w": np.zeros((2, 3, nn)),
        "dvdt_dwdt": np.zeros((2, 3, nn)), "acceleration": np.zeros((3, nn)),
        "alpha": np.zeros((3, n)), "ghost_elems_idx": np.zeros(0, dtype=np.int64),
        "ghost_voronoi_idx": np.zeros(0, dtype=np.int64),
    }
    for name in RodBlockArrays._fields:
        if name not in fields:
            fields[name] = getattr(rod, name)
    b = RodBlockArrays(**fields)
    l0 = float(np.mean(b.rest_lengths))
    b.position[:] += 0.1 * l0 * rng.normal(size=b.position.shape)
    b.position[2] *= 1.05
    for k in range(n):
        turn(b.director, k, 0.4 * rng.uniform(-1, 1, 3) + np.array([0.0, 0.0, 0.1 * k]))
    b.rest_sigma[:] = 0.02 * rng.normal(size=b.rest_sigma.shape)
    b.rest_kappa[:] = 5.0 * rng.normal(size=b.rest_kappa.shape)
    for k in range(0, n, 2):
        a = rng.normal(size=(3, 3))
        b.shear_matrix[:, :, k] += 0.2 * np.diag(b.shear_matrix[:, :, k]).min() * (a @ a.T) / 3
    return b


def _rod_forces(b: RodBlockArrays, base: tuple[Array, Array], dx: Array,
                before: Callable[[RodBlockArrays], None] | None) -> Array:
    """Internal forces and couples (node 0, element 0, node 1, ...) at ``base`` moved by
    ``dx``; ``before`` (the auxetic update) runs first."""
    n = b.rest_lengths.shape[0]
    b.position[:] = base[0]
    b.director[:] = base[1]
    for i in range(n + 1):
        b.position[:, i] += dx[6 * i : 6 * i + 3]
    for k in range(n):
        turn(b.director, k, dx[6 * k + 3 : 6 * k + 6])
    if before is not None:
        before(b)
    work = rod_work(n, 1)
    internal_forces_inplace(b, work)
    internal_torques_inplace(b, work)
    out = np.zeros(6 * n + 3)
    for i in range(n + 1):
        out[6 * i : 6 * i + 3] = b.internal_forces[:, i]
    for k in range(n):
        out[6 * k + 3 : 6 * k + 6] = b.internal_torques[:, k]
    return out


def _auxetic_hook(coupling: CouplingTable) -> Callable[[RodBlockArrays], None]:
    """The one-way auxetic law's update of a rod's rest configuration (row 0 of
    ``coupling``), to run before its internal forces."""
    def before(blk: RodBlockArrays) -> None:
        vor = np.empty((3, blk.rest_voronoi_lengths.shape[0]))
        rotation_log_inplace(blk.director, vor)
        auxetic_update(vor, coupling, 0, -1.0, blk.rest_lengths, blk.rest_voronoi_lengths,
                       blk.shear_matrix, blk.bend_matrix)

    return before


def _rod_case(rng: np.random.Generator, table: Callable[[RodBlockArrays], Any] | None) -> LawCase:
    n = 6
    b = _rod_block(n, rng)
    coupling: Any = None if table is None else table(b)
    base = (b.position.copy(), b.director.copy())
    hook = None if coupling is None else _auxetic_hook(coupling)

    def tangent() -> Array:
        _rod_forces(b, base, np.zeros(6 * n + 3), hook)  # the rest configuration at dx = 0
        state = RodTangentState(b.position, b.director, b.rest_lengths, b.rest_voronoi_lengths,
                                b.rest_sigma, b.rest_kappa, b.shear_matrix, b.bend_matrix)
        band = np.zeros((6 * n + 3, 2 * HALF_BANDWIDTH + 1))
        rod_tangent_band(state, tangent_work(n), band)
        if coupling is not None:
            auxetic_tangent_band(state, coupling, 0, auxetic_tangent_work(n), band)
        dense = np.empty((6 * n + 3, 6 * n + 3))
        band_to_dense(band, dense)
        return dense

    l0 = float(np.mean(b.rest_lengths))
    steps = np.tile(np.r_[np.full(3, 1e-6 * l0), np.full(3, 1e-6)], n + 1)[: 6 * n + 3]
    return LawCase(6 * n + 3, lambda dx: _rod_forces(b, base, dx, hook), tangent, steps)


def rod_case(rng: np.random.Generator) -> LawCase:
    """A rod's elastic internal forces and couples (:mod:`~hsa_elastica.physics.rod_tangent`)."""
    return _rod_case(rng, None)


def _coupling_table(b: RodBlockArrays) -> CouplingTable:
    """A one-row coupling on the rod's printed geometry: C_eps = 0.01 m/rad and
    C_eps2 = 2e-4 m^2/rad^2, rounded clip to [-0.3, 0.32] over 0.05, stiffness slopes changing
    S and B by tens of per cent, the stiffness law clipped to [-40, 40] rad/m."""
    one = np.ones(1)
    area = np.pi * 5e-3**2
    nv, ne = b.rest_voronoi_lengths.shape[0], b.rest_lengths.shape[0]
    fields: dict[str, Any] = {f: np.zeros(1) for f in CouplingTable._fields}
    fields.update({f: np.zeros((1, nv)) for f in ("kappa_vor_raw", "kappa_vor",
                                                  "kappa_vor_clipped", "couple")})
    fields.update({f: np.zeros((1, ne)) for f in ("kappa_elem", "kappa_elem_clipped", "eps",
                                                  "eps_creep", "play")})
    fields.update(play_frozen=np.zeros(1, dtype=np.int64), play_last=np.full(1, -np.inf),
                  play_trial=np.zeros((1, 2 * ne)))  # (the hysteresis play off: weight 0)
    fields.update(
        handedness=-1.0 * one, C_eps=0.01 * one, C_eps2=2e-4 * one, eps_min=-0.3 * one,
        eps_max=0.32 * one, kappa_min=-40.0 * one, kappa_max=40.0 * one, area=area * one,
        E_slope=1e4 * one, G_slope=5e3 * one, bend_slope=5e-6 * one, twist_slope=4e-6 * one,
        E_quad=100.0 * one, twist_quad=1e-7 * one, clip_width=0.05 * one,
        printed_lengths=b.rest_lengths.copy()[None],
        printed_voronoi=b.rest_voronoi_lengths.copy()[None],
        printed_shear=b.shear_matrix.copy()[None], printed_bend=b.bend_matrix.copy()[None],
    )
    return CouplingTable(**fields)


def auxetic_case(rng: np.random.Generator) -> LawCase:
    """The one-way auxetic law (Eq. 2-5) before the rod's internal forces: the rod's tangent
    plus its chain rule (:mod:`~hsa_elastica.physics.auxetic_tangent`)."""
    return _rod_case(rng, _coupling_table)


def compression_case(rng: np.random.Generator) -> LawCase:
    """The compression-softening axial law (:mod:`~hsa_elastica.physics.compression_law`) on
    a rod with the one-way auxetic law: ``r_c = 0.6 + 0.005 m/rad * ke`` clipped to
    [-30, 30] rad/m, the elements alternately compressed and stretched by 3 % (the switch
    between them is held); its forces after the auxetic update and the internal forces."""
    n = 6
    b = _rod_block(n, rng)
    coupling = _coupling_table(b)
    law = CompressionRow(b.rest_voronoi_lengths.copy(), -1.0, -30.0, 30.0, 0.6, 0.005)
    work = np.zeros((COMPRESSION_WORK_ROWS, n))
    base = (b.position.copy(), b.director.copy())
    before = _auxetic_hook(coupling)
    _rod_forces(b, base, np.zeros(6 * n + 3), before)  # rest strains: 3 % from the switch
    b.rest_sigma[2] = b.sigma[2] + 0.03 * np.where(np.arange(n) % 2 == 0, 1.0, -1.0)

    def forces(dx: Array) -> Array:
        _rod_forces(b, base, dx, before)
        b.external_forces[:] = 0.0
        compression_law_forces(b.director, b.sigma, b.rest_sigma, b.internal_stress,
                               b.dilatation, b.external_forces, law, work)
        out = np.zeros(6 * n + 3)
        for i in range(n + 1):
            out[6 * i : 6 * i + 3] = b.external_forces[:, i]
        return out

    def tangent() -> Array:
        forces(np.zeros(6 * n + 3))  # the rest configuration and the law's strains at dx = 0
        state = RodTangentState(b.position, b.director, b.rest_lengths, b.rest_voronoi_lengths,
                                b.rest_sigma, b.rest_kappa, b.shear_matrix, b.bend_matrix)
        band = np.zeros((6 * n + 3, 2 * HALF_BANDWIDTH + 1))
        compression_tangent_band(state, law, work, coupling, 0, band)
        dense = np.empty((6 * n + 3, 6 * n + 3))
        band_to_dense(band, dense)
        return dense

    l0 = float(np.mean(b.rest_lengths))
    steps = np.tile(np.r_[np.full(3, 1e-6 * l0), np.full(3, 1e-6)], n + 1)[: 6 * n + 3]
    return LawCase(6 * n + 3, forces, tangent, steps)


# --------------------------------------------------------------------------------------------
# contact with a sphere: three points in the smoothed zone, sliding and sticking
# --------------------------------------------------------------------------------------------
def contact_case(rng: np.random.Generator) -> LawCase:
    """Frictional contact of three points with a sphere (radius 5 cm) within a smoothing length
    (0.1 mm) of touching, tangential speeds about the slip velocity (1 mm/s)."""
    law = ContactLaw(1e3, 1e-4, 0.3, 0.5, 1e-3)
    geom = ObstacleGeometry(1, np.zeros(3), np.array([0.0, 0.0, 1.0]), 0.05, 0.0, np.zeros(6))
    normals = rng.normal(size=(3, 3))
    normals /= np.linalg.norm(normals, axis=0)
    x0 = (0.055 + 1e-4 * rng.uniform(-1.0, 1.0, 3)) * normals
    v = 1e-3 * rng.normal(size=(3, 3))
    radius, mass = np.full(3, 0.005), np.full(3, 1e-3)

    def forces(dx: Array) -> Array:
        pts = ContactPoints(x0 + dx.reshape(3, 3, order="F"), v, radius, mass)
        out = ContactOutput(np.zeros((3, 3)), np.zeros(3), np.zeros(3))
        contact_forces(pts, geom, law, out)
        return out.force.ravel(order="F")

    def tangent() -> Array:
        d_dx, d_dv = np.zeros((3, 3, 3)), np.zeros((3, 3, 3))
        contact_tangent(ContactPoints(x0.copy(), v, radius, mass), geom, law, d_dx, d_dv)
        out = np.zeros((9, 9))
        for p in range(3):
            out[3 * p : 3 * p + 3, 3 * p : 3 * p + 3] = d_dx[:, :, p]
        return out

    return LawCase(9, forces, tangent, np.full(9, 1e-4 * law.smoothing_length))


def rod_contact_case(rng: np.random.Generator) -> LawCase:
    """Frictional contact of two crossing elements (5 mm long, radii 5 mm, at ~60 degrees,
    the closest points inside both) within a smoothing length (0.1 mm) of touching, relative
    speeds about the slip velocity (1 mm/s); unknowns: the four nodes (A's two, B's two)."""
    law = ContactLaw(1e3, 1e-4, 0.3, 0.5, 1e-3)
    ea = np.array([0.005, 0.0, 0.0005])
    eb = 0.005 * np.array([0.5, math.sqrt(0.75), 0.0])
    gap = 1e-4 * rng.uniform(-1.0, 1.0)
    pb = np.array([0.0, 0.0, 0.0])
    pa = pb + np.array([0.0, 0.0, 0.01 + gap]) + 1e-4 * rng.normal(size=3) * np.array([1, 1, 0])
    s, t = rng.uniform(0.3, 0.7, 2)
    x0 = np.stack([pa - s * ea, pa + (1 - s) * ea, pb - t * eb, pb + (1 - t) * eb], axis=1)
    v0 = 1e-3 * rng.normal(size=(3, 4))
    radii, mass = 0.01, 2e-4

    def forces(dx: Array) -> Array:
        f = np.zeros((3, 4))
        segment_pair_forces(x0 + dx.reshape(3, 4, order="F"), v0, radii, mass, law, f)
        return f.ravel(order="F")

    def velocity_forces(dv: Array) -> Array:
        f = np.zeros((3, 4))
        segment_pair_forces(x0, v0 + dv.reshape(3, 4, order="F"), radii, mass, law, f)
        return f.ravel(order="F")

    def blocks() -> tuple[Array, Array]:
        kx, kv = np.zeros((12, 12)), np.zeros((12, 12))
        segment_pair_tangent(x0.copy(), v0.copy(), radii, mass, law, kx, kv)
        return kx, kv

    return LawCase(12, forces, lambda: blocks()[0], np.full(12, 1e-4 * law.smoothing_length),
                   velocity_forces, lambda: blocks()[1], np.full(12, 1e-7))


# --------------------------------------------------------------------------------------------
# rod end <-> body: the joint of Eq. 6-7 and the motor mounts
# --------------------------------------------------------------------------------------------
class _Pair(NamedTuple):
    """A rod (3 nodes, 2 elements) and two bodies, moving; joint at node / element 1, body 1."""

    rod: tuple[Array, ...]
    body: tuple[Array, ...]
    attachment: Array
    rest: Array


def _pair(rng: np.random.Generator) -> _Pair:
    def system(n: int, m: int) -> tuple[Array, ...]:
        d = np.stack([_rotation(rng, 2.0) for _ in range(m)], axis=2)
        return (0.05 * rng.normal(size=(3, n)), 0.1 * rng.normal(size=(3, n)),
                2.0 * rng.normal(size=(3, m)), np.ascontiguousarray(d), np.zeros((3, n)),
                np.zeros((3, m)))

    rod, body = system(3, 2), system(2, 2)
    attachment = 0.03 * rng.normal(size=3)
    # the rest orientation ~1 rad off the present relative orientation
    rest = _rotation(rng, 0.6) @ body[3][:, :, 1] @ rod[3][:, :, 1].T
    return _Pair(rod, body, attachment, np.ascontiguousarray(rest))


def _pair_case(pair: _Pair, apply: Callable[[tuple[Array, ...], tuple[Array, ...]], None],
               tangent: Callable[[Array], None],
               velocity_tangent: Callable[[Array], None]) -> LawCase:
    """:class:`LawCase` of a law ``apply(rod, body)`` on the joint's twelve unknowns, with
    its tangent and velocity tangent kernels (``(out)`` -> None, added into ``out``)."""
    def forces(dx: Array, dv: Array | None = None) -> Array:
        rod = tuple(a.copy() for a in pair.rod)
        body = tuple(a.copy() for a in pair.body)
        rod[0][:, 1] += dx[0:3]
        turn(rod[3], 1, dx[3:6])
        body[0][:, 1] += dx[6:9]
        turn(body[3], 1, dx[9:12])
        if dv is not None:  # node velocity, element omega, body velocity, body omega
            rod[1][:, 1] += dv[0:3]
            rod[2][:, 1] += dv[3:6]
            body[1][:, 1] += dv[6:9]
            body[2][:, 1] += dv[9:12]
        apply(rod, body)
        return np.concatenate([rod[4][:, 1], rod[5][:, 1], body[4][:, 1], body[5][:, 1]])

    def block(kernel: Callable[[Array], None]) -> Callable[[], Array]:
        def make() -> Array:
            out = np.zeros((JOINT_BLOCK, JOINT_BLOCK))
            kernel(out)
            return out
        return make

    steps = np.tile(np.r_[np.full(3, 1e-8), np.full(3, 1e-6)], 2)
    # the laws are linear in the velocities: the steps need only beat the round-off
    vsteps = np.tile(np.r_[np.full(3, 1e-2), np.full(3, 1e-1)], 2)
    return LawCase(JOINT_BLOCK, forces, block(tangent), steps,
                   lambda dv: forces(np.zeros(JOINT_BLOCK), dv), block(velocity_tangent), vsteps)


K_F, NU_F, K_TAU, NU_TAU = 5e5, 3.0, 20.0, 0.05


def joint_case(rng: np.random.Generator, force: bool) -> LawCase:
    """The platform joint's force (Eq. 6, ``force``) or couple (Eq. 7), dampers on."""
    p = _pair(rng)
    if force:
        return _pair_case(
            p, lambda r, b: joint_force_kernel(r, 1, b, 1, p.attachment, K_F, NU_F),
            lambda out: joint_force_tangent(p.rod, 1, p.body, 1, p.attachment, K_F, NU_F, out,
                                            tangent_scratch()),
            lambda out: joint_force_velocity_tangent(p.rod, 1, p.body, 1, p.attachment, K_F,
                                                     NU_F, out, tangent_scratch()))
    return _pair_case(
        p, lambda r, b: joint_torque_kernel(r, 1, b, 1, p.rest, K_TAU, NU_TAU),
        lambda out: joint_torque_tangent(p.rod, 1, p.body, 1, p.rest, K_TAU, NU_TAU, out,
                                             tangent_scratch()),
        lambda out: _torque_velocity_tangent(p, out))


def _torque_velocity_tangent(p: _Pair, out: Array) -> None:
    """The joint couple's (and the mounts') velocity tangent on ``p``."""
    joint_torque_velocity_tangent(p.rod, 1, p.body, 1, NU_TAU, out, tangent_scratch())


def motor_mount_case(rng: np.random.Generator) -> LawCase:
    """A motor mount's couple: Eq. 7 toward the rest orientation turned by the motor angle."""
    p = _pair(rng)
    angle = float(rng.uniform(-3.0, 3.0))
    rest = np.empty((3, 3))

    def apply(r: tuple[Array, ...], b: tuple[Array, ...]) -> None:
        mount_rest_orientation(p.rest, angle, rest)
        joint_torque_kernel(r, 1, b, 1, rest, K_TAU, NU_TAU)

    return _pair_case(p, apply, lambda out: mount_torque_tangent(
        p.rod, 1, p.body, 1, p.rest, angle, K_TAU, NU_TAU, rest, out, tangent_scratch()),
        lambda out: _torque_velocity_tangent(p, out))


def twist_mount_case(rng: np.random.Generator) -> LawCase:
    """A torque-driven (free-twist) mount's couples: Eq. 7 toward a rest orientation that
    follows the element's twist, plus a motor torque of 0.3 N m and its reaction."""
    p = _pair(rng)
    rest = np.empty((3, 3))
    torque = 0.3

    def apply(r: tuple[Array, ...], b: tuple[Array, ...]) -> None:
        free_twist_rest_orientation(p.rest, b[3], 1, r[3], 1, rest)
        joint_torque_kernel(r, 1, b, 1, rest, K_TAU, NU_TAU)
        motor_torque_kernel(r, 1, b, 1, torque)

    return _pair_case(p, apply, lambda out: twist_mount_torque_tangent(
        p.rod, 1, p.body, 1, p.rest, torque, K_TAU, NU_TAU, rest, out, tangent_scratch()),
        lambda out: _torque_velocity_tangent(p, out))


def node_law_case(law: Any, rng: np.random.Generator) -> LawCase:
    """The :class:`LawCase` of a compiled law (a
    :class:`~hsa_elastica.physics.compiled_laws.CompiledLaw`) on its random configuration
    ``law.case(rng)``: the unknowns are the positions of the slot's nodes (node ``k``'s
    component ``a`` at ``3 k + a``), its forces the nodes' external forces [N] from the law's
    kernel (row 0 of the configuration's table), its tangents the node-local blocks of its
    tangent kernel placed on the diagonal; steps 1e-6 of the largest position [m] / velocity
    [m/s] (at least 1e-6)."""
    table, view = law.case(rng)
    s, n = int(table.slots[0, 0]), int(table.slots[0, 1])
    x0, v0 = view.position.copy(), view.velocity.copy()

    def evaluate(dx: Array, dv: Array) -> Array:
        view.position[:, s : s + n] = x0[:, s : s + n] + dx.reshape(n, 3).T
        view.velocity[:, s : s + n] = v0[:, s : s + n] + dv.reshape(n, 3).T
        view.external_forces[:] = 0.0
        law.kernel(table, 0, 0.0, view)
        view.position[:], view.velocity[:] = x0, v0
        return np.asarray(view.external_forces[:, s : s + n]).T.reshape(3 * n).copy()

    def blocks() -> tuple[Array, Array]:
        dfdx, dfdv = np.empty((3, 3, n)), np.empty((3, 3, n))
        law.tangent(table, 0, 0.0, view, dfdx, dfdv)
        kx, kv = np.zeros((3 * n, 3 * n)), np.zeros((3 * n, 3 * n))
        for k in range(n):
            kx[3 * k : 3 * k + 3, 3 * k : 3 * k + 3] = dfdx[:, :, k]
            kv[3 * k : 3 * k + 3, 3 * k : 3 * k + 3] = dfdv[:, :, k]
        return kx, kv

    zero = np.zeros(3 * n)
    return LawCase(3 * n, lambda dx: evaluate(dx, zero), lambda: blocks()[0],
                   np.full(3 * n, 1e-6 * max(1.0, float(np.abs(x0).max()))),
                   lambda dv: evaluate(zero, dv), lambda: blocks()[1],
                   np.full(3 * n, 1e-6 * max(1.0, float(np.abs(v0).max()))))
