"""The implicit integrator's cost outside its compiled Newton kernel, before and after, side by
side in one run (interleaved, the same process).

"before": each engine call typed its records in numba's dispatcher (``newton_steps`` called
through it, ~100-140 us a call on the robot) and the sensor recorder read each contact's outputs
through its properties (``_contact_readings_before`` below: the contact's output and the
``in_contact`` mask taken four times, ~40 us a contact and sample); "after": the kernel's
specialisation for the engine's records (``ImplicitEngine.advance``,
``statics_build.specialisation``) and ``_ContactSensor.readings`` (one pass).  The same
machine code runs the steps, so the trajectories agree bitwise (printed).

Rows (``--reps`` rounds, before/after alternating; ranges and medians of the rounds):

* ``scenarios/push_object.py``'s scene (paper robot at 10 elements bending east into a 20 g
  ball on a rough floor, dt 2 ms), 1.5 s, with the recorders (100 samples/s, as
  ``bench_jacobian.py --contact``) and without: wall and CPU time, real-time factor;
* ``HSAPush-v0``: env steps/s (CPU time) of ``--env-steps`` seeded random actions;
* the coarse paper robot (10 elements) without contact, ``bend_north`` at magnitude 1 on the
  implicit integrator at its default step, 1 s with the recorders.

``--breakdown``: the parts of the recorded push run instead (one run; ``breakdown``): the Newton
kernel's and the recorders' time per step (timers around the calls), and per call at the
ball's contact 0.9 s in: a force evaluation, a bordered band solve, a tangent matrix and its
factorisation (each in a compiled loop), the engine call's typing by the dispatcher (a call
of no steps) against the specialisation's, and ``motor_rows``.

Run: python benchmarks/bench_implicit_overhead.py [--reps 3] [--env-steps 100] [--breakdown]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scenarios"))


def _contact_readings_before(contacts: Any, row: np.ndarray, start: int) -> None:
    """``io.sensors._contact_readings`` as it read the contacts before ``readings()``."""
    m = len(contacts)
    for k, ref in enumerate(contacts):
        try:
            sensor = ref.instance
            values = (*sensor.total_force, float(sensor.in_contact.sum()),
                      float(sensor.sliding.sum()), float(sensor.sticking.sum()),
                      float(sensor.gap.min()))
        except RuntimeError:  # not evaluated yet
            values = (math.nan,) * 7
        for j, v in enumerate(values):
            row[start + j * m + k] = v


@contextmanager
def variant(before: bool) -> Iterator[None]:
    """Inside: engines built from here on call ``newton_steps`` through the dispatcher and the
    recorder reads the contacts as before (``before``), or the present code."""
    from hsa_elastica.engines import implicit
    from hsa_elastica.engines.implicit_newton import newton_steps
    from hsa_elastica.io import sensors

    readings, init = sensors._contact_readings, implicit.ImplicitEngine.__init__

    def dispatcher_init(self: Any, *a: Any, **kw: Any) -> None:
        init(self, *a, **kw)
        self._newton = newton_steps  # the dispatcher: types the records at every call

    if before:
        sensors._contact_readings = _contact_readings_before  # type: ignore[assignment]
        implicit.ImplicitEngine.__init__ = dispatcher_init  # type: ignore[method-assign]
    try:
        yield
    finally:
        sensors._contact_readings = readings
        implicit.ImplicitEngine.__init__ = init  # type: ignore[method-assign]


def push_run(record: bool, duration: float = 1.5) -> dict[str, Any]:
    """The push scene on the implicit integrator (dt 2 ms) for ``duration`` [s]."""
    from push_object import scene_params

    from hsa_elastica.robots.builders import build_robot
    from hsa_elastica.robots.compiled import ImplicitRobot

    params, angles = scene_params(1.0)
    params = params.replace(rod=params.rod.replace(n_elements=10),
                            simulation=params.simulation.replace(integrator="implicit", dt=2e-3))
    robot = ImplicitRobot(build_robot(params, angles, record=record))
    return _timed(robot, duration)


def robot_run(duration: float = 1.0) -> dict[str, Any]:
    """The coarse paper robot, ``bend_north`` at magnitude 1, implicit at its default step."""
    from hsa_elastica.params import DEFAULT_IMPLICIT_DT, paper_robot_params
    from hsa_elastica.robots.builders import build_fast_robot
    from hsa_elastica.robots.primitives import primitive_angles

    p = paper_robot_params()
    p = dataclasses.replace(p, rod=dataclasses.replace(p.rod, n_elements=10),
                            simulation=dataclasses.replace(p.simulation, integrator="implicit",
                                                               dt=DEFAULT_IMPLICIT_DT))
    robot = build_fast_robot(p, primitive_angles("bend_north", 1.0, p), record=True)
    return _timed(robot, duration)


def _timed(robot: Any, duration: float) -> dict[str, Any]:
    e = robot.engine
    w0, c0 = time.perf_counter(), time.process_time()
    robot.run(duration)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    state = np.concatenate([e.model.rod_arrays.position.ravel(), e.model.body_arrays.position.ravel()])
    return {"wall": wall, "cpu": cpu, "rtf": duration / wall, "rtf_cpu": duration / cpu,
            "evals": e.evaluations / e.n_steps, "steps": e.n_steps, "state": state}


def env_rate(steps: int, seed: int = 0) -> dict[str, Any]:
    """``HSAPush-v0`` (implicit) env steps/s in CPU time (``bench_push_env.py``)."""
    sys.path.insert(0, HERE)
    from bench_push_env import steps_per_second

    return {"rate": steps_per_second("implicit", steps, seed)}


def _per_call(f: Callable[[], Any], n: int = 200) -> str:
    """Median and smallest time of ``n`` calls of ``f`` [us]."""
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return f"median {np.median(ts) * 1e6:.1f} us, smallest {min(ts) * 1e6:.1f} us"


def breakdown() -> None:
    """``--breakdown`` (module doc)."""
    from numba import njit

    from hsa_elastica.engines import implicit
    from hsa_elastica.engines.implicit_kernels import dynamic_forces
    from hsa_elastica.engines.implicit_tangent import implicit_tangent_jacobian
    from hsa_elastica.engines.statics_linalg import bordered_factor, bordered_solve

    @njit
    def loop_forces(k, t, ang, rat, v, model, terms, f, m):  # type: ignore[no-untyped-def]
        for _ in range(k):
            dynamic_forces(t, ang, rat, v, model, terms, f, m)

    @njit
    def loop_solve(k, lu, r, dx, w):  # type: ignore[no-untyped-def]
        for _ in range(k):
            bordered_solve(lu, r, dx, w)

    @njit
    def loop_matrix(k, t, ang, rat, v, model, terms, cv, tg, data, shift, plan, lu):  # type: ignore[no-untyped-def]
        for _ in range(k):
            implicit_tangent_jacobian(t, ang, rat, v, model, terms, cv, tg, data)
            bordered_factor(data, shift, plan, lu)

    push_run(True, 0.02)
    spent = {"kernel": 0.0, "callbacks": 0.0}
    kernel = implicit.newton_steps

    def timed_kernel(*a: Any) -> int:
        t = time.perf_counter()
        out = kernel(*a)
        spent["kernel"] += time.perf_counter() - t
        return int(out)

    from push_object import scene_params

    from hsa_elastica.robots.builders import build_robot
    from hsa_elastica.robots.compiled import ImplicitRobot

    params, angles = scene_params(1.0)
    params = params.replace(simulation=params.simulation.replace(integrator="implicit", dt=2e-3))
    robot = ImplicitRobot(build_robot(params, angles, record=True))
    e, sim = robot.engine, robot.robot.simulator
    e._newton = timed_kernel
    callbacks = sim.apply_callbacks

    def timed_callbacks(*a: Any) -> Any:
        t = time.perf_counter()
        out = callbacks(*a)
        spent["callbacks"] += time.perf_counter() - t
        return out

    sim.apply_callbacks = timed_callbacks
    w0 = time.perf_counter()
    robot.run(1.5)
    wall = time.perf_counter() - w0
    n = e.n_steps
    print(f"push, recorded, 1.5 s: wall {wall:.3f} s, {n} steps, "
          f"{e.evaluations / n:.3f} evaluations and {e.n_jacobians / n:.3f} matrices per step; "
          f"Newton kernel {spent['kernel'] / n * 1e6:.0f} us/step, recorders "
          f"{spent['callbacks'] / n * 1e6:.0f} us/step (load {os.getloadavg()[0]:.2f})")
    robot = ImplicitRobot(build_robot(params, angles, record=False))
    robot.run(0.9)
    e = robot.engine
    e.advance(*e.motor_rows(e.time + e.dt * np.arange(2.0)))  # a factorisation at this state
    ang, rat = e.motor_rows(e.time + e.dt * np.arange(2.0))
    jw, buf = e._jw, e._buf
    cv = e.gamma / (e.beta * e.dt)
    fargs = (e.time, ang[1], rat[1], buf.v1, e._model_args, e._aux, e.f, e.mass)
    margs = (e.time, ang[1], rat[1], buf.v1, e._model_args, e._aux, cv, jw.tangent,
             jw.fd.data, jw.shift, jw.plan, jw.lu)
    for k, f, a in ((1000, loop_forces, fargs), (1000, loop_solve, (jw.lu, buf.r, buf.dx, buf.work)),
                    (50, loop_matrix, margs)):
        f(1, *a)
        t = time.perf_counter()
        f(k, *a)
        print(f"  {f.__name__} (compiled loop): {(time.perf_counter() - t) / k * 1e6:.1f} us")
    args = (0, float(e.dt), float(e.time), ang, rat, *e.newton_records())
    print("  engine call of no steps, dispatcher:", _per_call(lambda: kernel(*args)))
    print("  engine call of no steps, specialisation:", _per_call(lambda: e._newton(*args)))
    times = e.time + e.dt * np.arange(6.0)
    print("  motor_rows (6 rows):", _per_call(lambda: e.motor_rows(times)))


def _span(rows: list[dict[str, Any]], key: str, fmt: str = "{:.2f}") -> str:
    v = [r[key] for r in rows]
    return (fmt.format(min(v)) + "-" + fmt.format(max(v)) + " (median "
            + fmt.format(float(np.median(v))) + ")")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--env-steps", type=int, default=100)
    ap.add_argument("--breakdown", action="store_true", help="the parts of the push run")
    args = ap.parse_args(argv)
    if args.breakdown:
        breakdown()
        return 0
    cases: dict[str, Callable[[], dict[str, Any]]] = {
        "push, recorded": lambda: push_run(True),
        "push, not recorded": lambda: push_run(False),
        "HSAPush-v0": lambda: env_rate(args.env_steps),
        "robot bend_north, recorded": robot_run,
    }
    for case in cases.values():  # untimed: compilation, first calls
        with variant(True):
            case()
        case()
    print("load average before:", os.getloadavg())
    rows: dict[tuple[str, bool], list[dict[str, Any]]] = {}
    for _ in range(args.reps):
        for name, case in cases.items():
            for before in (True, False):
                with variant(before):
                    rows.setdefault((name, before), []).append(case())
    print("load average after:", os.getloadavg())
    for name in cases:
        for before in (True, False):
            r = rows[(name, before)]
            label = f"{name:28s} {'before' if before else 'after ':6s}"
            if "rate" in r[0]:
                print(f"{label} {_span(r, 'rate', '{:.0f}')} env steps/s (CPU)")
                continue
            print(f"{label} wall {_span(r, 'wall', '{:.3f}')} s = {_span(r, 'rtf')} x real "
                  f"time, CPU {_span(r, 'cpu', '{:.3f}')} s = {_span(r, 'rtf_cpu')} x; "
                  f"{r[0]['steps']} steps, {r[0]['evals']:.3f} evaluations/step")
        if "state" in rows[(name, True)][0]:
            d = max(float(np.abs(a["state"] - b["state"]).max())
                    for a, b in zip(rows[(name, True)], rows[(name, False)]))
            print(f"{'':28s} before vs after: largest position difference {d:.3g} m")
    return 0


if __name__ == "__main__":
    sys.exit(main())
