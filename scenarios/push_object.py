#!/usr/bin/env python
"""Push a ball: the paper robot bends east into a light ball resting on the floor next to it
and rolls it away (docs/contact.md, "Moving objects").

The ball (radius 5 cm, 20 g) rests on a rough floor 1 cm below the rods' bases, 12.5 mm east
of the platform's rim; the robot runs the ``bend_east`` primitive on the fused engine (at
2e-5 s: below the stable step of the platform's rim sticking on the ball), its motors ramped
to the primitive's angles over ``simulation.ramp_time`` (1 s).  The platform tilts east and
its rim knocks the ball about 0.7 s in (magnitude 1; the rods do not reach it), to about 89
mm/s; it rolls away without slipping, slowed by the floor's rolling resistance
(``ROLLING_RESISTANCE``: ``(5/7) c_rr g`` = 0.035 m/s^2, less below the floor's slip velocity
of 1 cm/s, where the couple is smoothed) and comes to rest about 126 mm from its start 4.5 s
in.  The ``HSAPush-v0`` env pushes faster: its motors turn at the servos' speed
(``MX28_SPEED``, 5.8 rad/s) toward the held command, and the same ``bend_east`` knocks the ball
to about 142 mm/s.  Prints the ball's position, speed and the robot's force on it (the rods'
and the platform's) every tenth of the run, and saves a side view (x-z plane: the rods'
centre lines, the platform's section, the ball at its start and end) to ``--still``, the run directory to ``--out`` (for
``hsa-elastica render`` and ``view``, which draw the floor, the ball and the contact forces)
and its video to ``--video``.

Example::

    python scenarios/push_object.py --duration 1.5 --video renders/push_object.mp4
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

import numpy as np

from hsa_elastica.params import (
    ContactParams,
    EnvironmentParams,
    ObjectParams,
    PlaneObstacle,
    paper_robot_params,
)
from hsa_elastica.physics.object_contact import ObjectContact
from hsa_elastica.robots.builders import build_fast_robot
from hsa_elastica.robots.primitives import primitive_angles

FLOOR = -0.01  # m, below the rods' lowest contact nodes
BALL_R, BALL_M = 0.05, 0.02  # m, kg
BALL_GAP = 0.0125  # m, the ball's start east of the platform's rim (as HSAPush-v0's)
#: the fused step [s]: below the stable step of the sticking friction between the platform's
#: rim and the ball (``contact.step_limits``: 2.6e-5 s while it presses on it)
DT = 2e-5
#: the floor's rolling resistance [-]: a rolling ball slows at (5/7) c_rr g = 0.035 m/s^2
#: (the HSAPush-v0 env's floor has none)
ROLLING_RESISTANCE = 0.005


def scene_params(magnitude: float) -> tuple[Any, Any]:
    """The robot's parameters with the floor and the ball, and the motor angles."""
    p = paper_robot_params()
    p = dataclasses.replace(
        p, rod=dataclasses.replace(p.rod, n_elements=10),
        simulation=dataclasses.replace(p.simulation, dt=DT, gravity=(0.0, 0.0, -9.81)))
    floor = PlaneObstacle(point=(0.0, 0.0, FLOOR), normal=(0.0, 0.0, 1.0), contact=ContactParams(
        stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.5, friction_coefficient=0.5,
        slip_velocity=1e-2, rolling_resistance=ROLLING_RESISTANCE))
    ball = ObjectParams(radius=BALL_R, mass=BALL_M,
                        position=(p.platform.radius + BALL_R + BALL_GAP, 0.0, FLOOR + BALL_R),
                        contact=ContactParams(stiffness=1e3, smoothing_length=1e-5,
                                              damping_ratio=0.5, friction_coefficient=0.3,
                                              slip_velocity=1e-2))
    p = dataclasses.replace(p, environment=EnvironmentParams(obstacles=(floor,), objects=(ball,)))
    return p, primitive_angles("bend_east", magnitude, p)


