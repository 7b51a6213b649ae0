"""Gymnasium envs: env steps/s of the earlier defaults (``-v0``) and the present ones (``-v1``),
side by side in one run.

* ``-v0``: the explicit fused stepper (coarse 6e-5 s, full 3e-5 s), motors unlimited;
* ``-v1``: the implicit integrator (robot 2e-3 s, stack 1e-3 s), motors limited to
  ``MX28_SPEED`` (5.76 rad/s, the paper robot's servos: at most 0.115 rad per 20 ms).

One process, CPU time (``time.process_time``) of ``env.step`` only (reset and the first,
compiling step excluded), 20 ms control step, the same seeded random actions for both ids
(``--policy smooth``: ``a_i = 0.8 sin(2 pi k / 50 + i pi / 2)``).  Rows: ``HSARobot`` and
``HSAStack``, coarse (10 elements per rod) and full (25) discretization.  For ``-v1`` also the
implicit integrator's force evaluations per internal step (Newton iterations) and Jacobians
per env step.  ``--vector``: wall-clock env steps/s of ``gym.make_vec(..., num_envs=2,
vectorization_mode="async")`` (Gymnasium's processes) and of ``gym.make_vec(..., num_envs=2)``
(the package's vector env, sub-envs on threads) against one env in this process, three times
in alternation (``-v1`` coarse, the same calls: one after an episode's end resets, as the
vector envs' autoreset does; the speed-up needs two idle cores; ``--vector-id HSAStack-v1``
for the stack).  ``--tolerances POS,ROT``: each ``-v1`` row also with the coarse
discretization's Newton tolerances at ``POS`` [m], ``ROT`` [rad] (``1e-7,1e-5``: the library's
defaults, which the coarse envs used before), run just before the default (the full rows keep
the parameters' own, so their two columns agree).  ``--refresh X``: each ``-v1`` row also with the tangent Newton
matrix refreshed at a contraction rate of ``X`` instead of the default
(:attr:`~hsa_elastica.engines.implicit.ImplicitEngine.slow_contraction_tangent`; 0.9 was the
rule before it; the stack's difference matrix is not affected), run just before the default.

``--episodes N``: only whole ``-v1`` episodes (reset and the 150 steps of the ``TimeLimit``,
random actions), wall clock, N episodes per cell: each reset restoring the engine the first
reset built (the envs' way) against building robot, model and engine anew at each reset, three
times in alternation.

``--eval-cost``: the cost of one Newton iteration's pieces on ``HSARobot-v1`` (coarse and
full; after 5 env steps, each piece in a compiled loop): the force evaluation
(``dynamic_forces``) per rod element, against PyElastica's own internal-force kernels
(``_compute_internal_forces`` + ``_compute_internal_torques``) on a stock ``CosseratRod`` of
as many elements, and the pose update and band solve of the iteration
(``benchmarks/profile_eval.py`` splits the force evaluation by part).

Usage::

    python benchmarks/bench_envs.py              # 150 env steps per run
    python benchmarks/bench_envs.py --steps 300 --rows robot-coarse --vector
    python benchmarks/bench_envs.py --refresh 0.9     # also the earlier refresh threshold
    python benchmarks/bench_envs.py --tolerances 1e-7,1e-5 --rows robot-coarse,stack-coarse
    python benchmarks/bench_envs.py --eval-cost --rows robot-coarse
    python benchmarks/bench_envs.py --episodes 5 --rows robot-coarse,stack-coarse
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from typing import Any

import numpy as np

ROWS = {"robot-coarse": ("HSARobot", "coarse"), "robot-full": ("HSARobot", "full"),
        "stack-coarse": ("HSAStack", "coarse"), "stack-full": ("HSAStack", "full")}


def _actions(policy: str, n_steps: int, n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    if policy == "random":
        return [rng.uniform(-1.0, 1.0, n).astype(np.float32) for _ in range(n_steps + 1)]
    return [(0.8 * np.sin(2 * math.pi * k / 50 + np.arange(n) * math.pi / 2)).astype(np.float32)
            for k in range(n_steps + 1)]


def _make(env_id: str, **kw: Any) -> Any:
    import gymnasium as gym

    import hsa_elastica  # noqa: F401  (registers the envs)

    with warnings.catch_warnings():  # -v0 is out of date, on purpose
        warnings.simplefilter("ignore", DeprecationWarning)
        return gym.make(env_id, **kw)


def run_env(env_id: str, disc: str, policy: str, n_steps: int, refresh: float | None = None,
            tolerances: tuple[float, float] | None = None, **kw: Any) -> dict[str, Any]:
    """Env steps/s [1/s] of ``n_steps`` steps (after one warm-up step) and, for the implicit
    integrator, its Newton statistics; ``refresh``: the tangent matrix's refresh threshold
    (``ImplicitEngine.slow_contraction_tangent``, default: the class's); ``tolerances``: the
    coarse discretization's Newton tolerances [m], [rad] (default:
    ``COARSE_NEWTON_TOLERANCES``); ``kw`` go to ``gym.make`` (e.g. ``motor_speed``)."""
    from hsa_elastica.engines.implicit import ImplicitEngine, ImplicitStepFailed
    from hsa_elastica.envs import discretization as envs_discretization

    default = ImplicitEngine.slow_contraction_tangent
    default_tol = getattr(envs_discretization, "COARSE_NEWTON_TOLERANCES", None)
    if refresh is not None:  # read when reset builds the engine
        ImplicitEngine.slow_contraction_tangent = refresh
    if tolerances is not None:  # read when the env is made
        envs_discretization.COARSE_NEWTON_TOLERANCES = tolerances
    try:
        env = _make(env_id, discretization=disc, **kw)
        env.reset(seed=0)
    finally:
        ImplicitEngine.slow_contraction_tangent = default
        if default_tol is not None:
            envs_discretization.COARSE_NEWTON_TOLERANCES = default_tol
    acts = _actions(policy, n_steps, env.action_space.shape[0])
    out: dict[str, Any] = {"dt": env.unwrapped.params.simulation.dt}
    try:
        env.step(acts[0])  # compile / warm up
        eng = getattr(env.unwrapped.robot, "engine", None)
        if not hasattr(eng, "evaluations"):  # the fused stepper has no Newton statistics
            eng = None
        e0 = (eng.evaluations, eng.n_jacobians, eng.n_steps) if eng is not None else None
        t0 = time.process_time()
        for a in acts[1:]:
            _, _, term, _, info = env.step(a)
            if term:
                raise RuntimeError(f"{env_id} diverged: {info.get('diverged')}")
        out["rate"] = n_steps / (time.process_time() - t0)
        if eng is not None and e0 is not None:
            out["evals"] = (eng.evaluations - e0[0]) / (eng.n_steps - e0[2])
            out["jac"] = (eng.n_jacobians - e0[1]) / n_steps
    except ImplicitStepFailed as exc:
        out["refused"] = exc.time
    env.close()
    return out


def run_vector(n_steps: int, num_envs: int = 2, repeat: int = 3,
               env_id: str = "HSARobot-v1") -> list[tuple[float, ...]]:
    """Wall-clock env steps/s of one ``env_id`` (coarse) env, of an async vector env of
    ``num_envs`` (Gymnasium's: one process per sub-env) and of the package's vector env
    (``gym.make_vec`` without a mode: sub-envs on threads; absent on a checkout without it:
    NaN), all sub-envs' steps counted, ``repeat`` times in alternation, after a warm-up step
    each.  All do the same work: ``n_steps`` calls of the same random actions, where a call
    after an episode's end (the 150-step ``TimeLimit``) resets, as the vector envs' autoreset
    does; every sub-env gets the same actions (no imbalance between them, so the ratio is the
    parallel speed-up and the cost of the exchange)."""
    import gymnasium as gym

    import hsa_elastica  # noqa: F401

    env = _make(env_id)
    acts = _actions("random", n_steps + 1, env.action_space.shape[0])
    venvs = [gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="async")]
    if gym.spec(env_id).vector_entry_point is not None:
        venvs.append(gym.make_vec(env_id, num_envs=num_envs))
    batch = [np.stack([a] * num_envs) for a in acts]
    out = []
    try:
        for _ in range(repeat):
            env.reset(seed=0)
            env.step(acts[0])
            done = False
            t0 = time.perf_counter()
            for a in acts[1:]:
                if done:
                    env.reset()
                    done = False
                else:
                    _, _, term, trunc, _ = env.step(a)
                    done = bool(term or trunc)
            row = [n_steps / (time.perf_counter() - t0)]
            for venv in venvs:
                venv.reset(seed=0)
                venv.step(batch[0])
                t0 = time.perf_counter()
                for a in batch[1:]:
                    venv.step(a)
                row.append(num_envs * n_steps / (time.perf_counter() - t0))
            out.append(tuple(row) + (np.nan,) * (3 - len(row)))
    finally:
        env.close()
        for venv in venvs:
            venv.close()
    return out


def run_episodes(name: str, disc: str, n_episodes: int, repeat: int = 3) -> list[tuple[float, ...]]:
    """Wall-clock of ``n_episodes`` episodes of ``name``-v1 (reset, then the 150 steps of the
    ``TimeLimit`` with random actions), once with each reset restoring the engine built by the
    first (the env's way) and once building robot and engine anew at each reset (the way
    before: the env's snapshot at rest dropped before each reset), ``repeat`` times in
    alternation.  Per repeat: mean reset [ms] restored and built, episode env steps/s
    (resets included) restored and built."""
    env = _make(f"{name}-v1", discretization=disc)
    acts = _actions("random", 150, env.action_space.shape[0])
    env.reset(seed=0)
    env.step(acts[0])  # compile / warm up
    out = []
    for _ in range(repeat):
        row = []
        for rebuild in (False, True):
            t_reset = 0.0
            t0 = time.perf_counter()
            for _ in range(n_episodes):
                if rebuild:
                    env.unwrapped._at_rest = None
                t1 = time.perf_counter()
                env.reset()
                t_reset += time.perf_counter() - t1
                for a in acts[1:]:
                    _, _, term, trunc, _ = env.step(a)
                    if term or trunc:
                        break
            row.append((t_reset / n_episodes * 1e3, 150 * n_episodes / (time.perf_counter() - t0)))
        (r_ms, r_rate), (b_ms, b_rate) = row
        out.append((r_ms, b_ms, r_rate, b_rate))
    env.close()
    return out


def _loops() -> tuple[Any, Any, Any, Any]:
    """Compiled loops of ``n`` calls: the force evaluation, the pose update, the band solve,
    PyElastica's internal forces and torques of one rod.  The loops borrow their records as
    the integrator's kernel does (:func:`~hsa_elastica.physics.borrow.borrowed`), so each
    piece costs what it costs inside a step."""
    from elastica.rod.cosserat_rod import _compute_internal_forces, _compute_internal_torques
    from numba import njit

    from hsa_elastica.engines.implicit_kernels import dynamic_forces, set_pose
    from hsa_elastica.engines.statics_linalg import bordered_solve
    try:
        from hsa_elastica.physics.borrow import borrowed
    except ImportError:  # a checkout whose engines count references: count them here too
        borrowed = njit(lambda records: records)

    @njit  # type: ignore[misc]
    def forces(n, ang, rat, v, model, terms, f, m):  # type: ignore[no-untyped-def]
        ang, rat, v, model, terms, f, m = borrowed((ang, rat, v, model, terms, f, m))
        for _ in range(n):
            dynamic_forces(0.1, ang, rat, v, model, terms, f, m)

    @njit  # type: ignore[misc]
    def pose(n, x, q0, model, terms, buf):  # type: ignore[no-untyped-def]
        x, q0, model, terms, buf = borrowed((x, q0, model, terms, buf))
        for _ in range(n):
            set_pose(x, q0, model.rod, model.body, terms.unknowns, buf.pose)

    @njit  # type: ignore[misc]
    def solve(n, lu, r, dx, work):  # type: ignore[no-untyped-def]
        lu, r, dx, work = borrowed((lu, r, dx, work))
        for _ in range(n):
            bordered_solve(lu, r, dx, work)

    @njit  # type: ignore[misc]
    def pyelastica(n, a):  # type: ignore[no-untyped-def]
        (p, vol, ln, tg, rad, rl, rvl, dil, vdil, d, sig, rsig, shear, st, f, ge, vel, bend, rk,
         k, inertia, om, cpl, drate, tq, gv) = a
        for _ in range(n):
            _compute_internal_forces(p, vol, ln, tg, rad, rl, rvl, dil, vdil, d, sig, rsig,
                                     shear, st, f, ge)
            _compute_internal_torques(p, vel, tg, ln, rl, d, rvl, bend, rk, k, vdil, inertia,
                                      om, st, cpl, dil, drate, tq, gv)

    return forces, pose, solve, pyelastica


def _per_call(fn: Any, *args: Any, n: int = 3000) -> float:
    """CPU time [us] per call of the compiled loop ``fn`` (after a warm-up)."""
    fn(3, *args)
    t0 = time.process_time()
    fn(n, *args)
    return (time.process_time() - t0) / n * 1e6


def eval_cost(disc: str) -> str:
    """One line: the Newton iteration's pieces on ``HSARobot-v1`` at ``disc`` [us], the
    force evaluation and PyElastica's rod kernels per element [ns]."""
    from elastica.rod.cosserat_rod import CosseratRod

    forces, pose, solve, pyelastica = _loops()
    env = _make("HSARobot-v1", discretization=disc)
    env.reset(seed=0)
    for a in _actions("random", 5, 4):
        env.step(a)
    eng = env.unwrapped.robot.engine
    model, terms, _, _, q0, buf, jw = eng.newton_records()
    n_el = model.rod.director.shape[2]
    zeros = np.zeros(eng.solver.n_motors)
    t_f = _per_call(forces, zeros, zeros, eng.v.copy(), model, terms, np.zeros(eng.n),
                    np.zeros(eng.n))
    t_p = _per_call(pose, buf.x.copy(), q0, model, terms, buf)
    t_s = _per_call(solve, jw.lu, buf.r.copy(), buf.dx.copy(), buf.work)
    env.close()
    rod = CosseratRod.straight_rod(n_el, np.zeros(3), np.array([0.0, 0.0, 1.0]),
                                   np.array([1.0, 0.0, 0.0]), 0.1, 0.005, 1e3,
                                   youngs_modulus=1e6, shear_modulus=3e5)
    r = rod
    t_e = _per_call(pyelastica, (
        r.position_collection, r.volume, r.lengths, r.tangents, r.radius, r.rest_lengths,
        r.rest_voronoi_lengths, r.dilatation, r.voronoi_dilatation, r.director_collection,
        r.sigma, r.rest_sigma, r.shear_matrix, r.internal_stress, r.internal_forces,
        r.ghost_elems_idx, r.velocity_collection, r.bend_matrix, r.rest_kappa, r.kappa,
        r.mass_second_moment_of_inertia, r.omega_collection, r.internal_couple,
        r.dilatation_rate, r.internal_torques, r.ghost_voronoi_idx))
    return (f"| {disc} | {n_el} | {eng.n} | {t_f:.1f} ({t_f / n_el * 1e3:.0f}) | "
            f"{t_e:.1f} ({t_e / n_el * 1e3:.0f}) | {t_p:.1f} | {t_s:.1f} |")


def _cell(r: dict[str, Any]) -> str:
    if "refused" in r:
        return f"refused at t = {r['refused']:.3f} s ({r['dt']:g})"
    return f"{r['rate']:.0f} ({r['dt']:g})"


def _stats(r: dict[str, Any]) -> str:
    return f"{r['evals']:.2f} | {r['jac']:.3f}" if "evals" in r else " | "


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=150, help="env steps per run (default 150)")
    ap.add_argument("--rows", default=",".join(ROWS),
                    help=f"comma-separated subset of {', '.join(ROWS)} (default all)")
    ap.add_argument("--policy", choices=("random", "smooth"), default="random",
                    help="actions (default random)")
    ap.add_argument("--vector", action="store_true",
                    help="also the vector envs of 2 (async, threads) against one env (wall clock)")
    ap.add_argument("--vector-id", default="HSARobot-v1",
                    help="the env id of --vector (default HSARobot-v1; e.g. HSAStack-v1)")
    ap.add_argument("--episodes", type=int, default=0,
                    help="only whole -v1 episodes (resets included): N episodes per cell, a reset "
                         "restoring the built engine against one building it anew")
    ap.add_argument("--tolerances", default=None, metavar="POS,ROT",
                    help="also each -v1 row with the coarse discretization's Newton tolerances "
                    "POS [m], ROT [rad] (e.g. 1e-7,1e-5, the library's defaults), run just before "
                    "the default")
    ap.add_argument("--refresh", type=float, default=None,
                    help="also each -v1 row with the tangent matrix refreshed at this "
                         "contraction rate (0.9: the earlier rule)")
    ap.add_argument("--eval-cost", action="store_true",
                    help="only the cost of a Newton iteration's pieces (HSARobot-v1, coarse "
                         "and full) against PyElastica's internal-force kernels")
    args = ap.parse_args()
    if args.eval_cost:
        print("| discretization | elements of the rod block | unknowns | force evaluation [us] (per element "
              "[ns]) | PyElastica internal forces + torques, one rod of as many elements [us] "
              "(per element [ns]) | pose update [us] | band solve [us] |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for disc in ("coarse", "full"):
            print(eval_cost(disc), flush=True)
        return
    if args.refresh is not None and not 0.0 < args.refresh < 1.0:
        ap.error(f"--refresh = {args.refresh!r} is invalid: must be in (0, 1)")
    tolerances = None
    if args.tolerances is not None:
        try:
            pos, rot = (float(x) for x in args.tolerances.split(","))
        except ValueError:
            ap.error(f"--tolerances = {args.tolerances!r} is invalid: must be POS,ROT (two numbers)")
        if not (0.0 < pos <= 1e-4 and 0.0 < rot <= 1e-2):
            ap.error(f"--tolerances = {args.tolerances!r} is invalid: POS in (0, 1e-4] m, ROT in "
                     "(0, 1e-2] rad")
        tolerances = (pos, rot)
    if args.episodes:
        print(f"\n-v1 episodes (reset + 150 steps, random actions), wall clock, {args.episodes} "
              "episodes per cell, in alternation:")
        print("| env | discretization | reset, restored [ms] | reset, built anew [ms] | env steps/s "
              "with resets, restored | built anew | restored / built |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for key in args.rows.split(","):
            name, disc = ROWS[key]
            for r_ms, b_ms, r_rate, b_rate in run_episodes(name, disc, args.episodes):
                print(f"| {name} | {disc} | {r_ms:.2f} | {b_ms:.1f} | {r_rate:.0f} | {b_rate:.0f} "
                      f"| {r_rate / b_rate:.2f} |", flush=True)
        return
    print(f"# bench_envs: 20 ms control step, {args.steps} env steps per run, {args.policy} "
          f"actions, CPU time of one process")
    changed = " and ".join(
        ([f"refresh {args.refresh:g}"] if args.refresh is not None else [])
        + ([f"tolerances {args.tolerances}"] if tolerances is not None else []))
    cmp_head = (f" -v1 at {changed}: env steps/s | evals / step | Jacobians / env "
                "step |" if changed else "")
    print("| env | discretization | -v0 env steps/s (dt) | -v1 env steps/s (dt) | -v1 / -v0 "
          "| -v1 evals / step | -v1 Jacobians / env step |" + cmp_head)
    print("|---|---|---:|---:|---:|---:|---:|" + ("---:|---:|---:|" if cmp_head else ""))
    for key in args.rows.split(","):
        name, disc = ROWS[key]
        old = run_env(f"{name}-v0", disc, args.policy, args.steps)
        cmp = (run_env(f"{name}-v1", disc, args.policy, args.steps, refresh=args.refresh,
                       tolerances=tolerances) if changed else None)
        new = run_env(f"{name}-v1", disc, args.policy, args.steps)
        ratio = f"{new['rate'] / old['rate']:.2f}" if "rate" in old and "rate" in new else ""
        line = f"| {name} | {disc} | {_cell(old)} | {_cell(new)} | {ratio} | {_stats(new)} |"
        if cmp is not None:
            line += f" {_cell(cmp)} | {_stats(cmp)} |"
        print(line, flush=True)
    if args.vector:
        print(f"\n{args.vector_id} coarse, wall clock, {args.steps} calls, in alternation:")
        for single, vector, threaded in run_vector(args.steps, env_id=args.vector_id):
            print(f"  one env {single:.0f} env steps/s, async vector env of 2 {vector:.0f} env "
                  f"steps/s ({vector / single:.2f}x), the package's vector env of 2 (threads) "
                  f"{threaded:.0f} ({threaded / single:.2f}x)", flush=True)


if __name__ == "__main__":
    main()
