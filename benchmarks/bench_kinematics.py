"""Speed of the SPCS kinematics (paper Sections III–IV): FK, Jacobian, LM vs the Eq. 14 iteration.

Case of the paper's simulation study (IV-D): 11 variables (n_S = 2), 25 poses along a 0.1 m rod.
Targets: LM fit warm < 20 ms. The gradient iteration of Eq. 14 (lambda = 0.2, as in the
paper) is run until it reaches the LM fit's accuracy in q or an iteration cap, and timed beside it.

Run: python benchmarks/bench_kinematics.py
"""

from __future__ import annotations

import time

import numpy as np

from hsa_elastica.spcs import (
    SPCSModel,
    inverse_kinematics_gradient,
    inverse_kinematics_lm,
)


def best_of(fn, repeat: int = 7, number: int = 1) -> float:  # type: ignore[no-untyped-def]
    """Smallest mean wall time per call [s] over ``repeat`` rounds of ``number`` calls."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return min(times)


def main() -> None:
    L = 0.1
    model = SPCSModel(L, 2)
    rng = np.random.default_rng(0)
    q_true = np.r_[0.4, 12.0, 0.1, [5.0, -3.0, 0.03, -0.02, 2.0, 4.0, -0.01, 0.02]] + 0.01 * rng.normal(size=11)
    s = np.linspace(L / 25, L, 25)
    poses = model.forward(q_true, s)

    # warm-up (numba compilation / cache load)
    model.forward(q_true, s)
    model.forward_with_jacobian(q_true, s)
    inverse_kinematics_lm(model, poses, s)
    inverse_kinematics_gradient(model, poses, s, max_iter=10)

    print(f"SPCS kinematics benchmark: n_q = {model.n_q}, N = {len(s)} poses, L = {L} m")
    t_fk1 = best_of(lambda: model.forward(q_true, 0.05), number=2000)
    t_fk = best_of(lambda: model.forward(q_true, s), number=2000)
    t_fkj = best_of(lambda: model.forward_with_jacobian(q_true, s), number=2000)
    s_many = np.linspace(0.0, L, 1000)
    t_fk_many = best_of(lambda: model.forward(q_true, s_many), number=200)
    print(f"  FK, 1 arc length (incl. validation)   : {t_fk1 * 1e6:8.1f} us/call")
    print(f"  FK, 25 arc lengths                    : {t_fk * 1e6:8.1f} us/call")
    print(f"  FK, 1000 arc lengths                  : {t_fk_many * 1e6:8.1f} us/call "
          f"({t_fk_many / 1000 * 1e9:.0f} ns per pose)")
    print(f"  FK + analytic Jacobian, 25 poses      : {t_fkj * 1e6:8.1f} us/call")

    res = inverse_kinematics_lm(model, poses, s)
    t_lm = best_of(lambda: inverse_kinematics_lm(model, poses, s), repeat=15)
    err_lm = float(np.abs(res.q - q_true).max())
    res_fix = inverse_kinematics_lm(model, poses, s, phi0=q_true[0])
    t_lm_fix = best_of(lambda: inverse_kinematics_lm(model, poses, s, phi0=q_true[0]), repeat=15)
    print(f"  LM fit from rest (warm)               : {t_lm * 1e3:8.2f} ms  ({res.n_iterations} evaluations, "
          f"max|q - q_true| = {err_lm:.1e}, target < 20 ms: {'OK' if t_lm < 0.02 else 'MISSED'})")
    print(f"  LM fit, phi0 fixed (warm)             : {t_lm_fix * 1e3:8.2f} ms  "
          f"(max|q - q_true| = {np.abs(res_fix.q - q_true).max():.1e})")

    # Eq. 14 gradient iteration, lambda = 0.2 (paper), resumed in chunks until it reaches the
    # LM accuracy (or a tolerance of 1e-8 if LM is more accurate than that) or the cap.
    target = max(err_lm, 1e-8)
    chunk, cap = 5000, 400_000
    q = np.zeros(model.n_q)
    n_it = 0
    t0 = time.perf_counter()
    while n_it < cap:
        r = inverse_kinematics_gradient(model, poses, s, q0=q, step_size=0.2, max_iter=chunk, tol=1e-300)
        q = r.q
        n_it += r.n_iterations
        if np.abs(q - q_true).max() <= target:
            break
    t_gd = time.perf_counter() - t0
    err_gd = float(np.abs(q - q_true).max())
    reached = err_gd <= target
    print(f"  Eq. 14 gradient iteration (lambda=0.2): {t_gd * 1e3:8.1f} ms  ({n_it} iterations, "
          f"{t_gd / n_it * 1e6:.1f} us/iteration, max|q - q_true| = {err_gd:.1e}"
          f"{'' if reached else ', target NOT reached'})")
    print(f"  ratio gradient / LM time              : {t_gd / t_lm:8.0f}x  (to max|q - q_true| <= {target:.0e})")


if __name__ == "__main__":
    main()
