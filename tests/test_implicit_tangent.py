"""The implicit integrator's Newton matrix from the laws' tangents
(hsa_elastica/engines/implicit_tangent.py) against its oracle, the forward differences of the
whole dynamic residual (``jacobian="fd"``, ``implicit_kernels.dynamic_fd_jacobian``), and the
trajectories of the two Newton matrices against each other.
"""

from __future__ import annotations

import numpy as np
import pytest

from hsa_elastica.engines.compile import compile_simulator
from hsa_elastica.engines.implicit import ImplicitEngine
from hsa_elastica.engines.implicit_kernels import Increment, dynamic_fd_jacobian, dynamic_forces
from hsa_elastica.engines.implicit_tangent import implicit_tangent_jacobian
from hsa_elastica.params import ParameterError, paper_robot_params
from hsa_elastica.physics.tables import Pose
from hsa_elastica.robots.builders import build_robot
from hsa_elastica.robots.compiled import ImplicitRobot
from hsa_elastica.robots.primitives import primitive_angles
from hsa_elastica.robots.single_rod import build_single_rod
from hsa_elastica.robots.stack import build_stack


def _robot_params(n_elements: int = 6):  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    return p.replace(rod=p.rod.replace(n_elements=n_elements),
                     simulation=p.simulation.replace(integrator="implicit", dt=2e-3))


def _jacobians(engine: ImplicitEngine, angles: np.ndarray, rates: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """``dF/dq + cv dF/dv`` at the engine's present state (increment 0, velocities
    ``engine.v``) by the tangents and by the whole residual's forward differences."""
    n, h = engine.n, engine.dt
    cv = engine.gamma / (engine.beta * h)
    args, aux = engine._model_args, engine._aux
    t = engine.time
    f, mass = np.zeros(n), np.zeros(n)
    m = engine.model
    q0 = Pose(*(np.array(a, copy=True) for a in m.state.pose))
    jw = engine._jw
    assert dynamic_forces(t, angles, rates, engine.v.copy(), args, aux, f, mass)
    jw.fd.f0[:] = f
    dynamic_fd_jacobian(t, angles, rates, engine.v.copy(), args, aux, cv, jw.pattern, jw.fd,
                        Increment(np.zeros(n), q0, jw.first))
    fd = jw.fd.data.copy()
    assert dynamic_forces(t, angles, rates, engine.v.copy(), args, aux, f, mass)
    data = np.zeros_like(fd)
    implicit_tangent_jacobian(angles, rates, engine.v.copy(), args, aux, cv, engine._tangent,
                              data)
    return data, fd


def _column_error(engine: ImplicitEngine, data: np.ndarray, fd: np.ndarray) -> float:
    """Largest difference of a column, relative to that column's largest entry of the
    Newton matrix (its inertia shift included: what the factorisation sees)."""
    s = engine.solver
    ca = (1.0 - engine.alpha_m) / ((1.0 - engine.alpha_f) * engine.beta * engine.dt ** 2)
    worst = 0.0
    for j in range(engine.n):
        sl = slice(s.indptr[j], s.indptr[j + 1])
        scale = max(np.abs(fd[sl]).max(), ca * engine.mass[j])
        worst = max(worst, float(np.abs(data[sl] - fd[sl]).max() / scale))
    return worst


def test_bad_option_is_one_line_parameter_error() -> None:
    model = compile_simulator(build_robot(_robot_params(), [0.0] * 4).simulator)
    with pytest.raises(ParameterError, match=r"^jacobian = 'exact' is invalid: must be one of "
                                             r"'tangent', 'fd'$"):
        ImplicitEngine(model, 2e-3, dt_table=2e-3, jacobian="exact")
