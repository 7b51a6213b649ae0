"""Newton's Jacobian of a stack on rigid motor mounts: the hybrid Jacobian with the mounts'
chain rule (``engines/statics_mounts.py``) against the differences of the whole residual (the
Jacobian every stack took before: ``statics_hybrid.MOUNT_TANGENT = False``), side by side in
one run.

* the static solver on a two-stage stack (10 elements per rod, the envs' coarse
  discretization): the colours, one force evaluation and one Jacobian of each kind at a
  randomly deformed pose, and static solves from the assembly pose to ``--poses`` random motor
  commands (uniform in +-0.5 rad), in alternation (``--reps`` rounds, medians), with the
  largest difference of the two solvers' equilibria;
* env steps/s (CPU time of ``env.step``, ``bench_envs.run_env``) of ``HSAStack-v1`` (the
  implicit integrator, whose Newton matrix is the hybrid plan's) coarse under random actions,
  with the servo limit (``random-servo``, the env's default) and without it (``random``),
  and ``HSAStack-v0`` (the explicit stepper: no Newton matrix, a control row), each with the
  chain rule and without it (the flag held while the env is built and run), in alternation.

Prints ``uptime``'s load average before and after.  BLAS is limited to one thread.

Run: python benchmarks/bench_stack_jacobian.py [--reps 3] [--steps 150] [--poses 4]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import hsa_elastica.engines.statics_hybrid as statics_hybrid  # noqa: E402
from hsa_elastica.engines.compile import compile_simulator  # noqa: E402
from hsa_elastica.engines.statics import StaticSolver  # noqa: E402
from hsa_elastica.params import paper_robot_params  # noqa: E402
from hsa_elastica.robots.stack import build_stack  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from bench_envs import run_env  # noqa: E402
from bench_jacobian import _median_time, solve_times  # noqa: E402


def _load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _solvers() -> dict[str, StaticSolver]:
    """The hybrid solver (the mounts' chain rule) and the differences' on copies of one
    compiled stack."""
    p = paper_robot_params()
    p = p.replace(rod=p.rod.replace(n_elements=10))
    stack = build_stack([p, p], [[0.0] * 4, [0.0] * 4], ramp=0.0, record=False, check_dt=False)
    model = compile_simulator(stack.simulator)
    return {k: StaticSolver(model, state=model.state.copy(), jacobian=k) for k in ("tangent", "fd")}


def static_rows(reps: int, n_poses: int) -> None:
    """The static solver's rows (module doc)."""
    solvers = _solvers()
    tan, fd = solvers["tangent"], solvers["fd"]
    assert tan.hybrid is not None
    print(f"stack: unknowns {tan.n}; colours: whole differences {fd.n_colors}, hybrid remainder "
          f"{tan.n_colors_external}, joints {tan.n_colors_joints}")
    rng = np.random.default_rng(3)
    dx = np.where(tan.is_torque, 5e-2, 5e-4) * rng.standard_normal(tan.n)
    a = rng.uniform(-0.5, 0.5, tan.n_motors)
    start = {k: s.pose() for k, s in solvers.items()}
    for s in solvers.values():
        s.jit = True
        s.move(dx)
        s.jacobian(a, s.evaluate(a).copy())  # compile
    t_eval: dict[str, list[float]] = {}
    t_jac: dict[str, list[float]] = {}
    for _ in range(reps):
        for k, s in solvers.items():
            f0 = s.evaluate(a).copy()
            t_eval.setdefault(k, []).append(_median_time(lambda s=s: s.evaluate(a), 20))
            t_jac.setdefault(k, []).append(_median_time(lambda s=s, f0=f0: s.jacobian(a, f0), 5))
    ev = float(np.median(t_eval["fd"] + t_eval["tangent"]))
    print(f"force evaluation {ev * 1e6:.1f} us")
    for k in solvers:
        lo, hi = min(t_jac[k]), max(t_jac[k])
        print(f"  Jacobian {k:8s} {lo * 1e6:8.1f}-{hi * 1e6:8.1f} us = "
              f"{lo / ev:5.1f}-{hi / ev:5.1f} force evaluations")
    targets = [rng.uniform(-0.5, 0.5, tan.n_motors) for _ in range(n_poses)]
    times, iters, dpos = solve_times(
        solvers, start, targets, reps,
        lambda poses: float(np.abs(poses["tangent"][0] - poses["fd"][0]).max()))
    for k in solvers:
        print(f"  static solve {k:8s} {min(times[k]) * 1e3:7.1f}-{max(times[k]) * 1e3:7.1f} ms "
              f"per pose (median {np.median(times[k]) * 1e3:.1f}), Newton iterations "
              f"{iters[k] // reps} over {len(targets)} poses")
    print(f"largest difference of the equilibria' node positions: {dpos:.2e} m")


def _env(env_id: str, policy: str, steps: int, chain: bool) -> dict[str, Any]:
    """``run_env`` with the mounts' chain rule on or off while the env is built and run."""
    statics_hybrid.MOUNT_TANGENT = chain
    try:
        kw = {"motor_speed": None} if policy == "random" else {}
        return run_env(env_id, "coarse", "random", steps, **kw)
    finally:
        statics_hybrid.MOUNT_TANGENT = True


def env_rows(reps: int, steps: int) -> None:
    """The env rows (module doc)."""
    rows = [("HSAStack-v1", "random-servo"), ("HSAStack-v1", "random"),
            ("HSAStack-v0", "random")]
    out: dict[tuple[str, str, bool], list[dict[str, Any]]] = {}
    for env_id, policy in rows:  # compile / load both variants first (not timed)
        for chain in (False, True):
            _env(env_id, policy, 2, chain)
    for _ in range(reps):
        for env_id, policy in rows:
            for chain in (False, True):
                out.setdefault((env_id, policy, chain), []).append(
                    _env(env_id, policy, steps, chain))
    for (env_id, policy, chain), runs in out.items():
        rates = [r["rate"] for r in runs if "rate" in r]
        line = (f"{env_id} coarse {policy:12s} {'chain rule' if chain else 'differences':11s} "
                f"env steps/s {min(rates):6.1f}-{max(rates):6.1f}" if rates else "refused")
        if runs and "evals" in runs[0]:
            ev = [r["evals"] for r in runs]
            jac = [r["jac"] for r in runs]
            line += (f", evaluations per step {min(ev):.2f}-{max(ev):.2f}, "
                     f"Newton matrices per env step {min(jac):.2f}-{max(jac):.2f}")
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=150, help="env steps per run")
    ap.add_argument("--poses", type=int, default=4, help="static solves per round")
    ap.add_argument("--no-env", action="store_true", help="the static rows only")
    args = ap.parse_args()
    print(_load())
    static_rows(args.reps, args.poses)
    if not args.no_env:
        env_rows(args.reps, args.steps)
    print(_load())


if __name__ == "__main__":
    main()
