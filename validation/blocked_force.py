#!/usr/bin/env python
"""Blocked force of the four-rod robot against a plate: platform force against motor angle.

A plate (``PlaneObstacle``, normal down) sits ``--gap`` above the top face of the platform at
rest; the four rods turn by the elongation primitive's angle (each by ``angle`` along its
handedness) and press the platform on it.  Three ways to get the plate's force:

* the static solver, swept in angle by continuation (each pose from the last), with its
  stability test: a pose whose tangent stiffness has a negative eigenvalue is drawn hollow;
* the fused explicit engine, 0.2 s per angle (motors ramped in over 0.05 s), plate without
  friction and with ``mu = 0.5``: the force's mean over the last quarter of the run (the rough
  plate's sticking is far outside the explicit step's limit, ``physics.contact.step_limits``:
  a limit cycle, blocked_force.md);
* references from outside the robot model: four times the single rod's blocked force (the
  constrained virtual experiment of Good et al.'s characterization,
  ``experiments.characterization.blocked_force``, same rod and discretisation) and the Euler
  load of four rods that sway together between a clamped base and a platform held parallel
  to the plate (clamped-guided column, ``pi^2 B / L^2`` per rod).

Writes ``fig_blocked_force.png`` and ``blocked_force.csv`` into ``--results`` (default: this
folder); the page ``blocked_force.md`` discusses them.  About a minute on one core with the
defaults on a cold kernel cache (most of it compiling), about 15 s on a warm one.

Example::

    python validation/blocked_force.py
    python validation/blocked_force.py --gap 0.002 --results /tmp/bf
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from hsa_elastica.params import (
    ContactParams,
    EnvironmentParams,
    ParameterError,
    PlaneObstacle,
    RobotParams,
    check_motor_angles,
    paper_robot_params,
)
from hsa_elastica.params.files import output_path_problem, write_atomic, write_text_atomic

HERE = Path(__file__).resolve().parent
STATIC_ANGLES = tuple(np.round(np.arange(0.05, 3.001, 0.05), 3))
DYNAMIC_ANGLES = (0.25, 0.5, 1.0, 2.0, 3.0)
#: angles [rad] of the single-rod reference: below the single rod's own buckling (its straight
#: blocked pose is unstable from about 0.45 rad, 79 N, the Euler load of a clamped-clamped rod)
SINGLE_ROD_ANGLES = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)
#: eigenvalues of the tangent stiffness nearest zero examined for stability (the solver's
#: default, 3, misses the buckling mode of the straight branch far past its first buckling)
STABILITY_MODES = 12
PLATE = ContactParams(stiffness=1e6, smoothing_length=1e-6, damping_ratio=0.5,
                      slip_velocity=1e-3)


def robot_params(elements: int) -> RobotParams:
    """The paper robot with ``elements`` per rod, the settings of ``scenarios/blocked_force.py``."""
    base = paper_robot_params()
    return dataclasses.replace(
        base,
        rod=dataclasses.replace(base.rod, n_elements=elements),
        simulation=dataclasses.replace(base.simulation, dt=3e-5, ramp_time=0.05,
                                       record_fps=50.0, damping=50.0),
    )


def with_plate(params: RobotParams, gap: float, mu: float) -> RobotParams:
    """``params`` with a plate ``gap`` [m] above the platform's top face at rest."""
    from hsa_elastica.robots.builders import build_robot

    robot = build_robot(params, [0.0] * len(params.handedness), record=False, finalize=False)
    top = float(robot.platform.position_collection[2, 0]) + 0.5 * params.platform.thickness
    plate = PlaneObstacle(point=(0.0, 0.0, top + gap), normal=(0.0, 0.0, -1.0),
                          contact=dataclasses.replace(PLATE, friction_coefficient=mu))
    return params.replace(environment=EnvironmentParams(obstacles=(plate,)))


def _solver(params: RobotParams) -> tuple[Any, Any]:
    from hsa_elastica.engines.compile import compile_simulator
    from hsa_elastica.engines.statics import StaticSolver
    from hsa_elastica.robots.builders import build_robot

    robot = build_robot(params, [0.0] * len(params.handedness), ramp=0.0, record=False)
    return robot, StaticSolver(compile_simulator(robot.simulator))


def _point(robot: Any, solver: Any, params: RobotParams, angle: float, switch: bool
           ) -> tuple[float, float, bool] | None:
    """Static solve at ``angle`` from the solver's present pose (``switch``: with the solver's
    stability test and branch switch); the plate's force and whether the pose is stable,
    judged on the :data:`STABILITY_MODES` eigenvalues nearest zero."""
    motors = np.array([h * float(angle) for h in params.handedness])
    out = solver.solve(motors, check_stability=switch)
    if not out.converged:
        return None
    lowest = solver.stability(motors, STABILITY_MODES, vectors=False)[0]
    solver.evaluate(motors)  # the sensors read the equilibrium, not the last perturbation
    return float(angle), -float(robot.contacts[-1].instance.total_force[2]), bool(lowest > 0.0)


