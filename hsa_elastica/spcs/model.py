"""The SPCS kinematic model of one HSA rod: strain basis, forward kinematics, Jacobians (Eq. 9-13).

:class:`SPCSModel` maps a configuration ``q = (phi0, q_CS, q_PCS_1..n_S)`` to segment strains
(Eq. 10-11) and poses along the rod (Eq. 13, product of exponentials), with the analytic pose
Jacobian and the quaternion-pose Jacobian ``J_A`` of Section IV-B.  Conventions: see
:mod:`hsa_elastica.spcs`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from hsa_elastica.physics.rotations import rotation_matrix_to_quaternion
from hsa_elastica.spcs.lie import (
    KinematicsError,
    _exp_se3_kernel,
    _finite_array,
    _left_jacobian_kernel,
    _mm3,
)

__all__ = ["REST_STRAIN", "STRAIN_NAMES", "SPCSModel"]

FloatArray = NDArray[np.float64]

STRAIN_NAMES: tuple[str, ...] = ("kappa_x", "kappa_y", "kappa_z", "sigma_x", "sigma_y", "sigma_z")
REST_STRAIN: FloatArray = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
REST_STRAIN.flags.writeable = False


# --------------------------------------------------------------------------------------------
# Forward kinematics and Jacobian (Eq. 13) for many arc lengths
# --------------------------------------------------------------------------------------------
@njit(cache=True)
def _strains_kernel(q: FloatArray, rest: FloatArray, amap: FloatArray) -> FloatArray:
    n_seg = amap.shape[0]
    n_q = amap.shape[2]
    xi = np.empty((n_seg, 6))
    for j in range(n_seg):
        for r in range(6):
            acc = rest[r]
            for m in range(n_q):
                acc += amap[j, r, m] * q[m]
            xi[j, r] = acc
    return xi


@njit(cache=True)
def _proximal_frames(
    q: FloatArray, xi: FloatArray, amap: FloatArray, seg_start: FloatArray, want_jac: bool
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Segment-start poses and accumulated twists of the product of exponentials (Eq. 13).

    Returns ``Rb`` (n_S + 1, 3, 3), ``pb`` (n_S + 1, 3): the base-frame pose
    ``R_z(phi0) E_1 ... E_j`` at the start of segment j (index n_S = tip), and ``G``
    (n_S + 1, 6, n_q): the summed base-frame twists (angular, linear) of the full segments
    before j (zero if not ``want_jac``).
    """
    n_seg = amap.shape[0]
    n_q = amap.shape[2]
    Rb = np.zeros((n_seg + 1, 3, 3))
    pb = np.zeros((n_seg + 1, 3))
    c0 = math.cos(q[0])
    s0 = math.sin(q[0])
    Rb[0, 0, 0] = c0
    Rb[0, 0, 1] = -s0
    Rb[0, 1, 0] = s0
    Rb[0, 1, 1] = c0
    Rb[0, 2, 2] = 1.0
    Rt = np.empty((3, 3))
    pt = np.empty(3)
    Jl = np.empty((6, 6))
    JA = np.empty((6, n_q))
    G = np.zeros((n_seg + 1, 6, n_q))

    for j in range(n_seg):
        length = seg_start[j + 1] - seg_start[j]
        _exp_se3_kernel(xi[j], length, Rt, pt)
        _mm3(Rb[j], Rt, Rb[j + 1])
        for i in range(3):
            pb[j + 1, i] = pb[j, i] + Rb[j, i, 0] * pt[0] + Rb[j, i, 1] * pt[1] + Rb[j, i, 2] * pt[2]
        if want_jac:
            _left_jacobian_kernel(xi[j], length, Jl)
            _twist_columns(Jl, amap[j], length, Rb[j], pb[j], JA)
            for r in range(6):
                for m in range(n_q):
                    G[j + 1, r, m] = G[j, r, m] + JA[r, m]
    return Rb, pb, G


