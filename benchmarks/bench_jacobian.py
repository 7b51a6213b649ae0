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
tangents): :func:`joint_tangent_rows`.  Then the static solver's overheads
(:func:`static_overhead_rows`): Newton's Jacobian against the way it was taken before, and the
build of a solver and the primitive command with the sparsity pattern from the model's topology
against dense differences (:func:`pattern_rows`, also alone with ``--pattern``).  BLAS is limited to one thread.

``--implicit``: the implicit integrator's Newton matrix instead (``ImplicitEngine(jacobian=
"tangent")`` against ``"fd"``, and the tangent matrix with the joints by coloured differences,
``make_implicit_tangent(engine, joint_tangent=False)`` / ``implicit_tangent.JOINT_TANGENT``:
"joints fd"), side by side in one run:

* one Newton matrix of each kind [us] and in units of one dynamic force evaluation, on the
  paper robot at 10 and 25 elements per rod, 20 ms into bend north at magnitude 1 (moving);
* env steps/s of ``HSARobot-v1`` coarse and full under random actions with the servo limit
  (random-servo, the env's default) and without it (random), with evaluations per step and
  Newton matrices per env step (``bench_envs.run_env``; the default Newton matrix switched by
  ``implicit.DEFAULT_JACOBIAN``);
* ``hsa-elastica primitive bend_north --integrator implicit`` in a fresh process each (one
  untimed run each first, then two in alternation): the real-time factor ``sim_time_s /
  wall_time_s`` of its ``summary.json`` (``--no-primitive``: skipped).

``--contact``: the implicit integrator through contact (:func:`contact_rows`):
``scenarios/push_object.py``'s scene, one Newton matrix of each kind 0.9 s in (the rods on the
ball) and 1.5 s of the push on either matrix (wall time, real-time factor, evaluations and
Newton matrices per step, the ball's travel).

Run: python benchmarks/bench_jacobian.py [--reps 5] [--implicit [--steps 150] [--no-primitive]
| --overheads | --pattern | --contact]
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
from hsa_elastica.engines.statics_build import topology_pattern as _TOPOLOGY  # noqa: E402
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


def solve_times(solvers, start, targets, reps: int, compare):  # type: ignore[no-untyped-def]
    """Each of ``targets`` (motor commands) solved by each of ``solvers`` from its pose in
    ``start``, ``reps`` times in alternation: the solve times [s] and Newton iterations per
    solver, and the largest ``compare(poses)`` (the solvers' equilibria, by name; a number or
    a tuple of numbers, each maximised) over them."""
    times: dict[str, list[float]] = {k: [] for k in solvers}
    iters = dict.fromkeys(solvers, 0)
    worst = 0.0
    for _ in range(reps):
        for target in targets:
            poses = {}
            for k, s in solvers.items():
                s.set_pose(start[k])
                s.angles = np.zeros(s.n_motors)
                t0 = time.perf_counter()
                out = s.solve(np.asarray(target, dtype=np.float64))
                times[k].append(time.perf_counter() - t0)
                assert out.converged, k
                iters[k] += out.iterations
                poses[k] = s.pose()
            worst = np.maximum(worst, compare(poses))
    return times, iters, worst


def _implicit_matrices(n_elements: int, reps: int, scene=None) -> None:  # type: ignore[no-untyped-def]
    """Time one Newton matrix of each kind and one force evaluation (medians); ``scene``:
    ``(params, angles, seconds)`` of another robot, run that long first (the push scene)."""
    from hsa_elastica.engines.implicit_kernels import (
        Increment, dynamic_fd_jacobian, dynamic_forces)
    from hsa_elastica.engines.implicit_tangent import (
        implicit_tangent_jacobian, make_implicit_tangent)
    from hsa_elastica.physics.tables import Pose
    from hsa_elastica.robots.compiled import ImplicitRobot

    p = paper_robot_params()
    p = p.replace(rod=p.rod.replace(n_elements=n_elements),
                  simulation=p.simulation.replace(integrator="implicit", dt=2e-3))
    angles = np.asarray(primitive_angles("bend_north", 1.0, p), dtype=np.float64)
    rates = np.zeros(4)
    if scene is None:
        robot = ImplicitRobot(build_robot(p, [0.0] * 4), jacobian="tangent")
        robot.set_motor_angles(angles)
        robot.step(0.02)
    else:
        robot = ImplicitRobot(build_robot(scene[0], scene[1]), jacobian="tangent")
        robot.run(scene[2])
        rows = robot.engine.motor_rows(np.array([robot.engine.time]))
        angles, rates = (np.ascontiguousarray(x[-1], dtype=np.float64) for x in rows)
    e = robot.engine
    n, args, aux, jw = e.n, e._model_args, e._aux, e._jw
    cv = e.gamma / (e.beta * e.dt)
    f, mass = np.zeros(n), np.zeros(n)
    q0 = Pose(*(np.array(a, copy=True) for a in e.model.state.pose))
    incr = Increment(np.zeros(n), q0, jw.first)

    def evaluate() -> None:
        dynamic_forces(e.time, angles, rates, e.v.copy(), args, aux, f, mass)

    differenced = make_implicit_tangent(e, joint_tangent=False)
    n_joint_colours = e.n_colors_joints

    def tangent() -> None:
        implicit_tangent_jacobian(e.time, angles, rates, e.v.copy(), args, aux, cv, e._tangent,
                                  jw.fd.data)

    def joints_fd() -> None:
        implicit_tangent_jacobian(e.time, angles, rates, e.v.copy(), args, aux, cv, differenced,
                                  jw.fd.data)

    def fd() -> None:
        jw.fd.f0[:] = f
        dynamic_fd_jacobian(e.time, angles, rates, e.v.copy(), args, aux, cv, jw.pattern,
                            jw.fd, incr)

    times: dict[str, list[float]] = {"evaluation": [], "tangent": [], "joints fd": [], "fd": []}
    for _ in range(reps * 10):
        for k, fn in (("evaluation", evaluate), ("tangent", tangent), ("joints fd", joints_fd),
                      ("fd", fd)):
            evaluate()  # the state the matrix is made at (the Newton loop evaluates first)
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    ev = float(np.median(times["evaluation"]))
    print(("" if scene is None else "push scene, ")
          + f"{n_elements} elements, {n} unknowns: colours full {e.solver.n_colors}, joints "
          f"{n_joint_colours} (joints fd), dampers {e.n_colors_rates}; force evaluation "
          f"{ev * 1e6:.1f} us")
    for k in ("tangent", "joints fd", "fd"):
        tj = float(np.median(times[k]))
        print(f"  implicit Newton matrix {k:9s} {tj * 1e6:8.1f} us = {tj / ev:5.1f} evaluations")


def _primitive_rtf(jacobian: str) -> float:
    """Real-time factor of ``primitive bend_north --integrator implicit`` (fresh process)."""
    import json
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        code = ("import sys, hsa_elastica.engines.implicit as m; m.DEFAULT_JACOBIAN = "
                f"{jacobian!r}; from hsa_elastica.cli import main; sys.exit(main(sys.argv[1:]))")
        subprocess.run([sys.executable, "-c", code, "primitive", "bend_north", "--integrator",
                        "implicit", "--quiet", "--out", f"{tmp}/run"], check=True)
        with open(f"{tmp}/run/summary.json") as fh:
            s = json.load(fh)
    return float(s["sim_time_s"]) / float(s["wall_time_s"])


def implicit_main(reps: int, steps: int, primitive: bool = True) -> None:
    """The ``--implicit`` comparison (module doc)."""
    import sys

    from hsa_elastica.engines import implicit, implicit_tangent

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_envs import run_env

    for ne in (10, 25):
        _implicit_matrices(ne, reps)
    print("HSARobot-v1: env steps/s, evaluations per step, Newton matrices per env step")
    for disc in ("coarse", "full"):
        for policy, kw in (("random-servo", {}), ("random", {"motor_speed": None})):
            cells = []
            for jac in ("tangent", "joints fd", "fd"):
                implicit.DEFAULT_JACOBIAN = "fd" if jac == "fd" else "tangent"
                implicit_tangent.JOINT_TANGENT = jac != "joints fd"
                r = run_env("HSARobot-v1", disc, "random", steps, **kw)
                cells.append(f"{jac} {r.get('rate', 0):6.0f} /s {r.get('evals', 0):5.2f} "
                             f"{r.get('jac', 0):6.2f}" + (" refused" if "refused" in r else ""))
            print(f"  {disc:6s} {policy:12s} " + " | ".join(cells))
    implicit.DEFAULT_JACOBIAN = implicit.JACOBIANS[0]
    implicit_tangent.JOINT_TANGENT = True
    if not primitive:
        return
    for jac in ("tangent", "fd"):
        _primitive_rtf(jac)  # untimed: a first run may compile
    rtf: dict[str, list[float]] = {"tangent": [], "fd": []}
    for _ in range(2):
        for jac in rtf:
            rtf[jac].append(_primitive_rtf(jac))
    for jac, v in rtf.items():
        print(f"primitive bend_north --integrator implicit, {jac}: "
              + ", ".join(f"{x:.2f}" for x in v) + " x real time")


def _push_scene(n_elements: int):  # type: ignore[no-untyped-def]
    """``scenarios/push_object.py``'s scene (bend east into a ball on a rough floor) on the
    implicit integrator (dt 2 ms): ``(params, angles)``."""
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "scenarios"))
    from push_object import scene_params

    params, angles = scene_params(1.0)
    return params.replace(rod=params.rod.replace(n_elements=n_elements),
                          simulation=params.simulation.replace(integrator="implicit",
                                                               dt=2e-3)), angles