def side_view(robot: Any, ball: Any, start: Any, path: str) -> None:
    """Save the x-z side view: rods, platform, the ball at its start (dashed) and now."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 5))
    for rod in robot.robot.rods:
        x = rod.position_collection
        ax.plot(x[0], x[2], lw=4, color="tab:blue")
    platform = robot.robot.platform  # its section in the x-z plane, rim to rim
    centre, normal = platform.position_collection[:, 0], platform.director_collection[2, :, 0]
    across = np.cross(normal, [0.0, 1.0, 0.0])
    across *= float(np.ravel(platform.radius)[0]) / np.linalg.norm(across)
    ends = np.array([centre - across, centre + across])
    ax.plot(ends[:, 0], ends[:, 2], lw=4, color="tab:gray", solid_capstyle="butt")
    for centre, style in ((start, "--"), (ball.position_collection[:, 0], "-")):
        ax.add_patch(plt.Circle((centre[0], centre[2]), BALL_R, fill=False, ls=style,
                                color="tab:red"))
    ax.axhline(FLOOR, color="k", lw=1)
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("z [m]")
    ax.set_title("bend_east into a ball (dashed: start)")
    fig.savefig(path, dpi=120)
    print("saved", path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--duration", type=float, default=1.0,
                    help="simulated time [s], > 0 and <= 100 (default: %(default)s)")
    ap.add_argument("--magnitude", type=float, default=1.0,
                    help="bend magnitude, a fraction in [0, 1] (default: %(default)s)")
    ap.add_argument("--still", default=None,
                    help="path of a PNG of the side view at the end (default: none)")
    ap.add_argument("--out", default=None,
                    help="run directory to write, for hsa-elastica render and view (default: none)")
    ap.add_argument("--video", default=None,
                    help="path of an mp4 of the run with the floor, the ball and the contact "
                         "forces (default: none)")
    args = ap.parse_args(argv)
    if not 0.0 < args.duration <= 100.0:
        ap.error(f"--duration = {args.duration} is invalid: must be > 0 and <= 100 s")
    if not 0.0 <= args.magnitude <= 1.0:
        ap.error(f"--magnitude = {args.magnitude} is invalid: must be in [0, 1]")
    _check_outputs(ap, args)
    params, angles = scene_params(args.magnitude)
    record = args.out is not None or args.video is not None
    robot = build_fast_robot(params, angles, record=record)
    contacts: Any = robot.robot.contacts  # type: ignore[union-attr]  # a Robot here
    pushes = [r for r in contacts if isinstance(r.instance, ObjectContact)]
    ball = pushes[0].instance.body
    start = ball.position_collection[:, 0].copy()
    steps = max(1, int(round(args.duration / 0.1)))
    for _ in range(steps):
        robot.run(args.duration / steps)
        force = -sum(r.instance.total_force for r in pushes)  # the rods' and the platform's
        print(f"t = {robot.time:5.2f} s  ball x = {ball.position_collection[0, 0] * 1e3:7.2f} mm"
              f"  v_x = {ball.velocity_collection[0, 0] * 1e3:6.2f} mm/s"
              f"  robot's force on it = {np.round(force, 4)} N")
    if args.still:
        side_view(robot, ball, start, args.still)
    if record:
        save_outputs(robot, params, args)
    return 0


def _check_outputs(ap: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (exit 2, one line) an output path that cannot be written, before the run."""
    from hsa_elastica.io.render import check_output_path
    from hsa_elastica.io.rundir import run_dir_problem

    try:
        if args.video is not None:
            check_output_path(args.video, "video", flag="--video")
        if args.still is not None:
            check_output_path(args.still, "still", flag="--still")
    except ValueError as e:
        ap.error(str(e))
    if args.out is not None:
        problem = run_dir_problem(args.out)
        if problem is not None:
            ap.error(f"--out {args.out}: {problem}")


def save_outputs(robot: Any, params: Any, args: argparse.Namespace) -> None:
    """The run directory (``--out``) and the video (``--video``) of the recorded run."""
    df = robot.diagnostics()
    if args.out is not None:
        from hsa_elastica.io.rundir import save_run

        save_run(args.out, df, params, {"primitive": "bend_east", "magnitude": args.magnitude,
                                        "sim_time_s": float(robot.time)})
        print("saved", args.out)
    if args.video is not None:
        from hsa_elastica.io.render import render_video

        n = render_video(df, params, args.video, title=f"push a ball: bend_east, magnitude "
                                                          f"{args.magnitude:g}")
        print(f"saved {args.video} ({n} frames)")


if __name__ == "__main__":
    sys.exit(main())
