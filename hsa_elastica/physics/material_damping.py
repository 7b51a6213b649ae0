"""Kelvin-Voigt material damping of the rod (viscous stresses proportional to strain rates).

The TPU of an HSA is a visco-elastic solid.  A Kelvin-Voigt element adds to the elastic
internal stresses of the discrete Cosserat rod (Gazzola et al. 2018) the viscous stresses

    ``n_v = T_s S sigma_dot``  [N]   (shear x, y: ``tau_shear``; axial z: ``tau_axial``)
    ``m_v = T_b B kappa_dot``  [N m] (bend x, y: ``tau_bend``;  twist z: ``tau_twist``)

with ``S``, ``B`` the rod's current (auxetic, Eq. 5) diagonal shear and bend matrices and the
retardation times ``tau_*`` [s].  A harmonic strain of angular frequency ``omega`` then sees the
loss factor ``tan(delta) = omega tau``; a lightly damped mode dominated by one strain has the
damping ratio ``zeta = omega tau / 2``.  The stresses act on frame-indifferent strain rates of
the discrete rod (rigid motions are not damped, unlike PyElastica's velocity dampers):

    element k:  ``sigma_dot_k = Q_k (v_{k+1} - v_k) / l0_k - omega_k x a_k``, ``a_k = Q_k (x_{k+1} - x_k) / l0_k``
    Voronoi k:  ``kappa_dot_k = (omega_{k+1} - R_k omega_k) / D0_k``,  ``R_k = Q_{k+1} Q_k^T``

(local frames; ``omega`` is PyElastica's local angular velocity; ``a_k = sigma_k + d3`` is read
from the strain the rod's internal forces computed in the step).  The forces and couples are
minus the gradient, with respect to the velocities, of the Rayleigh dissipation function
``D = 1/2 sum_k l0_k sigma_dot_k . n_v,k + 1/2 sum_k D0_k kappa_dot_k . m_v,k >= 0``, so the
mechanical power they exert is ``-2 D <= 0``: the operator can only remove energy.

Time integration (semi-implicit, a damper).  PyElastica's explicit Position Verlet is stable
for a Kelvin-Voigt stress added to the forces only while ``dt tau omega_max^2`` is of order one
(``omega_max`` is the rod's highest element mode, ~5e4 rad/s axially for the paper rod), and
even an implicit damping applied *before* the kick shrinks the elastic limit from
``omega dt < 2`` to ``omega dt < sqrt(2)`` for a strongly damped mode.  The damping is
therefore a damper, applied like PyElastica's dampers *after* the kick (the stability limit of
``x' = x + dt v'``, ``v' = beta (v - dt omega^2 x)`` is ``(omega dt)^2 < 2 (1 + beta) / beta``,
never below the undamped ``omega dt < 2``), with a linearly implicit (backward Euler) update
``dq = dt P^-1 F_v(q)``: ``P = M + dt C_hat`` is the (diagonal) mass matrix plus a tridiagonal
majorant of the viscous matrix.  Per rod, first the node velocities (one scalar tridiagonal
system with the largest of the axial/shear viscosities per element, the angular velocities
held), then the element angular velocities with the updated node velocities (block
Gauss-Seidel), in the lab frame, where ``kappa_dot`` is a plain difference of neighbouring
angular velocities: one block-tridiagonal system with the element inertias ``Q^T (J / e) Q``
(full 3x3 blocks, so that the update does not depend on the orientation of the lab axes:
frame indifference, ``tests/test_material_damping.py``) and a scalar Laplacian with the
largest bend/twist viscosity per Voronoi region.  Each block step
then has ``dt P^-1 C`` with eigenvalues in [0, 1).  For the slow modes ``dt C_hat << M`` and the update is the Kelvin-Voigt
force; for the stiff element modes it is backward Euler, without an upper limit on the
retardation times from the time step.  Held ends (``hold_base``: node 0 and element 0, set by
the motor; ``hold_tip``: the last node and element) are not changed.

The one kernel :func:`kelvin_voigt_damp` is called by the damper
:class:`~hsa_elastica.physics.kelvin_voigt_damper.KelvinVoigtDamping`
(per-rod operator path) and by :func:`hsa_elastica.physics.forces.constrain_rates` (compiled
path, same place in the step).  The law's two equations (``n_v`` of an element,
:func:`element_stress`; ``m_v`` of a Voronoi region, :func:`voronoi_stress`) are written once
and inlined into its sweeps and into :func:`kelvin_voigt_forces`, the same stresses as forces
for the implicit integrator (:mod:`hsa_elastica.engines.implicit`), whose Newton matrix takes
their exact velocity tangent :func:`kelvin_voigt_tangent` from the same two functions.
Forces and static solutions are unaffected (the damper acts on the rates only; zero at rest).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.tables import MaterialDampingTable, RodBlockArrays
from hsa_elastica.physics.tridiagonal import (
    CONTRACT, Blocks, Vectors, forward_block, forward_row, hold_block,
)

__all__ = [
    "DampedRod", "kelvin_voigt_damp", "kelvin_voigt_forces", "kelvin_voigt_tangent",
    "element_stress", "voronoi_stress", "WORK_ROWS",
]

class DampedRod(NamedTuple):
    """The arrays of one rod that :func:`kelvin_voigt_damp` reads or updates (the damper's own
    record of its rod; the compiled path passes its :class:`RodBlockArrays`, which has these
    fields too)."""

    sigma: NDArray[np.float64]
    dilatation: NDArray[np.float64]
    velocity: NDArray[np.float64]
    omega: NDArray[np.float64]
    director: NDArray[np.float64]
    rest_lengths: NDArray[np.float64]
    rest_voronoi_lengths: NDArray[np.float64]
    shear_matrix: NDArray[np.float64]
    bend_matrix: NDArray[np.float64]
    mass: NDArray[np.float64]
    mass_second_moment_of_inertia: NDArray[np.float64]


#: rows of the workspace of :func:`kelvin_voigt_damp` (``MaterialDampingTable.work[i]``:
#: ``(WORK_ROWS, n_nodes)``): node system (forces fx fy fz 0-2, diagonal 6, off-diagonal 7,
#: elimination factors 8), rotational couples tq 3-5, the rotational system's symmetric 3x3
#: diagonal blocks rm (00, 11, 22 at 9-11, 01 at 14, 02, 12 at 20-21) and off-diagonal 12,
#: 1/l0 13, the eliminated blocks rg (00 in row 6, free after the node pass; 11, 22 at 15-16;
#: 01, 02, 12 at 22-24), the strains a = sigma + d3 17-19
WORK_ROWS = 25


# ---- the two equations of the law, shared by the damper's sweeps and by the force kernel ----
@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def element_stress(
    q: tuple[float, ...], u: tuple[float, float, float], a: tuple[float, float, float],
    w: tuple[float, float, float], il0: float, c: tuple[float, float, float],
) -> tuple[float, float, float]:
    """Viscous stress ``n_v = T_s S sigma_dot`` [N] (local frame) of one element:
    ``sigma_dot = Q (v_{k+1} - v_k) / l0 - omega x a`` with ``q`` the element's director
    (row-major 9-tuple ``Q``), ``u = v_{k+1} - v_k`` [m/s] (lab), ``a = sigma + d3`` its
    strain, ``w`` its local angular velocity [rad/s], ``il0 = 1 / l0`` [1/m] and ``c`` the
    viscosities ``(tau_shear S_00, tau_shear S_11, tau_axial S_22)`` [N s]."""
    q00, q01, q02, q10, q11, q12, q20, q21, q22 = q
    u0, u1, u2 = u
    a0, a1, a2 = a
    w0, w1, w2 = w
    g0 = (q00 * u0 + q01 * u1 + q02 * u2) * il0 - (w1 * a2 - w2 * a1)
    g1 = (q10 * u0 + q11 * u1 + q12 * u2) * il0 - (w2 * a0 - w0 * a2)
    g2 = (q20 * u0 + q21 * u1 + q22 * u2) * il0 - (w0 * a1 - w1 * a0)
    return c[0] * g0, c[1] * g1, c[2] * g2


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def voronoi_stress(
    qi: tuple[float, ...], qj: tuple[float, ...], wi: tuple[float, float, float],
    wj: tuple[float, float, float], id0: float, b: tuple[float, float, float],
) -> tuple[float, float, float]:
    """Viscous couple ``m_v = T_b B kappa_dot`` [N m] (frame of element ``j = i + 1``) of the
    Voronoi region between elements ``i`` and ``j``: ``kappa_dot = (omega_j - R omega_i) /
    D0``, ``R = Q_j Q_i^T``; ``qi``/``qj`` the directors (row-major 9-tuples), ``wi``/``wj``
    the local angular velocities [rad/s], ``id0 = 1 / D0`` [1/m], ``b`` the viscosities
    ``(tau_bend B_00, tau_bend B_11, tau_twist B_22)`` [N m^2 s]."""
    q00, q01, q02, q10, q11, q12, q20, q21, q22 = qi
    p00, p01, p02, p10, p11, p12, p20, p21, p22 = qj
    w0, w1, w2 = wi
    o0, o1, o2 = wj
    # R omega_i with R = Q_j Q_i^T: first lab W_i = Q_i^T omega_i, then Q_j W_i
    W0 = q00 * w0 + q10 * w1 + q20 * w2
    W1 = q01 * w0 + q11 * w1 + q21 * w2
    W2 = q02 * w0 + q12 * w1 + q22 * w2
    r0 = p00 * W0 + p01 * W1 + p02 * W2
    r1 = p10 * W0 + p11 * W1 + p12 * W2
    r2 = p20 * W0 + p21 * W1 + p22 * W2
    return b[0] * (o0 - r0) * id0, b[1] * (o1 - r1) * id0, b[2] * (o2 - r2) * id0


# error_model="numpy" (here, in the helpers and in the compiled path's caller): no
# zero-divisor check per division (the divisors are rest lengths, element stretches and
# diagonally dominant pivots; a degenerate rod gives inf/nan, which the divergence checks see).
# Not inlined into the fused step: the compiled path passes whole block arrays (no views to
# reference-count), and the step without its ~3500 instructions ran slightly faster.
# _nrt=False: no reference counting in kelvin_voigt_damp and its inlined sweeps (they allocate
# nothing; the sweeps' row views and record fields cost ~0.3 us per rod in reference counts:
# measured with benchmarks/bench_material_damping.py --kernel, 7.2 -> 6.1 us for four rods).
# The sweeps and their helpers below are inlined (numba IR) into kelvin_voigt_damp: splitting
# them into helpers changes no operation (the same expressions, FMA contraction included).
@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def director_entries(q: NDArray[np.float64], k: int) -> tuple[float, ...]:
    """Director ``Q_k`` of element ``k`` of ``q`` (3, 3, n) as a row-major 9-tuple."""
    return (q[0, 0, k], q[0, 1, k], q[0, 2, k], q[1, 0, k], q[1, 1, k], q[1, 2, k],
            q[2, 0, k], q[2, 1, k], q[2, 2, k])


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _to_lab(q: tuple[float, ...], v: tuple[float, float, float]) -> tuple[float, float, float]:
    """``Q^T v``: a local-frame vector ``v`` of the element with director ``q`` (9-tuple) in
    the lab frame."""
    q00, q01, q02, q10, q11, q12, q20, q21, q22 = q
    v0, v1, v2 = v
    return (q00 * v0 + q10 * v1 + q20 * v2, q01 * v0 + q11 * v1 + q21 * v2,
            q02 * v0 + q12 * v1 + q22 * v2)


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _hold_node(j: int, mass: NDArray[np.float64], nb: int, diag: NDArray[np.float64],
               f: Vectors) -> None:
    """A held node ``j`` keeps its velocity: its row scaled by 1e20, no load."""
    diag[j] = 1e20 * mass[nb + j]
    f[0][j] = 0.0
    f[1][j] = 0.0
    f[2][j] = 0.0


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _inertia_block(
    q: tuple[float, ...], inertia: NDArray[np.float64], e_: int, ie: float, extra: float,
) -> tuple[float, float, float, float, float, float]:
    """Rotational preconditioner block (lab frame, entries 00, 11, 22, 01, 02, 12) of element
    ``e_``: its inertia ``Q^T (J / e) Q`` (a full 3x3 block, so the solve does not depend on the
    lab axes) plus ``extra`` times the identity.  The element inertia of a CosseratRod is
    diagonal in its local frame: ``Q^T diag(j) Q = j1 I + (j0 - j1) d1 d1^T + (j2 - j1) d3
    d3^T``, the directors ``d_i`` being the orthonormal rows of ``Q``."""
    q00, q01, q02, q10, q11, q12, q20, q21, q22 = q
    j1 = inertia[1, 1, e_] * ie
    h0 = inertia[0, 0, e_] * ie - j1
    h2 = inertia[2, 2, e_] * ie - j1
    jd = j1 + extra
    return (jd + h0 * q00 * q00 + h2 * q20 * q20, jd + h0 * q01 * q01 + h2 * q21 * q21,
            jd + h0 * q02 * q02 + h2 * q22 * q22, h0 * q00 * q01 + h2 * q20 * q21,
            h0 * q00 * q02 + h2 * q20 * q22, h0 * q01 * q02 + h2 * q21 * q22)


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _stretch_pass(rod: RodBlockArrays | DampedRod, work: NDArray[np.float64],
                  p: tuple[Any, ...]) -> None:
    """Pass (A), base to tip: element strain rates ``sigma_dot``, the viscous forces
    ``Q^T n_v`` on the nodes, both preconditioners (node springs, rotational 3x3 blocks), and
    the forward elimination of each node row once complete."""
    (tau_shear, tau_axial, tau_bend, tau_twist, dt, hold_base, hold_tip, ne, nb, eb, vb) = p
    velocity = rod.velocity
    mass = rod.mass
    f = (work[0], work[1], work[2])
    fx, fy, fz = f
    diag = work[6]
    off = work[7]
    rm = (work[9], work[10], work[11], work[14], work[20], work[21])
    inv_l0 = work[13]
    sa = (work[17], work[18], work[19])
    # ---- (A) stretch/shear: element k, nodes k and k+1 -------------------------------------
    fx[0] = 0.0
    fy[0] = 0.0
    fz[0] = 0.0
    diag[0] = mass[nb]
    v = (velocity[0, nb], velocity[1, nb], velocity[2, nb])
    for k in range(ne):
        e_ = eb + k
        l0 = rod.rest_lengths[e_]
        il0 = 1.0 / l0
        inv_l0[k] = il0
        # the element's director, loaded once (stores to the work rows could alias it)
        q = director_entries(rod.director, e_)
        # node k+1 (node k carried over from the previous element)
        v1 = (velocity[0, nb + k + 1], velocity[1, nb + k + 1], velocity[2, nb + k + 1])
        u = (v1[0] - v[0], v1[1] - v[1], v1[2] - v[2])
        v = v1
        # a = Q (x_{k+1} - x_k) / l0 = sigma + d3 and e = |a|: the rod's strain of this step
        a = (rod.sigma[0, e_], rod.sigma[1, e_], rod.sigma[2, e_] + 1.0)
        e = rod.dilatation[e_]
        ie = 1.0 / e
        s = rod.shear_matrix
        c0 = tau_shear * s[0, 0, e_]
        c1 = tau_shear * s[1, 1, e_]
        c2 = tau_axial * s[2, 2, e_]
        # n_v = T_s S sigma_dot, sigma_dot = Q dv / l0 - omega x a; lab force Q^T n_v: +node
        # k, -node k+1
        f0, f1, f2 = _to_lab(q, element_stress(
            q, u, a, (rod.omega[0, e_], rod.omega[1, e_], rod.omega[2, e_]), il0, (c0, c1, c2)))
        fx[k] += f0
        fy[k] += f1
        fz[k] += f2
        fx[k + 1] = 0.0 - f0
        fy[k + 1] = 0.0 - f1
        fz[k + 1] = 0.0 - f2
        sa[0][k] = a[0]
        sa[1][k] = a[1]
        sa[2][k] = a[2]
        # node preconditioner: largest viscosity of the element, as a scalar spring
        wgt = dt * max(c0, max(c1, c2)) * il0
        diag[k] += wgt
        diag[k + 1] = mass[nb + k + 1] + wgt
        off[k] = -wgt
        # rotational preconditioner: the element inertia plus an isotropic majorant of the
        # shear viscosity's rotational block l0 [a]x^T K [a]x
        cs = max(c0, c1) + c2 * (a[0] * a[0] + a[1] * a[1]) * ie * ie
        b00, b11, b22, b01, b02, b12 = _inertia_block(
            q, rod.mass_second_moment_of_inertia, e_, ie, dt * l0 * cs * e * e)
        rm[0][k] = b00
        rm[1][k] = b11
        rm[2][k] = b22
        rm[3][k] = b01
        rm[4][k] = b02
        rm[5][k] = b12
        # node row k is complete: the held base node keeps its velocity
        if k == 0 and hold_base:
            _hold_node(0, mass, nb, diag, f)
        forward_row(k, diag, off, work[8], f, False)
    # last node row
    if ne == 0 and hold_base:
        _hold_node(0, mass, nb, diag, f)
    if hold_tip:
        _hold_node(ne, mass, nb, diag, f)
    forward_row(ne, diag, off, work[8], f, True)


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _node_velocity(j: int, rod: RodBlockArrays | DampedRod, nb: int, dt: float,
                   f: Vectors) -> tuple[float, float, float]:
    """Node ``j``'s semi-implicit update ``v += dt y`` (``y`` its solved row of ``f``),
    returned."""
    velocity = rod.velocity
    vx = velocity[0, nb + j] + dt * f[0][j]
    vy = velocity[1, nb + j] + dt * f[1][j]
    vz = velocity[2, nb + j] + dt * f[2][j]
    velocity[0, nb + j] = vx
    velocity[1, nb + j] = vy
    velocity[2, nb + j] = vz
    return vx, vy, vz


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _shear_couple(
    i: int, q: tuple[float, ...], u: tuple[float, float, float], a: tuple[float, float, float],
    w: tuple[float, float, float], rod: RodBlockArrays | DampedRod, p: tuple[Any, ...],
    il0: float, tq: Vectors,
) -> None:
    """The couple ``l0 a x n_v`` of element ``i`` (row ``i`` of the rod: ``p[9] + i``) from its
    viscous stress with the node velocity difference ``u`` (lab), written into row ``i`` of
    ``tq`` in the lab frame."""
    tau_shear, tau_axial, eb = p[0], p[1], p[9]
    s = rod.shear_matrix
    n0, n1, n2 = element_stress(q, u, a, w, il0, (tau_shear * s[0, 0, eb + i],
                                                  tau_shear * s[1, 1, eb + i],
                                                  tau_axial * s[2, 2, eb + i]))
    l0 = rod.rest_lengths[eb + i]
    a0, a1, a2 = a
    x = _to_lab(q, (l0 * (a1 * n2 - a2 * n1), l0 * (a2 * n0 - a0 * n2), l0 * (a0 * n1 - a1 * n0)))
    tq[0][i] = 0.0 + x[0]
    tq[1][i] = 0.0 + x[1]
    tq[2][i] = 0.0 + x[2]


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _bend_couple(
    i: int, qi: tuple[float, ...], qj: tuple[float, ...], wi: tuple[float, float, float],
    wj: tuple[float, float, float], rod: RodBlockArrays | DampedRod, p: tuple[Any, ...],
    rm: Blocks, roff: NDArray[np.float64], tq: Vectors,
) -> float:
    """The bend/twist couple ``m_v`` of Voronoi region ``i`` (row ``p[10] + i`` of the rod)
    between elements ``i`` (director ``qi``, angular velocity ``wi``) and ``j = i + 1`` added
    to rows ``i`` (+) and ``j`` (-) of ``tq`` (lab frame), and its lab-frame isotropic majorant
    added to the rotational system ``rm``/``roff``; returns the majorant's weight."""
    tau_bend, tau_twist, dt, vb = p[2], p[3], p[4], p[10]
    j = i + 1
    id0 = 1.0 / rod.rest_voronoi_lengths[vb + i]
    bm = rod.bend_matrix
    b0 = tau_bend * bm[0, 0, vb + i]
    b1 = tau_bend * bm[1, 1, vb + i]
    b2 = tau_twist * bm[2, 2, vb + i]
    # -m on element j, +m on element i (lab frame: M = Q_j^T m)
    M = _to_lab(qj, voronoi_stress(qi, qj, wi, wj, id0, (b0, b1, b2)))
    tq[0][j] -= M[0]
    tq[1][j] -= M[1]
    tq[2][j] -= M[2]
    tq[0][i] += M[0]
    tq[1][i] += M[1]
    tq[2][i] += M[2]
    # kappa_dot in the lab frame is (W_j - W_i) / D0: a scalar Laplacian with the largest
    # viscosity bounds it
    wv = dt * max(b0, max(b1, b2)) * id0
    rm[0][i] += wv
    rm[0][j] += wv
    rm[1][i] += wv
    rm[1][j] += wv
    rm[2][i] += wv
    rm[2][j] += wv
    roff[i] = -wv
    return wv


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _node_solve_bend_pass(rod: RodBlockArrays | DampedRod, work: NDArray[np.float64],
                          p: tuple[Any, ...]) -> None:
    """Pass (B+C), tip to base: node velocities by back substitution (the semi-implicit
    update), then element by element the shear couple with the updated velocities, the
    bend/twist couple ``m_v`` of each Voronoi region and the forward elimination of each
    rotational row once complete (block Gauss-Seidel).

    As soon as both nodes of element ``i`` are updated: its shear couple with the updated
    velocities (block Gauss-Seidel: each block step is a backward-Euler step of its own, so it
    only removes kinetic energy whatever the coupling through the shear strain rate), the
    bend/twist couple of Voronoi ``i`` (elements ``i`` and ``i + 1``) and the forward
    elimination of rotational row ``i + 1``, now complete (rows are eliminated from the tip)."""
    dt, hold_base, hold_tip, ne, nb, eb = p[4], p[5], p[6], p[7], p[8], p[9]
    f = (work[0], work[1], work[2])
    tq = (work[3], work[4], work[5])
    cn = work[8]
    rm = (work[9], work[10], work[11], work[14], work[20], work[21])
    roff = work[12]
    rg = (work[6], work[15], work[16], work[22], work[23], work[24])  # 00: free after (A)
    omega = rod.omega
    v = _node_velocity(ne, rod, nb, dt, f)
    # director and angular velocity of element i + 1 (carried over)
    qj: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    wj = (0.0, 0.0, 0.0)
    for i in range(ne - 1, -1, -1):
        f[0][i] -= cn[i] * f[0][i + 1]
        f[1][i] -= cn[i] * f[1][i + 1]
        f[2][i] -= cn[i] * f[2][i + 1]
        v0 = _node_velocity(i, rod, nb, dt, f)
        u = (v[0] - v0[0], v[1] - v0[1], v[2] - v0[2])
        v = v0
        q = director_entries(rod.director, eb + i)
        w = (omega[0, eb + i], omega[1, eb + i], omega[2, eb + i])
        _shear_couple(i, q, u, (work[17, i], work[18, i], work[19, i]), w, rod, p, work[13, i],
                      tq)
        if i < ne - 1:
            j = i + 1
            wv = _bend_couple(i, q, qj, w, wj, rod, p, rm, roff, tq)
            # rotational row j is complete: the held tip element keeps its angular velocity
            if j == ne - 1 and hold_tip:
                hold_block(j, rm, tq)
            forward_block(j, j + 1, roff[j] if j < ne - 1 else 0.0, -wv, rm, rg, tq,
                          j == ne - 1, False)
        qj = q
        wj = w
    # last rotational row: the base element
    if hold_base or (ne == 1 and hold_tip):
        hold_block(0, rm, tq)
    forward_block(0, 1, roff[0] if ne > 1 else 0.0, 0.0, rm, rg, tq, ne == 1, True)


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _rotation_solve(rod: RodBlockArrays | DampedRod, work: NDArray[np.float64],
                    p: tuple[Any, ...]) -> None:
    """Pass (D), base to tip: back substitution of the rotational system and the angular
    velocity update (lab increment ``dt y`` turned into the local frame)."""
    dt, ne, eb = p[4], p[7], p[9]
    tq0 = work[3]
    tq1 = work[4]
    tq2 = work[5]
    rg00 = work[6]  # the node system's diagonal is free after (A)
    rg11 = work[15]
    rg22 = work[16]
    rg01 = work[22]
    rg02 = work[23]
    rg12 = work[24]
    omega = rod.omega
    z0 = z1 = z2 = 0.0
    for k in range(ne):
        if k > 0:
            tq0[k] -= rg00[k] * z0 + rg01[k] * z1 + rg02[k] * z2
            tq1[k] -= rg01[k] * z0 + rg11[k] * z1 + rg12[k] * z2
            tq2[k] -= rg02[k] * z0 + rg12[k] * z1 + rg22[k] * z2
        z0 = tq0[k]
        z1 = tq1[k]
        z2 = tq2[k]
        y0 = dt * z0
        y1 = dt * z1
        y2 = dt * z2
        q00, q01, q02, q10, q11, q12, q20, q21, q22 = director_entries(rod.director, eb + k)
        omega[0, eb + k] += q00 * y0 + q01 * y1 + q02 * y2
        omega[1, eb + k] += q10 * y0 + q11 * y1 + q12 * y2
        omega[2, eb + k] += q20 * y0 + q21 * y1 + q22 * y2


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, _nrt=False)  # type: ignore[misc, call-overload]
def kelvin_voigt_damp(rod: RodBlockArrays | DampedRod, m: MaterialDampingTable, i: int) -> None:
    """Semi-implicit Kelvin-Voigt update of one rod's ``velocity`` [m/s] and ``omega`` [rad/s].

    ``rod``: the rod arrays (a :class:`~hsa_elastica.physics.tables.RodBlockArrays`, of a
    memory block or of one rod: ``sigma`` ``(3, n)`` and ``dilatation`` ``(n,)`` are the
    shear/stretch strain ``e Q t - d3`` and stretch ``e`` the rod's internal forces computed
    at the current pose and rest lengths, as PyElastica's stepper leaves them before the
    dampers; velocities ``(3, n+1)``, directors ``(3, 3, n)``, ``omega`` local ``(3, n)``,
    ``mass`` ``(n+1,)``, the mass second moments ``(3, 3, n)``); row ``i`` of the table ``m``:
    retardation times ``tau`` (shear, axial, bend, twist) [s], the time step ``dt`` [s],
    ``hold`` (leave the base / tip node and element unchanged), the workspace ``work`` and the
    rod's element count and first node, element and Voronoi entry in ``rod``'s arrays.  See the
    module docstring for the scheme.

    Three passes over the rod, each a sweep of the scheme (the strain rates, viscous stresses
    and eliminations of a sweep are interleaved element by element, so each director and
    velocity is loaded once): :func:`_stretch_pass`, :func:`_node_solve_bend_pass`,
    :func:`_rotation_solve`.
    """
    # the row's scalars: retardation times (shear, axial, bend, twist) [s], dt [s], hold base /
    # tip, element count, first node / element / Voronoi entry (the sweeps are inlined here)
    p = (m.tau[i, 0], m.tau[i, 1], m.tau[i, 2], m.tau[i, 3], m.dt[i], m.hold[i, 0] != 0,
         m.hold[i, 1] != 0, m.n_elems[i], m.node_start[i], m.elem_start[i], m.vor_start[i])
    work = m.work[i]
    _stretch_pass(rod, work, p)
    _node_solve_bend_pass(rod, work, p)
    _rotation_solve(rod, work, p)


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _element_loads(
    q: tuple[float, ...], a: tuple[float, float, float], l0: float,
    n: tuple[float, float, float],
) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """The loads of an element's viscous stress ``n`` [N] (local; strain ``a``, rest length
    ``l0``): the lab force ``Q^T n`` on node ``k`` (minus it on node ``k + 1``) and the couple
    ``l0 a x n`` [N m] on the element (local)."""
    a0, a1, a2 = a
    n0, n1, n2 = n
    return _to_lab(q, n), (l0 * (a1 * n2 - a2 * n1), l0 * (a2 * n0 - a0 * n2),
                           l0 * (a0 * n1 - a1 * n0))


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _voronoi_loads(qi: tuple[float, ...], qj: tuple[float, ...],
                   m: tuple[float, float, float]) -> tuple[float, float, float]:
    """The couple ``R^T m = Q_i Q_j^T m`` [N m] on element ``i`` (its frame) of a Voronoi
    region's viscous couple ``m`` (element ``j``'s frame; element ``j`` gets ``-m``)."""
    M0, M1, M2 = _to_lab(qj, m)
    return (qi[0] * M0 + qi[1] * M1 + qi[2] * M2, qi[3] * M0 + qi[4] * M1 + qi[5] * M2,
            qi[6] * M0 + qi[7] * M1 + qi[8] * M2)


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _element_terms(rod: RodBlockArrays, m: MaterialDampingTable, i: int, k: int) -> tuple[
        tuple[float, ...], tuple[float, float, float], float, tuple[float, float, float]]:
    """Director, strain ``a = sigma + d3``, rest length, viscosities of element ``k``."""
    e_ = m.elem_start[i] + k
    s = rod.shear_matrix
    ts = m.tau[i, 0]
    return (director_entries(rod.director, e_),
            (rod.sigma[0, e_], rod.sigma[1, e_], rod.sigma[2, e_] + 1.0), rod.rest_lengths[e_],
            (ts * s[0, 0, e_], ts * s[1, 1, e_], m.tau[i, 1] * s[2, 2, e_]))


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _voronoi_terms(rod: RodBlockArrays, m: MaterialDampingTable, i: int, k: int
                   ) -> tuple[float, tuple[float, float, float]]:
    """``1 / D0`` and viscosities of Voronoi region ``k`` of row ``i``."""
    v_, b, tb = m.vor_start[i] + k, rod.bend_matrix, m.tau[i, 2]
    return 1.0 / rod.rest_voronoi_lengths[v_], (tb * b[0, 0, v_], tb * b[1, 1, v_],
                                                m.tau[i, 3] * b[2, 2, v_])


