"""Dump the state arrays of short fused runs and of static solves to one ``.npz`` (refactor check).

A refactor of the engine layer must leave every trajectory bit-identical.  This script runs

* the seven motion primitives of the paper robot on the fused path (``build_fast_robot``,
  0.3 s of the ramp by default, Kelvin-Voigt damping on as by default);
* a variant robot exercising the optional laws (passive coupling with its reciprocal couple,
  the twist filter, the quadratic laws, twist-dependent moduli) on the fused path;
* a two-stage stack on compliant motor mounts and one on rigid torque-driven mounts;
* a few static poses of the robot (``solve_static``, no stability check or fallback) and a
  single-rod static solve (``solve_static_rod``),

and saves every state / table array reached into one ``.npz``.  ``--compare OTHER.npz``
compares the new dump with an old one array by array (``np.array_equal``, NaNs equal) and
exits 1 on the first difference list.

Usage::

    python benchmarks/dump_trajectories.py --out /tmp/before.npz
    python benchmarks/dump_trajectories.py --out /tmp/after.npz --compare /tmp/before.npz
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

import numpy as np


def _tables(prefix: str, model: Any, out: dict[str, np.ndarray]) -> None:
    """Every array field of every NamedTuple table of a compiled model (the law tables held
    in ``model.tables`` under their own names, as when they were fields of the model)."""
    records = {name: getattr(model, name, None) for name in dir(model) if not name.startswith("_")}
    tables = records.get("tables")
    if isinstance(tables, tuple) and hasattr(tables, "_fields"):
        records.update(tables._asdict())
    for name, value in records.items():
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            for field in value._fields:
                arr = getattr(value, field)
                if isinstance(arr, np.ndarray):
                    out[f"{prefix}/{name}.{field}"] = np.array(arr, copy=True)
        elif isinstance(value, np.ndarray):
            out[f"{prefix}/{name}"] = np.array(value, copy=True)


def _fused(prefix: str, robot: Any, duration: float, out: dict[str, np.ndarray]) -> None:
    robot.run(duration)
    out[f"{prefix}/time"] = np.array([robot.time])
    _tables(prefix, robot.model, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--compare", default=None)
    ap.add_argument("--duration", type=float, default=0.3)
    ap.add_argument("--skip-primitives", action="store_true", help="(debugging the script)")
    args = ap.parse_args(argv)

    from hsa_elastica.robots.compiled import FastRobot
    from hsa_elastica.params import JointParams, paper_robot_params
    from hsa_elastica.robots.builders import build_fast_robot
    from hsa_elastica.robots.primitives import PRIMITIVES, primitive_angles
    from hsa_elastica.robots.rod_statics import solve_static_rod
    from hsa_elastica.robots.stack import build_stack
    from hsa_elastica.robots.statics_api import solve_static

    out: dict[str, np.ndarray] = {}
    params = paper_robot_params()
    for name in PRIMITIVES if not args.skip_primitives else ():
        angles = primitive_angles(name, 1.0, params)
        robot = build_fast_robot(params, angles, record=False)
        _fused(f"prim/{name}", robot, args.duration, out)
        print(name, "done", file=sys.stderr)

    laws = {
        "passive": dict(coupling_law="passive", C_eps2=1e-5, E_quad=400.0, E_slope=5000.0,
                        G_slope=100.0, twist_rigidity_slope=-2e-5, twist_rigidity_quad=1e-6,
                        bend_rigidity_slope=1e-4),
        "filtered": dict(twist_filter_time=0.01, C_eps2=1e-5, E_slope=5000.0,
                         twist_rigidity_slope=-2e-5),
    }
    for label, changes in laws.items():
        variant = dataclasses.replace(
            params, rod=dataclasses.replace(params.rod, **changes),
            joint=JointParams(k_F=5e5, nu_F=0.2, k_tau=20.0, nu_tau=0.001),
        )
        robot = build_fast_robot(variant, primitive_angles("bend_north", 1.0, variant),
                                 record=False)
        _fused(f"variant/{label}", robot, args.duration, out)
    print("variant done", file=sys.stderr)

    seg = dataclasses.replace(params, rod=dataclasses.replace(params.rod, n_elements=10))
    angles = [primitive_angles("twist_cw", 1.0, seg), primitive_angles("bend_east", 1.0, seg)]
    stack = build_stack([seg, seg], angles, motor_mass=0.02, record=False,
                        mount=JointParams(k_F=5e5, nu_F=0.0, k_tau=20.0, nu_tau=0.0))
    _fused("stack/compliant", FastRobot(stack), args.duration, out)
    torques = [[0.01, -0.01, 0.01, -0.01], [0.0, 0.005, 0.0, -0.005]]
    try:
        stack = build_stack([seg, seg], torques, record=False, drive="torque")
        _fused("stack/torque", FastRobot(stack), args.duration, out)
    except Exception as exc:  # a set-up the fused path does not support is simply skipped
        print("stack/torque skipped:", exc, file=sys.stderr)
    print("stacks done", file=sys.stderr)

    for name in ("elongation", "bend_north", "twist_ccw"):
        res = solve_static(params, primitive_angles(name, 0.8, params), check_stability=False,
                           fallback=False)
        out[f"static/{name}/platform"] = np.concatenate(
            [res.platform_position_m, res.platform_quaternion_xyzw]
        )
        out[f"static/{name}/tips"] = np.asarray(res.rod_tip_positions_m, float)
        if res.state is not None:
            for k, arr in enumerate(res.state if isinstance(res.state, tuple) else [res.state]):
                if isinstance(arr, np.ndarray):
                    out[f"static/{name}/state{k}"] = arr
        out[f"static/{name}/iterations"] = np.array([res.iterations])
    rod_res = solve_static_rod(params.rod, angle=1.5, tip_force=(0.0, 0.0, -1.0),
                               check_stability=False)
    out["rod/positions"] = rod_res.positions_m
    out["rod/directors"] = rod_res.directors
    out["rod/scalars"] = np.array([rod_res.length_m, rod_res.holding_torque_Nm,
                                   rod_res.distal_axial_force_N, rod_res.iterations])
    print("statics done", file=sys.stderr)

    np.savez(args.out, **out)
    print(f"{len(out)} arrays -> {args.out}")
    if args.compare is None:
        return 0
    old = np.load(args.compare)
    bad = sorted(set(old.files) - set(out))  # (new keys, e.g. a new table view, are allowed)
    for key in sorted(set(old.files) & set(out)):
        a, b = old[key], out[key]
        if a.shape != b.shape or a.dtype != b.dtype or not np.array_equal(a, b, equal_nan=True):
            bad.append(key)
    if bad:
        print(f"DIFFERENT ({len(bad)}): " + ", ".join(bad[:30]))
        return 1
    print(f"IDENTICAL: {len(out)} arrays bitwise equal")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
