"""The Newton matrix of a model with a law declared in its own module
(``hsa_elastica.physics.compiled_laws``): its tangent assembled against the differences of the
whole residual, side by side in one run.

Scene: a straight rod (20 elements, 0.2 m, radius 5 mm, 1000 kg/m^3), horizontal, released
under gravity in a fluid with ``QuadraticDrag`` (water, C_d 1.2) turning end over end at
5 rad/s: it falls broadside toward its terminal velocity (0.3 m/s) while the drag slows its
turning, on the implicit integrator at dt = 2 ms.  After 0.1 s (the rod moving) the run times, in alternation
(``--reps`` rounds, medians of 20 calls each), one dynamic force evaluation and one Newton
matrix of each kind (``ImplicitEngine(jacobian="tangent")``: the rod's and the drag's tangents; ``"fd"``: coloured forward differences of the whole residual), and prints
them in µs and in force evaluations, with the number of colours the differences need.  Then
0.5 s of the fall on each engine: wall time, force evaluations and Newton matrices per step,
and the largest distance between the two runs' node positions.

Run: python benchmarks/bench_compiled_law.py [--reps 5]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from elastica import CosseratRod  # noqa: E402
from elastica.external_forces import GravityForces  # noqa: E402
from elastica.modules import BaseSystemCollection, Constraints, Damping, Forcing  # noqa: E402

from hsa_elastica import QuadraticDrag  # noqa: E402
from hsa_elastica.engines.compile import compile_simulator  # noqa: E402
from hsa_elastica.engines.implicit import ImplicitEngine  # noqa: E402
from hsa_elastica.engines.implicit_kernels import (  # noqa: E402
    Increment,
    dynamic_fd_jacobian,
    dynamic_forces,
)
from hsa_elastica.engines.implicit_tangent import implicit_tangent_jacobian  # noqa: E402
from hsa_elastica.physics.tables import Pose  # noqa: E402

DT = 2e-3  # s
SPIN = 5.0  # rad/s


class _Sim(BaseSystemCollection, Constraints, Forcing, Damping):
    pass


def _engine(jacobian: str) -> tuple[ImplicitEngine, CosseratRod]:
    """The falling rod in water on the implicit integrator with the given Newton matrix."""
    sim = _Sim()
    rod = CosseratRod.straight_rod(20, np.zeros(3), np.array([1.0, 0.0, 0.0]),
                                   np.array([0.0, 0.0, 1.0]), 0.2, 0.005, 1000.0,
                                   youngs_modulus=1e6, shear_modulus=1e6 / 3.0)
    # turning about its middle at SPIN about the lab's y axis (nodes and elements alike; the
    # elements' local frame is (e_z, -e_y, e_x))
    rod.velocity_collection[2] = -SPIN * (rod.position_collection[0] - 0.1)
    rod.omega_collection[1] = -SPIN
    sim.append(rod)
    sim.add_forcing_to(rod).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -9.81]))
    sim.add_forcing_to(rod).using(QuadraticDrag, density=1000.0, drag_coefficient=1.2)
    sim.finalize()
    engine = ImplicitEngine(compile_simulator(sim), DT, dt_table=DT, jacobian=jacobian)
    assert engine.jacobian == jacobian
    return engine, rod


def matrix_rows(reps: int) -> None:
    """One Newton matrix of each kind against one force evaluation (module doc)."""
    e, _ = _engine("tangent")
    e.run_steps(50, 0.0)
    n, args, aux, jw = e.n, e._model_args, e._aux, e._jw
    cv = e.gamma / (e.beta * e.dt)
    none = np.zeros(0)
    f, mass = np.zeros(n), np.zeros(n)
    q0 = Pose(*(np.array(a, copy=True) for a in e.model.state.pose))
    data = np.zeros_like(jw.fd.data)

    def evaluate() -> None:
        dynamic_forces(e.time, none, none, e.v.copy(), args, aux, f, mass)

    def tangent() -> None:
        implicit_tangent_jacobian(e.time, none, none, e.v.copy(), args, aux, cv, e._tangent,
                                  data)

    def fd() -> None:
        jw.fd.f0[:] = f
        dynamic_fd_jacobian(e.time, none, none, e.v.copy(), args, aux, cv, jw.pattern, jw.fd,
                            Increment(np.zeros(n), q0, jw.first))

    times: dict[str, list[float]] = {"evaluation": [], "tangent": [], "fd": []}
    for _ in range(reps):
        for k, fn in (("evaluation", evaluate), ("tangent", tangent), ("fd", fd)):
            evaluate()  # the state the matrix is made at
            fn()  # compiled, warm
            t0 = time.perf_counter()
            for _ in range(20):
                fn()
            times[k].append((time.perf_counter() - t0) / 20)
    ev = float(np.median(times["evaluation"]))
    print(f"{n} unknowns, the differences' colours {e.solver.n_colors}; force evaluation "
          f"{ev * 1e6:.1f} us")
    for k in ("tangent", "fd"):
        tj = float(np.median(times[k]))
        print(f"  Newton matrix {k:8s} {tj * 1e6:8.1f} us = {tj / ev:5.1f} evaluations")


def run_rows(seconds: float = 0.5) -> None:
    """The fall on either Newton matrix (module doc)."""
    steps = int(round(seconds / DT))
    runs = {}
    for jacobian in ("tangent", "fd"):
        e, rod = _engine(jacobian)
        e.run_steps(1, 0.0)  # compiled, warm
        t0 = time.perf_counter()
        e.run_steps(steps - 1, e.time)
        wall = time.perf_counter() - t0
        runs[jacobian] = rod.position_collection.copy()
        print(f"  {seconds} s fall, {jacobian:8s}: wall {wall * 1e3:7.1f} ms, evaluations/step "
              f"{e.evaluations / steps:.2f}, Newton matrices/step {e.n_jacobians / steps:.3f}")
    print(f"  largest distance between the two runs' nodes: "
          f"{np.abs(runs['tangent'] - runs['fd']).max():.2e} m")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    matrix_rows(args.reps)
    run_rows()


if __name__ == "__main__":
    main()