def _push_run(jacobian: str, duration: float, n_elements: int) -> dict[str, float]:
    """The push scene (:func:`_push_scene`) for ``duration`` [s]: wall time, counts, the
    ball's travel."""
    from hsa_elastica.robots.compiled import ImplicitRobot

    params, angles = _push_scene(n_elements)
    robot = ImplicitRobot(build_robot(params, angles), jacobian=jacobian)
    e = robot.engine
    ball = e.model.body_arrays.position[:, -1].copy()
    t0 = time.perf_counter()
    robot.run(duration)
    wall = time.perf_counter() - t0
    travel = float(np.linalg.norm(e.model.body_arrays.position[:, -1] - ball))
    return {"wall": wall, "rtf": duration / wall, "evals": e.evaluations / e.n_steps,
            "jac": e.n_jacobians / e.n_steps, "travel": travel, "matrix": e.jacobian == "tangent"}


def contact_rows(reps: int, duration: float = 1.5) -> None:
    """``--contact``: the push scene (:func:`_push_run`) on either Newton matrix, in
    alternation after one untimed run each (compilation); medians of the wall times."""
    params, angles = _push_scene(10)
    for ne in (10,):
        for jac in ("tangent", "fd"):
            _push_run(jac, 0.02, ne)
        rows: dict[str, list[dict[str, float]]] = {"tangent": [], "fd": []}
        for _ in range(reps):
            for jac in rows:
                rows[jac].append(_push_run(jac, duration, ne))
        _implicit_matrices(ne, reps, (params, angles, 0.9))  # the rods on the ball
        print(f"push_object scene, implicit dt 2 ms, {ne} elements per rod, {duration} s:")
        for jac, r in rows.items():
            wall = float(np.median([x["wall"] for x in r]))
            print(f"  {jac:7s} wall {wall:6.2f} s = {duration / wall:5.2f} x real time; "
                  f"evaluations/step {r[0]['evals']:5.2f}, Newton matrices/step "
                  f"{r[0]['jac']:5.3f}, ball moved {r[0]['travel'] * 1e3:6.2f} mm, "
                  f"tangent matrix in use: {bool(r[0]['matrix'])}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--implicit", action="store_true",
                    help="the implicit integrator's Newton matrix (module doc)")
    ap.add_argument("--steps", type=int, default=150, help="env steps per run (--implicit)")
    ap.add_argument("--no-primitive", action="store_true",
                    help="skip the primitive command's real-time factors (--implicit)")
    ap.add_argument("--pattern", action="store_true",
                    help="only the sparsity pattern from the topology against differences "
                         "(pattern_rows)")
    ap.add_argument("--overheads", action="store_true",
                    help="only the static solver's overheads (static_overhead_rows)")
    ap.add_argument("--contact", action="store_true",
                    help="only the implicit integrator through contact (contact_rows)")
    args = ap.parse_args()
    if args.contact:
        contact_rows(max(1, args.reps // 2))
        return
    if args.implicit:
        implicit_main(args.reps, args.steps, not args.no_primitive)
        return
    p = paper_robot_params()
    model = compile_simulator(build_robot(p, [0.0] * 4).simulator)
    if args.overheads:
        static_overhead_rows(model, args.reps)
        return
    if args.pattern:
        pattern_rows(model, args.reps)
        return
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
    times, iters, (dpos, drot) = solve_times(solvers, start, angles, args.reps, lambda poses: (
        float(np.abs(poses["tangent"][0] - poses["fd"][0]).max()),
        max(float(np.abs(x - y).max()) for x, y in zip(poses["tangent"][1:], poses["fd"][1:]))))
    for k in solvers:
        print(f"  static solve {k:8s} median {np.median(times[k]) * 1e3:6.1f} ms per pose, "
              f"Newton iterations {iters[k] // args.reps} over {len(angles)} poses")
    print(f"largest difference tangent - fd: positions {dpos:.2e} m, other pose arrays {drot:.2e}")
    joint_tangent_rows(model, args.reps)
    static_overhead_rows(model, args.reps)


def static_overhead_rows(model, reps: int) -> None:  # type: ignore[no-untyped-def]
    """The static solver's overheads, side by side in one run: the Jacobian as Newton takes
    it (the hybrid kernel's compiled specialisation, the values only, no rest-configuration
    evaluation right after the residual's) against the way it was taken before (the numba
    dispatcher, the rest-configuration evaluation, a ``scipy.sparse`` matrix: what the public
    :meth:`StaticSolver.jacobian` still does, minus the specialisation), in force evaluations;
    and the time to build a solver with its sparsity pattern found (the kept patterns cleared)
    and kept (same structure)."""
    import scipy.sparse as sp

    from hsa_elastica.engines.statics_hybrid import hybrid_jacobian

    s = StaticSolver(model, state=model.state.copy())
    s.jit = True
    rng = np.random.default_rng(3)
    s.move(np.where(s.is_torque, 5e-2, 5e-4) * rng.standard_normal(s.n))
    a = np.array([0.4, -0.3, 0.6, 0.2])
    f0 = s.evaluate(a).copy()
    _, args, _ = s._hybrid_call()

    def newton() -> None:
        s._jacobian_values(a, f0, rest_written=s._evaluated_here(a))

    assert s.hybrid is not None

    def before() -> None:
        plan, ext, joint = s.hybrid  # type: ignore[misc]
        m, unknowns = s._args()
        m = m._replace(tables=m.tables._replace(sync_program=plan.program))
        hybrid_jacobian(a, m, unknowns, ext, joint, plan, s.data, False)
        sp.csc_matrix((s.data.copy(), s.indices, s.indptr), shape=(s.n, s.n))

    t: dict[str, list[float]] = {"evaluation": [], "Newton's": [], "before": []}
    for _ in range(reps):
        t["evaluation"].append(_median_time(lambda: s.evaluate(a), 20))
        for k, fn in (("Newton's", newton), ("before", before)):
            t[k].append(_median_time(fn, 20))
    ev = float(np.median(t["evaluation"]))
    print(f"static Jacobian overheads: force evaluation {ev * 1e6:.1f} us")
    for k in ("Newton's", "before"):
        tj = float(np.median(t[k]))
        print(f"  Jacobian {k:9s} {tj * 1e6:8.1f} us = {tj / ev:5.1f} force evaluations")
    pattern_rows(model, reps)


def _differenced(on: bool) -> None:
    """Make the static solver take its sparsity patterns from dense differences (``on``, the
    way before the topology) or from the topology."""
    from hsa_elastica.engines import statics, statics_build

    def dense(solver, program=None, internal=True):  # type: ignore[no-untyped-def]
        return statics_build.dense_pattern(solver, program, internal)

    statics.topology_pattern = dense if on else _TOPOLOGY  # type: ignore[assignment]
    statics_build.topology_pattern = dense if on else _TOPOLOGY  # type: ignore[assignment]


def _primitive_wall(differenced: bool) -> tuple[float, float]:
    """(process wall time [s], ``summary.json`` wall time [s]) of ``hsa-elastica primitive
    bend_east --integrator implicit --duration 2`` in a fresh process, the sparsity pattern
    from the topology or (``differenced``) from dense differences."""
    import json
    import subprocess
    import sys
    import tempfile

    code = ("import sys; sys.path.insert(0, %r); import bench_jacobian as b; "
            "b._differenced(%r); from hsa_elastica.cli import main; sys.exit(main(sys.argv[1:]))"
            % (os.path.dirname(os.path.abspath(__file__)), differenced))
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code, "primitive", "bend_east", "--integrator",
                        "implicit", "--duration", "2", "--quiet", "--out", f"{tmp}/run"],
                       check=True)
        wall = time.perf_counter() - t0
        with open(f"{tmp}/run/summary.json") as fh:
            s = json.load(fh)
    return wall, float(s["wall_time_s"])