def static_sweep(params: RobotParams, angles: Any) -> Branches:
    """Two branches of static equilibria (angle [rad], plate force [N], stable):
    ``"straight"``, continued up ``angles`` without switching branches, and ``"buckled"``:
    continued up ``angles`` with the solver's stability test and branch switch until it leaves
    the straight branch, followed up from there and down until it joins the straight branch
    again or a solve fails."""
    robot, solver = _solver(params)
    straight = [p for a in angles if (p := _point(robot, solver, params, a, False)) is not None]
    on_straight = {a: f for a, f, _ in straight}

    def off_straight(p: tuple[float, float, bool] | None) -> bool:
        return p is not None and abs(p[1] - on_straight.get(p[0], math.inf)) > 1e-3 * p[1]

    robot, solver = _solver(params)
    up: list[tuple[float, float, bool]] = []
    start: tuple[Any, Any] | None = None
    for a in angles:
        p = _point(robot, solver, params, a, start is None)
        if off_straight(p):
            assert p is not None
            up.append(p)
            start = start or (solver.pose(), solver.angles.copy())
    if start is None:
        return {"straight": straight, "buckled": []}
    solver.set_pose(start[0])
    solver.angles = start[1]
    down = []
    for a in [a for a in angles if a < up[0][0]][::-1]:
        p = _point(robot, solver, params, a, False)
        if not off_straight(p):
            break
        assert p is not None
        down.append(p)
    return {"straight": straight, "buckled": down[::-1] + up}


def dynamic_force(params: RobotParams, angle: float, duration: float = 0.2) -> tuple[float, float]:
    """Fused engine, ``duration`` [s]: the plate's force [N], mean and spread (max - min) over
    the last quarter after the ramp, read every 5 ms."""
    from hsa_elastica.robots.builders import build_robot
    from hsa_elastica.robots.compiled import FastRobot

    motors = [h * float(angle) for h in params.handedness]
    robot = build_robot(params, motors, record=False)
    fast = FastRobot(robot)
    ramp = params.simulation.ramp_time
    window = ramp + 0.75 * (duration - ramp)
    forces, t = [], 0.0
    while t < duration - 1e-12:
        t = fast.run(min(0.005, duration - t))
        if t >= window - 1e-12:
            forces.append(-float(robot.contacts[-1].instance.total_force[2]))
    return float(np.mean(forces)), float(np.ptp(forces))


def references(params: RobotParams, angles: Any) -> tuple[list[float], float]:
    """Four times the single rod's constrained blocked force at ``angles`` [N], and the
    Euler load of four clamped-guided rods, ``4 pi^2 B / L^2`` [N]."""
    from hsa_elastica.experiments.characterization import blocked_force

    single = [4.0 * blocked_force(params.rod, float(a)) for a in angles]
    euler = 4.0 * math.pi**2 * params.rod.B_xy / params.rod.length**2
    return single, euler


Branches = dict[str, list[tuple[float, float, bool]]]


