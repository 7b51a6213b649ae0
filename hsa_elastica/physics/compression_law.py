"""Optional tension/compression-asymmetric axial law for HSA rods (extension of Eq. 5).

The paper's model (Section II-B, Eq. 5) uses one axial stiffness ``S_zz = E(kappa_h) A`` for
tension and compression.  The measured closed-HSA characterization (Good et al. 2022) is
stiffer when pulled (spring constant) than when held at its printed length while twisted
(blocked force: the rod is then compressed relative to its extended rest length), and the
paper's conclusion points at lattice buckling at large twist.  This module offers, as an
*option* (the paper's linear law stays the default), a compression stiffness ratio

    ``r_c(kappa_h) = compression_ratio + compression_ratio_slope * kappa_h``  [-]

applied to every element whose axial strain against the *current* rest length (the auxetic
rest length of Eq. 2) is negative, ``sigma_z = e (Q t)_z - 1 < 0``.

Implementation: a PyElastica forcing that leaves the stock rod untouched.  PyElastica's
internal force is ``f = Delta_h(Q^T n / e)`` with ``n = S (sigma - sigma_0)`` (local frame),
i.e. element ``i`` pushes node ``i`` with ``+Q_i^T n_i / e_i`` and node ``i+1`` with
``-Q_i^T n_i / e_i``.  :class:`AxialCompressionLaw` adds, for compressed elements,
``Delta n_z = (r_c - 1) n_z`` in the same way,

    ``external_forces[:, i]   += (r_c - 1) n_z,i d3_i / e_i``,
    ``external_forces[:, i+1] -= (r_c - 1) n_z,i d3_i / e_i``,

with ``d3_i = Q_i^T e_z`` the element's axial director, so that the total axial force of a
compressed element is ``r_c S_zz sigma_z / e`` (tension: unchanged).  It reads the stress of
the current step: PyElastica computes internal forces before it calls forcings
(``SymplecticStepperMixin``), so ``rod.internal_stress`` / ``rod.sigma`` are up to date.

Twist strain: Eq. 4 against the printed Voronoi lengths, averaged to elements with zero
padding (Eq. 3) and clipped to ``[eps_min, eps_max] / C_eps`` -- the same strain the rest-length
and stiffness laws see (kernels of :mod:`hsa_elastica.physics.auxetic_coupling`).

Tangent: :func:`compression_tangent_band` is the exact derivative of
:func:`compression_law_forces` with respect to the static solver's unknowns of the rod (its
stretch, its turn, and the twist strain that moves the auxetic rest length, the axial
stiffness and ``r_c``); the static solver and the implicit integrator add it to the rod's band
(:mod:`hsa_elastica.engines.statics_rods`), ``tests/test_law_tangents.py`` checks it against
central differences.

Units: SI (N, m, rad/m); ``compression_ratio`` [-], ``compression_ratio_slope`` [m/rad].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from elastica.external_forces import NoForces
from elastica.typing import RodType

from hsa_elastica.physics.auxetic_law import (
    average_to_elements,
    clip_strain,
    handed_twist_strain,
    rest_law,
)
from hsa_elastica.physics.auxetic_tangent import rest_slopes
from hsa_elastica.physics.rod_tangent import HALF_BANDWIDTH, RodTangentState, voronoi_curvature
from hsa_elastica.physics.tables import CompressionTable, CouplingTable
from hsa_elastica.physics.variational_rod import log_map_jacobian
from hsa_elastica.params import ParameterError, RodParams, is_finite_number

__all__ = [
    "AxialLawParams",
    "AxialCompressionLaw",
    "compression_ratio_kernel",
    "compression_correction_forces",
    "compression_law_forces",
    "compression_tangent_band",
    "compression_factors",
    "compression_row",
    "CompressionRow",
    "twist_range",
]


_finite = is_finite_number


@dataclass(frozen=True)
class AxialLawParams:
    """Parameters of the compression-softening axial law (SI).

    Attributes
    ----------
    compression_ratio : float
        ``r_c0`` in (0, 1] [-], compression / tension stiffness at zero twist.
    compression_ratio_slope : float
        ``d r_c / d kappa_h`` [m/rad]; ``r_c`` must stay in (0, 1] over the clipped
        twist-strain range (checked by :meth:`check_range`).

    Notes
    -----
    ``AxialLawParams()`` (r_c = 1, slope 0) is the paper's symmetric law.
    """

    compression_ratio: float = 1.0
    compression_ratio_slope: float = 0.0

    def __post_init__(self) -> None:
        r = self.compression_ratio
        if not (_finite(r) and 0.0 < float(r) <= 1.0):
            raise ParameterError(
                f"AxialLawParams.compression_ratio = {r!r} is invalid: must be a number in (0, 1]"
            )
        s = self.compression_ratio_slope
        if not _finite(s):
            raise ParameterError(
                f"AxialLawParams.compression_ratio_slope = {s!r} is invalid: must be a finite "
                f"number (m/rad)"
            )
        object.__setattr__(self, "compression_ratio", float(r))
        object.__setattr__(self, "compression_ratio_slope", float(s))

    @property
    def is_symmetric(self) -> bool:
        return self.compression_ratio == 1.0 and self.compression_ratio_slope == 0.0

    def ratio(self, kappa_h: float) -> float:
        """``r_c`` [-] at the (already clipped) handed twist strain ``kappa_h`` [rad/m]."""
        return self.compression_ratio + self.compression_ratio_slope * kappa_h

    def check_range(self, kappa_min: float, kappa_max: float) -> None:
        """Raise unless ``0 < r_c <= 1`` at both ends of ``[kappa_min, kappa_max]`` [rad/m]."""
        for k in (kappa_min, kappa_max):
            if not math.isfinite(k):
                if self.compression_ratio_slope != 0.0:
                    raise ParameterError(
                        "AxialLawParams.compression_ratio_slope = "
                        f"{self.compression_ratio_slope!r} is invalid: needs a bounded twist "
                        "range (C_eps > 0), else it must be 0"
                    )
                continue
            r = self.ratio(k)
            if not (0.0 < r <= 1.0 + 1e-12):
                raise ParameterError(
                    f"AxialLawParams.compression_ratio_slope = {self.compression_ratio_slope!r} is "
                    f"invalid: r_c = {r:.6g} at kappa_h = {k:.6g} rad/m; r_c must stay in (0, 1] "
                    f"over [{kappa_min:.6g}, {kappa_max:.6g}] rad/m"
                )

    def to_dict(self) -> dict[str, float]:
        return {f.name: float(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "AxialLawParams":
        unknown = set(d) - {f.name for f in fields(cls)}
        if unknown:
            raise ParameterError(f"AxialLawParams: unknown field(s) {sorted(unknown)}")
        return cls(**d)


def twist_range(rod: RodParams) -> tuple[float, float]:
    """Clipped handed twist-strain range ``[eps_min, eps_max] / C_eps`` [rad/m] of ``rod``."""
    if rod.C_eps > 0.0:
        return rod.eps_min / rod.C_eps, rod.eps_max / rod.C_eps
    return -math.inf, math.inf


# --------------------------------------------------------------------------------------------
# numba kernels
# --------------------------------------------------------------------------------------------
@njit(cache=True)  # type: ignore[misc]
def compression_ratio_kernel(
    kappa_h_elem: NDArray[np.float64],
    r0: float,
    slope: float,
    sigma_z: NDArray[np.float64],
    factor: NDArray[np.float64],
) -> None:
    """``factor[i] = r0 + slope * kappa_h[i]`` where ``sigma_z[i] < 0``, else 1 [-]."""
    for i in range(factor.shape[0]):
        if sigma_z[i] < 0.0:
            factor[i] = r0 + slope * kappa_h_elem[i]
        else:
            factor[i] = 1.0


@njit(cache=True)  # type: ignore[misc]
def compression_correction_forces(
    factor: NDArray[np.float64],
    internal_stress: NDArray[np.float64],
    director_collection: NDArray[np.float64],
    dilatation: NDArray[np.float64],
    external_forces: NDArray[np.float64],
) -> None:
    """Add ``(factor - 1) n_z d3 / e`` to node i and subtract it from node i+1 [N].

    ``internal_stress`` (3, n) local-frame ``n`` [N]; ``director_collection`` (3, 3, n), row 2
    is ``d3`` in the lab frame; ``dilatation`` (n,) [-]; ``external_forces`` (3, n+1) [N].
    """
    for i in range(factor.shape[0]):
        c = factor[i] - 1.0
        if c == 0.0:
            continue
        s = c * internal_stress[2, i] / dilatation[i]
        for d in range(3):
            f = s * director_collection[2, d, i]
            external_forces[d, i] += f
            external_forces[d, i + 1] -= f


class CompressionRow(NamedTuple):
    """One rod's compression law, as :func:`compression_law_forces` takes it: the printed
    Voronoi lengths ``printed_voronoi`` (n-1,) [m] of the twist strain (Eq. 4), the rod's
    ``handedness`` (+1 / -1), the clip range ``kappa_min``, ``kappa_max`` [rad/m] of the
    handed twist strain and ``r_c = ratio + slope * kappa_h`` (``ratio`` [-], ``slope``
    [m/rad])."""

    printed_voronoi: NDArray[np.float64]
    handedness: float
    kappa_min: float
    kappa_max: float
    ratio: float
    slope: float


#: rows of the workspace of :func:`compression_law_forces`: twist strain per Voronoi region,
#: per element, clipped per element, axial strain, factor ``r_c`` (or 1) per element
WORK_ROWS = 5


@njit(cache=True)  # type: ignore[misc]
def compression_law_forces(
    director_collection: NDArray[np.float64],
    sigma: NDArray[np.float64],
    rest_sigma: NDArray[np.float64],
    internal_stress: NDArray[np.float64],
    dilatation: NDArray[np.float64],
    external_forces: NDArray[np.float64],
    law: CompressionRow,
    work: NDArray[np.float64],
) -> None:
    """The whole law on one rod: factor ``r_c`` of each compressed element (twist strain of
    Eq. 4 averaged and clipped, only if ``law.slope != 0``; ``work[2]`` must hold zeros
    otherwise) and the correction forces added to ``external_forces`` [N].

    Arrays of one rod: ``director_collection`` (3, 3, n), ``sigma`` / ``rest_sigma`` /
    ``internal_stress`` (3, n), ``dilatation`` (n,), ``external_forces`` (3, n+1); ``work``
    (:data:`WORK_ROWS`, >= n) is workspace (``work[4, :n]`` holds the multipliers afterwards).
    """
    n = dilatation.shape[0]
    for i in range(n):
        work[3, i] = sigma[2, i] - rest_sigma[2, i]
    compression_factors(director_collection, law, work[:, :n])
    compression_correction_forces(work[4, :n], internal_stress, director_collection, dilatation,
                                  external_forces)


@njit(cache=True, inline="always")  # type: ignore[misc]
def compression_factors(director_collection: NDArray[np.float64], law: CompressionRow,
                        work: NDArray[np.float64]) -> None:
    """The multiplier ``r_c`` (or 1) of each element into ``work[4]``, from the axial strains
    ``work[3]`` (``sigma_z - sigma0_z``) and, with ``law.slope != 0``, the twist strain of
    Eq. 4 averaged (Eq. 3) and clipped (``work[0:3]``; ``work[2]`` must hold zeros
    otherwise)."""
    n = director_collection.shape[2]
    if law.slope != 0.0:
        handed_twist_strain(director_collection, law.printed_voronoi, law.handedness,
                            work[0, : n - 1])
        average_to_elements(work[0, : n - 1], work[1, :n])
        clip_strain(work[1, :n], law.kappa_min, law.kappa_max, work[2, :n])
    compression_ratio_kernel(work[2, :n], law.ratio, law.slope, work[3, :n], work[4, :n])


@njit(cache=True, inline="always")  # type: ignore[misc]
def compression_row(c: CompressionTable, i: int) -> CompressionRow:
    """Row ``i`` of the compiled models' compression table as :func:`compression_law_forces`
    takes it."""
    return CompressionRow(c.printed_voronoi[i, : c.n_elems[i] - 1], c.handedness[i],
                          c.kappa_min[i], c.kappa_max[i], c.ratio[i], c.slope[i])


# --------------------------------------------------------------------------------------------
# consistent tangent
# --------------------------------------------------------------------------------------------
@njit(cache=True)  # type: ignore[misc]
def compression_tangent_band(
    rod: RodTangentState, law: CompressionRow, work: NDArray[np.float64], c: CouplingTable,
    i: int, band: NDArray[np.float64],
) -> None:
    r"""The exact derivative of :func:`compression_law_forces` with respect to the static
    solver's unknowns of one rod, added into ``band`` (the layout of
    :func:`~hsa_elastica.physics.rod_tangent.rod_tangent_band`: node ``k`` at ``6 k``, element
    ``k``'s rotation increment at ``6 k + 3``, ``band[r, col - r + 14]``).

    Element ``e`` adds ``g = m n_z d3 / e`` to node ``e`` and ``-g`` to node ``e+1``, with
    ``m = r_c - 1`` where it is compressed (0 elsewhere), ``n_z = S_z . (s - e_z - sigma0)``,
    ``s = Q d / l0``, ``e = l / l0`` (notation of :mod:`~hsa_elastica.physics.rod_tangent`;
    ``S_z`` is row z of the shear matrix, ``u = Q^T S_z`` in the lab frame, ``t = d / l``):

    * ``dg/dd = m / (e l0) d3 (u - n_z t / e)^T`` (``d = x_{e+1} - x_e``);
    * ``dg/dw_e = m / e (d3 (S_z x s)^T + n_z [-d2, d1, 0])`` (``dd3 = w_y d1 - w_x d2``);
    * through the twist strain ``ke_e``: the auxetic rest length and axial stiffness
      (``dg/dl0 = m d3 (n_z - S_z . s) / l``, ``dg/dS_zz = m r_z d3 / e``, their slopes from
      :func:`~hsa_elastica.physics.auxetic_tangent.rest_slopes`, row ``i`` of the coupling
      table ``c``; ``i < 0``: no coupling) and the ratio ``r_c`` itself (``dg/dm = n_z d3 / e``
      times ``slope`` inside the clip range), each chained to the rotations of the elements
      beside the Voronoi regions (Eq. 4: ``dkv_j = -h / pv_j [M_j (w_{j+1} - R_j w_j)]_z``).

    Whether an element is compressed is held (the switch at ``r_z = 0`` has no derivative; the
    kink is where the two sides meet, as for a hard clip).  ``work`` is the law's workspace:
    the strains and multipliers of this state are written into it as the forces write them
    (:func:`compression_factors`); ``rod`` must hold the auxetic rest configuration of this
    state (the coupling's update has run)."""
    n = rod.rest_lengths.shape[0]
    x, q, shear = rod.position, rod.director, rod.shear_matrix
    for e in range(n):  # the axial strains, then the multipliers, as the forces take them
        work[3, e] = _axial(rod, e) - 1.0 - rod.rest_sigma[2, e]
    compression_factors(q, law, work[:, :n])
    resp = np.zeros((2, 6, n))  # rows' response to ke_e: through the coupling, through r_c
    rest = rest_law(c, i) if i >= 0 else (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for e in range(n):
        m = work[4, e] - 1.0
        if work[3, e] >= 0.0 or m == 0.0:  # in tension (r_c does not apply) or r_c = 1
            continue
        l0 = rod.rest_lengths[e]
        d = (x[0, e + 1] - x[0, e], x[1, e + 1] - x[1, e], x[2, e + 1] - x[2, e])
        length = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) + 1e-14
        s = ((q[0, 0, e] * d[0] + q[0, 1, e] * d[1] + q[0, 2, e] * d[2]) / l0,
             (q[1, 0, e] * d[0] + q[1, 1, e] * d[1] + q[1, 2, e] * d[2]) / l0,
             (q[2, 0, e] * d[0] + q[2, 1, e] * d[1] + q[2, 2, e] * d[2]) / l0)
        r = (s[0] - rod.rest_sigma[0, e], s[1] - rod.rest_sigma[1, e], work[3, e])
        sz = (shear[2, 0, e], shear[2, 1, e], shear[2, 2, e])
        nz = sz[0] * r[0] + sz[1] * r[1] + sz[2] * r[2]
        dil = length / l0
        a = (sz[1] * s[2] - sz[2] * s[1], sz[2] * s[0] - sz[0] * s[2],
             sz[0] * s[1] - sz[1] * s[0])  # S_z x s
        for p in range(3):
            d3 = q[2, p, e]
            for col in range(3):
                pos = m / (dil * l0) * d3 * ((sz[0] * q[0, col, e] + sz[1] * q[1, col, e]
                                              + sz[2] * q[2, col, e]) - nz / dil * d[col] / length)
                rot = m / dil * (d3 * a[col] + nz * (-q[1, p, e] if col == 0 else
                                                     (q[0, p, e] if col == 1 else 0.0)))
                for side in range(2):  # node e (+g), node e+1 (-g)
                    row = 6 * (e + side) + p
                    sign = 1.0 - 2.0 * side
                    band[row, 6 * e + col - row + HALF_BANDWIDTH] -= sign * pos
                    band[row, 6 * e + 6 + col - row + HALF_BANDWIDTH] += sign * pos
                    band[row, 6 * e + 3 + col - row + HALF_BANDWIDTH] += sign * rot
            g_l0 = m * d3 * (nz - (sz[0] * s[0] + sz[1] * s[1] + sz[2] * s[2])) / length
            g_s = m * r[2] * d3 / dil
            if i >= 0:
                dl0, ds = rest_slopes(c, i, e, rest)
                resp[0, p, e] = g_l0 * dl0 + g_s * ds[2]
                resp[0, 3 + p, e] = -resp[0, p, e]
            if law.slope != 0.0 and law.kappa_min < work[1, e] < law.kappa_max:
                resp[1, p, e] = nz * d3 / dil * law.slope
                resp[1, 3 + p, e] = -resp[1, p, e]
    _chain_twist(rod, law, c, i, resp, band)


@njit(cache=True, inline="always")  # type: ignore[misc]
def _axial(rod: RodTangentState, e: int) -> float:
    """``s_z = (Q d)_z / l0`` of element ``e`` [-] (PyElastica's ``sigma_z + 1``)."""
    x, q = rod.position, rod.director
    return ((q[2, 0, e] * (x[0, e + 1] - x[0, e]) + q[2, 1, e] * (x[1, e + 1] - x[1, e])
             + q[2, 2, e] * (x[2, e + 1] - x[2, e])) / rod.rest_lengths[e])


@njit(cache=True)  # type: ignore[misc]
def _chain_twist(rod: RodTangentState, law: CompressionRow, c: CouplingTable, i: int,
                 resp: NDArray[np.float64], band: NDArray[np.float64]) -> None:
    """The rows' responses ``resp[k, :, e]`` to ``ke_e`` (``k`` = 0: the coupling's twist
    strain, 1: the law's own) chained to the rotations: ``ke_e = (kv_{e-1} + kv_e) / 2``,
    ``kv_j = -h theta_{j,z} / pv_j`` (Eq. 3-4), ``dtheta_j = M_j (w_{j+1} - R_j w_j)``."""
    q = rod.director
    rot = np.empty((3, 3))
    m_log = np.empty((3, 3))
    theta = np.empty(3)
    y = np.empty(9)
    mr = np.empty(3)
    for j in range(rod.rest_voronoi_lengths.shape[0]):
        if not (resp[:, :, j].any() or resp[:, :, j + 1].any()):
            continue  # neither element beside the region compressed: nothing to chain
        voronoi_curvature(q, j, rod.rest_voronoi_lengths[j], rot, theta)
        log_map_jacobian(theta[0], theta[1], theta[2], m_log)
        for t in range(3):  # row z of M_j R_j (the turn of element j)
            mr[t] = m_log[2, 0] * rot[0, t] + m_log[2, 1] * rot[1, t] + m_log[2, 2] * rot[2, t]
        for k in range(2):
            if k == 0:
                if i < 0:
                    continue
                f = -c.handedness[i] / c.printed_voronoi[i][j]
            else:
                f = -law.handedness / law.printed_voronoi[j]
            # nodes j, j+1, j+2: element j's rows and element j+1's, each ke moving by 1/2
            for r in range(3):
                y[r] = 0.5 * resp[k, r, j]
                y[3 + r] = 0.5 * (resp[k, 3 + r, j] + resp[k, r, j + 1])
                y[6 + r] = 0.5 * resp[k, 3 + r, j + 1]
            for r in range(9):
                if y[r] == 0.0:
                    continue
                row = 6 * j + 6 * (r // 3) + r % 3
                for s in range(3):
                    band[row, 6 * j + 3 + s - row + HALF_BANDWIDTH] -= y[r] * f * mr[s]
                    band[row, 6 * j + 9 + s - row + HALF_BANDWIDTH] += y[r] * f * m_log[2, s]


# --------------------------------------------------------------------------------------------
# operator
# --------------------------------------------------------------------------------------------
class AxialCompressionLaw(NoForces):
    """PyElastica forcing: axial stiffness ``r_c S_zz`` for compressed elements (see module).

    Parameters
    ----------
    law : AxialLawParams
        The law's parameters (keyword-only, as all arguments).
    handedness : int
        +1 / -1 (as the rod's auxetic coupling).
    kappa_h_min, kappa_h_max : float
        Clip range of the handed twist strain [rad/m] (``eps_min / C_eps``,
        ``eps_max / C_eps``; +-inf without auxetic coupling).

    Notes
    -----
    Add it *after* the :class:`~hsa_elastica.physics.auxetic_coupling.AuxeticCoupling` of the rod.  After each
    application :attr:`factor` holds the per-element multiplier of the axial force (r_c or 1).
    """

    def __init__(
        self,
        *,
        law: AxialLawParams,
        handedness: int = 1,
        kappa_h_min: float = -math.inf,
        kappa_h_max: float = math.inf,
    ) -> None:
        super().__init__()
        if not isinstance(law, AxialLawParams):
            raise ParameterError(f"law = {law!r} is invalid: must be an AxialLawParams")
        if handedness not in (1, -1):
            raise ParameterError(f"handedness = {handedness!r} is invalid: must be +1 or -1")
        if not (kappa_h_min <= kappa_h_max) or math.isnan(kappa_h_min) or math.isnan(kappa_h_max):
            raise ParameterError(
                f"kappa_h_min, kappa_h_max = {kappa_h_min!r}, {kappa_h_max!r} are invalid: "
                f"need kappa_h_min <= kappa_h_max"
            )
        law.check_range(kappa_h_min, kappa_h_max)
        self.law = law
        self.handedness = int(handedness)
        self.kappa_h_min = float(kappa_h_min)
        self.kappa_h_max = float(kappa_h_max)
        self._row: CompressionRow | None = None
        self._work: NDArray[np.float64] = np.zeros((WORK_ROWS, 0))
        self.factor: NDArray[np.float64] = np.ones(0)

    @classmethod
    def kwargs_for(cls, rod: RodParams, law: AxialLawParams) -> dict[str, Any]:
        """Keyword arguments for ``sim.add_forcing_to(rod).using(AxialCompressionLaw, ...)``."""
        lo, hi = twist_range(rod)
        return dict(law=law, handedness=rod.handedness, kappa_h_min=lo, kappa_h_max=hi)

    def _capture(self, system: RodType) -> None:
        n = int(system.n_elems)
        self._row = CompressionRow(
            np.array(system.rest_voronoi_lengths, dtype=np.float64, copy=True),
            float(self.handedness), self.kappa_h_min, self.kappa_h_max,
            self.law.compression_ratio, self.law.compression_ratio_slope,
        )
        self._work = np.zeros((WORK_ROWS, n))
        self._work[4] = 1.0
        self.factor = self._work[4]

    def apply_forces(self, system: RodType, time: np.float64 = np.float64(0.0)) -> None:
        """Add the compression correction to ``system.external_forces`` in place."""
        if self._row is None:
            self._capture(system)
        assert self._row is not None
        compression_law_forces(
            system.director_collection, system.sigma, system.rest_sigma,
            system.internal_stress, system.dilatation, system.external_forces, self._row,
            self._work,
        )

    def apply_torques(self, system: RodType, time: np.float64 = np.float64(0.0)) -> None:
        """The law applies no torque."""