@njit(cache=True, error_model="numpy", fastmath=CONTRACT)  # type: ignore[misc]
def kelvin_voigt_forces(rod: RodBlockArrays, m: MaterialDampingTable, i: int) -> None:
    """The Kelvin-Voigt viscous forces [N] and couples [N m, local frames] of row ``i`` of the
    table added to the rod's ``external_forces`` / ``external_torques``: the same stresses
    (:func:`element_stress`, :func:`voronoi_stress`) as :func:`kelvin_voigt_damp`, as forces
    (minus the velocity gradient of the Rayleigh function) instead of its semi-implicit
    velocity update; for an integrator that treats them implicitly itself
    (:mod:`hsa_elastica.engines.implicit`).  ``sigma`` / ``dilatation``: the strains of the
    present internal-force evaluation; ``dt`` and ``hold`` of the row are not used (held ends
    are the caller's boundary conditions)."""
    nb, eb = m.node_start[i], m.elem_start[i]
    v, w = rod.velocity, rod.omega
    fe, te = rod.external_forces, rod.external_torques
    for k in range(m.n_elems[i]):
        e_ = eb + k
        qk, a, l0, c = _element_terms(rod, m, i, k)
        n = element_stress(
            qk, (v[0, nb + k + 1] - v[0, nb + k], v[1, nb + k + 1] - v[1, nb + k],
                 v[2, nb + k + 1] - v[2, nb + k]), a, (w[0, e_], w[1, e_], w[2, e_]), 1.0 / l0, c)
        f, t = _element_loads(qk, a, l0, n)
        for r in range(3):  # lab force: +node k, -node k+1; couple on the element (local)
            fe[r, nb + k] += f[r]
            fe[r, nb + k + 1] -= f[r]
            te[r, e_] += t[r]
    for k in range(m.n_elems[i] - 1):
        i_ = eb + k
        j_ = i_ + 1
        qi = director_entries(rod.director, i_)
        qj = director_entries(rod.director, j_)
        id0, b = _voronoi_terms(rod, m, i, k)
        mv = voronoi_stress(qi, qj, (w[0, i_], w[1, i_], w[2, i_]),
                            (w[0, j_], w[1, j_], w[2, j_]), id0, b)
        ti = _voronoi_loads(qi, qj, mv)
        for r in range(3):  # -m on element j (its frame), +R^T m on element i
            te[r, j_] -= mv[r]
            te[r, i_] += ti[r]


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _unit(b: int, on: bool) -> tuple[float, float, float]:  # e_b, zero unless on
    return (1.0 if on and b == 0 else 0.0, 1.0 if on and b == 1 else 0.0,
            1.0 if on and b == 2 else 0.0)


