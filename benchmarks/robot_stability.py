"""Robot-level stability scan of the 4-rod HSA robot (docs/stability.md, "Robot-level instability").

For each motion primitive, damping rate [1/s] and twist filter time [s] the paper robot
(``paper_robot_params()``, dt from the params unless ``--dt``) is run on the fused path for
``--hold`` seconds (1 s ramp included) and the largest rod node speed [m/s] is reported at the
end of every second.  Verdict: ``ok`` (final speed < 1e-6 m/s and not growing over the last
two seconds), ``grows`` (bounded but the speed rose by > 10x over the last two seconds),
``slow`` (bounded, neither), ``DIVERGED t`` (non-finite state).

``--freeze T`` stops the auxetic coupling of the rods ``--freeze-rods`` (default all) at time T:
their rest lengths and stiffnesses stay at the values reached (no twist -> rest-length
dynamics).  This isolates the coupling as the cause of the late growth.

Examples::

    python benchmarks/robot_stability.py                          # 7 primitives x damping 5,10,20
    python benchmarks/robot_stability.py --primitives bend_north --damping 20 --freeze 2
    python benchmarks/robot_stability.py --primitives bend_north --damping 20 --freeze 2 --freeze-rods 0,1

Cost: ~0.9 s wall per simulated second on one core.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hsa_elastica.physics.tables import OP_COUPLING, OP_NOOP
from hsa_elastica.robots.builders import build_fast_robot
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.primitives import PRIMITIVES, primitive_angles


def freeze_couplings(robot, rods=None):
    """Disable the auxetic coupling of ``rods`` (indices; None = all) in a FastRobot."""
    program = robot.sync_program
    for row in range(program.shape[0]):
        if program[row, 0] == OP_COUPLING and (rods is None or int(program[row, 1]) in rods):
            program[row, 0] = OP_NOOP


def run_case(name, damping, tau, hold, dt=None, freeze=None, freeze_rods=None, magnitude=1.0):
    """Return (verdict, speeds per second [m/s], platform position [mm])."""
    p = paper_robot_params()
    sim = p.simulation.replace(damping=damping, rotational_damping=damping)
    if dt is not None:
        sim = sim.replace(dt=dt)
    p = p.replace(simulation=sim, rod=p.rod.replace(twist_filter_time=tau))
    robot = build_fast_robot(p, primitive_angles(name, magnitude, p), record=False)
    speeds = []
    frozen = False
    try:
        while robot.time < hold - 1e-9:
            if freeze is not None and not frozen and robot.time >= freeze - 1e-9:
                freeze_couplings(robot, freeze_rods)
                frozen = True
            step = 1.0 if freeze is None or frozen else min(1.0, freeze - robot.time)
            robot.run(step)
            # every chunk: 1 s, plus the partial chunk ending at the freeze time
            speeds.append(max(float(np.abs(r.velocity_collection).max()) for r in robot.rods))
    except Exception:  # SimulationDiverged or FloatingPointError
        return f"DIVERGED {robot.time:.2f} s", speeds, None
    pos = robot.platform.position_collection[:, 0] * 1e3
    if not speeds:
        return "no samples", speeds, None
    if len(speeds) >= 3 and speeds[-1] > 10.0 * speeds[-3]:
        verdict = "grows"
    elif speeds[-1] < 1e-6:
        verdict = "ok"
    else:
        verdict = "slow"
    return verdict, speeds, pos


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--primitives", default=",".join(PRIMITIVES))
    ap.add_argument("--damping", default="5,10,20", help="comma-separated rates [1/s]")
    ap.add_argument("--filter", default="0", help="comma-separated twist filter times [s]")
    ap.add_argument("--hold", type=float, default=8.0, help="simulated time [s], ramp included")
    ap.add_argument("--dt", type=float, default=None)
    ap.add_argument("--magnitude", type=float, default=1.0)
    ap.add_argument("--freeze", type=float, default=None, help="freeze the coupling at this time [s]")
    ap.add_argument("--freeze-rods", default=None, help="comma-separated rod indices (default all)")
    a = ap.parse_args()
    rods = None if a.freeze_rods is None else {int(x) for x in a.freeze_rods.split(",")}
    print("| primitive | damping 1/s | filter s | verdict | max speed at t = 1, 2, ... s [m/s] | platform xyz [mm] |")
    print("|---|---|---|---|---|---|")
    for name in a.primitives.split(","):
        for damping in (float(x) for x in a.damping.split(",")):
            for tau in (float(x) for x in a.filter.split(",")):
                t0 = time.time()
                verdict, speeds, pos = run_case(
                    name, damping, tau, a.hold, a.dt, a.freeze, rods, a.magnitude
                )
                sp = ", ".join(f"{s:.0e}" for s in speeds)
                xyz = "-" if pos is None else f"({pos[0]:.2f}, {pos[1]:.2f}, {pos[2]:.2f})"
                print(f"| {name} | {damping:g} | {tau:g} | {verdict} | {sp} | {xyz} |  <!-- {time.time() - t0:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
