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


def stability(solver: Any, angles: NDArray[np.float64], k: int = 3, *, vectors: bool = True
              ) -> tuple[float, NDArray[np.float64]]:
    """Smallest real part [1/s^2] among the ``k`` eigenvalues of ``M^-1 K`` nearest zero
    (shift-invert Arnoldi on the similar matrix ``M^-1/2 K M^-1/2`` with the last Newton
    factorisation when there is one) and its eigenvector (unknowns' layout, real part;
    empty with ``vectors=False``), at the solver's current state."""
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
        vals, vecs = np.linalg.eig(dense)
        res = (vals, vecs) if vectors else vals
    vals = res[0] if vectors else res
    i = int(np.argmin(np.real(vals)))
    vec = np.asarray(res[1][:, i].real * s) if vectors else np.zeros(0)
    return float(np.real(vals[i])), vec


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