@njit(cache=True, error_model="numpy", fastmath=CONTRACT)  # type: ignore[misc]
def kelvin_voigt_tangent(rod: RodBlockArrays, m: MaterialDampingTable, i: int,
                         band: NDArray[np.float64]) -> None:
    """The derivative of :func:`kelvin_voigt_forces` (row ``i``) with respect to the rod's
    node velocities [m/s] and element angular velocities [rad/s, local] added into ``band``:
    the rod's unknowns in the layout of :mod:`~hsa_elastica.physics.rod_tangent` (node ``k``
    at ``6 k``, element ``k`` at ``6 k + 3``), ``band[r, c - r + h]`` with ``h = (band.shape[1]
    - 1) // 2`` (at least 8).  The law is linear in the velocities at a fixed pose: column
    ``c`` is its loads at a unit velocity of unknown ``c``, the stresses of
    :func:`element_stress` / :func:`voronoi_stress` carried to the loads as the forces are;
    it is ``-sum_k l0_k G_k^T (T S) G_k`` (and the bend part's), symmetric."""
    h = (band.shape[1] - 1) // 2
    for k in range(m.n_elems[i]):
        e_ = m.elem_start[i] + k
        q, a, l0, c = _element_terms(rod, m, i, k)
        for col in range(9):  # v_k, omega_k, v_{k+1}
            b = col % 3
            u = _unit(b, col != 3 + b)
            if col < 3:
                u = (-u[0], -u[1], -u[2])
            f, t = _element_loads(q, a, l0, element_stress(q, u, a, _unit(b, col == 3 + b),
                                                           1.0 / l0, c))
            for r in range(3):
                band[6 * k + r, col - r + h] += f[r]
                band[6 * k + 3 + r, col - 3 - r + h] += t[r]
                band[6 * k + 6 + r, col - 6 - r + h] -= f[r]
        if k + 1 < m.n_elems[i]:
            qj = director_entries(rod.director, e_ + 1)
            id0, bb = _voronoi_terms(rod, m, i, k)
            for col in range(6):  # omega_k, omega_{k+1}
                b = col % 3
                mv = voronoi_stress(q, qj, _unit(b, col < 3), _unit(b, col >= 3), id0, bb)
                ti = _voronoi_loads(q, qj, mv)
                for r in range(3):
                    band[6 * k + 3 + r, col + 3 * (col // 3) - r + h] += ti[r]
                    band[6 * k + 9 + r, col + 3 * (col // 3) - 6 - r + h] -= mv[r]
