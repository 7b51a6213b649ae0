"""Shared small helpers for the physics tests.

Import the helpers directly (``from conftest import make_tube_rod, RodSimulator, ...``); pytest
puts ``tests/`` on ``sys.path``.  Everything here is plain PyElastica 1.0 (no hsa_elastica
module), so tests of any module may use it.

The hooks at the end fill numba's kernel cache once, before any test runs: in a plain run, or in
the pytest-xdist controller before its workers start (setup.cfg), the package's
parallel precompilation (:func:`hsa_elastica.engines.precompile.precompile`, one process per
core) compiles the kernel table (both integrators and the envs); the workers then load every
kernel instead of each compiling the same ones inside whichever test first calls them.  ``HSA_ELASTICA_PRECOMPILE=0``
skips this (the kernels then compile on first use, in the test that calls them).  Tests that
share a module-scoped fixture run on one worker (``pytest_collection_modifyitems``).  Without
pytest-xdist (``-p no:xdist``, or not installed) the options setup.cfg gives it
(``--numprocesses``, ``--maxprocesses``, ``--dist``) are accepted and ignored, so they never
break a plain run.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any

import numpy as np
import pytest
from elastica import (
    AnalyticalLinearDamper,
    BaseSystemCollection,
    CallBacks,
    Connections,
    Constraints,
    CosseratRod,
    Damping,
    Forcing,
    PositionVerlet,
)


class RodSimulator(BaseSystemCollection, Constraints, Forcing, Connections, Damping, CallBacks):
    """Minimal PyElastica system collection with every module the project uses."""


# Table I, 4 row tilings (Section II-C) as read by params.table1_rod_params(4): outer radius
# 19 mm, wall 2 mm, E0 = 576.9 kPa (+ 36.1 kPa per rad/m), B_z = 0.00375 N m^2,
# C_eps = 3.04e-3 m/rad, 10 elements, rho = 1050 kg/m^3, G = E/3.
TABLE1_ROW4: dict[str, Any] = dict(
    n_elements=10,
    length=0.075,
    outer_radius=0.019,
    wall_thickness=0.002,
    density=1050.0,
    youngs_modulus=576.9e3,
    shear_modulus=576.9e3 / 3.0,
    bend_rigidity=None,
    twist_rigidity=0.00375,
)
TABLE1_ROW4_C_EPS = 3.04e-3  # m/rad
TABLE1_ROW4_E_SLOPE = 36.1e3  # Pa m/rad

# Paper robot rod (Section II-E, contract defaults).
PAPER_ROD: dict[str, Any] = dict(
    n_elements=25,
    length=0.100,
    outer_radius=0.0127,
    wall_thickness=0.00243,
    density=1050.0,
    youngs_modulus=10e6,
    shear_modulus=0.6e6,
    bend_rigidity=0.02,
    twist_rigidity=0.014,
)


def tube_section(outer_radius: float, wall_thickness: float) -> tuple[float, float]:
    """Return (area [m^2], second moment I_xx [m^4]) of a hollow tube."""
    ri = outer_radius - wall_thickness
    area = math.pi * (outer_radius**2 - ri**2)
    second = math.pi / 4.0 * (outer_radius**4 - ri**4)
    return area, second


def make_tube_rod(
    n_elements: int = 10,
    length: float = 0.075,
    outer_radius: float = 0.019,
    wall_thickness: float = 0.002,
    density: float = 1050.0,
    youngs_modulus: float = 576.9e3,
    shear_modulus: float | None = None,
    bend_rigidity: float | None = None,
    twist_rigidity: float | None = None,
    start: tuple[float, float, float] = (0.0, 0.0, 0.0),
    direction: tuple[float, float, float] = (0.0, 0.0, 1.0),
    normal: tuple[float, float, float] = (1.0, 0.0, 0.0),
) -> CosseratRod:
    """Straight hollow-tube ``CosseratRod`` (SI units).

    Built with the equivalent solid radius ``sqrt(A/pi)`` (so mass and ``S = diag(alpha_c G A,
    alpha_c G A, E A)`` are those of the tube), then the bend/twist matrix and the mass second
    moments are overwritten with the tube values: ``B = diag(B_xy, B_xy, B_z)`` (defaults
    ``E I`` and ``G J``), ``J_mass = rho l diag(I, I, 2 I)``.
    """
    G = youngs_modulus / 3.0 if shear_modulus is None else shear_modulus
    area, I = tube_section(outer_radius, wall_thickness)
    B_xy = youngs_modulus * I if bend_rigidity is None else bend_rigidity
    B_z = G * 2.0 * I if twist_rigidity is None else twist_rigidity
    rod = CosseratRod.straight_rod(
        n_elements,
        np.array(start, dtype=float),
        np.array(direction, dtype=float),
        np.array(normal, dtype=float),
        length,
        math.sqrt(area / math.pi),
        density,
        youngs_modulus=youngs_modulus,
        shear_modulus=G,
    )
    rod.bend_matrix[0, 0, :] = B_xy
    rod.bend_matrix[1, 1, :] = B_xy
    rod.bend_matrix[2, 2, :] = B_z
    l = rod.rest_lengths
    J = np.zeros((3, 3, n_elements))
    J[0, 0, :] = density * I * l
    J[1, 1, :] = density * I * l
    J[2, 2, :] = density * 2.0 * I * l
    rod.mass_second_moment_of_inertia[:] = J
    rod.inv_mass_second_moment_of_inertia[:] = 0.0
    for d in range(3):
        rod.inv_mass_second_moment_of_inertia[d, d, :] = 1.0 / J[d, d, :]
    return rod


def add_rate_damping(
    sim: RodSimulator,
    rod: CosseratRod,
    dt: float,
    translational: float,
    rotational: float,
) -> None:
    """``AnalyticalLinearDamper`` with rates in 1/s (velocity ~ exp(-rate t)).

    PyElastica's physical protocol divides ``translational_damping_constant`` by the nodal mass
    and multiplies ``rotational_damping_constant`` by the inverse mass moment of inertia; passing
    ``rate * mass`` and ``rate * J`` (arrays) makes the decay rates exactly ``translational`` and
    ``rotational`` [1/s] for every node/element (the contract's SimulationParams meaning).
    """
    sim.dampen(rod).using(
        AnalyticalLinearDamper,
        translational_damping_constant=translational * np.array(rod.mass),
        rotational_damping_constant=rotational
        * np.diagonal(rod.mass_second_moment_of_inertia).T.copy(),
        time_step=dt,
    )


def run_steps(sim: RodSimulator, dt: float, n_steps: int, t0: float = 0.0) -> float:
    """Finalize (if needed) and advance ``sim`` by ``n_steps`` Position Verlet steps."""
    if not getattr(sim, "_finalize_flag", False):
        sim.finalize()
    stepper = getattr(sim, "_test_stepper", None)
    if stepper is None:
        stepper = PositionVerlet()
        sim._test_stepper = stepper  # type: ignore[attr-defined]
    t = np.float64(t0)
    for _ in range(n_steps):
        t = stepper.step(sim, t, np.float64(dt))
    return float(t)


def find_operators(sim: RodSimulator, cls: type) -> list[Any]:
    """Instances of forcing/constraint class ``cls`` that a finalized ``sim`` created.

    PyElastica instantiates operators inside ``finalize()`` and keeps only bound methods wrapped
    in ``functools.partial``; this digs the instances out (for diagnostics in tests).
    """
    found: list[Any] = []
    groups = (sim._feature_group_synchronize, sim._feature_group_constrain_values)
    for group in groups:
        for op in group:
            owner = getattr(getattr(op, "func", None), "__self__", None)
            if isinstance(owner, cls) and not any(owner is f for f in found):
                found.append(owner)
    return found


# ------------------------------------------------------------------------ session set-up hooks
def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Stand-ins for pytest-xdist's options in setup.cfg's ``addopts`` (written long there:
    ``--numprocesses``, ``--maxprocesses``, ``--dist``) when it is blocked (``-p no:xdist``) or
    not installed: the options then still parse, and the run is a plain one."""
    if pluginmanager.has_plugin("xdist"):
        return
    group = parser.getgroup("xdist stand-in", "pytest-xdist is not active: ignored")
    group.addoption("--numprocesses", dest="numprocesses", default=None,
                    help="ignored without pytest-xdist")
    group.addoption("--maxprocesses", dest="maxprocesses", default=None,
                    help="ignored without pytest-xdist")
    group.addoption("--dist", dest="dist", default="no", help="ignored without pytest-xdist")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup``, the tests that use a module-scoped fixture go to one worker
    per module (``xdist_group``), so that the fixture (a synthetic run, a calibration, a
    notebook execution) is built once, not once per worker; every other test goes on its own to
    whichever worker is free."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        shared = any(d.scope == "module" for defs in info.name2fixturedefs.values() for d in defs)
        if shared:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


def _fill_kernel_cache() -> str:
    """Compile the kernel table (the explicit and implicit integrators, the envs) on every
    core; one line saying what was done and how long it took."""
    from hsa_elastica.engines.precompile import precompile

    t0 = time.perf_counter()
    summary = precompile(quiet=True)
    failed = f", {len(summary.failed)} failed" if summary.failed else ""
    return (f"numba kernel cache: table {summary.compiled} compiled{failed}, "
            f"{summary.cached} cached, {summary.workers or 0} processes, "
            f"{time.perf_counter() - t0:.1f} s")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Fill numba's cache before the tests: in a plain run or in the xdist controller (which
    calls this before it starts its workers), never in a worker."""
    config = session.config
    if hasattr(config, "workerinput") or config.option.collectonly:
        return
    if (os.environ.get("HSA_ELASTICA_PRECOMPILE", "1") == "0"
            or os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")):
        return
    line = _fill_kernel_cache()
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)