@njit(cache=True)
def _fk_jac_kernel(
    q: FloatArray,
    rest: FloatArray,
    amap: FloatArray,
    seg_start: FloatArray,
    s: FloatArray,
    want_jac: bool,
    T_out: FloatArray,
    J_out: FloatArray,
) -> None:
    """Poses T_B(s_n) (Eq. 13) and, if ``want_jac``, the analytic pose Jacobian.

    Product of exponentials: T(s) = R_z(phi0) E_1 ... E_{i-1} exp(h hat(xi_i)), h = s - s_{i-1}.
    A strain change dxi_j of segment j with proximal frame T_{j-1} and length l gives the base-frame
    twist Ad_{T_{j-1}} J_l(l xi_j) l dxi_j (left Jacobian); phi0 gives the twist (e_z, 0). With a
    base-frame twist (w, v): dR = hat(w) R, dp = v + w x p.
    """
    n_seg = amap.shape[0]
    n_q = amap.shape[2]
    xi = _strains_kernel(q, rest, amap)
    Rb, pb, G = _proximal_frames(q, xi, amap, seg_start, want_jac)
    Rt = np.empty((3, 3))
    pt = np.empty(3)
    Jl = np.empty((6, 6))
    JA = np.empty((6, n_q))

    R = np.empty((3, 3))
    p = np.empty(3)
    for n in range(s.shape[0]):
        sn = s[n]
        iseg = 0
        while iseg < n_seg - 1 and sn >= seg_start[iseg + 1]:
            iseg += 1
        h = sn - seg_start[iseg]
        _exp_se3_kernel(xi[iseg], h, Rt, pt)
        _mm3(Rb[iseg], Rt, R)
        for i in range(3):
            p[i] = pb[iseg, i] + Rb[iseg, i, 0] * pt[0] + Rb[iseg, i, 1] * pt[1] + Rb[iseg, i, 2] * pt[2]
        for i in range(3):
            for j in range(3):
                T_out[n, i, j] = R[i, j]
            T_out[n, i, 3] = p[i]
            T_out[n, 3, i] = 0.0
        T_out[n, 3, 3] = 1.0
        if want_jac:
            _left_jacobian_kernel(xi[iseg], h, Jl)
            _twist_columns(Jl, amap[iseg], h, Rb[iseg], pb[iseg], JA)
            for m in range(n_q):
                w0 = G[iseg, 0, m] + JA[0, m]
                w1 = G[iseg, 1, m] + JA[1, m]
                w2 = G[iseg, 2, m] + JA[2, m]
                if m == 0:
                    w2 += 1.0  # phi0: rotation about the base z axis through the origin
                v0 = G[iseg, 3, m] + JA[3, m]
                v1 = G[iseg, 4, m] + JA[4, m]
                v2 = G[iseg, 5, m] + JA[5, m]
                J_out[n, 0, m] = v0 + w1 * p[2] - w2 * p[1]
                J_out[n, 1, m] = v1 + w2 * p[0] - w0 * p[2]
                J_out[n, 2, m] = v2 + w0 * p[1] - w1 * p[0]
                J_out[n, 3, m] = w0
                J_out[n, 4, m] = w1
                J_out[n, 5, m] = w2


@njit(cache=True)
def _twist_columns(
    Jl: FloatArray, amap_j: FloatArray, h: float, Rb: FloatArray, pb: FloatArray, out: FloatArray
) -> None:
    """out = Ad_{(Rb, pb)} J_l h amap_j, Ad = [[R, 0], [hat(p) R, R]] (angular, linear)."""
    n_q = amap_j.shape[1]
    loc = np.empty(6)
    for m in range(n_q):
        nonzero = False
        for r in range(6):
            if amap_j[r, m] != 0.0:
                nonzero = True
        if not nonzero:
            for r in range(6):
                out[r, m] = 0.0
            continue
        for r in range(6):
            acc = 0.0
            for k in range(6):
                acc += Jl[r, k] * amap_j[k, m]
            loc[r] = h * acc
        w0 = Rb[0, 0] * loc[0] + Rb[0, 1] * loc[1] + Rb[0, 2] * loc[2]
        w1 = Rb[1, 0] * loc[0] + Rb[1, 1] * loc[1] + Rb[1, 2] * loc[2]
        w2 = Rb[2, 0] * loc[0] + Rb[2, 1] * loc[1] + Rb[2, 2] * loc[2]
        out[0, m] = w0
        out[1, m] = w1
        out[2, m] = w2
        out[3, m] = Rb[0, 0] * loc[3] + Rb[0, 1] * loc[4] + Rb[0, 2] * loc[5] + pb[1] * w2 - pb[2] * w1
        out[4, m] = Rb[1, 0] * loc[3] + Rb[1, 1] * loc[4] + Rb[1, 2] * loc[5] + pb[2] * w0 - pb[0] * w2
        out[5, m] = Rb[2, 0] * loc[3] + Rb[2, 1] * loc[4] + Rb[2, 2] * loc[5] + pb[0] * w1 - pb[1] * w0


