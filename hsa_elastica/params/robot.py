"""Robot-level parameters: platform, joints, simulation settings and the whole four-rod
robot (:class:`RobotParams`), SI units."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.params.base import (
    DEFAULT_MAX_HALVINGS,
    MAX_DAMPING,
    MAX_HALVINGS,
    MAX_RECORD_FPS,
    MIN_DENSITY,
    MIN_JOINT_STIFFNESS,
    MIN_LENGTH,
    ParameterError,
    _check_handedness,
    _check_int,
    _check_real,
    _check_vector,
    _fail,
    _is_real,
    _ParamsBase,
    _short,
)
from hsa_elastica.params.environment import EnvironmentParams
from hsa_elastica.params.integrators import DEFAULT_INTEGRATOR, INTEGRATOR_NAMES
from hsa_elastica.params.rod import (
    RodParams,
)


@dataclass(frozen=True)
class PlatformParams(_ParamsBase):
    """The rigid cylindrical platform on top of the rods (Section II-E).

    ``payload_mass`` [kg] is an extra mass carried by the platform with its centre of mass at
    the platform centre (the platform's density is raised so that the disc carries it; a
    payload off the centre is not modelled).  ``marker_offset`` [m] is a point fixed to the
    platform, in the platform frame (origin at the platform centre, +z along the platform
    normal away from the rods): the point a motion-capture system tracks (the marker
    centroid), reported as ``platform_marker_position_m`` by the steady-state solvers.
    """

    diameter: float = field(default=0.095, metadata={"unit": "m"})
    thickness: float = field(default=0.003, metadata={"unit": "m"})
    density: float = field(default=700.0, metadata={"unit": "kg/m^3"})
    payload_mass: float = field(default=0.0, metadata={"unit": "kg, at the platform centre"})
    marker_offset: tuple[float, float, float] = field(
        default=(0.0, 0.0, 0.0), metadata={"unit": "m, tracked point in the platform frame"}
    )

    def __post_init__(self) -> None:
        for name in ("diameter", "thickness"):
            _check_real(self, name, ge=MIN_LENGTH)
        _check_real(self, "density", ge=MIN_DENSITY)
        _check_real(self, "payload_mass", ge=0.0)
        _check_vector(self, "marker_offset")

    @property
    def radius(self) -> float:
        """Platform radius [m]."""
        return 0.5 * self.diameter

    @property
    def volume(self) -> float:
        """Platform disc volume [m^3]."""
        return math.pi * self.radius**2 * self.thickness

    @property
    def mass(self) -> float:
        """Platform disc mass [kg] (without the payload)."""
        return self.density * math.pi * self.radius**2 * self.thickness

    @property
    def total_mass(self) -> float:
        """Platform disc plus payload [kg]."""
        return self.mass + self.payload_mass

    @property
    def effective_density(self) -> float:
        """Density of the simulated disc carrying the payload [kg/m^3] (``density`` when
        ``payload_mass == 0``)."""
        if self.payload_mass == 0.0:
            return self.density
        return self.total_mass / self.volume


@dataclass(frozen=True)
class JointParams(_ParamsBase):
    """Rod-tip/platform spring-damper joint, Eqs. (6)-(7)."""

    k_F: float = field(default=5e5, metadata={"unit": "N/m"})
    nu_F: float = field(default=0.0, metadata={"unit": "N s/m"})
    k_tau: float = field(default=20.0, metadata={"unit": "N m/rad"})
    nu_tau: float = field(default=0.0, metadata={"unit": "N m s/rad"})

    def __post_init__(self) -> None:
        _check_real(self, "k_F", ge=MIN_JOINT_STIFFNESS)
        _check_real(self, "k_tau", ge=0.0)
        _check_real(self, "nu_F", ge=0.0)
        _check_real(self, "nu_tau", ge=0.0)


_RAMP_SHAPES = ("linear", "smooth")

#: largest motor zero offset [rad] (15 deg: an assembly error, not a command)
MAX_MOTOR_OFFSET = math.pi / 12
#: largest relative deviation of one rod's C_eps or bending rigidity from ``rod``'s
MAX_ROD_DEVIATION = 0.5
#: the per-rod imperfection fields of :class:`RobotParams` and the bound of their values
PER_ROD_IMPERFECTIONS = {
    "motor_offset": MAX_MOTOR_OFFSET,
    "rod_C_eps_deviation": MAX_ROD_DEVIATION,
    "rod_bend_deviation": MAX_ROD_DEVIATION,
}
#: largest lean of the rods [rad] about either axis of the base (5.7 deg: a printing or
#: mounting error, not a design)
MAX_ROD_TILT = 0.1
#: largest Newton tolerances of the implicit integrator, ``implicit_tol_position`` [m] and
#: ``implicit_tol_rotation`` [rad]: the pose accuracy the integrator is held to (0.1 mm, 0.01 rad
#: across a 10 mm element)
MAX_IMPLICIT_TOL_POSITION = 1e-4
MAX_IMPLICIT_TOL_ROTATION = 1e-2


@dataclass(frozen=True)
class SimulationParams(_ParamsBase):
    """Time stepping, damping, gravity, actuation ramp and recording rate.

    The default ``dt = 3e-5`` s is 0.83 of the largest stable step measured on the paper robot
    (3.6e-5 s stable, 3.7e-5 s diverges; the linearised estimate
    :func:`hsa_elastica.engines.timeloop.max_stable_dt` gives 2/omega_max = 3.65e-5 s from the
    axial element chain with the joint spring k_F on the tip node, and the builders refuse a
    dt above 0.95 of it).  The paper's 4e-5 s diverges.  ``damping`` and
    ``rotational_damping`` are at most :data:`MAX_DAMPING`, ``record_fps`` at most
    ``max(MAX_RECORD_FPS, 1 / dt)`` (every step).

    ``damping`` / ``rotational_damping`` [1/s] are velocity decay rates of every node and
    element (PyElastica's ``AnalyticalLinearDamper``: air drag and joint friction lumped, it
    also damps rigid motion).  The material's own dissipation is the Kelvin-Voigt damping of
    ``RodParams`` (retardation times); the default 5 1/s is the light setting at which every
    primitive was measured stable without the twist filter (docs/stability.md).

    ``integrator`` selects the compiled engine (``build_fast_robot``, the Gymnasium envs,
    ``solve_steady_state(method="dynamic")``, the CLI): ``"explicit"`` is the fused
    Position-Verlet stepper (``dt`` at most :func:`hsa_elastica.engines.timeloop.max_stable_dt`),
    ``"implicit"`` the generalized-alpha integrator of :mod:`hsa_elastica.engines.implicit`
    (any ``dt`` whose Newton iterations converge; recommended
    :data:`~hsa_elastica.params.DEFAULT_IMPLICIT_DT` = 2e-3 s; ``implicit_rho_inf`` its
    numerical dissipation, 1 = none, 0 = the most).  The per-rod operator path
    (``Robot.run``) is always explicit.  The names are those of the registry
    :data:`hsa_elastica.params.integrators.INTEGRATORS`; ``integrator(sim)`` gives the record
    (stability limit, default step, compiled handle) of this one.

    ``max_halvings`` (implicit only, integer in [0, :data:`MAX_HALVINGS`]): a step whose Newton
    iteration does not converge is taken again as two steps of half its size, nested at most
    this many times (smallest step ``dt / 2**max_halvings``), before it is refused
    (``ImplicitStepFailed``); 0 refuses at once.  Default 4 (the Gymnasium envs' value,
    ``ENV_MAX_HALVINGS``): every step taken still converged, so a halved run is at least as
    accurate as one at ``dt``, and a few hard steps (an abrupt command, a buckling) no longer
    stop a run whose other steps ``dt`` serves; a step that needs more than 1/16 of ``dt`` is
    refused, and then ``dt`` itself is too large (``ImplicitEngine.n_halved`` counts the
    halved steps).

    ``implicit_tol_position`` [m] / ``implicit_tol_rotation`` [rad] (implicit only): Newton's
    tolerance on the position / rotation increments of a step (the iteration stops when the
    estimated remaining error is below them, :mod:`hsa_elastica.engines.implicit`).  Defaults
    1e-7 m / 1e-5 rad, 1000 times finer than the integrator's pose accuracy target (0.1 mm);
    at most :data:`MAX_IMPLICIT_TOL_POSITION` / :data:`MAX_IMPLICIT_TOL_ROTATION`.  The
    Gymnasium envs' coarse discretization takes 1e-6 m / 1e-4 rad.
    """

    dt: float = field(default=3e-5, metadata={"unit": "s"})
    damping: float = field(default=5.0, metadata={"unit": "1/s, translational, per unit mass"})
    rotational_damping: float = field(default=5.0, metadata={"unit": "1/s"})
    gravity: tuple[float, float, float] | None = field(
        default=None, metadata={"unit": "m/s^2, None = no gravity"}
    )
    ramp_time: float = field(default=1.0, metadata={"unit": "s"})
    ramp_shape: str = field(default="smooth", metadata={"unit": "'linear' | 'smooth'"})
    record_fps: float = field(default=100.0, metadata={"unit": "Hz"})
    integrator: str = field(
        default=DEFAULT_INTEGRATOR, metadata={"unit": "'explicit' | 'implicit'"}
    )
    implicit_rho_inf: float = field(
        default=0.8, metadata={"unit": "-, spectral radius at infinite frequency, [0, 1]"}
    )
    max_halvings: int = field(
        default=DEFAULT_MAX_HALVINGS, metadata={"unit": "-, refused implicit steps retried down to dt / 2**n"}
    )
    implicit_tol_position: float = field(
        default=1e-7, metadata={"unit": "m, Newton's tolerance on position increments (implicit)"}
    )
    implicit_tol_rotation: float = field(
        default=1e-5, metadata={"unit": "rad, Newton's tolerance on rotation increments (implicit)"}
    )

    def __post_init__(self) -> None:
        _check_real(self, "dt", gt=0.0)
        if self.integrator not in INTEGRATOR_NAMES:  # the registry of params/integrators.py
            raise _fail(self, "integrator", self.integrator, f"must be one of {INTEGRATOR_NAMES}")
        _check_real(self, "implicit_rho_inf", ge=0.0, le=1.0)
        _check_int(self, "max_halvings", ge=0, le=MAX_HALVINGS)
        _check_real(self, "implicit_tol_position", gt=0.0, le=MAX_IMPLICIT_TOL_POSITION)
        _check_real(self, "implicit_tol_rotation", gt=0.0, le=MAX_IMPLICIT_TOL_ROTATION)
        _check_real(self, "damping", ge=0.0, le=MAX_DAMPING)
        _check_real(self, "rotational_damping", ge=0.0, le=MAX_DAMPING)
        _check_vector(self, "gravity", optional=True)
        _check_real(self, "ramp_time", gt=0.0)
        if self.ramp_shape not in _RAMP_SHAPES:
            raise _fail(self, "ramp_shape", self.ramp_shape, f"must be one of {_RAMP_SHAPES}")
        # at most MAX_RECORD_FPS, or one sample per step if that is more (record_every >= 1)
        _check_real(self, "record_fps", gt=0.0, le=max(MAX_RECORD_FPS, (1.0 + 1e-9) / self.dt))

    def record_every(self) -> int:
        """Steps between two recorded samples, rounded: ``max(1, round(1 / (record_fps dt)))``.

        The builders' recorders do not sample every ``record_every()`` steps (that period drifts,
        e.g. 333 steps = 9.99 ms for 100 fps at dt = 3e-5 s): they take sample ``k`` at the step
        nearest to ``k / record_fps`` (``recording.RodRecorder(fps=..., dt=...)``).
        """
        return max(1, int(round(1.0 / (self.record_fps * self.dt))))


@dataclass(frozen=True)
class RobotParams(_ParamsBase):
    """An n-rod HSA robot (Section II-D/E): rods on a circle, a platform on their tips.

    Rod ``i`` stands at angle ``first_rod_angle + 2 pi i / n_rods`` on the circle of radius
    ``circle_radius`` around the origin and has handedness ``handedness[i]`` (this overrides
    ``rod.handedness``; see :meth:`rod_params`).

    Imperfections of a real robot, one value per rod or ``()`` (0 for every rod, the default:
    the symmetric robot): ``motor_offset`` [rad, at most :data:`MAX_MOTOR_OFFSET`] turns rod
    ``i``'s base by ``phi_i + motor_offset[i]`` from its printed, untwisted state at motor angle
    ``phi_i`` (built into the rod's initial twist, so every executor sees it);
    ``rod_C_eps_deviation`` / ``rod_bend_deviation`` [-, at most :data:`MAX_ROD_DEVIATION`]
    scale rod ``i``'s ``C_eps`` / bending rigidity by ``1 + value`` (:meth:`rod_params`).
    ``rod_tilt`` [rad, each at most :data:`MAX_ROD_TILT`], one lean common to all rods: every
    printed rod, caps included, is rotated about its foot on the base plate by the rotation
    vector ``(rod_tilt[0], rod_tilt[1], 0)`` (a positive rotation about x leans the rods toward
    -y, about y toward +x); each motor turns its rod about the rod's own, leaning axis and the
    level platform sits on the rods' tops (``robots/builders.py``).

    ``environment``: fixed obstacles the rods and the platform touch (docs/contact.md); none
    by default, and then the section is left out of :meth:`to_dict` (a robot without
    obstacles writes the same file as before the section existed).
    """

    _NESTED: ClassVar[dict[str, type]] = {}  # filled in below (classes defined above)

    rod: RodParams = field(default_factory=RodParams, metadata={"unit": "see RodParams"})
    n_rods: int = field(default=4, metadata={"unit": "-"})
    circle_radius: float = field(default=0.024, metadata={"unit": "m"})
    first_rod_angle: float = field(default=math.pi / 4, metadata={"unit": "rad"})
    handedness: tuple[int, ...] = field(default=(1, -1, 1, -1), metadata={"unit": "-"})
    platform: PlatformParams = field(
        default_factory=PlatformParams, metadata={"unit": "see PlatformParams"}
    )
    joint: JointParams = field(default_factory=JointParams, metadata={"unit": "see JointParams"})
    simulation: SimulationParams = field(
        default_factory=SimulationParams, metadata={"unit": "see SimulationParams"}
    )
    motor_offset: tuple[float, ...] = field(
        default=(), metadata={"unit": "rad, per rod: motor zero offset; [] = 0 for every rod"}
    )
    rod_C_eps_deviation: tuple[float, ...] = field(
        default=(), metadata={"unit": "-, per rod: C_eps times (1 + value); [] = 0 for every rod"}
    )
    rod_bend_deviation: tuple[float, ...] = field(
        default=(), metadata={"unit": "-, per rod: B_xy times (1 + value); [] = 0 for every rod"}
    )
    rod_tilt: tuple[float, float] = field(
        default=(0.0, 0.0),
        metadata={"unit": "rad, every rod's lean: rotation about the base's x and y axes"},
    )
    environment: EnvironmentParams = field(
        default_factory=EnvironmentParams, metadata={"unit": "see EnvironmentParams"}
    )

    def __post_init__(self) -> None:
        for name, cls in self._NESTED.items():
            if not isinstance(getattr(self, name), cls):
                raise _fail(self, name, getattr(self, name), f"must be a {cls.__name__}")
        _check_int(self, "n_rods", ge=1)
        _check_real(self, "circle_radius", ge=MIN_LENGTH)
        _check_real(self, "first_rod_angle")
        self._check_rods_apart()  # before handedness: a changed n_rods is named with its circle
        h = self.handedness
        if isinstance(h, (str, bytes)) or not hasattr(h, "__len__"):
            raise _fail(
                self, "handedness", h, f"must be a sequence of n_rods = {self.n_rods} values +-1"
            )
        if len(h) != self.n_rods:  # either may be the mistake: name both
            raise ParameterError(
                f"RobotParams.handedness = {_short(h)} is invalid: {len(h)} values but "
                f"RobotParams.n_rods = {self.n_rods}; handedness must have one value +-1 per rod"
            )
        object.__setattr__(
            self, "handedness", tuple(_check_handedness(self, "handedness", x) for x in h)
        )
        self._check_imperfections()
        if self.circle_radius > self.platform.radius:
            raise _fail(
                self,
                "circle_radius",
                self.circle_radius,
                f"must be <= platform radius {self.platform.radius!r} so the rod tips attach "
                "to the platform",
            )

    def _check_imperfections(self) -> None:
        """The per-rod imperfections: [] (0 for every rod) or one finite value per rod within
        its range, stored as a tuple of floats."""
        for name, bound in PER_ROD_IMPERFECTIONS.items():
            v = getattr(self, name)
            requirement = (
                f"must be [] or n_rods = {self.n_rods} finite numbers, each in "
                f"[-{bound:g}, {bound:g}]"
            )
            if isinstance(v, (str, bytes)) or not hasattr(v, "__len__"):
                raise _fail(self, name, v, requirement)
            if len(v) not in (0, self.n_rods) or not all(
                _is_real(x) and math.isfinite(float(x)) and abs(float(x)) <= bound for x in v
            ):
                raise _fail(self, name, v, requirement)
            object.__setattr__(self, name, tuple(float(x) for x in v))
        t = self.rod_tilt
        if (isinstance(t, (str, bytes)) or not hasattr(t, "__len__") or len(t) != 2 or not all(
            _is_real(x) and math.isfinite(float(x)) and abs(float(x)) <= MAX_ROD_TILT for x in t
        )):
            raise _fail(self, "rod_tilt", t, "must be 2 finite numbers [rad] (about x, about y), "
                        f"each in [-{MAX_ROD_TILT:g}, {MAX_ROD_TILT:g}]")
        object.__setattr__(self, "rod_tilt", (float(t[0]), float(t[1])))

    def to_dict(self) -> dict[str, Any]:
        """Nested plain dictionary; the ``environment`` section only when it has obstacles,
        objects or a rod contact."""
        out = super().to_dict()
        env = self.environment
        if not env.obstacles and not env.objects and env.rod_contact is None:
            del out["environment"]
        return out

    def is_symmetric(self) -> bool:
        """True when no imperfection is set (every rod is ``rod`` with its handedness, upright,
        every motor's zero is the printed rod's untwisted state)."""
        return not any(
            any(x != 0.0 for x in getattr(self, name)) for name in PER_ROD_IMPERFECTIONS
        ) and self.rod_tilt == (0.0, 0.0)

    def rod_motor_offset(self, i: int) -> float:
        """Motor zero offset of rod ``i`` [rad] (``motor_offset[i]``, 0 when unset)."""
        return self.motor_offset[i] if self.motor_offset else 0.0

    def min_circle_radius(self) -> float:
        """Smallest ``circle_radius`` [m] at which neighbouring rods of outer radius
        ``rod.outer_radius`` do not intersect: their centres ``2 r sin(pi / n_rods)`` apart
        must be at least one outer diameter (0 for a single rod; 17.96 mm for the paper's four
        12.7 mm rods, 25.4 mm for six)."""
        if self.n_rods < 2:
            return 0.0
        return self.rod.outer_radius / math.sin(math.pi / self.n_rods)

    def _check_rods_apart(self) -> None:
        r_min = self.min_circle_radius()
        if self.circle_radius < r_min * (1.0 - 1e-12):  # tubes that just touch are accepted
            raise _fail(
                self, "circle_radius", self.circle_radius,
                f"with n_rods = {self.n_rods} rods of outer radius {self.rod.outer_radius:g} m "
                f"neighbouring tubes intersect: circle_radius must be >= {r_min:.6g} m for "
                f"{self.n_rods} rods (fewer rods, a larger circle or thinner rods)",
            )

    def rod_angle(self, i: int) -> float:
        """Angular position of rod ``i`` on the circle [rad]."""
        return self.first_rod_angle + 2.0 * math.pi * i / self.n_rods

    def rod_base(self, i: int) -> tuple[float, float, float]:
        """Base position of rod ``i`` [m] (z = 0)."""
        a = self.rod_angle(i)
        return (self.circle_radius * math.cos(a), self.circle_radius * math.sin(a), 0.0)

    def rod_start(self, i: int) -> tuple[float, float, float]:
        """First node of the flexible part of rod ``i`` [m]: ``cap_length_base`` above its
        base on the plate, along the rod's axis (leaning with ``rod_tilt``)."""
        tilt = self.rod_tilt_matrix()
        if tilt is None:
            x, y, _ = self.rod_base(i)
            return (x, y, self.rod.cap_length_base)
        start = np.asarray(self.rod_base(i)) + self.rod.cap_length_base * tilt[:, 2]
        return (float(start[0]), float(start[1]), float(start[2]))

    def rod_tilt_matrix(self) -> NDArray[np.float64] | None:
        """Rotation of the rods' lean ``rod_tilt`` (rotation vector ``(tilt_x, tilt_y, 0)``
        [rad], Rodrigues' formula), None without a lean (the upright rods are then built
        exactly as before the lean existed)."""
        tx, ty = self.rod_tilt
        angle = math.hypot(tx, ty)
        if angle == 0.0:
            return None
        k = np.array([[0.0, 0.0, ty], [0.0, 0.0, -tx], [-ty, tx, 0.0]]) / angle  # [axis]x
        return np.asarray(np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * (k @ k))

    def rod_params(self, i: int) -> RodParams:
        """Rod parameters of rod ``i``: its handedness from ``handedness[i]``, ``C_eps`` and the
        bending rigidity scaled by ``1 + rod_C_eps_deviation[i]`` / ``1 + rod_bend_deviation[i]``
        (exactly ``rod`` when they are 0)."""
        p = self.rod.with_handedness(self.handedness[i])
        dc = self.rod_C_eps_deviation[i] if self.rod_C_eps_deviation else 0.0
        db = self.rod_bend_deviation[i] if self.rod_bend_deviation else 0.0
        if dc != 0.0:
            p = p.replace(C_eps=p.C_eps * (1.0 + dc))
        if db != 0.0:
            p = p.replace(bend_rigidity=p.B_xy * (1.0 + db))
        return p


RobotParams._NESTED = {
    "rod": RodParams,
    "platform": PlatformParams,
    "joint": JointParams,
    "simulation": SimulationParams,
    "environment": EnvironmentParams,
}

