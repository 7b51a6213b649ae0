#!/usr/bin/env python
"""A gripper: two HSA fingers hanging from above close on a cylinder lying on the floor and
lift it by shortening (docs/contact.md, "A gripper").

Each finger is a two-rod HSA robot (a right- and a left-handed rod of the paper robot, 10
elements, the platform at its tip) mounted upside down with its inner rod 2 mm into the reach
of a light cylinder (radius 20 mm, length 40 mm, ``--mass`` kg, axis horizontal) lying across
between them on a rough floor; the rods' friction on it is the contact law's, ``mu = 0.8``.
By 40 % of the run every motor twists to ``--extend`` of its range pi rad (the fingers lengthen
down beside the cylinder) and each outer rod ``--squeeze`` more (the fingers bend onto it);
then the common twist goes back to zero by 85 % of the run (the fingers shorten by about 18 mm,
the bend kept) and holds.  The cylinder is a free rigid body, held only by the contact forces
of the rods' nodes and of the fingertips' platforms (their rims).  With the defaults the
platforms get under its sides and it leaves the floor at about 0.75 s; from 1.6 s it hangs 20
to 21 mm up on the rods' nodes.  Prints, every tenth of the run, the cylinder's height, the
fingers' summed force on it (the platforms' share of its z), its contact points sticking and
sliding and the floor's force; writes a video of the fingers, the floor,
the cylinder and the contact forces to ``--video``.  Runs on PyElastica's loop (two robots in
one simulator) or, with ``--integrator``, on the compiled fused step (the same numbers) or
the implicit integrator.

Example::

    python scenarios/gripper.py --duration 2.0 --video renders/gripper.mp4
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from typing import Any

import numpy as np
import pandas as pd

from hsa_elastica.params import ContactParams, PlaneObstacle, RobotParams, paper_robot_params

R_CYL, L_CYL = 0.02, 0.04  # m: the cylinder's radius and length
GAP = -0.002  # m from the cylinder to an untwisted inner rod's surface: 2 mm of interference
CONTACT_R = 0.00747  # m, a rod node's contact radius (its cross-section's, below the tube's)
BASE_HEIGHT = 0.13  # m, the fingers' motors above the floor
MU = 0.8  # the rods' friction on the cylinder
PHI_MAX = math.pi  # rad, a motor's range


#: ``--integrator`` -> (SimulationParams.integrator, dt [s]); "operators": PyElastica's loop
STEPPERS = {"operators": ("explicit", 4e-5), "explicit": ("explicit", 4e-5),
            "implicit": ("implicit", 5e-4)}


def finger_params(stepper: str = "operators") -> RobotParams:
    """A two-rod finger: the paper robot's rods (10 elements) at +-x of its 24 mm circle, a
    platform of 60 mm; stepped as ``stepper`` says (:data:`STEPPERS`; the implicit step
    resolves a node's contact spring in about 11 steps, docs/contact.md)."""
    p = paper_robot_params()
    integrator, dt = STEPPERS[stepper]
    return dataclasses.replace(
        p, n_rods=2, handedness=(1, -1), first_rod_angle=0.0,
        rod=dataclasses.replace(p.rod, n_elements=10),
        platform=dataclasses.replace(p.platform, diameter=0.06),
        simulation=dataclasses.replace(p.simulation, dt=dt, gravity=(0.0, 0.0, -9.81),
                                       record_fps=50.0, integrator=integrator))


def _rot_y(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _schedules(duration: float, extend: float, squeeze: float, hand: tuple[int, ...]) -> list[Any]:
    """Motor schedules t -> angle [rad] of one finger, as fractions of the range: rod 0 (robot
    +x, turned away from the cylinder) is its outer rod at ``c(t) + d(t)``, rod 1 its inner one
    at ``c(t)``.  ``c`` rises to ``extend`` (the finger lengthens) and ``d`` to ``squeeze``
    (the outer rod lengthens more: the finger bends towards the cylinder) by 40 % of the run;
    then ``c`` falls back to 0 by 85 % of it (both rods shorten, the bend kept) and holds."""
    t_close = 0.4 * duration

    def ramp(t: float, t0: float, t1: float) -> float:
        s = min(max((t - t0) / (t1 - t0), 0.0), 1.0)
        return s * s * (3.0 - 2.0 * s)

    def common(t: float) -> float:
        return extend * (ramp(t, 0.0, 0.5 * t_close) - ramp(t, t_close, 0.85 * duration))

    def outer(t: float) -> float:
        return hand[0] * PHI_MAX * (common(t) + squeeze * ramp(t, 0.3 * t_close, t_close))

    def inner(t: float) -> float:
        return hand[1] * PHI_MAX * common(t)

    return [outer, inner]


def build(duration: float, extend: float, squeeze: float, mass: float, record: bool,
          stepper: str = "operators") -> dict[str, Any]:
    """Both fingers, the floor and the cylinder in one simulator (finalized), to be stepped
    as ``stepper`` says (:data:`STEPPERS`)."""
    from hsa_elastica.io.recording import RigidBodyRecorder
    from hsa_elastica.physics.contact import add_contact
    from hsa_elastica.physics.object_contact import add_object_contact
    from hsa_elastica.robots.builders import HSASimulator, build_robot
    from hsa_elastica.robots.environment import solid_cylinder

    p = finger_params(stepper)
    floor = PlaneObstacle(point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), contact=ContactParams(
        stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.5, friction_coefficient=0.5,
        slip_velocity=1e-2))
    grip = ContactParams(stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.5,
                         friction_coefficient=MU, slip_velocity=1e-2)
    sim = HSASimulator()
    x_axis = R_CYL + GAP + CONTACT_R  # the inner rod's axis from the cylinder's [m]
    top = BASE_HEIGHT
    fingers = []
    for side in (-1.0, 1.0):
        # robot z down; robot -x towards the cylinder (lab +x for the left finger, -x right)
        rot = _rot_y(math.pi) if side < 0 else np.diag([1.0, -1.0, -1.0])
        centre = np.array([side * (x_axis + p.circle_radius), 0.0, top])
        fingers.append(build_robot(p, _schedules(duration, extend, squeeze, p.handedness),
                                   simulator=sim, base=(centre, rot), record=record, finalize=False))
    density = mass / (math.pi * R_CYL**2 * L_CYL)
    # a solid cylinder's inertia (PyElastica's Cylinder leaves out M L^2 / 12 about a diameter)
    cyl = solid_cylinder(np.array([0.0, -0.5 * L_CYL, R_CYL]), np.array([0.0, 1.0, 0.0]),
                         np.array([0.0, 0.0, 1.0]), L_CYL, R_CYL, density)
    sim.append(cyl)
    sim.add_forcing_to(cyl).using(_gravity(), acc_gravity=np.array([0.0, 0.0, -9.81]))
    contacts = [add_contact(sim, cyl, floor)]
    contacts += [add_object_contact(sim, rod, cyl, grip, nodes=(1, -1))
                 for f in fingers for rod in f.rods]
    # the fingertips' platforms touch it with their rims (placed clear of it, they do not)
    contacts += [add_object_contact(sim, f.platform, cyl, grip) for f in fingers]
    recorders = {}
    if record:
        recorders["object0"] = RigidBodyRecorder(fps=p.simulation.record_fps,
                                                 dt=p.simulation.dt).attach(sim, cyl)
        recorders["sensors"] = _ContactRecorder(contacts, fps=p.simulation.record_fps,
                                                dt=p.simulation.dt).attach(sim, cyl)
    sim.finalize()
    return dict(params=p, sim=sim, fingers=fingers, cylinder=cyl, contacts=contacts,
                floor=floor, recorders=recorders, stepper=stepper)


def _gravity() -> Any:
    from elastica.external_forces import GravityForces

    return GravityForces


def _contact_recorder_base() -> Any:
    from hsa_elastica.io.recording import _Recorder

    return _Recorder


class _ContactRecorder(_contact_recorder_base()):  # type: ignore[misc]
    """The contacts' sensor columns (``contact_force_{x|y|z}_{k}`` [N], ``contact_sliding_{k}``,
    ``contact_sticking_{k}``), as a robot's sensor recorder writes them."""

    def __init__(self, contacts: list[Any], **kw: Any) -> None:
        super().__init__(**kw)
        self._contacts = contacts

    def _make_columns(self, body: Any) -> list[str]:
        m = len(self._contacts)
        return (["time"] + [f"contact_force_{a}_{k}" for a in "xyz" for k in range(m)]
                + [f"contact_{s}_{k}" for s in ("sliding", "sticking") for k in range(m)])

    def _fill(self, body: Any, row: np.ndarray) -> None:
        m = len(self._contacts)
        for k, ref in enumerate(self._contacts):
            try:
                c = ref.instance
                values = (*c.total_force, float(c.sliding.sum()), float(c.sticking.sum()))
            except RuntimeError:  # not evaluated yet
                values = (math.nan,) * 5
            for j, v in enumerate(values):
                row[1 + j * m + k] = v


def frame_of(scene: dict[str, Any]) -> pd.DataFrame:
    """One diagnostics frame in the renderer's stack format: the four rods ``rod0..3``, the
    right finger's platform as ``platform/``, the left's as ``platform0/``, the cylinder
    ``object0/`` and the contacts ``sensors/``."""
    from hsa_elastica.io.recording import combine

    left, right = (f.diagnostics() for f in scene["fingers"])
    names = {c: c for c in left.columns if c.startswith("rod")}
    names.update({c: "platform0/" + c[len("platform/"):] for c in left.columns if c.startswith("platform/")})
    df = left[["time", *names]].rename(columns=names)
    ren = {c: f"rod{int(c[3]) + 2}{c[4:]}" for c in right.columns if c.startswith("rod")}
    ren.update({c: c for c in right.columns if c.startswith("platform/")})
    df = pd.concat([df, right[list(ren)].rename(columns=ren)], axis=1)
    others = combine({k: r.to_dataframe() for k, r in scene["recorders"].items()})
    return pd.concat([df, others.drop(columns="time")], axis=1)


def video(scene: dict[str, Any], path: str, speed: float) -> int:
    """The clip of the recorded run: the fingers, the floor, the cylinder and the forces."""
    from hsa_elastica.io import render
    from hsa_elastica.io.render_data import RodsView, frame_times, positions, resample
    from hsa_elastica.io.render_scene import RobotScene
    from hsa_elastica.io.render_world import World, _contact_track, _Touch, object_tracks

    p = scene["params"]
    df = frame_of(scene)
    t = df["time"].to_numpy()
    sub = resample(df, frame_times(float(t[0]), float(t[-1]), fps=30.0, speed=speed))
    rods = [positions(sub, f"rod{i}/") for i in range(4)]
    objects = object_tracks(sub, [("cylinder", R_CYL, L_CYL)])
    world = World(obstacles=(scene["floor"],), objects=objects, plane_half=0.06,
                  length=float(p.rod.length))
    touches = [_Touch(-2, scene["floor"], 0)] + [_Touch(r, None, 0, True) for r in range(4)]
    world.contacts = [_contact_track(sub, k, tch, rods, None, objects) for k, tch in enumerate(touches)]
    view: Any = RodsView(p.rod, (*p.handedness, *p.handedness), p.circle_radius, p.platform)
    scene_ = RobotScene(sub, view, world=world, show_frames=False, speed=speed, show_base=False,
                        title="gripper: close on a cylinder, then shorten")
    try:
        writer = render._open_writer(render.check_output_path(path, "video"), 30.0)
        for k in range(len(sub)):
            scene_.update(k)
            writer.append_data(scene_.image())
        writer.close()
    finally:
        scene_.close()
    return len(sub)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--duration", type=float, default=2.0,
                    help="simulated time [s], > 0 and <= 20 (default: 2.0)")
    ap.add_argument("--extend", type=float, default=0.6,
                    help="common twist of the fingers' motors while closing, a fraction of "
                         "their range pi rad in [0, 1] (default: 0.6)")
    ap.add_argument("--squeeze", type=float, default=0.4,
                    help="twist added to each finger's outer rod to bend it onto the cylinder, "
                         "a fraction of the range in [0, 1 - extend] (default: 0.4)")
    ap.add_argument("--mass", type=float, default=0.005,
                    help="mass of the cylinder [kg], > 0 and <= 1 (default: 0.005)")
    ap.add_argument("--video", default=None,
                    help="path of an mp4 of the run (default: none)")
    ap.add_argument("--integrator", choices=list(STEPPERS), default="operators",
                    help="operators: PyElastica's loop (the reference, dt 4e-5 s); explicit: "
                         "the fused compiled step (dt 4e-5 s); implicit: the compiled implicit "
                         "integrator (dt 5e-4 s) (default: operators)")
    args = ap.parse_args(argv)
    if not 0.0 < args.duration <= 20.0:
        ap.error(f"--duration = {args.duration} is invalid: must be > 0 and <= 20 s")
    if not 0.0 <= args.extend <= 1.0:
        ap.error(f"--extend = {args.extend} is invalid: must be in [0, 1]")
    if not 0.0 <= args.squeeze <= 1.0 - args.extend:
        ap.error(f"--squeeze = {args.squeeze} is invalid: must be in [0, {1.0 - args.extend:g}] "
                 "(1 - --extend)")
    if not 0.0 < args.mass <= 1.0:
        ap.error(f"--mass = {args.mass} is invalid: must be > 0 and <= 1 kg")
    if args.video is not None:
        from hsa_elastica.io.render import check_output_path

        try:
            check_output_path(args.video, "video", flag="--video")
        except ValueError as e:
            ap.error(str(e))
    scene = build(args.duration, args.extend, args.squeeze, args.mass, args.video is not None,
                  args.integrator)
    run(scene, args.duration)
    if args.video is not None:
        n = video(scene, args.video, speed=0.5)
        print(f"saved {args.video} ({n} frames)")
    return 0


