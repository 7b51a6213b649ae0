"""The bordered band LU of the implicit integrator and the static solver (``statics_linalg.bordered_factor`` /
``bordered_solve``, a numba port of LAPACK's ``dgbtf2`` with the Schur complement of the
platform) against numpy's dense LU solve of the same matrix, on a Jacobian of the moving robot
-- in the static solver's bordered band layout and in the one-block fallback used when rods
couple directly (no border)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp


@pytest.fixture(scope="module")
def engine():  # type: ignore[no-untyped-def]
    import gymnasium as gym

    import hsa_elastica  # noqa: F401  (registers the envs)

    env = gym.make("HSARobot-v1", discretization="coarse", integrator="implicit", motor_speed=None)
    env.reset(seed=0)
    for k in range(3):  # moving: a Jacobian of the step's iterate, not of the rest pose
        env.step(np.full(4, 0.3 * (k + 1), dtype=np.float32))
    eng = env.unwrapped.robot.engine
    assert eng._info[0] == 1  # a factorisation is held
    return eng


@pytest.mark.parametrize("layout", ["bordered", "one block"])
def test_band_lu_solves_like_a_dense_lu(engine, layout) -> None:  # type: ignore[no-untyped-def]
    from hsa_elastica.engines.statics_linalg import bordered_factor, bordered_solve

    s = engine.solver
    jw = engine._jw
    band = s.band
    try:
        if layout == "one block":
            s.band = None
        lu, plan = engine._factor_plan()
    finally:
        s.band = band
    if layout == "one block":
        assert lu.border.shape[0] == 0 and lu.bptr.shape[0] == 2
    else:
        assert lu.border.shape[0] == 6 and lu.bptr.shape[0] == 5  # the platform; four rods
    assert bordered_factor(jw.fd.data, jw.shift, plan, lu)
    dense = (sp.csc_matrix((jw.fd.data, s.indices, s.indptr), shape=(s.n, s.n))
             - sp.diags(jw.shift)).toarray()
    rhs = np.random.default_rng(0).normal(size=s.n)
    x = np.zeros(s.n)
    bordered_solve(lu, rhs, x, np.zeros(s.n))
    ref = np.linalg.solve(dense, rhs)
    # both are LU with partial pivoting of the same matrix: they agree to cond(J) x eps
    tol = np.linalg.cond(dense) * np.finfo(float).eps
    err = np.abs(x - ref).max() / np.abs(ref).max()
    assert err <= 10 * tol
