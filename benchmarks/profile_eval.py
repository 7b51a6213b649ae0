#!/usr/bin/env python
"""One force evaluation of ``HSARobot-v1`` split by part, next to PyElastica's rod kernels.

The implicit integrator's Newton iteration evaluates
:func:`~hsa_elastica.engines.implicit_kernels.dynamic_forces` (the residual), which wraps
:func:`~hsa_elastica.physics.forces.evaluate_forces`.  This script times, each in its own
compiled loop on the env's model after 5 env steps (moving rods, initialised operators):

* ``dynamic_forces`` and ``evaluate_forces`` whole;
* the parts of ``evaluate_forces``: the motors' and rod ends' values (``constrain_values``),
  the rotation logs of the block, the auxetic couplings (Eq. 2-5), the rods' internal forces
  and internal torques, the joints and motor mounts (Eq. 6-7) and gravity (these two as the
  difference of ``evaluate_forces`` with only their rows in the synchronize program and with
  an empty one);
* the residual's own parts around it: velocities in and the boundary conditions' rates, the
  external forces zeroed, the dampers as forces (linear and Kelvin-Voigt), the gyroscopic
  couples with the forces gathered out; "rest" is ``dynamic_forces`` minus all parts;
* PyElastica's own ``_compute_internal_forces`` + ``_compute_internal_torques`` on a stock
  ``CosseratRod`` of as many elements as the rod block (ghosts included), same run.

Each cell: µs per call and ns per element of the rod block; CPU time of this process, best of
``--reps`` repetitions of ``--calls`` calls (robust on a shared machine).  The parts do not add
up exactly to the whole (their memory traffic overlaps differently in one loop).  Run with
``PYTHONPATH`` pointing at another checkout to time that checkout's kernels (the script uses
only names present before and after the evaluation was made cheaper).

The loops borrow their records (:func:`~hsa_elastica.physics.borrow.borrowed`) as the
engines' kernels do, so a part costs here what it costs inside a step; with ``PYTHONPATH`` at a
checkout whose engines count the records' references, the loops count them too.

The loops here are compiled on each run (not cached): numba keys a cached kernel on its own
file only, so a cached loop would keep the package's kernels as they were when it was first
compiled (the package's own cache is kept in step by ``hsa_elastica.kernel_cache``).

Usage::

    python benchmarks/profile_eval.py [--rows coarse,full] [--calls 2000] [--reps 7]
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

import numpy as np
from numba import njit

from hsa_elastica.engines.implicit_kernels import (
    damper_forces,
    dynamic_forces,
    gyroscopic_couples,
    scatter_velocities,
)
from hsa_elastica.engines.statics_kernels import gather_forces, zero_external
from hsa_elastica.physics.forces import (
    apply_couplings,
    constrain_rates,
    constrain_values,
    evaluate_forces,
)
from hsa_elastica.physics.rod_kernels import (
    internal_forces_inplace,
    internal_torques_inplace,
    rotation_log_inplace,
)
try:
    from hsa_elastica.physics.borrow import borrowed
except ImportError:  # a checkout whose engines count references: count them here too
    @njit  # type: ignore[misc]
    def borrowed(records):  # type: ignore[no-untyped-def]
        return records
from hsa_elastica.physics.tables import (
    OP_GRAVITY_BODY,
    OP_GRAVITY_ROD,
    OP_JOINT_FORCE,
    OP_JOINT_TORQUE,
    OP_MOUNT_REACTION,
    ForcingTables,
)


@njit  # type: ignore[misc]
def _dynamic(n, ang, rat, v, model, terms, f, m):  # type: ignore[no-untyped-def]
    ang, rat, v, model, terms, f, m = borrowed((ang, rat, v, model, terms, f, m))
    for _ in range(n):
        dynamic_forces(0.1, ang, rat, v, model, terms, f, m)


@njit  # type: ignore[misc]
def _evaluate(n, ang, model, sync, values):  # type: ignore[no-untyped-def]
    ang, model, sync, values = borrowed((ang, model, sync, values))
    rod, body, tb, work, status = model
    forcings = ForcingTables(tb.rod_gravity, tb.body_gravity, tb.loads, tb.compression,
                             tb.contacts, tb.laws)
    for _ in range(n):
        zero_external(rod, body)
        evaluate_forces(0.1, ang, rod, body, tb.couplings, tb.joints, tb.motors, tb.ends,
                        forcings, (sync, values), work, status)


@njit  # type: ignore[misc]
def _values(n, ang, model):  # type: ignore[no-untyped-def]
    ang, model = borrowed((ang, model))
    rod, body, tb, _, _ = model
    motors, ends, program = tb.motors, tb.ends, tb.values_program
    for _ in range(n):
        constrain_values(program, motors, ang, rod, ends, body)


@njit  # type: ignore[misc]
def _rotation_log(n, model):  # type: ignore[no-untyped-def]
    model = borrowed(model)
    rod, _, _, work, _ = model
    for _ in range(n):
        rotation_log_inplace(rod.director, work.vor3)


@njit  # type: ignore[misc]
def _couplings(n, model):  # type: ignore[no-untyped-def]
    model = borrowed(model)
    rod, _, tb, work, _ = model
    c = tb.couplings
    program = tb.sync_program
    status = np.zeros(4)
    for _ in range(n):
        apply_couplings(program, c, 0.1, rod, work.vor3, status)


@njit  # type: ignore[misc]
def _forces(n, model):  # type: ignore[no-untyped-def]
    model = borrowed(model)
    rod, _, _, work, _ = model
    for _ in range(n):
        internal_forces_inplace(rod, work)


@njit  # type: ignore[misc]
def _torques(n, model):  # type: ignore[no-untyped-def]
    model = borrowed(model)
    rod, _, _, work, _ = model
    for _ in range(n):
        internal_torques_inplace(rod, work, True)


@njit  # type: ignore[misc]
def _velocities(n, rat, v, model, terms):  # type: ignore[no-untyped-def]
    rat, v, model, terms = borrowed((rat, v, model, terms))
    rod, body, tb, _, _ = model
    motors, dr, db, material, ends = tb.motors, tb.rod_dampers, tb.body_dampers, tb.material, tb.ends
    unknowns, bc = terms.unknowns, terms.bc_program
    for _ in range(n):
        scatter_velocities(v, rod, body, unknowns)
        constrain_rates(bc, motors, rat, dr, db, material, rod, body, ends)


@njit  # type: ignore[misc]
def _zero(n, model):  # type: ignore[no-untyped-def]
    model = borrowed(model)
    rod, body, _, _, _ = model
    for _ in range(n):
        zero_external(rod, body)


@njit  # type: ignore[misc]
def _dampers(n, model, terms):  # type: ignore[no-untyped-def]
    model, terms = borrowed((model, terms))
    rod, body, tb, _, _ = model
    material = tb.material
    program, dr, db = terms.damp_program, terms.rod_damping, terms.body_damping
    for _ in range(n):
        damper_forces(program, dr, db, material, rod, body)


@njit  # type: ignore[misc]
def _gather(n, model, terms, out):  # type: ignore[no-untyped-def]
    model, terms, out = borrowed((model, terms, out))
    rod, body, _, _, _ = model
    unknowns = terms.unknowns
    for _ in range(n):
        gyroscopic_couples(body)
        gather_forces(rod, body, unknowns, out)


def _best(fn: Callable[..., None], args: tuple[Any, ...], calls: int, reps: int) -> float:
    """Best CPU time [us] per call of the compiled loop ``fn`` over ``reps`` repetitions."""
    fn(2, *args)
    best = float("inf")
    for _ in range(reps):
        t0 = time.process_time()
        fn(calls, *args)
        best = min(best, (time.process_time() - t0) / calls * 1e6)
    return best


def _only(program: np.ndarray, codes: tuple[int, ...]) -> np.ndarray:
    return np.ascontiguousarray(program[np.isin(program[:, 0], codes)])


def _pyelastica(n_el: int, calls: int, reps: int) -> float:
    """PyElastica's internal forces + torques of one stock rod of ``n_el`` elements [us]."""
    from elastica.rod.cosserat_rod import CosseratRod

    import bench_envs  # this folder (the script's directory is on sys.path)

    pyelastica = bench_envs._loops()[3]
    r = CosseratRod.straight_rod(n_el, np.zeros(3), np.array([0.0, 0.0, 1.0]),
                                 np.array([1.0, 0.0, 0.0]), 0.1, 0.005, 1e3,
                                 youngs_modulus=1e6, shear_modulus=3e5)
    arrays = (
        r.position_collection, r.volume, r.lengths, r.tangents, r.radius, r.rest_lengths,
        r.rest_voronoi_lengths, r.dilatation, r.voronoi_dilatation, r.director_collection,
        r.sigma, r.rest_sigma, r.shear_matrix, r.internal_stress, r.internal_forces,
        r.ghost_elems_idx, r.velocity_collection, r.bend_matrix, r.rest_kappa, r.kappa,
        r.mass_second_moment_of_inertia, r.omega_collection, r.internal_couple,
        r.dilatation_rate, r.internal_torques, r.ghost_voronoi_idx)
    return _best(pyelastica, (arrays,), calls, reps)