def figure(path: Path, static: Branches, dynamic: list[tuple[float, float, float]],
           single: tuple[list[float], list[float]], euler: float, gap: float) -> None:
    """Plate force against motor angle: the static branches (hollow: unstable), the fused runs
    on a frictionless plate, the references."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.0, 4.6))
    ax.plot(single[0], single[1], "k-", lw=2.5, alpha=0.35,
            label="4 x single rod, constrained (characterization)")
    ax.axhline(euler, color="0.4", ls=":", lw=1.2,
               label=f"Euler load, 4 clamped-guided rods ({euler:.0f} N)")
    for (name, rows), colour in zip(static.items(), ("C0", "C1")):
        a = np.array([r[0] for r in rows])
        f = np.array([r[1] for r in rows])
        ok = np.array([r[2] for r in rows], dtype=bool)
        ax.plot(a, f, "-", color=colour, lw=0.8)
        if ok.any():
            ax.plot(a[ok], f[ok], "o", color=colour, ms=4, label=f"static, {name}: stable")
        if (~ok).any():
            ax.plot(a[~ok], f[~ok], "o", mfc="white", color=colour, ms=4,
                    label=f"static, {name}: unstable")
    ax.errorbar([r[0] for r in dynamic], [r[1] for r in dynamic],
                yerr=[0.5 * r[2] for r in dynamic], fmt="s", color="C3", ms=6, capsize=3,
                mfc="none", mew=1.5, label="fused, 0.2 s, frictionless plate")
    ax.set_xlabel("motor angle of the elongation primitive [rad]")
    ax.set_ylabel("plate force on the platform [N]")
    ax.set_title(f"Paper robot pressed on a plate {gap * 1e3:g} mm above its platform")
    ax.set_yscale("log")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="center right")
    fig.tight_layout()
    write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=120, format="png"), create_parents=True)
    plt.close(fig)


def write_csv(path: Path, static: Branches, dynamic: dict[float, list[Any]],
              single: tuple[list[float], list[float]], euler: float) -> None:
    fh = io.StringIO()
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["method", "friction", "angle_rad", "force_N", "spread_N", "stable"])
    for name, rows in static.items():
        for a, f, ok in rows:
            w.writerow([f"static_{name}", 0.0, a, f"{f:.4f}", "", ok])
    for mu, runs in dynamic.items():
        for a, f, spread in runs:
            w.writerow(["fused", mu, a, f"{f:.4f}", f"{spread:.4f}", ""])
    for a, f in zip(*single):
        w.writerow(["4x_single_rod_constrained", "", a, f"{f:.4f}", "", ""])
    w.writerow(["euler_clamped_guided_x4", "", "", f"{euler:.4f}", "", ""])
    write_text_atomic(path, fh.getvalue(), create_parents=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gap", type=float, default=0.0,
                    help="plate height above the platform's top face at rest [m] (default 0.0)")
    ap.add_argument("--elements", type=int, default=10, help="elements per rod (default 10)")
    ap.add_argument("--dynamic-angles", type=float, nargs="*", default=list(DYNAMIC_ANGLES),
                    help=f"angles [rad] of the fused runs (default {list(DYNAMIC_ANGLES)})")
    ap.add_argument("--results", type=Path, default=HERE,
                    help="output folder (default: the checkout's validation/)")
    args = ap.parse_args(argv)
    try:
        if not (math.isfinite(args.gap) and 0.0 <= args.gap <= 0.05):
            raise ParameterError(f"--gap = {args.gap!r} is invalid: must be >= 0 and <= 0.05 (m)")
        if not 2 <= args.elements <= 100:
            raise ParameterError(f"--elements = {args.elements!r} is invalid: must be an "
                                 "integer >= 2 and <= 100")
        dyn_angles = (check_motor_angles(args.dynamic_angles, field="--dynamic-angles", ndim=1)
                      if args.dynamic_angles else [])
        for name in ("blocked_force.csv", "fig_blocked_force.png"):
            problem = output_path_problem(args.results / name, create_parents=True)
            if problem is not None:
                raise ParameterError(f"--results = {str(args.results)!r} is invalid: {problem}")
    except ParameterError as exc:
        print(f"blocked_force.py: error: {exc}", file=sys.stderr)
        return 2

    params = robot_params(args.elements)
    static = static_sweep(with_plate(params, args.gap, 0.0), STATIC_ANGLES)
    single, euler = references(params, SINGLE_ROD_ANGLES)
    dynamic: dict[float, list[Any]] = {}
    for mu in (0.0, 0.5):
        plate_params = with_plate(params, args.gap, mu)
        dynamic[mu] = [(float(a), *dynamic_force(plate_params, float(a))) for a in dyn_angles]

    write_csv(args.results / "blocked_force.csv", static, dynamic,
              (list(SINGLE_ROD_ANGLES), single), euler)
    figure(args.results / "fig_blocked_force.png", static, dynamic[0.0],
           (list(SINGLE_ROD_ANGLES), single), euler, args.gap)
    print(f"{'method':>16} {'mu':>4} {'angle':>6} {'force [N]':>10} {'spread [N]':>10}")
    for name, rows in static.items():
        for a, f, ok in rows:
            if any(abs(a - d) < 1e-9 for d in (*dyn_angles, 0.1, 0.15)):
                print(f"{'static ' + name:>16} {0.0:4.1f} {a:6.2f} {f:10.2f} "
                      f"{'stable' if ok else 'unstable':>10}")
    for mu, runs in dynamic.items():
        for a, f, spread in runs:
            print(f"{'fused':>16} {mu:4.1f} {a:6.2f} {f:10.2f} {spread:10.2f}")
    for a, f in zip(SINGLE_ROD_ANGLES, single):
        print(f"{'4 x single rod':>16} {'':>4} {a:6.2f} {f:10.2f}")
    print(f"Euler load of 4 clamped-guided rods: {euler:.2f} N")
    return 0


if __name__ == "__main__":
    sys.exit(main())
