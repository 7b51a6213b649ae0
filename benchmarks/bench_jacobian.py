"""Newton's Jacobian of the static solver: hybrid (rods' consistent tangents) vs coloured
finite differences, side by side in one run on the paper robot.

Both solvers (``StaticSolver(jacobian="tangent")`` and ``jacobian="fd"``) are built on copies
of one compiled robot; in alternation (``--reps`` rounds, medians) the run times

* one force evaluation (the residual) and one Jacobian of each kind, in units of the force
  evaluation, at a randomly deformed pose,
* the static solve of each of the seven motion primitives at magnitude 0.5 and 1 from the
  assembly pose,

and prints the largest difference between the two solvers' equilibria (node positions [m],
directors, platform) and their Newton iterations.  Then the same rows for the hybrid Jacobian
with the joints' exact tangents (the default) against the hybrid with the joints by coloured
differences (``make_hybrid(solver, joint_tangent=False)``, the Jacobian before the joints had
tangents): :func:`joint_tangent_rows`.  BLAS is limited to one thread.

Run: python benchmarks/bench_jacobian.py [--reps 5]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from hsa_elastica.engines.compile import compile_simulator  # noqa: E402
from hsa_elastica.engines.statics import StaticSolver  # noqa: E402
from hsa_elastica.engines.statics_hybrid import make_hybrid  # noqa: E402
from hsa_elastica.params import paper_robot_params  # noqa: E402
from hsa_elastica.robots.builders import build_robot  # noqa: E402
from hsa_elastica.robots.primitives import PRIMITIVES, primitive_angles  # noqa: E402


def _median_time(fn, reps: int) -> float:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return float(np.median(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    p = paper_robot_params()
    model = compile_simulator(build_robot(p, [0.0] * 4).simulator)
    solvers = {k: StaticSolver(model, state=model.state.copy(), jacobian=k)
               for k in ("tangent", "fd")}
    tan = solvers["tangent"]
    print(f"unknowns {tan.n}; colours: full {tan.n_colors}, remainder "
          f"{tan.n_colors_external}, joints-only {tan.n_colors_joints}")
    rng = np.random.default_rng(3)
    dx = np.where(tan.is_torque, 5e-2, 5e-4) * rng.standard_normal(tan.n)
    a = np.array([0.4, -0.3, 0.6, 0.2])
    start = {k: s.pose() for k, s in solvers.items()}
    for s in solvers.values():
        s.jit = True
        s.move(dx)
        f0 = s.evaluate(a).copy()
        s.jacobian(a, f0)  # compile
    t_eval, t_jac = {}, {}
    for _ in range(args.reps):
        for k, s in solvers.items():
            f0 = s.evaluate(a).copy()
            t_eval.setdefault(k, []).append(_median_time(lambda s=s: s.evaluate(a), 20))
            t_jac.setdefault(k, []).append(
                _median_time(lambda s=s, f0=f0: s.jacobian(a, f0), 5))
    ev = float(np.median(t_eval["fd"] + t_eval["tangent"]))
    print(f"force evaluation {ev * 1e6:.1f} us")
    for k in solvers:
        tj = float(np.median(t_jac[k]))
        print(f"  Jacobian {k:8s} {tj * 1e6:8.1f} us = {tj / ev:5.1f} force evaluations")
    angles = [primitive_angles(name, mag, p) for name in PRIMITIVES for mag in (0.5, 1.0)]
    times: dict[str, list[float]] = {k: [] for k in solvers}
    iters: dict[str, int] = {k: 0 for k in solvers}
    dpos = drot = 0.0
    for _ in range(args.reps):
        for target in angles:
            poses = {}
            for k, s in solvers.items():
                s.set_pose(start[k])
                s.angles = np.zeros(s.n_motors)
                t0 = time.perf_counter()
                out = s.solve(np.asarray(target, dtype=np.float64))
                times[k].append(time.perf_counter() - t0)
                iters[k] += out.iterations
                poses[k] = s.pose()
            dpos = max(dpos, float(np.abs(poses["tangent"][0] - poses["fd"][0]).max()))
            drot = max(drot, max(float(np.abs(x - y).max())
                                 for x, y in zip(poses["tangent"][1:], poses["fd"][1:])))
    for k in solvers:
        print(f"  static solve {k:8s} median {np.median(times[k]) * 1e3:6.1f} ms per pose, "
              f"Newton iterations {iters[k] // args.reps} over {len(angles)} poses")
    print(f"largest difference tangent - fd: positions {dpos:.2e} m, other pose arrays {drot:.2e}")
    joint_tangent_rows(model, args.reps)


def joint_tangent_rows(model, reps: int) -> None:  # type: ignore[no-untyped-def]
    """The hybrid Jacobian with the joints' exact tangents ("joint tangent") against the
    hybrid with the joints by coloured forward differences ("joint fd"), side by side:
    us per Jacobian and in force evaluations, static solve ms per pose, Newton iterations and
    the largest difference of the equilibria."""
    p = paper_robot_params()
    solvers = {k: StaticSolver(model, state=model.state.copy()) for k in ("joint tangent", "joint fd")}
    solvers["joint fd"].hybrid = make_hybrid(solvers["joint fd"], joint_tangent=False)
    print(f"joints: colours {solvers['joint tangent'].n_colors_joints} (tangent) vs "
          f"{solvers['joint fd'].n_colors_joints} (differenced)")
    rng = np.random.default_rng(3)
    ref = solvers["joint tangent"]
    dx = np.where(ref.is_torque, 5e-2, 5e-4) * rng.standard_normal(ref.n)
    a = np.array([0.4, -0.3, 0.6, 0.2])
    start = {k: s.pose() for k, s in solvers.items()}
    for s in solvers.values():
        s.jit = True
        s.move(dx)
        s.jacobian(a, s.evaluate(a).copy())  # compile
    t_eval: list[float] = []
    t_jac: dict[str, list[float]] = {k: [] for k in solvers}
    for _ in range(reps):
        for k, s in solvers.items():
            f0 = s.evaluate(a).copy()
            t_eval.append(_median_time(lambda s=s: s.evaluate(a), 20))
            t_jac[k].append(_median_time(lambda s=s, f0=f0: s.jacobian(a, f0), 5))
    ev = float(np.median(t_eval))
    print(f"force evaluation {ev * 1e6:.1f} us")
    for k in solvers:
        tj = float(np.median(t_jac[k]))
        print(f"  Jacobian {k:13s} {tj * 1e6:8.1f} us = {tj / ev:5.1f} force evaluations")
    angles = [primitive_angles(name, mag, p) for name in PRIMITIVES for mag in (0.5, 1.0)]
    times: dict[str, list[float]] = {k: [] for k in solvers}
    iters = {k: 0 for k in solvers}
    diff = 0.0
    for _ in range(reps):
        for target in angles:
            poses = {}
            for k, s in solvers.items():
                s.set_pose(start[k])
                s.angles = np.zeros(s.n_motors)
                t0 = time.perf_counter()
                out = s.solve(np.asarray(target, dtype=np.float64))
                times[k].append(time.perf_counter() - t0)
                iters[k] += out.iterations
                poses[k] = s.pose()
            diff = max(diff, max(float(np.abs(x - y).max())
                                 for x, y in zip(poses["joint tangent"], poses["joint fd"])))
    for k in solvers:
        print(f"  static solve {k:13s} median {np.median(times[k]) * 1e3:6.1f} ms per pose, "
              f"Newton iterations {iters[k] // reps} over {len(angles)} poses")
    print(f"largest difference of the equilibria, joint tangent - joint fd: {diff:.2e}")


if __name__ == "__main__":
    main()
