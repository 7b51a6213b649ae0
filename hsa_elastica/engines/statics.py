"""Static equilibrium of a compiled HSA model: Newton on the residual of the dynamic model.

The residual is the right-hand side of the equations of motion at rest, evaluated by the one
force evaluation of the package, :func:`hsa_elastica.physics.forces.evaluate_forces` (motor
angles, auxetic rest configuration Eq. 2-5, rods' internal forces and couples, platform joints
Eq. 6-7, gravity).  With all velocities zero the damping, Lagrangian-transport and
unsteady-dilatation terms vanish, so the unknowns are

* the positions [m] of the rod nodes not held by a motor boundary condition (3 per node),
* a rotation-vector increment [rad] per rod element not held by a motor (3 per element),
  applied as PyElastica's kinematic update does (``Q <- R(dtheta) Q``, ``dtheta`` in the
  element's local frame), so that it is power-conjugate to the local couple,
* the position [m] and a rotation increment [rad] of each rigid body (the platform),

and the residual rows are the net force on each free node (``internal_forces +
external_forces``, N), the net couple on each free element (``internal_torques +
external_torques``, local frame, N m) and the external force [N] / torque [N m, body frame] on
each body.  The Jacobian ``J = dF/dx`` is the consistent tangents of the rods and joints plus
coloured forward differences of the rest (:mod:`hsa_elastica.engines.statics_hybrid`,
``jacobian="tangent"``), or forward differences of the whole residual with column colouring
(``"fd"``); the sparsity pattern is read from the model's topology, the unknowns each law
couples (:func:`~hsa_elastica.engines.statics_build.topology_pattern`).  Newton steps are
solved by the bordered band LU of :mod:`hsa_elastica.engines.statics_linalg` (each rod's
block banded, the bodies' unknowns eliminated by a Schur complement), or by SuperLU
(``scipy.sparse.linalg``) when that one is singular or the rods couple directly.

Stability: the linearised dynamics about an equilibrium are ``M dx'' = J dx`` (``M`` = node
masses, element and body second moments of inertia), so a pose is stable when every eigenvalue
of ``M^-1 K`` (``K = -J``, the tangent stiffness, not symmetric: the auxetic law is not derived
from a potential) has a positive real part.  :meth:`StaticSolver.stability` returns the smallest
real part among the eigenvalues of ``M^-1 K`` closest to zero [1/s^2] (shift-invert Arnoldi);
a negative value is a divergence (buckling) mode.

The twist filter of the coupling (``twist_filter_time``) is a dynamic regularisation: the
solver uses a copy of the coupling table with the filter off, i.e. the unfiltered strain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from hsa_elastica.engines import statics_stability, uncompiled
from hsa_elastica.engines.compile import CompiledModel, FastPathUnsupported
from hsa_elastica.engines.statics_build import specialisation, topology_pattern
from hsa_elastica.engines.statics_kernels import (
    FD_STEP_POSITION,
    FD_STEP_ROTATION,
    KIND_BODY_POS,
    KIND_BODY_ROT,
    KIND_ELEMENT,
    KIND_NODE,
    KIND_SWING,
    KIND_TWIST,
    ROTATION_KINDS,
    ForceModel,
    JacobianBuffers,
    JacobianPattern,
    Unknowns,
    apply_increment,
    fd_jacobian,
    perturb_colour,
    residual,
    restore_colour,
)
from hsa_elastica.engines.statics_hybrid import HybridPlan, colour_columns, hybrid_jacobian, make_hybrid
from hsa_elastica.engines.statics_linalg import BorderedBandSolver, bordered_factor, bordered_solve
from hsa_elastica.params.base import ParameterError
from hsa_elastica.physics.rod_kernels import rod_work
from hsa_elastica.physics.tables import END_FIXED, END_FREE_TWIST, END_TWIST_LOCK, Pose, State, bind

__all__ = ["DEFAULT_JACOBIAN", "StaticSolver", "StaticOutcome", "model_residual"]

#: the Jacobian when none is given (read at each construction; benchmarks set ``"fd"``)
DEFAULT_JACOBIAN = "tangent"


@dataclass
class StaticOutcome:
    """Result of :meth:`StaticSolver.solve` (the state is left in the model's arrays).

    ``residual_force_N`` / ``residual_torque_Nm``: max-norm of the force / couple rows at the
    end; ``min_eigenvalue``: smallest real part of the eigenvalues of ``M^-1 K`` near zero
    [1/s^2] (nan when not computed); ``stable``: ``min_eigenvalue > 0``; ``branch_switched``:
    the symmetric solution was unstable and the solver moved to a buckled branch.
    """

    converged: bool
    iterations: int
    residual_force_N: float
    residual_torque_Nm: float
    stable: bool | None = None
    min_eigenvalue: float = float("nan")
    branch_switched: bool = False
    message: str = ""
    angles: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))


class StaticSolver:
    """Newton solver for the static equilibrium of a :class:`CompiledModel` (see module doc).

    It owns ``state`` (default ``model.state``; ``model.state.copy()``: the model is left alone,
    own workspaces too), which must be fresh (never stepped): construction captures the joints'
    rest orientation at the assembly pose, as the first dynamic step does, and zeroes the
    velocities.  A trial step is undone by copying a saved :meth:`pose` back (:meth:`set_pose`).

    ``tol_force`` [N] / ``tol_torque`` [N m]: max-norm convergence bounds (defaults 1e-8 N and
    1e-9 N m: some 1e4 times the round-off of the joint springs, k_F 5e5 N/m times 1e-17 m).
    ``jacobian``: ``"tangent"`` (the laws' tangents, :mod:`~hsa_elastica.engines.statics_hybrid`;
    the whole residual's differences for a passive coupling), ``"fd"`` (coloured forward
    differences of the whole residual) or None (:data:`DEFAULT_JACOBIAN`).
    """

    #: trust region of a Newton step: largest rotation [rad] / displacement [m] of one unknown
    max_rotation_step = 0.3
    max_displacement_step = 0.005
    #: largest rotation [rad] / displacement [m] of one unknown in the tangent predictor
    max_predict_rotation = 1.0
    max_predict_displacement = 0.02
    #: eigenvalues nearest zero examined by the stability test of :meth:`solve` (more for
    #: assemblies with many soft modes, e.g. stacked robots, where a buckling mode is not
    #: among the three nearest zero)
    stability_modes = 3
    #: rotations [rad] of the largest element rotation along an unstable mode by which the
    #: state is pushed off an unstable equilibrium to look for the stable branches, tried in
    #: turn until one gives a stable equilibrium
    branch_kicks: tuple[float, ...] = (0.02,)
    #: largest motor-angle increment [rad] of one continuation step of :meth:`solve` (more
    #: steps are taken for larger changes): a motor element turned by more than pi against its
    #: neighbour before Newton starts is, to the rotation log of the rod, a turn of twist less
    max_angle_step = 0.5 * math.pi
    #: compile the solver's kernels (:func:`residual`, its Jacobian's,
    #: :func:`apply_increment`) on first use.  False until a Newton solve or a prediction
    #: starts: the one-off evaluations of a solver that only checks a pose (the residual and
    #: stability tests of a settled dynamic run, the sparsity pattern) run a kernel that is
    #: not compiled yet (nor in numba's cache) as the plain Python of the same function and
    #: of the solver kernels it calls (:func:`~hsa_elastica.engines.uncompiled.plain`; the
    #: compiled force kernels are called), and factorise with SuperLU (:meth:`factorize`):
    #: well under a second instead of the
    #: ~20 s their compilation costs on a cold start (the same IEEE operations, so
    #: the same results bit for bit, the factorisation to round-off)
    jit = False
    #: the hybrid Jacobian's plan, the remainder's colouring and buffers (None: differences)
    hybrid: tuple[HybridPlan, Any, Any] | None = None
    #: (angles, :meth:`_args` record) of the last :meth:`evaluate` at the present state
    _rest_at: tuple[NDArray[np.float64], Any] | None = None

    def __init__(self, model: CompiledModel, *, state: State | None = None, tol_force: float = 1e-8,
                 tol_torque: float = 1e-9, check_only: bool = False,
                 jacobian: str | None = None) -> None:
        jacobian = DEFAULT_JACOBIAN if jacobian is None else jacobian  # read at the call
        if jacobian not in ("tangent", "fd"):
            raise ParameterError(f"jacobian: {jacobian!r} not one of 'tangent', 'fd'")
        self.jacobian_mode = jacobian
        self.model = model
        self.state = model.state if state is None else state
        fresh = not bool(self.state.memory["joints"]["initialized"].any())
        if not fresh and not check_only:
            raise FastPathUnsupported("StaticSolver needs a fresh compiled model (never evaluated)")
        self.tol_force = float(tol_force)
        self.tol_torque = float(tol_torque)
        self.tables = bind(model.tables, self.state, own_workspace=state is not None)
        self.couplings = self.tables.couplings._replace(
            filter_time=np.zeros_like(model.tables.couplings.filter_time),
            creep_time=np.zeros_like(model.tables.couplings.creep_time),
            play_frozen=np.ones_like(model.tables.couplings.play_frozen),
        )
        # the loads at their full value (a ramp is a dynamic device)
        self.loads = model.tables.loads._replace(ramp=np.zeros_like(model.tables.loads.ramp))
        rod, body = self.state.rod, self.state.body
        for arr in (rod.velocity, rod.omega, body.velocity, body.omega):
            arr[:] = 0.0
        # motor angles: the MotorAngleBC rows, then the motor mounts (joint rows)
        self.n_motors = len(model.inputs.motor_bcs)
        self._layout()
        self.work = rod_work(rod.lengths.shape[0], body.mass.shape[0])
        self.status = np.zeros(4)
        self.scratch = np.empty((3, 3, 1))
        self.f = np.zeros(self.n)
        self.f1 = np.zeros(self.n)
        # joints' rest orientation at the assembly pose (motor angles 0)
        if fresh:
            self.evaluate(np.zeros(self.n_motors))
        if check_only:
            return  # residual evaluations only (no Jacobian)
        self._pattern_and_colors()
        self.angles = np.zeros(self.n_motors)

    # -- layout ------------------------------------------------------------------------------
    def _layout(self) -> None:
        rod, body, m = self.state.rod, self.state.body, self.model.tables.motors
        ghost_e = np.asarray(rod.ghost_elems_idx, dtype=np.int64)
        ghost_n = ghost_e[::2] + 1
        e = self.model.tables.ends
        held_n = e.node[(e.node >= 0) & (e.kind != END_TWIST_LOCK)]
        held_e = e.element[(e.element >= 0) & (e.kind == END_FIXED)]
        nodes = np.setdiff1d(np.arange(rod.position.shape[1]),
                             np.concatenate([ghost_n, m.node, held_n]))
        elems = np.setdiff1d(np.arange(rod.director.shape[2]),
                             np.concatenate([ghost_e, m.element[m.free_twist == 0], held_e]))
        # elements whose rotation is partly constrained: twist locked (2 unknowns) or free
        # to twist only (1 unknown: free-twist bases, in the lab or on a body)
        partial = {int(i): KIND_SWING for i in e.element[e.kind == END_TWIST_LOCK]}
        partial.update({int(i): KIND_TWIST for i in e.element[e.kind == END_FREE_TWIST]})
        partial.update({int(i): KIND_TWIST for i in m.element[m.free_twist != 0]})
        nb = body.position.shape[1]
        kind, index, comp = [], [], []
        for i in nodes:
            kind += [KIND_NODE] * 3
            index += [int(i)] * 3
            comp += [0, 1, 2]
        for i in elems:
            k = partial.get(int(i), KIND_ELEMENT)
            c = {KIND_ELEMENT: [0, 1, 2], KIND_SWING: [0, 1], KIND_TWIST: [2]}[k]
            kind += [k] * len(c)
            index += [int(i)] * len(c)
            comp += c
        for b in range(nb):
            kind += [KIND_BODY_POS] * 3 + [KIND_BODY_ROT] * 3
            index += [b] * 6
            comp += [0, 1, 2, 0, 1, 2]
        self.kind = np.array(kind, dtype=np.int64)
        self.index = np.array(index, dtype=np.int64)
        self.comp = np.array(comp, dtype=np.int64)
        self.n = int(self.kind.shape[0])
        rot = np.isin(self.kind, ROTATION_KINDS) | (self.kind == KIND_BODY_ROT)
        self.is_torque = rot
        self.steps = np.where(rot, FD_STEP_ROTATION, FD_STEP_POSITION)
        # inertia of each unknown (stability): node mass [kg], element J/e [kg m^2], body m, J
        mass = np.empty(self.n)
        for j in range(self.n):
            k, i, a = self.kind[j], self.index[j], self.comp[j]
            if k == KIND_NODE:
                mass[j] = rod.mass[i]
            elif k in ROTATION_KINDS:
                mass[j] = rod.mass_second_moment_of_inertia[a, a, i]
            elif k == KIND_BODY_POS:
                mass[j] = body.mass[i]
            else:
                mass[j] = body.mass_second_moment_of_inertia[a, a, i]
        self.inertia = mass
        # merit weights: 1 N ~ 0.01 N m (rod radius scale)
        self.weights = np.where(rot, 100.0, 1.0)

    # -- evaluations ---------------------------------------------------------------------------
    def _args(self) -> tuple[Any, ...]:
        """(:class:`ForceModel`, :class:`Unknowns`): the arguments of the kernels after the
        motor angles (the solver's own couplings and loads replace the model's)."""
        cached = getattr(self, "_args_cache", None)
        if cached is not None and cached[0].tables.couplings is self.couplings:
            return cached  # type: ignore[no-any-return]
        tables = self.tables._replace(couplings=self.couplings, loads=self.loads)
        self._args_cache = (ForceModel(self.state.rod, self.state.body, tables, self.work,
                                       self.status), Unknowns(self.kind, self.index, self.comp))
        return self._args_cache

    def evaluate(self, angles: NDArray[np.float64], out: NDArray[np.float64] | None = None
                 ) -> NDArray[np.float64]:
        """Residual at the current state for motor ``angles`` [rad] (forces N, couples N m)."""
        f = self.f if out is None else out
        a = np.asarray(angles, dtype=np.float64)
        args = self._args()
        ok = self._kernel(residual)(a, *args, f)
        self._rest_at = (a.copy(), args) if ok else None
        if not ok:
            f[:] = np.nan
        return f

    def norms(self, f: NDArray[np.float64]) -> tuple[float, float]:
        """Max-norms of the force rows [N] and of the couple rows [N m]."""
        af = np.abs(f)
        return float(af[~self.is_torque].max(initial=0.0)), float(af[self.is_torque].max(initial=0.0))

    def jacobian(self, angles: NDArray[np.float64], f0: NDArray[np.float64]) -> sp.csc_matrix:
        """``dF/dx`` (CSC) at the current state, ``f0`` its residual: the hybrid Jacobian
        (:attr:`hybrid`), or forward differences (``jacobian="fd"``, and while :attr:`jit` is
        False and the hybrid kernel not compiled: a one-off Jacobian)."""
        data = self._jacobian_values(angles, f0)
        return sp.csc_matrix((data.copy(), self.indices, self.indptr), shape=(self.n, self.n))

    def _jacobian_values(self, angles: NDArray[np.float64], f0: NDArray[np.float64],
                         rest_written: bool = False) -> NDArray[np.float64]:
        """:meth:`jacobian`'s CSC values into ``self.data`` (returned, overwritten by the next);
        ``rest_written``: :meth:`_evaluated_here` (the hybrid Jacobian skips the evaluation
        that writes the auxetic rest configuration)."""
        a = np.ascontiguousarray(angles, dtype=np.float64)
        if self.hybrid is not None and (self.jit or uncompiled.ready(hybrid_jacobian)):
            call = self._hybrid_call()
            call[0](a, *call[1], self.data, bool(rest_written))
            if call[2]:  # colours perturbed the state: the rest configuration is not this pose's
                self._rest_at = None
            return self.data
        self._rest_at = None
        pattern = JacobianPattern(self.steps, self.color_ptr, self.color_cols, self.indptr,
                                  self.indices)
        buffers = JacobianBuffers(f0, self.f1, self.saved, self.data, self.scratch)
        if self.jit or uncompiled.ready(fd_jacobian):
            fd_jacobian(a, *self._args(), pattern, buffers)  # type: ignore[call-arg]
        else:  # fd_jacobian's loop, each kernel compiled or as Python (see ``jit``)
            model, unknowns = self._args()
            perturb, res, restore = (self._kernel(perturb_colour), self._kernel(residual),
                                     self._kernel(restore_colour))
            for c in range(self.color_ptr.shape[0] - 1):
                perturb(model.rod, model.body, unknowns, pattern, c, self.saved, self.scratch)
                res(a, model, unknowns, self.f1)
                restore(model.rod, model.body, unknowns, pattern, c, self.saved, f0, self.f1,
                        self.data)
        return self.data

    def _hybrid_call(self) -> tuple[Any, tuple[Any, ...], bool]:
        """``(kernel, its arguments between the angles and the values, whether it perturbs the
        state)`` of the hybrid Jacobian, once per :meth:`_args` record and :attr:`hybrid`: the
        compiled specialisation of :func:`hybrid_jacobian` (no dispatch, see
        :func:`~hsa_elastica.engines.statics_build.specialisation`)."""
        base = self._args()
        cached = getattr(self, "_hybrid_cache", None)
        if cached is not None and cached[0] is base and cached[1] is self.hybrid:
            return cached[2]  # type: ignore[no-any-return]
        assert self.hybrid is not None
        plan, ext, joint = self.hybrid
        model, unknowns = base
        model = model._replace(tables=model.tables._replace(sync_program=plan.program))
        args = (model, unknowns, ext, joint, plan)
        perturbs = bool(ext[0].color_ptr.shape[0] > 1 or joint[0].color_ptr.shape[0] > 1)
        call = (specialisation(hybrid_jacobian, (np.zeros(self.n_motors), *args, self.data,
                                                  False)), args, perturbs)
        self._hybrid_cache = (base, self.hybrid, call)
        return call

    def _evaluated_here(self, angles: NDArray[np.float64]) -> bool:
        """True if the last :meth:`evaluate` was at the present state (no :meth:`move`,
        :meth:`set_pose` or state-perturbing Jacobian since), with these ``angles`` and the
        present force model (the rest configuration it wrote is this pose's)."""
        at = self._rest_at
        return (at is not None and at[1] is self._args()
                and np.array_equal(at[0], np.asarray(angles, dtype=np.float64)))

    def pose(self) -> Pose:
        """A copy of the present pose of the solver's state (the static unknowns)."""
        return self.state.pose.copy()

    def set_pose(self, pose: Pose | tuple[NDArray[np.float64], ...]) -> None:
        """Copy a saved ``pose`` (of :meth:`pose`, or a static result's ``state[1]``) back."""
        if not all(np.array_equal(a, b) for a, b in zip(self.state.pose, pose)):
            self._lu = None  # the last factorisation belongs to another pose
        self._rest_at = None
        self.state.set_pose(pose)

    def move(self, dx: NDArray[np.float64], scale: float = 1.0) -> None:
        """Move the state by ``scale * dx`` (layout of the unknowns)."""
        self._rest_at = None
        self._kernel(apply_increment)(np.asarray(dx, dtype=np.float64), float(scale),
                                      self.state.rod, self.state.body,
                                      Unknowns(self.kind, self.index, self.comp), self.scratch)

    def _kernel(self, kernel: Any) -> Any:
        """``kernel`` (a numba dispatcher), or its plain Python function while
        :attr:`jit` is False and the kernel is neither compiled nor cached."""
        return kernel if self.jit or uncompiled.ready(kernel) else uncompiled.plain(kernel)

    # -- sparsity pattern and colouring -----------------------------------------------------
    def _pattern_and_colors(self) -> None:
        """Sparsity of ``dF/dx`` (:func:`~hsa_elastica.engines.statics_build.topology_pattern`),
        then a greedy colouring of the columns (two share a colour if no row needs both)."""
        n = self.n
        self.hybrid = None
        pattern = topology_pattern(self) | np.eye(n, dtype=bool)
        csc = sp.csc_matrix(pattern)
        csc.sort_indices()
        self.indptr = csc.indptr.astype(np.int64)
        self.indices = csc.indices.astype(np.int64)
        self.data = np.zeros(self.indices.shape[0])
        self.color_ptr, self.color_cols = colour_columns(csc)
        self.n_colors = int(self.color_ptr.shape[0] - 1)
        if self.jacobian_mode == "tangent":
            self.hybrid = make_hybrid(self)
        self.saved = np.zeros((n, 3, 3))
        border = (self.kind == KIND_BODY_POS) | (self.kind == KIND_BODY_ROT)
        try:
            self.band: BorderedBandSolver | None = BorderedBandSolver(
                self.indptr, self.indices, border)
        except ValueError:  # rods coupled directly (not through a body): general sparse LU
            self.band = None

    def factorize(self, jac: sp.csc_matrix, shift: NDArray[np.float64] | None = None) -> Any:
        """LU of ``jac - diag(shift)`` (``jac`` from :meth:`jacobian`): the bordered band
        LU (:mod:`hsa_elastica.engines.statics_linalg`), or SuperLU if that one is singular
        or not applicable (or, while :attr:`jit` is False, not compiled yet: SuperLU then, the
        same factorisation to round-off without ~7 s of compilation on a cold start).  Raises
        ``RuntimeError`` when the matrix is singular."""
        return self._factor_values(jac.data, shift, jac)

    def _factor_values(self, data: NDArray[np.float64], shift: NDArray[np.float64] | None = None,
                       jac: sp.csc_matrix | None = None) -> Any:
        """:meth:`factorize` of the Jacobian with CSC values ``data`` (the solver's pattern;
        the matrix ``jac`` is built only for SuperLU, when not given)."""
        if self.band is not None and (self.jit or (uncompiled.ready(bordered_factor)
                                                   and uncompiled.ready(bordered_solve))):
            try:
                return self.band.factor(data, shift)
            except RuntimeError:
                pass
        if jac is None:
            jac = sp.csc_matrix((data.copy(), self.indices, self.indptr), shape=(self.n, self.n))
        if shift is not None:
            jac = jac - sp.diags(shift, format="csc")
        return spla.splu(jac, permc_spec="MMD_AT_PLUS_A")

    # -- Newton ----------------------------------------------------------------------------
    def converged(self, f: NDArray[np.float64]) -> bool:
        fn, tn = self.norms(f)
        return fn <= self.tol_force and tn <= self.tol_torque

    def _merit(self, f: NDArray[np.float64]) -> float:
        v = float(np.linalg.norm(self.weights * f))
        return v if math.isfinite(v) else math.inf

    def newton(self, angles: NDArray[np.float64], *, max_iter: int = 40,
               shift: float = 0.0) -> tuple[bool, int]:
        """Damped Newton from the current state at ``angles`` [rad]; returns (converged, iterations).

        ``shift`` > 0 [1/s^2] solves ``(K + shift M) dx = F`` instead (pseudo-transient
        continuation: a heavily damped implicit step of the dynamics, which moves away from
        unstable equilibria); the shift is reduced as the residual falls and is zero near
        the solution.
        """
        self.jit = True  # many evaluations: compile the kernels
        a = np.asarray(angles, dtype=np.float64)
        f = self.evaluate(a).copy()
        merit = self._merit(f)
        sigma = float(shift)
        peak = merit
        for it in range(max_iter):
            if self.converged(f):
                return True, it
            if not math.isfinite(merit):
                return False, it
            # the values only (no matrix): the band LU copies them
            values = self._jacobian_values(a, f, rest_written=self._evaluated_here(a))
            try:
                lu = self._factor_values(values, sigma * self.inertia if sigma > 0.0 else None)
                dx = lu.solve(-f)
            except (RuntimeError, ValueError):
                return False, it
            if not np.all(np.isfinite(dx)):
                return False, it
            # at most 0.3 rad of rotation and 5 mm of displacement per unknown and iteration
            big = max(float(np.abs(dx[self.is_torque]).max(initial=0.0)) / self.max_rotation_step,
                      float(np.abs(dx[~self.is_torque]).max(initial=0.0)) / self.max_displacement_step,
                      1.0)
            alpha = 1.0 / big
            state = self.pose()
            while True:
                self.move(dx, alpha)
                f_new = self.evaluate(a)
                m_new = self._merit(f_new)
                if m_new < (1.0 - 1e-4 * alpha) * merit or (sigma > 0.0 and math.isfinite(m_new)):
                    break
                self.set_pose(state)
                alpha *= 0.5
                if alpha < 1e-4:
                    return False, it
            self._lu = lu if sigma == 0.0 else None
            if sigma > 0.0:
                # the shift stays until the residual fell 1e3-fold from its peak (a smaller
                # shift too early lets Newton fall back onto the unstable pose), then Newton
                peak = max(peak, m_new)
                sigma = 0.0 if m_new < 1e-3 * peak else sigma
            f = f_new.copy()
            merit = m_new
            if sigma == 0.0:
                f, merit = self._chord(a, lu, f, merit)
        return self.converged(f), max_iter

    def _chord(self, a: NDArray[np.float64], lu: Any, f: NDArray[np.float64], merit: float
               ) -> tuple[NDArray[np.float64], float]:
        """Up to four more steps with the same factorisation, each kept only if it divides the
        residual by 4 or more (a Jacobian costs ~40 residuals, a chord step one)."""
        for _ in range(4):
            if self.converged(f):
                break
            dx = lu.solve(-f)
            big = max(float(np.abs(dx[self.is_torque]).max(initial=0.0)) / self.max_rotation_step,
                      float(np.abs(dx[~self.is_torque]).max(initial=0.0)) / self.max_displacement_step,
                      1.0)
            if big > 1.0 or not np.all(np.isfinite(dx)):
                break
            state = self.pose()
            self.move(dx)
            f_new = self.evaluate(a)
            m_new = self._merit(f_new)
            if not m_new < 0.25 * merit:
                self.set_pose(state)
                self._lu = lu
                break
            f, merit = f_new.copy(), m_new
        return f, merit

    def predict(self, a_from: NDArray[np.float64], a_to: NDArray[np.float64]) -> None:
        """Tangent predictor: move an equilibrium at ``a_from`` by ``dx/da (a_to - a_from)``,
        ``dx/da = -J^-1 dF/da`` (``dF/da`` by forward differences, J from the last Newton
        factorisation or a new one)."""
        self.jit = True  # many evaluations: compile the kernels
        da = np.asarray(a_to, dtype=np.float64) - np.asarray(a_from, dtype=np.float64)
        if not np.any(da):
            return
        a = np.asarray(a_from, dtype=np.float64).copy()
        f0 = self.evaluate(a).copy()
        if not np.all(np.isfinite(f0)):
            return
        h = 1e-6
        dfda = np.zeros(self.n)
        for i in np.nonzero(da)[0]:
            a[i] += h
            dfda += (self.evaluate(a) - f0) * (da[i] / h)
            a[i] -= h
        lu = getattr(self, "_lu", None)
        try:
            if lu is None:
                lu = self.factorize(self.jacobian(a, f0))
            dx = lu.solve(-dfda)
        except (RuntimeError, ValueError):
            return
        if not np.all(np.isfinite(dx)):
            return
        big = max(float(np.abs(dx[self.is_torque]).max(initial=0.0)) / self.max_predict_rotation,
                  float(np.abs(dx[~self.is_torque]).max(initial=0.0)) / self.max_predict_displacement,
                  1.0)
        self.move(dx, 1.0 / big)

    # -- stability ---------------------------------------------------------------------------
    def stability(self, angles: NDArray[np.float64], k: int = 3, *, vectors: bool = True
                  ) -> tuple[float, NDArray[np.float64]]:
        """:func:`hsa_elastica.engines.statics_stability.stability` of this solver's state."""
        return statics_stability.stability(self, angles, k, vectors=vectors)

    # -- continuation --------------------------------------------------------------------------
    def solve(self, target: NDArray[np.float64], *, start: NDArray[np.float64] | None = None,
              steps: int = 1, max_halvings: int = 6, check_stability: bool = True,
              branch_rule: Any = None) -> StaticOutcome:
        """Equilibrium at motor angles ``target`` [rad] by continuation from the current state
        (an equilibrium at angles ``start``, default the last solved angles) in ``steps``
        equal increments (at least as many as keep each below :attr:`max_angle_step`; halved
        on failure), then the stability test and, if unstable, a
        switch to a stable branch (``branch_rule(solver, candidates)`` picks among the stable
        candidates, default: the first).
        """
        self.jit = True  # many evaluations: compile the kernels
        target = np.asarray(target, dtype=np.float64)
        a0 = self.angles.copy() if start is None else np.asarray(start, dtype=np.float64)
        total_it = 0
        span = float(np.abs(target - a0).max(initial=0.0))
        steps = max(int(steps), 1, math.ceil(span / self.max_angle_step))
        s_done, ds = 0.0, 1.0 / steps
        halvings = 0
        while s_done < 1.0 - 1e-12:
            s_next = min(1.0, s_done + ds)
            state = self.pose()
            self.predict(a0 + s_done * (target - a0), a0 + s_next * (target - a0))
            ok, it = self.newton(a0 + s_next * (target - a0))
            total_it += it
            if ok:
                s_done = s_next
                self.angles = a0 + s_done * (target - a0)
                continue
            self.set_pose(state)
            halvings += 1
            if halvings > max_halvings:
                fn, tn = self.norms(self.evaluate(target))
                return StaticOutcome(False, total_it, fn, tn, message="continuation failed",
                                     angles=target)
            ds *= 0.5
        self.angles = target.copy()
        fn, tn = self.norms(self.evaluate(target))
        out = StaticOutcome(True, total_it, fn, tn, angles=target)
        if check_stability:
            statics_stability.stabilize(self, out, branch_rule)
            # the stability test's last evaluation is a perturbed pose: evaluate at the solution
            # again, so that every law's outputs (contact forces, sensors) are the equilibrium's
            self.evaluate(out.angles)
        return out


def model_residual(model: CompiledModel, angles: NDArray[np.float64]) -> tuple[float, float]:
    """Max-norms of the static residual (forces [N], couples [N m]) of ``model``'s current
    pose at motor ``angles`` [rad], velocities taken as zero.  Evaluated on a copy of the
    model's state: the model is only read.  A state never evaluated gets its joints' rest
    orientation from this pose."""
    solver = StaticSolver(model, state=model.state.copy(), check_only=True)
    return solver.norms(solver.evaluate(np.asarray(angles, dtype=np.float64)))
