"""Stability of a static equilibrium of :class:`~hsa_elastica.engines.statics.StaticSolver`
(the smallest real part among the eigenvalues of ``M^-1 K`` nearest zero, ``K = -J``; see the
static solver's module docstring) and the switch of an unstable (buckled) equilibrium to a
stable branch."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

__all__ = ["stability", "stabilize"]


#: Arnoldi restarts the search for a negative eigenvalue far from zero may take (about 12
#: solves each): it converges in 13-19 solves when there is one (robot on a plate past its
#: buckling onset), and gives up after about 40 when the spectrum is positive
NEGATIVE_SEARCH_RESTARTS = 4

#: an eigenvalue smaller in magnitude than this fraction of the largest of those found is a
#: zero mode (a rigid motion the supports leave free, such as the twist of a rod whose base
#: turns freely and whose far end is free: -1.2e-11 against 4e3 1/s^2, its sign round-off),
#: neutral rather than unstable; a pose near a buckling onset keeps its small eigenvalue (1e-3
#: 1/s^2 is 1e-6 of the others, far above this)
ZERO_MODE = 1e-9


def stability(solver: Any, angles: NDArray[np.float64], k: int = 3, *, vectors: bool = True
              ) -> tuple[float, NDArray[np.float64]]:
    """Smallest real part [1/s^2] among the ``k`` eigenvalues of ``M^-1 K`` nearest zero
    (shift-invert Arnoldi on the similar matrix ``M^-1/2 K M^-1/2`` with the last Newton
    factorisation when there is one) and its eigenvector (unknowns' layout, real part;
    empty with ``vectors=False``), at the solver's current state.

    When those are all positive, a second, short search looks for a negative eigenvalue
    farther from zero (the leftmost ``1 / lambda`` of the same operator): far past a
    buckling onset the unstable modes' eigenvalues are larger in magnitude than the smallest
    positive ones (a robot pressed on a frictionless plate: -9.5e4 against +2.8e4, 1/s^2), so
    the ``k`` nearest zero were all positive and the pose was called stable.  A negative one
    found there is returned instead.  Zero modes (rigid motions the supports leave free) are
    neutral: they are left out (:data:`ZERO_MODE`)."""
    a = np.asarray(angles, dtype=np.float64)
    lu = getattr(solver, "_lu", None)
    if lu is None:
        f = solver.evaluate(a).copy()
        lu = solver.factorize(solver.jacobian(a, f))
        solver._lu = lu
    s = 1.0 / np.sqrt(solver.inertia)
    n = solver.n
    # A = S K S with K = -J:  A^-1 v = -S^-1 J^-1 S^-1 v
    op_inv = spla.LinearOperator((n, n), matvec=lambda v: -lu.solve(np.ravel(v) / s) / s,
                                 dtype=np.float64)
    # A itself is only needed by ARPACK's interface in shift-invert mode (never applied)
    dummy = spla.LinearOperator((n, n), matvec=lambda v: np.zeros(n), dtype=np.float64)
    rng = np.random.default_rng(0)
    try:
        res = spla.eigs(dummy, k=k, sigma=0.0, which="LM", OPinv=op_inv,
                        return_eigenvectors=vectors, v0=rng.standard_normal(n), tol=1e-6,
                        ncv=min(n - 1, 2 * k + 6))
    except (RuntimeError, ValueError, spla.ArpackNoConvergence):
        jac = solver.jacobian(a, solver.evaluate(a).copy())
        dense = -(sp.diags(s) @ jac @ sp.diags(s)).toarray()
        every, every_vec = np.linalg.eig(dense)  # every eigenvalue: no second search needed
        return _lowest(every, every_vec if vectors else None, s)
    vals: NDArray[Any] = res[0] if vectors else res
    vecs: NDArray[Any] | None = res[1] if vectors else None
    lowest = _lowest(vals, vecs, s)
    if lowest[0] > 0.0:
        far = _negative_far_from_zero(dummy, op_inv, n, vectors)
        scale = ZERO_MODE * np.abs(np.real(vals)).max(initial=0.0)
        if far is not None and abs(np.real(far[0][0])) > scale:  # not the zero mode again
            return _lowest(far[0], far[1], s)
    return lowest


def _lowest(vals: NDArray[Any], vecs: NDArray[Any] | None, s: NDArray[np.float64]
            ) -> tuple[float, NDArray[np.float64]]:
    """The smallest real part among ``vals`` that is not a zero mode (:data:`ZERO_MODE`;
    all of them if every one is), and its eigenvector (real part, unknowns' layout)."""
    re = np.real(np.asarray(vals))
    keep = np.abs(re) > ZERO_MODE * np.abs(re).max(initial=0.0)
    re = np.where(keep, re, np.inf) if keep.any() else re
    i = int(np.argmin(re))
    vec = np.asarray(vecs[:, i].real * s) if vecs is not None else np.zeros(0)
    return float(np.real(vals[i])), vec


def _negative_far_from_zero(dummy: Any, op_inv: Any, n: int, vectors: bool
                            ) -> tuple[NDArray[Any], NDArray[Any] | None] | None:
    """The eigenvalue with the most negative ``1 / lambda`` (a negative ``lambda``, the
    nearest zero among the negative ones), if the short search finds one, with its vector."""
    if n < 4:
        return None
    try:
        res = spla.eigs(dummy, k=1, sigma=0.0, which="SR", OPinv=op_inv,
                        return_eigenvectors=vectors, v0=np.random.default_rng(1).standard_normal(n),
                        tol=1e-4, ncv=min(n - 1, 12), maxiter=NEGATIVE_SEARCH_RESTARTS)
    except spla.ArpackNoConvergence as exc:  # a positive spectrum: no leftmost value converges
        res = (exc.eigenvalues, exc.eigenvectors) if vectors else exc.eigenvalues
    except (RuntimeError, ValueError):
        return None
    vals = np.asarray(res[0] if vectors else res)
    if vals.size == 0 or np.min(np.real(vals)) >= 0.0:
        return None
    return vals, (np.asarray(res[1]) if vectors else None)


def stabilize(solver: Any, out: Any, branch_rule: Any) -> None:
    """If the equilibrium ``out`` of ``solver`` is unstable (an eigenvalue of ``M^-1 K`` with a
    negative real part), switch to a stable branch: Newton from kicks along the divergence
    mode, ``branch_rule(solver, candidates)`` picking among the stable candidates (default: the
    first); ``out`` is updated."""
    lam, _ = stability(solver, out.angles, solver.stability_modes, vectors=False)
    out.min_eigenvalue, out.stable = lam, lam > 0.0
    if out.stable:
        return
    lam, vec = stability(solver, out.angles, solver.stability_modes)
    base = solver.pose()
    candidates: list[tuple[tuple[NDArray[np.float64], ...], float]] = []
    rot = np.abs(vec[solver.is_torque]).max(initial=0.0)
    for kick in solver.branch_kicks:
        if candidates:
            break
        amp = kick / max(rot, 1e-300)  # of the largest rotation along the mode
        for sign in (1.0, -1.0):
            solver.set_pose(base)
            solver.move(vec, sign * amp)
            ok, it = solver.newton(out.angles, max_iter=80, shift=2.0 * abs(lam))
            out.iterations += it
            if not ok:
                continue
            lam2, _ = stability(solver, out.angles, solver.stability_modes, vectors=False)
            if lam2 > 0.0:
                candidates.append((solver.pose(), lam2))
    if not candidates:
        solver.set_pose(base)
        out.message = "unstable equilibrium; no stable branch found"
        return
    pick = 0 if branch_rule is None else int(branch_rule(solver, [c[0] for c in candidates]))
    solver.set_pose(candidates[pick][0])
    out.min_eigenvalue, out.stable, out.branch_switched = candidates[pick][1], True, True
    out.residual_force_N, out.residual_torque_Nm = solver.norms(solver.evaluate(out.angles))