def profile(disc: str, calls: int, reps: int) -> tuple[int, dict[str, float]]:
    """Elements of the rod block and the parts' CPU time [us per call] on ``HSARobot-v1``."""
    import bench_envs

    env = bench_envs._make("HSARobot-v1", discretization=disc)
    env.reset(seed=0)
    for a in bench_envs._actions("random", 5, 4):
        env.step(a)
    eng = env.unwrapped.robot.engine
    model, terms = eng.newton_records()[:2]
    tb = model.tables
    n_el = model.rod.director.shape[2]
    ang = np.zeros(eng.solver.n_motors)
    v = eng.v.copy()
    f, m = np.zeros(eng.n), np.zeros(eng.n)
    empty = tb.sync_program[:0].copy()
    joints = _only(tb.sync_program, (OP_JOINT_FORCE, OP_JOINT_TORQUE, OP_MOUNT_REACTION))
    gravity = _only(tb.sync_program, (OP_GRAVITY_ROD, OP_GRAVITY_BODY))
    t = {
        "dynamic_forces (the residual, whole)": _best(
            _dynamic, (ang, ang, v, model, terms, f, m), calls, reps),
        "evaluate_forces (whole)": _best(
            _evaluate, (ang, model, tb.sync_program, tb.values_program), calls, reps),
        "  motors and ends: values": _best(_values, (ang, model), calls, reps),
        "  rotation logs of the block": _best(_rotation_log, (model,), calls, reps),
        "  auxetic couplings (Eq. 2-5)": _best(_couplings, (model,), calls, reps),
        "  rod internal forces": _best(_forces, (model,), calls, reps),
        "  rod internal torques": _best(_torques, (model,), calls, reps),
    }
    base = _best(_evaluate, (ang, model, empty, empty), calls, reps)
    t["  joints and motor mounts (Eq. 6-7)"] = max(
        _best(_evaluate, (ang, model, joints, empty), calls, reps) - base, 0.0)
    t["  gravity"] = max(_best(_evaluate, (ang, model, gravity, empty), calls, reps) - base, 0.0)
    t["velocities in + rates of the held ends"] = _best(
        _velocities, (ang, v, model, terms), calls, reps)
    t["external forces zeroed"] = _best(_zero, (model,), calls, reps)
    t["dampers as forces (linear, Kelvin-Voigt)"] = _best(_dampers, (model, terms), calls, reps)
    t["gyroscopic couples + forces out"] = _best(_gather, (model, terms, f), calls, reps)
    env.close()
    parts = sum(v_ for k, v_ in t.items() if not k.startswith(("dynamic", "evaluate")))
    t["rest of the residual (dynamic_forces minus the parts)"] = t[
        "dynamic_forces (the residual, whole)"] - parts
    t["PyElastica internal forces + torques, one rod"] = _pyelastica(n_el, calls, reps)
    return n_el, t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="coarse,full",
                    help="comma-separated discretizations of HSARobot-v1 (default coarse,full)")
    ap.add_argument("--calls", type=int, default=2000, help="calls per repetition (default 2000)")
    ap.add_argument("--reps", type=int, default=7, help="repetitions, best kept (default 7)")
    a = ap.parse_args()
    rows = a.rows.split(",")
    bad = [r for r in rows if r not in ("coarse", "full")]
    if bad or a.calls < 1 or a.reps < 1:
        ap.error(f"--rows must be a subset of coarse,full (got {a.rows!r}); --calls and --reps "
                 "must be >= 1")
    results = [profile(disc, a.calls, a.reps) for disc in rows]
    head = " | ".join(f"{d} ({n} el.) [us] | [ns/el.]" for d, (n, _) in zip(rows, results))
    print(f"| part | {head} |")
    print("|---|" + "---:|---:|" * len(rows))
    for key in results[0][1]:
        cells = " | ".join(f"{t[key]:.2f} | {t[key] / n * 1e3:.0f}" for n, t in results)
        print(f"| {key} | {cells} |")


if __name__ == "__main__":
    main()
