"""The static residual of a running model's pose, checked again and again without copying it.

A settling test (:mod:`hsa_elastica.robots.settling`) asks at every check whether the force
balance holds at the present pose: the static residual (velocities taken as zero) of
:class:`~hsa_elastica.engines.statics.StaticSolver` below a tolerance.  The model being stepped
must not be touched by that evaluation (it writes rest lengths, stiffnesses, forces and the
coupling's filter memory), so the check evaluates on a workspace of its own:
:class:`ResidualCheck` is made once per run: a static solver on one copy of the model's
:class:`~hsa_elastica.physics.tables.State` (with workspaces of its own), and each check copies
only what the residual reads of the running model's state -- the positions and directors of
the rods and bodies, the joints' rest orientations -- into it.  The result is the one
:func:`~hsa_elastica.engines.statics.model_residual` gives on a fresh copy of the state, bit
for bit (``tests/test_residual_check.py``).

The same evaluation is a numba kernel, :func:`pose_residual`, for a loop that checks inside
compiled code (:mod:`hsa_elastica.engines.implicit_watch`); its record is
:attr:`ResidualCheck.record`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.engines.compile import CompiledModel
from hsa_elastica.engines.statics import StaticSolver
from hsa_elastica.engines.statics_kernels import ForceModel, Unknowns, residual
from hsa_elastica.physics.tables import BodyBlockArrays, JointTable, RodBlockArrays

__all__ = ["ResidualCheck", "ResidualRecord", "max_norms", "pose_residual"]


class ResidualRecord(NamedTuple):
    """What :func:`pose_residual` takes: the check's own model (:class:`ForceModel`, the static
    solver's tables: filter off, loads at full value), its unknowns, the residual vector and
    which of its rows are couples."""

    model: ForceModel
    unknowns: Unknowns
    out: NDArray[np.float64]
    is_torque: NDArray[np.bool_]


@njit(cache=True)  # type: ignore[misc]
def max_norms(f: NDArray[np.float64], is_torque: NDArray[np.bool_]) -> tuple[float, float]:
    """Max-norms of the force rows [N] and of the couple rows [N m] of ``f`` (nan if any row
    of the kind is nan, 0 if there is none): :meth:`StaticSolver.norms`."""
    fn = 0.0
    tn = 0.0
    for j in range(f.shape[0]):
        a = abs(f[j])
        if is_torque[j]:
            if not math.isnan(tn) and (a > tn or math.isnan(a)):
                tn = a
        elif not math.isnan(fn) and (a > fn or math.isnan(a)):
            fn = a
    return fn, tn


@njit(cache=True)  # type: ignore[misc]
def copy_pose(rod: RodBlockArrays, body: BodyBlockArrays, joints: JointTable,
              into: ForceModel) -> None:
    """The state the static residual reads, from a running model into the check's own:
    positions and directors of the rods and bodies, the joints' rest orientations."""
    into.rod.position[:] = rod.position
    into.rod.director[:] = rod.director
    into.body.position[:] = body.position
    into.body.director[:] = body.director
    mine = into.tables.joints
    mine.rest_orientation[:] = joints.rest_orientation
    mine.initialized[:] = joints.initialized


@njit(cache=True, inline="always")  # type: ignore[misc]
def pose_residual(rod: RodBlockArrays, body: BodyBlockArrays, joints: JointTable,
                  angles: NDArray[np.float64], check: ResidualRecord) -> tuple[float, float]:
    """Max-norms (forces [N], couples [N m]) of the static residual at the pose of ``rod`` /
    ``body`` (with ``joints``' rest orientations) at motor ``angles`` [rad], evaluated on the
    check's own model; the running model is only read.  nan where the evaluation failed."""
    copy_pose(rod, body, joints, check.model)
    f = check.out
    if not residual(angles, check.model, check.unknowns, f):
        f[:] = np.nan
    return max_norms(f, check.is_torque)  # type: ignore[no-any-return]


class ResidualCheck:
    """The static residual of ``model``'s present pose, on a workspace made once (one copy of
    ``model``'s state and a static solver's layout of it), evaluated as often as asked.

    :meth:`norms` evaluates in Python (the residual kernel compiled or, on a cold start, as
    plain Python, as :class:`StaticSolver` does); :attr:`record` is the argument of the
    compiled :func:`pose_residual`.  ``model`` is the running model: only read.
    """

    def __init__(self, model: CompiledModel) -> None:
        self.model = model
        self.solver = StaticSolver(model, state=model.state.copy(), check_only=True)
        s = self.solver
        force_model, unknowns = s._args()
        self.record = ResidualRecord(force_model, unknowns, s.f, np.ascontiguousarray(s.is_torque))

    def norms(self, angles: NDArray[np.float64]) -> tuple[float, float]:
        """Max-norms (forces [N], couples [N m]) of the static residual of the running model's
        present pose at motor ``angles`` [rad]
        (:func:`~hsa_elastica.engines.statics.model_residual`'s numbers, without its copy)."""
        s, live = self.solver, self.model.state
        s.state.set_pose(live.pose)  # (copy_pose's copies, in Python: no kernel to compile)
        for name in ("rest_orientation", "initialized"):
            np.copyto(s.state.memory["joints"][name], live.memory["joints"][name])
        return s.norms(s.evaluate(np.asarray(angles, dtype=np.float64)))
