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

The one kernel :func:`kelvin_voigt_damp` is called by the damper :class:`KelvinVoigtDamping`
(per-rod operator path) and by :func:`hsa_elastica.physics.forces.constrain_rates` (compiled
path, same place in the step).  The law's two equations (``n_v`` of an element,
:func:`element_stress`; ``m_v`` of a Voronoi region, :func:`voronoi_stress`) are written once
and inlined into its sweeps and into :func:`kelvin_voigt_forces`, the same stresses as forces
for the implicit integrator (:mod:`hsa_elastica.engines.implicit`).  Forces and static solutions are unaffected (the damper acts
on the rates only; zero at rest).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from elastica.dissipation import DamperBase

from hsa_elastica.compat import compiled_entry
from hsa_elastica.params import invalid_parameter
from hsa_elastica.physics.tables import MaterialDampingTable, RodBlockArrays
from hsa_elastica.physics.tridiagonal import CONTRACT, forward_block, forward_row, hold_block

__all__ = [
    "KelvinVoigtDamping", "kelvin_voigt_damp", "kelvin_voigt_forces", "element_stress",
    "voronoi_stress", "material_damping_table", "WORK_ROWS",
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
@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _stretch_pass(
    sigma: NDArray[np.float64],
    dilatation: NDArray[np.float64],
    velocity: NDArray[np.float64],
    omega: NDArray[np.float64],
    director: NDArray[np.float64],
    rest_lengths: NDArray[np.float64],
    shear_matrix: NDArray[np.float64],
    mass: NDArray[np.float64],
    inertia: NDArray[np.float64],
    work: NDArray[np.float64],
    p: tuple[Any, ...],
) -> None:
    """Pass (A), base to tip: element strain rates ``sigma_dot``, the viscous forces
    ``Q^T n_v`` on the nodes, both preconditioners (node springs, rotational 3x3 blocks), and
    the forward elimination of each node row once complete."""
    (tau_shear, tau_axial, tau_bend, tau_twist, dt, hold_base, hold_tip, ne, nb, eb, vb) = p
    fx = work[0]
    fy = work[1]
    fz = work[2]
    diag = work[6]
    off = work[7]
    cn = work[8]
    rm00 = work[9]
    rm11 = work[10]
    rm22 = work[11]
    inv_l0 = work[13]
    rm01 = work[14]
    sa0 = work[17]
    sa1 = work[18]
    sa2 = work[19]
    rm02 = work[20]
    rm12 = work[21]
    nn = ne + 1
    big = 1e20
    q = director
    # ---- (A) stretch/shear: element k, nodes k and k+1 -------------------------------------
    fx[0] = 0.0
    fy[0] = 0.0
    fz[0] = 0.0
    diag[0] = mass[nb]
    vx = velocity[0, nb]
    vy = velocity[1, nb]
    vz = velocity[2, nb]
    for k in range(ne):
        l0 = rest_lengths[eb + k]
        il0 = 1.0 / l0
        inv_l0[k] = il0
        # the element's director, loaded once (stores to the work rows could alias it)
        q00 = q[0, 0, eb + k]
        q01 = q[0, 1, eb + k]
        q02 = q[0, 2, eb + k]
        q10 = q[1, 0, eb + k]
        q11 = q[1, 1, eb + k]
        q12 = q[1, 2, eb + k]
        q20 = q[2, 0, eb + k]
        q21 = q[2, 1, eb + k]
        q22 = q[2, 2, eb + k]
        # node k+1 (node k carried over from the previous element)
        vx1 = velocity[0, nb + k + 1]
        vy1 = velocity[1, nb + k + 1]
        vz1 = velocity[2, nb + k + 1]
        u0 = vx1 - vx
        u1 = vy1 - vy
        u2 = vz1 - vz
        vx = vx1
        vy = vy1
        vz = vz1
        # a = Q (x_{k+1} - x_k) / l0 = sigma + d3 and e = |a|: the rod's strain of this step
        a0 = sigma[0, eb + k]
        a1 = sigma[1, eb + k]
        a2 = sigma[2, eb + k] + 1.0
        e = dilatation[eb + k]
        ie = 1.0 / e
        w0 = omega[0, eb + k]
        w1 = omega[1, eb + k]
        w2 = omega[2, eb + k]
        c0 = tau_shear * shear_matrix[0, 0, eb + k]
        c1 = tau_shear * shear_matrix[1, 1, eb + k]
        c2 = tau_axial * shear_matrix[2, 2, eb + k]
        # n_v = T_s S sigma_dot, sigma_dot = Q dv / l0 - omega x a
        n0, n1, n2 = element_stress((q00, q01, q02, q10, q11, q12, q20, q21, q22),
                                    (u0, u1, u2), (a0, a1, a2), (w0, w1, w2), il0, (c0, c1, c2))
        # lab force Q^T n_v: +node k, -node k+1
        f0 = q00 * n0 + q10 * n1 + q20 * n2
        f1 = q01 * n0 + q11 * n1 + q21 * n2
        f2 = q02 * n0 + q12 * n1 + q22 * n2
        fx[k] += f0
        fy[k] += f1
        fz[k] += f2
        fx[k + 1] = 0.0 - f0
        fy[k + 1] = 0.0 - f1
        fz[k + 1] = 0.0 - f2
        sa0[k] = a0
        sa1[k] = a1
        sa2[k] = a2
        # node preconditioner: largest viscosity of the element, as a scalar spring
        cmax = max(c0, max(c1, c2))
        wgt = dt * cmax * il0
        diag[k] += wgt
        diag[k + 1] = mass[nb + k + 1] + wgt
        off[k] = -wgt
        # rotational preconditioner (lab frame): the element's inertia Q^T (J / e) Q (a full
        # 3x3 block, so the solve does not depend on the lab axes) plus an isotropic majorant
        # of the shear viscosity's rotational block l0 [a]x^T K [a]x
        cs = max(c0, c1) + c2 * (a0 * a0 + a1 * a1) * ie * ie
        extra = dt * l0 * cs * e * e
        # (the element inertia of a CosseratRod is diagonal in its local frame:
        # Q^T diag(j) Q = j1 I + (j0 - j1) d1 d1^T + (j2 - j1) d3 d3^T, the directors d_i being
        # the orthonormal rows of Q)
        j1 = inertia[1, 1, eb + k] * ie
        h0 = inertia[0, 0, eb + k] * ie - j1
        h2 = inertia[2, 2, eb + k] * ie - j1
        jd = j1 + extra
        rm00[k] = jd + h0 * q00 * q00 + h2 * q20 * q20
        rm11[k] = jd + h0 * q01 * q01 + h2 * q21 * q21
        rm22[k] = jd + h0 * q02 * q02 + h2 * q22 * q22
        rm01[k] = h0 * q00 * q01 + h2 * q20 * q21
        rm02[k] = h0 * q00 * q02 + h2 * q20 * q22
        rm12[k] = h0 * q01 * q02 + h2 * q21 * q22
        # node row k is complete: the held base node keeps its velocity
        if k == 0 and hold_base:
            diag[0] = big * mass[nb]
            fx[0] = 0.0
            fy[0] = 0.0
            fz[0] = 0.0
        forward_row(k, diag, off, cn, fx, fy, fz, False)
    # last node row
    if ne == 0 and hold_base:
        diag[0] = big * mass[nb]
        fx[0] = 0.0
        fy[0] = 0.0
        fz[0] = 0.0
    if hold_tip:
        diag[nn - 1] = big * mass[nb + nn - 1]
        fx[nn - 1] = 0.0
        fy[nn - 1] = 0.0
        fz[nn - 1] = 0.0
    forward_row(nn - 1, diag, off, cn, fx, fy, fz, True)


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _node_solve_bend_pass(
    velocity: NDArray[np.float64],
    omega: NDArray[np.float64],
    director: NDArray[np.float64],
    rest_lengths: NDArray[np.float64],
    rest_voronoi_lengths: NDArray[np.float64],
    shear_matrix: NDArray[np.float64],
    bend_matrix: NDArray[np.float64],
    work: NDArray[np.float64],
    p: tuple[Any, ...],
) -> None:
    """Pass (B+C), tip to base: node velocities by back substitution (the semi-implicit
    update), then element by element the shear couple with the updated velocities, the
    bend/twist couple ``m_v`` of each Voronoi region and the forward elimination of each
    rotational row once complete (block Gauss-Seidel)."""
    (tau_shear, tau_axial, tau_bend, tau_twist, dt, hold_base, hold_tip, ne, nb, eb, vb) = p
    fx = work[0]
    fy = work[1]
    fz = work[2]
    tq0 = work[3]
    tq1 = work[4]
    tq2 = work[5]
    diag = work[6]
    cn = work[8]
    rm00 = work[9]
    rm11 = work[10]
    rm22 = work[11]
    roff = work[12]
    inv_l0 = work[13]
    rm01 = work[14]
    rg11 = work[15]
    rg22 = work[16]
    sa0 = work[17]
    sa1 = work[18]
    sa2 = work[19]
    rm02 = work[20]
    rm12 = work[21]
    rg01 = work[22]
    rg02 = work[23]
    rg12 = work[24]
    rg00 = diag  # the node system's diagonal is free after (A)
    nn = ne + 1
    q = director
    # ---- (B+C) from the tip to the base: node velocities by back substitution (semi-implicit
    # step with the angular velocities of the step); as soon as both nodes of element i are
    # updated, its shear couple with the updated velocities (block Gauss-Seidel: each block
    # step is a backward-Euler step of its own, so it only removes kinetic energy whatever the
    # coupling through the shear strain rate), the bend/twist couple of Voronoi i (elements i
    # and i + 1) and the forward elimination of rotational row i + 1, now complete (rows are
    # eliminated from the tip) -------------------------------------------------------------
    vx = velocity[0, nb + nn - 1] + dt * fx[nn - 1]
    vy = velocity[1, nb + nn - 1] + dt * fy[nn - 1]
    vz = velocity[2, nb + nn - 1] + dt * fz[nn - 1]
    velocity[0, nb + nn - 1] = vx
    velocity[1, nb + nn - 1] = vy
    velocity[2, nb + nn - 1] = vz
    # director and angular velocity of element i + 1 (carried over)
    p00 = p01 = p02 = p10 = p11 = p12 = p20 = p21 = p22 = 0.0
    o0 = o1 = o2 = 0.0
    for i in range(ne - 1, -1, -1):
        fx[i] -= cn[i] * fx[i + 1]
        fy[i] -= cn[i] * fy[i + 1]
        fz[i] -= cn[i] * fz[i + 1]
        vx0 = velocity[0, nb + i] + dt * fx[i]
        vy0 = velocity[1, nb + i] + dt * fy[i]
        vz0 = velocity[2, nb + i] + dt * fz[i]
        velocity[0, nb + i] = vx0
        velocity[1, nb + i] = vy0
        velocity[2, nb + i] = vz0
        u0 = vx - vx0
        u1 = vy - vy0
        u2 = vz - vz0
        vx = vx0
        vy = vy0
        vz = vz0
        il0 = inv_l0[i]
        q00 = q[0, 0, eb + i]
        q01 = q[0, 1, eb + i]
        q02 = q[0, 2, eb + i]
        q10 = q[1, 0, eb + i]
        q11 = q[1, 1, eb + i]
        q12 = q[1, 2, eb + i]
        q20 = q[2, 0, eb + i]
        q21 = q[2, 1, eb + i]
        q22 = q[2, 2, eb + i]
        a0 = sa0[i]
        a1 = sa1[i]
        a2 = sa2[i]
        w0 = omega[0, eb + i]
        w1 = omega[1, eb + i]
        w2 = omega[2, eb + i]
        n0, n1, n2 = element_stress(
            (q00, q01, q02, q10, q11, q12, q20, q21, q22), (u0, u1, u2), (a0, a1, a2),
            (w0, w1, w2), il0, (tau_shear * shear_matrix[0, 0, eb + i],
                                tau_shear * shear_matrix[1, 1, eb + i],
                                tau_axial * shear_matrix[2, 2, eb + i]))
        l0 = rest_lengths[eb + i]
        # couple l0 a x n_v on element i (local), accumulated in the lab frame
        x0 = l0 * (a1 * n2 - a2 * n1)
        x1 = l0 * (a2 * n0 - a0 * n2)
        x2 = l0 * (a0 * n1 - a1 * n0)
        tq0[i] = 0.0 + (q00 * x0 + q10 * x1 + q20 * x2)
        tq1[i] = 0.0 + (q01 * x0 + q11 * x1 + q21 * x2)
        tq2[i] = 0.0 + (q02 * x0 + q12 * x1 + q22 * x2)
        if i < ne - 1:
            # ---- bend/twist: Voronoi i between elements i (director q, angular velocity w)
            # and j = i + 1 (director p, angular velocity o) ----------------------------------
            j = i + 1
            id0 = 1.0 / rest_voronoi_lengths[vb + i]
            b0 = tau_bend * bend_matrix[0, 0, vb + i]
            b1 = tau_bend * bend_matrix[1, 1, vb + i]
            b2 = tau_twist * bend_matrix[2, 2, vb + i]
            m0, m1, m2 = voronoi_stress(
                (q00, q01, q02, q10, q11, q12, q20, q21, q22),
                (p00, p01, p02, p10, p11, p12, p20, p21, p22), (w0, w1, w2), (o0, o1, o2), id0,
                (b0, b1, b2))
            # -m on element j, +m on element i (lab frame: M = Q_j^T m)
            M0 = p00 * m0 + p10 * m1 + p20 * m2
            M1 = p01 * m0 + p11 * m1 + p21 * m2
            M2 = p02 * m0 + p12 * m1 + p22 * m2
            tq0[j] -= M0
            tq1[j] -= M1
            tq2[j] -= M2
            tq0[i] += M0
            tq1[i] += M1
            tq2[i] += M2
            # lab-frame isotropic majorant of the bend/twist viscosity: kappa_dot in the lab
            # frame is (W_j - W_i) / D0, so a scalar Laplacian with the largest viscosity
            # bounds it
            wv = dt * max(b0, max(b1, b2)) * id0
            rm00[i] += wv
            rm00[j] += wv
            rm11[i] += wv
            rm11[j] += wv
            rm22[i] += wv
            rm22[j] += wv
            roff[i] = -wv
            # rotational row j is complete: the held tip element keeps its angular velocity
            if j == ne - 1 and hold_tip:
                hold_block(j, rm00, rm11, rm22, rm01, rm02, rm12, tq0, tq1, tq2)
            forward_block(j, j + 1, roff[j] if j < ne - 1 else 0.0, -wv, rm00, rm11, rm22,
                           rm01, rm02, rm12, rg00, rg11, rg22, rg01, rg02, rg12, tq0, tq1, tq2,
                           j == ne - 1, False)
        p00 = q00
        p01 = q01
        p02 = q02
        p10 = q10
        p11 = q11
        p12 = q12
        p20 = q20
        p21 = q21
        p22 = q22
        o0 = w0
        o1 = w1
        o2 = w2
    # last rotational row: the base element
    if hold_base or (ne == 1 and hold_tip):
        hold_block(0, rm00, rm11, rm22, rm01, rm02, rm12, tq0, tq1, tq2)
    forward_block(0, 1, roff[0] if ne > 1 else 0.0, 0.0, rm00, rm11, rm22, rm01, rm02, rm12,
                   rg00, rg11, rg22, rg01, rg02, rg12, tq0, tq1, tq2, ne == 1, True)


@njit(cache=True, error_model="numpy", fastmath=CONTRACT, inline="always")  # type: ignore[misc]
def _rotation_solve(
    omega: NDArray[np.float64],
    director: NDArray[np.float64],
    work: NDArray[np.float64],
    p: tuple[Any, ...],
) -> None:
    """Pass (D), base to tip: back substitution of the rotational system and the angular
    velocity update (lab increment turned into the local frame)."""
    (tau_shear, tau_axial, tau_bend, tau_twist, dt, hold_base, hold_tip, ne, nb, eb, vb) = p
    tq0 = work[3]
    tq1 = work[4]
    tq2 = work[5]
    diag = work[6]
    rg11 = work[15]
    rg22 = work[16]
    rg01 = work[22]
    rg02 = work[23]
    rg12 = work[24]
    rg00 = diag  # the node system's diagonal is free after (A)
    q = director
    # ---- (D) back substitution from the base; lab increment dt y -> local frame ----------
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
        q00 = q[0, 0, eb + k]
        q01 = q[0, 1, eb + k]
        q02 = q[0, 2, eb + k]
        q10 = q[1, 0, eb + k]
        q11 = q[1, 1, eb + k]
        q12 = q[1, 2, eb + k]
        q20 = q[2, 0, eb + k]
        q21 = q[2, 1, eb + k]
        q22 = q[2, 2, eb + k]
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
    _stretch_pass(rod.sigma, rod.dilatation, rod.velocity, rod.omega, rod.director,
                  rod.rest_lengths, rod.shear_matrix, rod.mass, rod.mass_second_moment_of_inertia,
                  work, p)
    _node_solve_bend_pass(rod.velocity, rod.omega, rod.director, rod.rest_lengths,
                          rod.rest_voronoi_lengths, rod.shear_matrix, rod.bend_matrix, work, p)
    _rotation_solve(rod.omega, rod.director, work, p)


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
    ne = m.n_elems[i]
    nb = m.node_start[i]
    eb = m.elem_start[i]
    vb = m.vor_start[i]
    ts = m.tau[i, 0]
    ta = m.tau[i, 1]
    tb = m.tau[i, 2]
    tt = m.tau[i, 3]
    q = rod.director
    v = rod.velocity
    w = rod.omega
    fe = rod.external_forces
    te = rod.external_torques
    for k in range(ne):
        e_ = eb + k
        l0 = rod.rest_lengths[e_]
        qk = (q[0, 0, e_], q[0, 1, e_], q[0, 2, e_], q[1, 0, e_], q[1, 1, e_], q[1, 2, e_],
              q[2, 0, e_], q[2, 1, e_], q[2, 2, e_])
        a0 = rod.sigma[0, e_]
        a1 = rod.sigma[1, e_]
        a2 = rod.sigma[2, e_] + 1.0
        n0, n1, n2 = element_stress(
            qk, (v[0, nb + k + 1] - v[0, nb + k], v[1, nb + k + 1] - v[1, nb + k],
                 v[2, nb + k + 1] - v[2, nb + k]),
            (a0, a1, a2), (w[0, e_], w[1, e_], w[2, e_]), 1.0 / l0,
            (ts * rod.shear_matrix[0, 0, e_], ts * rod.shear_matrix[1, 1, e_],
             ta * rod.shear_matrix[2, 2, e_]))
        # lab force Q^T n_v: +node k, -node k+1; couple l0 a x n_v on the element (local)
        for c in range(3):
            f = q[0, c, e_] * n0 + q[1, c, e_] * n1 + q[2, c, e_] * n2
            fe[c, nb + k] += f
            fe[c, nb + k + 1] -= f
        te[0, e_] += l0 * (a1 * n2 - a2 * n1)
        te[1, e_] += l0 * (a2 * n0 - a0 * n2)
        te[2, e_] += l0 * (a0 * n1 - a1 * n0)
    for k in range(ne - 1):
        i_ = eb + k
        j_ = i_ + 1
        qi = (q[0, 0, i_], q[0, 1, i_], q[0, 2, i_], q[1, 0, i_], q[1, 1, i_], q[1, 2, i_],
              q[2, 0, i_], q[2, 1, i_], q[2, 2, i_])
        qj = (q[0, 0, j_], q[0, 1, j_], q[0, 2, j_], q[1, 0, j_], q[1, 1, j_], q[1, 2, j_],
              q[2, 0, j_], q[2, 1, j_], q[2, 2, j_])
        m0, m1, m2 = voronoi_stress(
            qi, qj, (w[0, i_], w[1, i_], w[2, i_]), (w[0, j_], w[1, j_], w[2, j_]),
            1.0 / rod.rest_voronoi_lengths[vb + k],
            (tb * rod.bend_matrix[0, 0, vb + k], tb * rod.bend_matrix[1, 1, vb + k],
             tt * rod.bend_matrix[2, 2, vb + k]))
        # -m on element j (its frame), +R^T m on element i (lab M = Q_j^T m, then Q_i M)
        te[0, j_] -= m0
        te[1, j_] -= m1
        te[2, j_] -= m2
        M0 = qj[0] * m0 + qj[3] * m1 + qj[6] * m2
        M1 = qj[1] * m0 + qj[4] * m1 + qj[7] * m2
        M2 = qj[2] * m0 + qj[5] * m1 + qj[8] * m2
        te[0, i_] += qi[0] * M0 + qi[1] * M1 + qi[2] * M2
        te[1, i_] += qi[3] * M0 + qi[4] * M1 + qi[5] * M2
        te[2, i_] += qi[6] * M0 + qi[7] * M1 + qi[8] * M2


def _check_time(name: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if isinstance(value, bool) or not (math.isfinite(v) and 0.0 <= v <= 1.0):
        raise invalid_parameter("KelvinVoigtDamping", name, value, "a number in [0, 1] (s)")
    return v


class KelvinVoigtDamping(DamperBase):
    """PyElastica damper: Kelvin-Voigt material damping of one rod (see the module).

    Parameters (keyword-only): ``tau_axial``, ``tau_shear``, ``tau_bend``, ``tau_twist``
    retardation times [s] (0 = no damping of that strain), ``time_step`` [s] (the simulation's
    dt), ``hold_base`` / ``hold_tip`` (leave the end node and element to a boundary condition,
    e.g. :class:`~hsa_elastica.physics.actuation.MotorAngleBC` at the base).  It reads the
    rest lengths and stiffnesses the rod's
    :class:`~hsa_elastica.physics.auxetic_coupling.AuxeticCoupling` wrote in this step, and the
    strains (``sigma``, ``dilatation``) the rod's internal forces computed at the current pose:
    a damper runs after them in PyElastica's step; call
    ``rod.compute_internal_forces_and_torques`` first when calling it by hand.
    """

    def __init__(
        self,
        *,
        tau_axial: float,
        tau_shear: float,
        tau_bend: float,
        tau_twist: float,
        time_step: float,
        hold_base: bool = True,
        hold_tip: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.tau_axial = _check_time("tau_axial", tau_axial)
        self.tau_shear = _check_time("tau_shear", tau_shear)
        self.tau_bend = _check_time("tau_bend", tau_bend)
        self.tau_twist = _check_time("tau_twist", tau_twist)
        try:
            dt = float(time_step)
        except (TypeError, ValueError):
            dt = math.nan
        if not (math.isfinite(dt) and dt > 0.0):
            raise invalid_parameter("KelvinVoigtDamping", "time_step", time_step, "a number > 0 (s)")
        self.time_step = dt
        self.hold_base = bool(hold_base)
        self.hold_tip = bool(hold_tip)
        self._table: MaterialDampingTable | None = None  # one row, built at the first call
        self._rod: DampedRod | None = None
        self._kernel: Any = None  # compiled entry point of kelvin_voigt_damp for the records

    def dampen_rates(self, system: Any, time: np.float64) -> None:
        """Update the rod's velocities and angular velocities in place."""
        if self._kernel is None and not (system.velocity_collection.any()
                                         or system.omega_collection.any()):
            # a rod at rest stays at rest (the viscous stresses of zero rates are zero): the
            # call of PyElastica's finalize() at t = 0 does not compile the per-rod kernel,
            # which a fused or static run never calls (cold start, issue 25)
            return
        if self._table is None or self._rod is None:
            self._rod = DampedRod(
                system.sigma, system.dilatation, system.velocity_collection,
                system.omega_collection, system.director_collection, system.rest_lengths,
                system.rest_voronoi_lengths, system.shear_matrix, system.bend_matrix,
                system.mass, system.mass_second_moment_of_inertia,
            )
            self._table = material_damping_table([(self, system)], [(0, 0, 0)])
            self._kernel = compiled_entry(kelvin_voigt_damp, (self._rod, self._table, 0))
        self._kernel(self._rod, self._table, 0)


def material_damping_table(
    items: "list[tuple[KelvinVoigtDamping, Any]]", offsets: "list[tuple[int, int, int]]"
) -> MaterialDampingTable:
    """The :class:`~hsa_elastica.physics.tables.MaterialDampingTable` of the dampers ``items``
    (``(damper, rod)`` pairs), rod ``k``'s first node, element and Voronoi entry at
    ``offsets[k]`` of the arrays the kernel will be given (the damper's own one-row table:
    offsets 0; the compiler's: offsets into the memory block)."""
    sizes = [int(rod.n_elems) for _, rod in items]
    width = max(sizes, default=0) + 1
    return MaterialDampingTable(
        node_start=np.array([r[0] for r in offsets], dtype=np.int64),
        elem_start=np.array([r[1] for r in offsets], dtype=np.int64),
        vor_start=np.array([r[2] for r in offsets], dtype=np.int64),
        n_elems=np.array(sizes, dtype=np.int64),
        tau=np.array(
            [[op.tau_shear, op.tau_axial, op.tau_bend, op.tau_twist] for op, _ in items],
            dtype=np.float64,
        ).reshape(-1, 4),
        dt=np.array([op.time_step for op, _ in items], dtype=np.float64),
        hold=np.array([[op.hold_base, op.hold_tip] for op, _ in items], dtype=np.int64).reshape(-1, 2),
        work=np.zeros((len(items), WORK_ROWS, width)),
    )
