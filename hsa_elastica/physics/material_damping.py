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

(local frames; ``omega`` is PyElastica's local angular velocity).  The forces and couples are
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
angular velocities: one scalar tridiagonal system per lab component with the largest
bend/twist viscosity per Voronoi region and the diagonal of ``Q^T (J / e) Q``.  Each block step
then has ``dt P^-1 C`` with eigenvalues in [0, 1).  For the slow modes ``dt C_hat << M`` and the update is the Kelvin-Voigt
force; for the stiff element modes it is backward Euler, without an upper limit on the
retardation times from the time step.  Held ends (``hold_base``: node 0 and element 0, set by
the motor; ``hold_tip``: the last node and element) are not changed.

The one kernel :func:`kelvin_voigt_damp` is called by the damper :class:`KelvinVoigtDamping`
(per-rod operator path) and by :func:`hsa_elastica.physics.forces.constrain_rates` (compiled
path, same place in the step).  Forces and static solutions are unaffected (the damper acts
on the rates only; zero at rest).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from elastica.dissipation import DamperBase

from hsa_elastica.params import invalid_parameter

__all__ = ["KelvinVoigtDamping", "kelvin_voigt_damp", "kelvin_voigt_work", "WORK_ROWS"]

#: rows of the workspace of :func:`kelvin_voigt_damp` (shape ``(WORK_ROWS, n_nodes)``)
WORK_ROWS = 20


@njit(cache=True)  # type: ignore[misc]
def kelvin_voigt_work(n_nodes: int) -> NDArray[np.float64]:
    """Workspace of :func:`kelvin_voigt_damp` for a rod of ``n_nodes`` nodes."""
    return np.zeros((WORK_ROWS, n_nodes))


@njit(cache=True)  # type: ignore[misc]
def _tridiagonal_solve_shared(
    diag: NDArray[np.float64],
    off: NDArray[np.float64],
    r0: NDArray[np.float64],
    r1: NDArray[np.float64],
    r2: NDArray[np.float64],
    scratch: NDArray[np.float64],
    n: int,
) -> None:
    """Solve the symmetric tridiagonal system (``diag[0:n]``, ``off[0:n-1]``) for the three
    right-hand sides ``r0, r1, r2`` in place (Thomas algorithm, one division per row; the
    matrices here are diagonally dominant)."""
    c = scratch
    inv = 1.0 / diag[0]
    c[0] = off[0] * inv
    r0[0] *= inv
    r1[0] *= inv
    r2[0] *= inv
    for i in range(1, n):
        o = off[i - 1]
        inv = 1.0 / (diag[i] - o * c[i - 1])
        c[i] = off[i] * inv
        r0[i] = (r0[i] - o * r0[i - 1]) * inv
        r1[i] = (r1[i] - o * r1[i - 1]) * inv
        r2[i] = (r2[i] - o * r2[i - 1]) * inv
    for i in range(n - 2, -1, -1):
        r0[i] -= c[i] * r0[i + 1]
        r1[i] -= c[i] * r1[i + 1]
        r2[i] -= c[i] * r2[i + 1]


@njit(cache=True)  # type: ignore[misc]
def _tridiagonal_solve_three(
    d0: NDArray[np.float64], o0: NDArray[np.float64], r0: NDArray[np.float64],
    d1: NDArray[np.float64], o1: NDArray[np.float64], r1: NDArray[np.float64],
    d2: NDArray[np.float64], o2: NDArray[np.float64], r2: NDArray[np.float64],
    c0: NDArray[np.float64], c1: NDArray[np.float64], c2: NDArray[np.float64],
    n: int,
) -> None:
    """Three independent symmetric tridiagonal solves in one sweep (independent divisions
    overlap); as :func:`_tridiagonal_solve_shared` otherwise."""
    i0 = 1.0 / d0[0]
    i1 = 1.0 / d1[0]
    i2 = 1.0 / d2[0]
    c0[0] = o0[0] * i0
    c1[0] = o1[0] * i1
    c2[0] = o2[0] * i2
    r0[0] *= i0
    r1[0] *= i1
    r2[0] *= i2
    for i in range(1, n):
        a0 = o0[i - 1]
        a1 = o1[i - 1]
        a2 = o2[i - 1]
        i0 = 1.0 / (d0[i] - a0 * c0[i - 1])
        i1 = 1.0 / (d1[i] - a1 * c1[i - 1])
        i2 = 1.0 / (d2[i] - a2 * c2[i - 1])
        c0[i] = o0[i] * i0
        c1[i] = o1[i] * i1
        c2[i] = o2[i] * i2
        r0[i] = (r0[i] - a0 * r0[i - 1]) * i0
        r1[i] = (r1[i] - a1 * r1[i - 1]) * i1
        r2[i] = (r2[i] - a2 * r2[i - 1]) * i2
    for i in range(n - 2, -1, -1):
        r0[i] -= c0[i] * r0[i + 1]
        r1[i] -= c1[i] * r1[i + 1]
        r2[i] -= c2[i] * r2[i + 1]


# inlined into its numba callers (the fused stepper's per-rod call passes ~14 array views:
# inlining drops their reference counting, ~8 % of the kernel)
@njit(cache=True, inline="always")  # type: ignore[misc]
def kelvin_voigt_damp(
    position: NDArray[np.float64],
    velocity: NDArray[np.float64],
    omega: NDArray[np.float64],
    director: NDArray[np.float64],
    rest_lengths: NDArray[np.float64],
    rest_voronoi_lengths: NDArray[np.float64],
    shear_matrix: NDArray[np.float64],
    bend_matrix: NDArray[np.float64],
    mass: NDArray[np.float64],
    inertia: NDArray[np.float64],
    tau_shear: float,
    tau_axial: float,
    tau_bend: float,
    tau_twist: float,
    dt: float,
    hold_base: bool,
    hold_tip: bool,
    work: NDArray[np.float64],
) -> None:
    """Semi-implicit Kelvin-Voigt update of one rod's ``velocity`` [m/s] and ``omega`` [rad/s].

    Arrays are one rod's PyElastica arrays (positions/velocities ``(3, n+1)``, directors
    ``(3, 3, n)``, ``omega`` local ``(3, n)``, ``mass`` ``(n+1,)``, ``inertia`` the mass second
    moments ``(3, 3, n)``); retardation times in s, ``dt`` the time step [s]; ``hold_base`` /
    ``hold_tip`` leave the end node and element unchanged; ``work`` from
    :func:`kelvin_voigt_work`.  See the module docstring for the scheme.
    """
    ne = rest_lengths.shape[0]
    nn = ne + 1
    fx = work[0]
    fy = work[1]
    fz = work[2]
    tq0 = work[3]
    tq1 = work[4]
    tq2 = work[5]
    diag = work[6]
    off = work[7]
    scratch = work[8]
    rdiag0 = work[9]
    rdiag1 = work[10]
    rdiag2 = work[11]
    roff0 = work[12]
    scratch2 = work[15]
    sa0 = work[17]
    sa1 = work[18]
    sa2 = work[19]
    for i in range(nn):
        fx[i] = 0.0
        fy[i] = 0.0
        fz[i] = 0.0
        diag[i] = mass[i]
    for k in range(ne):
        tq0[k] = 0.0
        tq1[k] = 0.0
        tq2[k] = 0.0
    # ---- stretch/shear: element k, nodes k and k+1 ---------------------------------------
    for k in range(ne):
        q = director
        l0 = rest_lengths[k]
        il0 = 1.0 / l0
        d0 = position[0, k + 1] - position[0, k]
        d1 = position[1, k + 1] - position[1, k]
        d2 = position[2, k + 1] - position[2, k]
        u0 = velocity[0, k + 1] - velocity[0, k]
        u1 = velocity[1, k + 1] - velocity[1, k]
        u2 = velocity[2, k + 1] - velocity[2, k]
        a0 = (q[0, 0, k] * d0 + q[0, 1, k] * d1 + q[0, 2, k] * d2) * il0
        a1 = (q[1, 0, k] * d0 + q[1, 1, k] * d1 + q[1, 2, k] * d2) * il0
        a2 = (q[2, 0, k] * d0 + q[2, 1, k] * d1 + q[2, 2, k] * d2) * il0
        e = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
        ie = 1.0 / e
        w0 = omega[0, k]
        w1 = omega[1, k]
        w2 = omega[2, k]
        # sigma_dot = Q dv / l0 - omega x a
        g0 = (q[0, 0, k] * u0 + q[0, 1, k] * u1 + q[0, 2, k] * u2) * il0 - (w1 * a2 - w2 * a1)
        g1 = (q[1, 0, k] * u0 + q[1, 1, k] * u1 + q[1, 2, k] * u2) * il0 - (w2 * a0 - w0 * a2)
        g2 = (q[2, 0, k] * u0 + q[2, 1, k] * u1 + q[2, 2, k] * u2) * il0 - (w0 * a1 - w1 * a0)
        c0 = tau_shear * shear_matrix[0, 0, k]
        c1 = tau_shear * shear_matrix[1, 1, k]
        c2 = tau_axial * shear_matrix[2, 2, k]
        n0 = c0 * g0
        n1 = c1 * g1
        n2 = c2 * g2
        # lab force Q^T n_v: +node k, -node k+1
        f0 = q[0, 0, k] * n0 + q[1, 0, k] * n1 + q[2, 0, k] * n2
        f1 = q[0, 1, k] * n0 + q[1, 1, k] * n1 + q[2, 1, k] * n2
        f2 = q[0, 2, k] * n0 + q[1, 2, k] * n1 + q[2, 2, k] * n2
        fx[k] += f0
        fy[k] += f1
        fz[k] += f2
        fx[k + 1] -= f0
        fy[k + 1] -= f1
        fz[k + 1] -= f2
        sa0[k] = a0
        sa1[k] = a1
        sa2[k] = a2
        # node preconditioner: largest viscosity of the element, as a scalar spring
        cmax = max(c0, max(c1, c2))
        wgt = dt * cmax * il0
        diag[k] += wgt
        diag[k + 1] += wgt
        off[k] = -wgt
        # rotational preconditioner (lab frame): diagonal of Q^T (J / e) Q plus an isotropic
        # majorant of the shear viscosity's rotational block l0 [a]x^T K [a]x
        cs = max(c0, c1) + c2 * (a0 * a0 + a1 * a1) * ie * ie
        extra = dt * l0 * cs * e * e
        # (the element inertia of a CosseratRod is diagonal in its local frame)
        j0 = inertia[0, 0, k] * ie
        j1 = inertia[1, 1, k] * ie
        j2 = inertia[2, 2, k] * ie
        rdiag0[k] = j0 * q[0, 0, k] ** 2 + j1 * q[1, 0, k] ** 2 + j2 * q[2, 0, k] ** 2 + extra
        rdiag1[k] = j0 * q[0, 1, k] ** 2 + j1 * q[1, 1, k] ** 2 + j2 * q[2, 1, k] ** 2 + extra
        rdiag2[k] = j0 * q[0, 2, k] ** 2 + j1 * q[1, 2, k] ** 2 + j2 * q[2, 2, k] ** 2 + extra
    # ---- (1) node velocities: semi-implicit step with the angular velocities of the step ---
    big = 1e20
    if hold_base:
        diag[0] = big * mass[0]
        fx[0] = 0.0
        fy[0] = 0.0
        fz[0] = 0.0
    if hold_tip:
        diag[nn - 1] = big * mass[nn - 1]
        fx[nn - 1] = 0.0
        fy[nn - 1] = 0.0
        fz[nn - 1] = 0.0
    _tridiagonal_solve_shared(diag, off, fx, fy, fz, scratch, nn)
    for i in range(nn):
        velocity[0, i] += dt * fx[i]
        velocity[1, i] += dt * fy[i]
        velocity[2, i] += dt * fz[i]
    # ---- (2) element angular velocities, with the updated node velocities (block
    # Gauss-Seidel: each block step is a backward-Euler step of its own, so it only removes
    # kinetic energy whatever the coupling through the shear strain rate) ------------------
    for k in range(ne):
        q = director
        il0 = 1.0 / rest_lengths[k]
        u0 = velocity[0, k + 1] - velocity[0, k]
        u1 = velocity[1, k + 1] - velocity[1, k]
        u2 = velocity[2, k + 1] - velocity[2, k]
        a0 = sa0[k]
        a1 = sa1[k]
        a2 = sa2[k]
        w0 = omega[0, k]
        w1 = omega[1, k]
        w2 = omega[2, k]
        g0 = (q[0, 0, k] * u0 + q[0, 1, k] * u1 + q[0, 2, k] * u2) * il0 - (w1 * a2 - w2 * a1)
        g1 = (q[1, 0, k] * u0 + q[1, 1, k] * u1 + q[1, 2, k] * u2) * il0 - (w2 * a0 - w0 * a2)
        g2 = (q[2, 0, k] * u0 + q[2, 1, k] * u1 + q[2, 2, k] * u2) * il0 - (w0 * a1 - w1 * a0)
        n0 = tau_shear * shear_matrix[0, 0, k] * g0
        n1 = tau_shear * shear_matrix[1, 1, k] * g1
        n2 = tau_axial * shear_matrix[2, 2, k] * g2
        l0 = rest_lengths[k]
        # couple l0 a x n_v on element k (local), accumulated in the lab frame
        x0 = l0 * (a1 * n2 - a2 * n1)
        x1 = l0 * (a2 * n0 - a0 * n2)
        x2 = l0 * (a0 * n1 - a1 * n0)
        tq0[k] += q[0, 0, k] * x0 + q[1, 0, k] * x1 + q[2, 0, k] * x2
        tq1[k] += q[0, 1, k] * x0 + q[1, 1, k] * x1 + q[2, 1, k] * x2
        tq2[k] += q[0, 2, k] * x0 + q[1, 2, k] * x1 + q[2, 2, k] * x2
    # ---- bend/twist: Voronoi k between elements k and k+1 ---------------------------------
    for k in range(ne - 1):
        q = director
        id0 = 1.0 / rest_voronoi_lengths[k]
        # R omega_k with R = Q_{k+1} Q_k^T: first lab W_k = Q_k^T omega_k, then Q_{k+1} W_k
        W0 = q[0, 0, k] * omega[0, k] + q[1, 0, k] * omega[1, k] + q[2, 0, k] * omega[2, k]
        W1 = q[0, 1, k] * omega[0, k] + q[1, 1, k] * omega[1, k] + q[2, 1, k] * omega[2, k]
        W2 = q[0, 2, k] * omega[0, k] + q[1, 2, k] * omega[1, k] + q[2, 2, k] * omega[2, k]
        j = k + 1
        r0 = q[0, 0, j] * W0 + q[0, 1, j] * W1 + q[0, 2, j] * W2
        r1 = q[1, 0, j] * W0 + q[1, 1, j] * W1 + q[1, 2, j] * W2
        r2 = q[2, 0, j] * W0 + q[2, 1, j] * W1 + q[2, 2, j] * W2
        b0 = tau_bend * bend_matrix[0, 0, k]
        b1 = tau_bend * bend_matrix[1, 1, k]
        b2 = tau_twist * bend_matrix[2, 2, k]
        m0 = b0 * (omega[0, j] - r0) * id0
        m1 = b1 * (omega[1, j] - r1) * id0
        m2 = b2 * (omega[2, j] - r2) * id0
        # -m_v on element k+1, +m_v on element k (lab frame: M = Q_{k+1}^T m_v)
        M0 = q[0, 0, j] * m0 + q[1, 0, j] * m1 + q[2, 0, j] * m2
        M1 = q[0, 1, j] * m0 + q[1, 1, j] * m1 + q[2, 1, j] * m2
        M2 = q[0, 2, j] * m0 + q[1, 2, j] * m1 + q[2, 2, j] * m2
        tq0[j] -= M0
        tq1[j] -= M1
        tq2[j] -= M2
        tq0[k] += M0
        tq1[k] += M1
        tq2[k] += M2
        # lab-frame isotropic majorant of the bend/twist viscosity: kappa_dot in the lab frame
        # is (W_{k+1} - W_k) / D0, so a scalar Laplacian with the largest viscosity bounds it
        wv = dt * max(b0, max(b1, b2)) * id0
        rdiag0[k] += wv
        rdiag0[j] += wv
        rdiag1[k] += wv
        rdiag1[j] += wv
        rdiag2[k] += wv
        rdiag2[j] += wv
        roff0[k] = -wv
    if hold_base:
        rdiag0[0] = big * rdiag0[0]
        rdiag1[0] = big * rdiag1[0]
        rdiag2[0] = big * rdiag2[0]
        tq0[0] = 0.0
        tq1[0] = 0.0
        tq2[0] = 0.0
    if hold_tip:
        rdiag0[ne - 1] = big * rdiag0[ne - 1]
        rdiag1[ne - 1] = big * rdiag1[ne - 1]
        rdiag2[ne - 1] = big * rdiag2[ne - 1]
        tq0[ne - 1] = 0.0
        tq1[ne - 1] = 0.0
        tq2[ne - 1] = 0.0
    _tridiagonal_solve_three(
        rdiag0, roff0, tq0, rdiag1, roff0, tq1, rdiag2, roff0, tq2, scratch, scratch2, work[16], ne
    )
    for k in range(ne):
        # lab increment dt y -> local frame
        q = director
        y0 = dt * tq0[k]
        y1 = dt * tq1[k]
        y2 = dt * tq2[k]
        omega[0, k] += q[0, 0, k] * y0 + q[0, 1, k] * y1 + q[0, 2, k] * y2
        omega[1, k] += q[1, 0, k] * y0 + q[1, 1, k] * y1 + q[1, 2, k] * y2
        omega[2, k] += q[2, 0, k] * y0 + q[2, 1, k] * y1 + q[2, 2, k] * y2


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
    :class:`~hsa_elastica.physics.auxetic_coupling.AuxeticCoupling` wrote in this step.
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
        self._work: NDArray[np.float64] | None = None

    def dampen_rates(self, system: Any, time: np.float64) -> None:
        """Update the rod's velocities and angular velocities in place."""
        if self._work is None:
            self._work = kelvin_voigt_work(system.position_collection.shape[1])
        kelvin_voigt_damp(
            system.position_collection, system.velocity_collection, system.omega_collection,
            system.director_collection, system.rest_lengths, system.rest_voronoi_lengths,
            system.shear_matrix, system.bend_matrix, system.mass,
            system.mass_second_moment_of_inertia, self.tau_shear, self.tau_axial,
            self.tau_bend, self.tau_twist, self.time_step, self.hold_base, self.hold_tip,
            self._work,
        )