@njit(cache=True)
def _quat_pose_jacobian(T: FloatArray, J: FloatArray, chi: FloatArray, JA: FloatArray) -> None:
    """Pose vector chi = (eps_x, eps_y, eps_z, eta, p) and its Jacobian J_A (paper IV-B).

    With the base-frame rotational twist omega: d eps = (eta omega + omega x eps)/2,
    d eta = -omega . eps / 2.
    """
    n = T.shape[0]
    n_q = J.shape[2]
    for k in range(n):
        ex, ey, ez, eta = rotation_matrix_to_quaternion(T[k, :3, :3])
        chi[k, 0] = ex
        chi[k, 1] = ey
        chi[k, 2] = ez
        chi[k, 3] = eta
        for i in range(3):
            chi[k, 4 + i] = T[k, i, 3]
        for m in range(n_q):
            w0 = J[k, 3, m]
            w1 = J[k, 4, m]
            w2 = J[k, 5, m]
            JA[k, 0, m] = 0.5 * (eta * w0 + w1 * ez - w2 * ey)
            JA[k, 1, m] = 0.5 * (eta * w1 + w2 * ex - w0 * ez)
            JA[k, 2, m] = 0.5 * (eta * w2 + w0 * ey - w1 * ex)
            JA[k, 3, m] = -0.5 * (w0 * ex + w1 * ey + w2 * ez)
            for i in range(3):
                JA[k, 4 + i, m] = J[k, i, m]


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SPCSModel:
    """SPCS kinematic model of one HSA rod (Eq. 9–13).

    Parameters
    ----------
    length : float
        printed (initial) length ``L`` of the rod [m], > 0.
    n_segments : int
        number ``n_S`` >= 1 of piecewise constant strain segments.
    cs_strains : tuple of str
        names (from :data:`STRAIN_NAMES`) of the strains constant over the whole rod (Eq. 11,
        ``B_CS``); default twist and stretch.
    pcs_strains : tuple of str
        names of the strains constant per segment (``B_PCS``); default bend and shear.
    segment_lengths : tuple of float or None
        optional printed segment lengths [m] (each > 0, summing to ``length``); default equal.

    Notes
    -----
    ``q = (phi0, q_CS, q_PCS_1, ..., q_PCS_nS)`` has ``n_q = 1 + n_CS + n_S n_PCS`` entries;
    ``q = 0`` is the straight rod at rest. Default: 11 variables for ``n_S = 2``.
    """

    length: float
    n_segments: int = 2
    cs_strains: tuple[str, ...] = ("kappa_z", "sigma_z")
    pcs_strains: tuple[str, ...] = ("kappa_x", "kappa_y", "sigma_x", "sigma_y")
    segment_lengths: tuple[float, ...] | None = None
    _seg_start: FloatArray = field(init=False, repr=False, compare=False)
    _amap: FloatArray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        L = self.length
        if isinstance(L, bool) or not isinstance(L, (int, float, np.floating, np.integer)) or not (
            math.isfinite(float(L)) and float(L) > 0.0
        ):
            raise KinematicsError(f"SPCSModel.length = {L!r} is invalid: must be a finite number > 0 (m)")
        object.__setattr__(self, "length", float(L))
        nS = self.n_segments
        if isinstance(nS, bool) or not isinstance(nS, (int, np.integer)) or nS < 1:
            raise KinematicsError(f"SPCSModel.n_segments = {nS!r} is invalid: must be an integer >= 1")
        object.__setattr__(self, "n_segments", int(nS))
        cs = tuple(self.cs_strains)
        pcs = tuple(self.pcs_strains)
        for label, names in (("cs_strains", cs), ("pcs_strains", pcs)):
            for nm in names:
                if nm not in STRAIN_NAMES:
                    raise KinematicsError(
                        f"SPCSModel.{label} contains {nm!r}: allowed names are {', '.join(STRAIN_NAMES)}"
                    )
            if len(set(names)) != len(names):
                raise KinematicsError(f"SPCSModel.{label} = {names!r} contains duplicates")
        both = set(cs) & set(pcs)
        if both:
            raise KinematicsError(
                f"SPCSModel: strains {sorted(both)} are in both cs_strains and pcs_strains; "
                "each strain may be constant (CS) or piecewise constant (PCS), not both"
            )
        object.__setattr__(self, "cs_strains", cs)
        object.__setattr__(self, "pcs_strains", pcs)
        if self.segment_lengths is None:
            seg = np.linspace(0.0, self.length, self.n_segments + 1)
        else:
            lens = np.asarray(self.segment_lengths, dtype=np.float64)
            if lens.shape != (self.n_segments,) or not np.all(np.isfinite(lens)) or np.any(lens <= 0.0):
                raise KinematicsError(
                    f"SPCSModel.segment_lengths = {self.segment_lengths!r} is invalid: need "
                    f"{self.n_segments} finite lengths > 0 (m)"
                )
            if abs(lens.sum() - self.length) > 1e-9 * self.length:
                raise KinematicsError(
                    f"SPCSModel.segment_lengths sum to {lens.sum()!r} m: must equal length = {self.length!r} m"
                )
            object.__setattr__(self, "segment_lengths", tuple(float(v) for v in lens))
            seg = np.concatenate([[0.0], np.cumsum(lens)])
            seg[-1] = self.length
        seg.flags.writeable = False
        object.__setattr__(self, "_seg_start", seg)
        # xi_j = REST_STRAIN + A[j] q: columns (phi0, q_CS, q_PCS_0, ..., q_PCS_{nS-1})
        b_cs, b_pcs = self.strain_basis()
        n_cs, n_pcs = len(cs), len(pcs)
        amap = np.zeros((self.n_segments, 6, self.n_q))
        amap[:, :, 1 : 1 + n_cs] = b_cs
        for j in range(self.n_segments):
            start = 1 + n_cs + j * n_pcs
            amap[j, :, start : start + n_pcs] = b_pcs
        amap.flags.writeable = False
        object.__setattr__(self, "_amap", amap)

    # -- layout ---------------------------------------------------------------------------
    @property
    def n_q(self) -> int:
        """Number of configuration variables 1 + n_CS + n_S n_PCS."""
        return 1 + len(self.cs_strains) + self.n_segments * len(self.pcs_strains)

    @property
    def q_names(self) -> tuple[str, ...]:
        """Labels of q: ``phi0``, the CS names, then ``<name>[i]`` for segment i (0-based)."""
        names = ["phi0", *self.cs_strains]
        for j in range(self.n_segments):
            names += [f"{nm}[{j}]" for nm in self.pcs_strains]
        return tuple(names)

    @property
    def segment_starts(self) -> FloatArray:
        """Printed arc lengths of the segment boundaries, shape (n_S + 1,) [m]."""
        return self._seg_start

    @property
    def strain_map(self) -> FloatArray:
        """A of shape (n_S, 6, n_q) with xi_i = REST_STRAIN + A[i] q (Eq. 10; phi0 column zero)."""
        return self._amap

    def strain_basis(self) -> tuple[FloatArray, FloatArray]:
        """The bases (B_CS (6, n_CS), B_PCS (6, n_PCS)) of Eq. 11."""
        b_cs = np.zeros((6, len(self.cs_strains)))
        for c, nm in enumerate(self.cs_strains):
            b_cs[STRAIN_NAMES.index(nm), c] = 1.0
        b_pcs = np.zeros((6, len(self.pcs_strains)))
        for c, nm in enumerate(self.pcs_strains):
            b_pcs[STRAIN_NAMES.index(nm), c] = 1.0
        return b_cs, b_pcs

    # -- validation -----------------------------------------------------------------------
    def check_q(self, q: ArrayLike, name: str = "q") -> FloatArray:
        """Return q as a contiguous float array of length n_q or raise :class:`KinematicsError`."""
        qa = _finite_array(q, name)
        if qa.shape != (self.n_q,):
            raise KinematicsError(
                f"{name} has shape {qa.shape}: must be a 1-D array of length n_q = {self.n_q} "
                f"({', '.join(self.q_names)})"
            )
        return np.ascontiguousarray(qa)

    def check_s(self, s: ArrayLike, name: str = "s") -> FloatArray:
        """Return arc lengths as a 1-D array within [0, L] (m) or raise :class:`KinematicsError`."""
        sa = np.atleast_1d(_finite_array(s, name))
        if sa.ndim != 1:
            raise KinematicsError(f"{name} must be a scalar or 1-D array of arc lengths, got shape {sa.shape}")
        tol = 1e-12 * self.length
        bad = np.flatnonzero((sa < -tol) | (sa > self.length + tol))
        if bad.size:
            raise KinematicsError(
                f"{name}[{int(bad[0])}] = {sa[bad[0]]!r} m is outside the printed length: "
                f"must lie in [0, {self.length!r}] m"
            )
        return np.ascontiguousarray(np.clip(sa, 0.0, self.length))

    # -- kinematics -----------------------------------------------------------------------
    def strains(self, q: ArrayLike) -> FloatArray:
        """Strains xi_i of each segment (Eq. 10), shape (n_S, 6) [rad/m, -]."""
        return _strains_kernel(self.check_q(q), REST_STRAIN, self._amap)

    def q_from_strains(self, xi: ArrayLike, phi0: float = 0.0, *, atol: float = 1e-12) -> FloatArray:
        """Configuration q representing the segment strains ``xi`` (n_S, 6) and base angle ``phi0``.

        Raises if ``xi`` is not representable: CS strains must agree over segments and strains
        outside both bases must equal the rest strain (within ``atol``).
        """
        x = _finite_array(xi, "xi")
        if x.shape != (self.n_segments, 6):
            raise KinematicsError(f"xi must have shape (n_S, 6) = ({self.n_segments}, 6), got {x.shape}")
        A = self._amap
        q = np.zeros(self.n_q)
        q[0] = phi0
        dev = x - REST_STRAIN
        col = 1
        for nm in self.cs_strains:
            r = STRAIN_NAMES.index(nm)
            q[col] = dev[:, r].mean()
            col += 1
        for j in range(self.n_segments):
            for nm in self.pcs_strains:
                q[col] = dev[j, STRAIN_NAMES.index(nm)]
                col += 1
        back = REST_STRAIN + np.einsum("jrm,m->jr", A, q)
        err = np.abs(back - x).max()
        if err > atol:
            raise KinematicsError(
                f"xi is not representable by this SPCS basis (max deviation {err:.3g} > atol = {atol:g})"
            )
        return q

    def forward(self, q: ArrayLike, s: ArrayLike) -> FloatArray:
        """Poses T_B(s) (Eq. 13): (4, 4) for scalar s, else (n_s, 4, 4). Positions in m."""
        qa = self.check_q(q)
        sa = self.check_s(s)
        T = np.empty((len(sa), 4, 4))
        _fk_jac_kernel(qa, REST_STRAIN, self._amap, self._seg_start, sa, False, T, np.empty((0, 6, self.n_q)))
        return T[0] if np.ndim(s) == 0 else T

    def positions(self, q: ArrayLike, s: ArrayLike) -> FloatArray:
        """Backbone positions p(s) [m], (3,) for scalar s, else (n_s, 3)."""
        T = self.forward(q, s)
        return T[..., :3, 3]

    def forward_with_jacobian(self, q: ArrayLike, s: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """(T (n_s, 4, 4), J (n_s, 6, n_q)); J rows 0:3 = dp/dq, rows 3:6 = base-frame omega."""
        qa = self.check_q(q)
        sa = self.check_s(s)
        T = np.empty((len(sa), 4, 4))
        J = np.empty((len(sa), 6, self.n_q))
        _fk_jac_kernel(qa, REST_STRAIN, self._amap, self._seg_start, sa, True, T, J)
        if np.ndim(s) == 0:
            return T[0], J[0]
        return T, J

    def jacobian(self, q: ArrayLike, s: ArrayLike) -> FloatArray:
        """Analytic pose Jacobian, (6, n_q) for scalar s, else (n_s, 6, n_q).

        Rows 0:3: dp/dq [m per unit q]; rows 3:6: omega with dR = hat(omega dq) R (base frame).
        """
        return self.forward_with_jacobian(q, s)[1]

    def quaternion_jacobian(self, q: ArrayLike, s: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Pose vectors chi (n_s, 7) = (eps, eta, p) and the analytic J_A (n_s, 7, n_q) of IV-B."""
        qa = self.check_q(q)
        sa = self.check_s(s)
        T = np.empty((len(sa), 4, 4))
        J = np.empty((len(sa), 6, self.n_q))
        _fk_jac_kernel(qa, REST_STRAIN, self._amap, self._seg_start, sa, True, T, J)
        chi = np.empty((len(sa), 7))
        JA = np.empty((len(sa), 7, self.n_q))
        _quat_pose_jacobian(T, J, chi, JA)
        return chi, JA