def pattern_rows(model, reps: int, primitive: bool = True) -> None:  # type: ignore[no-untyped-def]
    """The sparsity pattern from the model's topology against dense differences, side by side: the build of a static solver of each
    Jacobian kind, and ``primitive bend_east --integrator implicit --duration 2`` (process
    and ``summary.json`` wall times, one untimed run each first, then in alternation)."""
    build: dict[tuple[str, str], list[float]] = {}
    for _ in range(reps):
        for way in ("topology", "differenced"):
            _differenced(way == "differenced")
            for kind in ("tangent", "fd"):
                t0 = time.perf_counter()
                StaticSolver(model, state=model.state.copy(), jacobian=kind)
                build.setdefault((kind, way), []).append(time.perf_counter() - t0)
    _differenced(False)
    for (kind, way), v in build.items():
        print(f"  StaticSolver build jacobian={kind:7s} pattern {way:11s}: "
              f"median {np.median(v) * 1e3:7.1f} ms")
    if not primitive:
        return
    runs: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for k in runs:
        _primitive_wall(k)  # untimed: numba's cache, files
    for _ in range(max(2, reps // 2)):
        for k in runs:
            runs[k].append(_primitive_wall(k))
    for k, v in runs.items():
        w = np.array(v)
        print(f"  primitive bend_east implicit 2 s, pattern {'differenced' if k else 'topology':11s}: "
              f"process wall {w[:, 0].min():.2f}-{w[:, 0].max():.2f} s, summary.json wall_time_s "
              f"{w[:, 1].min():.2f}-{w[:, 1].max():.2f} s")


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
    times, iters, diff = solve_times(
        solvers, start, angles, reps, lambda poses: max(
            float(np.abs(x - y).max()) for x, y in zip(poses["joint tangent"], poses["joint fd"])))
    for k in solvers:
        print(f"  static solve {k:13s} median {np.median(times[k]) * 1e3:6.1f} ms per pose, "
              f"Newton iterations {iters[k] // reps} over {len(angles)} poses")
    print(f"largest difference of the equilibria, joint tangent - joint fd: {diff:.2e}")


if __name__ == "__main__":
    main()