def run(scene: dict[str, Any], duration: float) -> None:
    """Run the scene as its stepper says (PyElastica's loop, or a compiled engine stepping the
    whole simulator: both fingers, the cylinder and the contacts), printing the cylinder's
    state every tenth of the run and the wall time."""
    import time

    finger = scene["fingers"][0]
    if scene["stepper"] != "operators":
        from hsa_elastica.robots.compiled import compiled_engine

        finger = compiled_engine(finger)
    cyl = scene["cylinder"]
    wall0 = time.perf_counter()
    z0 = float(cyl.position_collection[2, 0])
    for _ in range(10):
        finger.run(duration / 10)
        grips = scene["contacts"][1:]
        force = -sum(r.instance.total_force for r in grips)
        stick = sum(int(r.instance.sticking.sum()) for r in grips)
        slide = sum(int(r.instance.sliding.sum()) for r in grips)
        floor = scene["contacts"][0].instance.total_force[2]
        tips = -sum(r.instance.total_force[2] for r in grips[-2:])  # the two platforms'
        print(f"t = {finger.time:5.2f} s  cylinder z = {(cyl.position_collection[2, 0] - z0) * 1e3:+7.2f} mm"
              f"  fingers' force on it = {np.round(force, 4)} N (platforms' z {tips:.4f} N)"
              f"  ({stick} sticking, {slide} sliding)  floor: {floor:.4f} N")
    wall = time.perf_counter() - wall0
    print(f"{scene['stepper']}: {duration:g} s simulated in {wall:.2f} s wall "
          f"(real-time factor {duration / wall:.3g})")


if __name__ == "__main__":
    sys.exit(main())
