#!/usr/bin/env python
"""Cost of the contact law's kernels per contact point, side by side with another checkout.

Times :func:`~hsa_elastica.physics.contact_laws.contact_forces` and
:func:`~hsa_elastica.physics.contact_laws.contact_tangent` on 2000 points near each obstacle
kind (a plane, a sphere, a capsule's side, a box's edge; points within a few smoothing lengths,
moving at about the slip velocity: every point inside the law's reach), CPU time of the
process, best of ``--reps`` repetitions.  With ``--against DIR`` the same measurement runs on
the checkout ``DIR`` (its own ``NUMBA_CACHE_DIR``) in alternation with this one, and the
ratios this / other are printed (kinds the other checkout lacks are skipped)::

    python benchmarks/bench_contact_law.py
    python benchmarks/bench_contact_law.py --against /path/to/other/checkout --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent.parent
N = 2000


def _obstacles() -> dict[str, object]:
    from hsa_elastica import params

    out: dict[str, object] = {
        "plane": params.PlaneObstacle(),
        "sphere": params.SphereObstacle(radius=0.05),
        "capsule": params.CapsuleObstacle(start=(0.0, 0.0, -0.1), end=(0.0, 0.0, 0.1), radius=0.05),
    }
    if hasattr(params, "BoxObstacle"):
        out["box"] = params.BoxObstacle(size=(0.1, 0.1, 0.2), edge_radius=0.01)
    return out


def _points(kind: str, rng: np.random.Generator) -> np.ndarray:
    """Points a few smoothing lengths (0.1 mm) from the surface of ``kind``."""
    off = 1e-4 * rng.uniform(-3.0, 3.0, N)
    if kind == "plane":
        return np.vstack([rng.uniform(-0.1, 0.1, (2, N)), off])
    phi = rng.uniform(0.0, 2 * np.pi, N)
    if kind == "sphere":
        u = rng.normal(size=(3, N))
        return (0.05 + off) * u / np.linalg.norm(u, axis=0)
    if kind == "capsule":
        return np.vstack([(0.05 + off) * np.cos(phi), (0.05 + off) * np.sin(phi),
                          rng.uniform(-0.1, 0.1, N)])
    # the box's vertical edges: round (radius 1 cm) about the inner box's corners (4 cm)
    sx, sy = np.sign(np.cos(phi)), np.sign(np.sin(phi))
    ang = rng.uniform(0.0, 0.5 * np.pi, N)
    return np.vstack([sx * (0.04 + (0.01 + off) * np.cos(ang)),
                      sy * (0.04 + (0.01 + off) * np.sin(ang)), rng.uniform(-0.09, 0.09, N)])


def measure(reps: int) -> dict[str, list[float]]:
    """``{kind: [forces ns/point, tangent ns/point]}`` of this process's checkout."""
    from hsa_elastica.params import ContactParams
    from hsa_elastica.physics.contact_laws import (
        ContactOutput, ContactPoints, contact_forces, contact_tangent, geometry_record, law_record)

    rng = np.random.default_rng(0)
    law = law_record(ContactParams(stiffness=1e3, smoothing_length=1e-4, damping_ratio=0.5,
                                   friction_coefficient=0.5))
    out: dict[str, list[float]] = {}
    for kind, obstacle in _obstacles().items():
        pts = ContactPoints(np.ascontiguousarray(_points(kind, rng)), 1e-3 * rng.normal(size=(3, N)),
                            np.zeros(N), np.full(N, 1e-3))
        res = ContactOutput(np.zeros((3, N)), np.zeros(N), np.zeros(N))
        dx, dv = np.zeros((3, 3, N)), np.zeros((3, 3, N))
        geom = geometry_record(obstacle)
        contact_forces(pts, geom, law, res)  # compile / load
        contact_tangent(pts, geom, law, dx, dv)
        best = [np.inf, np.inf]
        for _ in range(reps):
            t0 = time.process_time()
            for _ in range(100):
                contact_forces(pts, geom, law, res)
            t1 = time.process_time()
            for _ in range(20):
                contact_tangent(pts, geom, law, dx, dv)
            t2 = time.process_time()
            best = [min(best[0], (t1 - t0) / 100 / N * 1e9), min(best[1], (t2 - t1) / 20 / N * 1e9)]
        out[kind] = best
    return out


def _run(checkout: Path, cache: str, reps: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(checkout), "NUMBA_CACHE_DIR": cache,
           "HSA_ELASTICA_CACHE_CHECK": "0"}
    code = f"import json, sys; sys.path.insert(0, {str(HERE / 'benchmarks')!r}); " \
           f"import bench_contact_law as b; print(json.dumps(b.measure({reps})))"
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=checkout, check=True,
                          capture_output=True, text=True)
    return json.loads(proc.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--against", type=Path, default=None)
    args = ap.parse_args()
    if args.against is None:
        for kind, (f, t) in measure(args.reps).items():
            print(f"{kind:8s} forces {f:6.1f} ns/point  tangent {t:6.1f} ns/point")
        return
    with tempfile.TemporaryDirectory() as mine, tempfile.TemporaryDirectory() as theirs:
        best: dict[str, dict[str, list[float]]] = {"this": {}, "other": {}}
        for _ in range(args.rounds):  # alternate: both see the same load
            for who, checkout, cache in (("this", HERE, mine), ("other", args.against, theirs)):
                for kind, vals in _run(checkout, cache, args.reps).items():
                    old = best[who].get(kind, [np.inf, np.inf])
                    best[who][kind] = [min(a, b) for a, b in zip(old, vals)]
    for kind, (f, t) in best["this"].items():
        if kind not in best["other"]:
            print(f"{kind:8s} forces {f:6.1f} ns/point  tangent {t:6.1f} ns/point  (other: none)")
            continue
        of, ot = best["other"][kind]
        print(f"{kind:8s} forces {f:6.1f} / {of:6.1f} ns/point = {f / of:.2f}   "
              f"tangent {t:6.1f} / {ot:6.1f} ns/point = {t / ot:.2f}")


if __name__ == "__main__":
    main()
