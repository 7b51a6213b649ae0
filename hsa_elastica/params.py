"""Validated parameter sets for HSA rods and robots, presets from the paper, YAML/TOML I/O.

All quantities are SI (m, kg, s, rad, Pa, N).  Every dataclass is frozen and validates itself in
``__post_init__``; an invalid value raises :class:`ParameterError` whose message names
``ClassName.field``, the offending value and the allowed range with its unit, e.g.::

    RodParams.youngs_modulus = -1.0 is invalid: must be a finite number > 0 and <= 1e+12 (Pa)

Presets
-------
* :func:`paper_robot_params` -- the four-rod robot of Section II-E of the paper
  (Stölzle et al., RoboSoft 2023).
* :func:`table1_rod_params` -- the closed FPU 50 characterization rods of Table I
  (Section II-C), for 4, 6, 8, 10 and 12 row tilings.

I/O
---
:func:`save_params` / :func:`load_params` read and write nested dictionaries as YAML
(``.yaml``/``.yml``, via PyYAML) or TOML (``.toml``: read with the standard library's ``tomllib``,
written by the small writer :func:`_dump_toml` of this module, no extra dependency).  TOML has no
null value, so an optional field that is ``None`` (for example ``bend_rigidity``) is written as the
string ``"none"``; ``"none"`` and ``null`` are both read back as ``None``.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Mapping, TypeVar

import yaml

__all__ = [
    "ParameterError",
    "RodParams",
    "PlatformParams",
    "JointParams",
    "SimulationParams",
    "RobotParams",
    "paper_robot_params",
    "table1_rod_params",
    "save_params",
    "load_params",
    "load_params_per_key",
    "resolve_params",
    "PRESETS",
]

ALPHA_C: float = 27.0 / 28.0
"""Timoshenko shear coefficient used by PyElastica (and by the paper: S_xy = alpha_c G A)."""


#: Upper bounds of the validated fields: far outside any HSA (TPU moduli are ~1e6-1e8 Pa,
#: C_eps ~3e-3-1e-2 m/rad) yet finite, so a typo (an exponent too many) is refused by name
#: instead of overflowing or freezing the simulation.
MAX_N_ELEMENTS = 1000
#: Pa; diamond, the stiffest solid, has E = 1.2e12 Pa
MAX_MODULUS = 1e12
#: m/rad; 1 m of rest length per rad/m of twist (the rest-length strain is clipped at eps_max)
MAX_C_EPS = 1.0
#: 1/s; velocity decay time 1 ms.  Far above it the robot only creeps (overdamped with a
#: relaxation time c / omega^2 of hours for its slow modes) and nothing settles in a run.
MAX_DAMPING = 1e3
#: rad; motor angles are bounded to two turns each way (the paper's phi_max is pi; the
#: auxetic rest-length strain saturates at eps_max long before)
MAX_MOTOR_ANGLE = 4.0 * math.pi
#: Hz; ``record_fps`` is at most this, or 1 / dt (one sample per step) if that is larger
MAX_RECORD_FPS = 1e4


class ParameterError(ValueError):
    """An invalid parameter value, an unknown key or an unreadable parameter file."""


def invalid_parameter(owner: str, name: str, value: Any, allowed: str) -> ParameterError:
    """``ParameterError`` naming ``owner.name``, the bad value and the allowed range/unit."""
    return ParameterError(f"{owner}.{name} = {value!r} is invalid: must be {allowed}")


def is_finite_number(value: Any) -> bool:
    """True for a finite real number (bool is not a number here)."""
    if isinstance(value, bool):
        return False
    try:
        return bool(math.isfinite(float(value)))
    except (TypeError, ValueError, OverflowError):
        return False


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------
def _unit(obj: Any, name: str) -> str:
    for f in dataclasses.fields(obj):
        if f.name == name:
            return str(f.metadata.get("unit", "-"))
    return "-"  # pragma: no cover - only called with existing field names


def _fail(obj: Any, name: str, value: Any, requirement: str) -> ParameterError:
    return ParameterError(
        f"{type(obj).__name__}.{name} = {_short(value)} is invalid: {requirement} "
        f"({_unit(obj, name)}){_string_hint(value)}"
    )


def _short(value: Any) -> str:
    """``repr`` of a value, shortened (an int of 400 digits is not worth printing)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:20] + "..." + text[-8:]


def _string_hint(value: Any) -> str:
    """A hint for a number that arrived as a string: PyYAML reads ``1e7`` (no dot) as a string."""
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return ""
        return (
            f"; {value!r} was read as a string (PyYAML reads a float only with a dot and a "
            "signed exponent: write 1.0e+7, not 1e7 or 1.0e7)"
        )
    return ""


def _as_finite(value: Any) -> float | None:
    """``float(value)`` if it is a finite real number (not bool), else None (no OverflowError)."""
    if not _is_real(value):
        return None
    try:
        v = float(value)
    except (OverflowError, TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _check_real(
    obj: Any,
    name: str,
    *,
    gt: float | None = None,
    ge: float | None = None,
    le: float | None = None,
    optional: bool = False,
) -> None:
    """Check that ``obj.name`` is a finite real number in the given range; store it as float."""
    value = getattr(obj, name)
    if optional and value is None:
        return
    parts = []
    if gt is not None:
        parts.append(f"> {gt:g}")
    if ge is not None:
        parts.append(f">= {ge:g}")
    if le is not None:
        parts.append(f"<= {le:g}")
    requirement = "must be " + ("None or " if optional else "") + "a finite number"
    if parts:
        requirement += " " + " and ".join(parts)
    v_or_none = _as_finite(value)
    if v_or_none is None:
        raise _fail(obj, name, value, requirement)
    v = v_or_none
    if (gt is not None and not v > gt) or (ge is not None and not v >= ge) or (
        le is not None and not v <= le
    ):
        raise _fail(obj, name, value, requirement)
    object.__setattr__(obj, name, v)


def _check_int(obj: Any, name: str, *, ge: int, le: int | None = None) -> None:
    value = getattr(obj, name)
    requirement = f"must be an integer >= {ge}" + ("" if le is None else f" and <= {le}")
    v = _as_finite(value)
    if v is None or v != int(v) or int(v) < ge or (le is not None and int(v) > le):
        raise _fail(obj, name, value, requirement)
    object.__setattr__(obj, name, int(value))


def _check_handedness(obj: Any, name: str, value: Any) -> int:
    if isinstance(value, bool) or not _is_real(value) or float(value) not in (1.0, -1.0):
        raise _fail(obj, name, value, "must be +1 (right-handed) or -1 (left-handed)")
    return int(value)


class _ParamsBase:
    """Shared helpers: ``replace``, ``to_dict``, ``from_dict``."""

    # nested dataclass fields: name -> class (only RobotParams has any)
    _NESTED: ClassVar[dict[str, type]] = {}

    def replace(self: _P, **changes: Any) -> _P:
        """Return a copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def to_dict(self) -> dict[str, Any]:
        """Nested plain dictionary (tuples as lists) suitable for YAML/TOML."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, _ParamsBase):
                out[f.name] = value.to_dict()
            elif isinstance(value, tuple):
                out[f.name] = list(value)
            else:
                out[f.name] = value
        return out

    @classmethod
    def from_dict(cls: type[_P], data: Mapping[str, Any], *, where: str = "") -> _P:
        """Build from a (possibly partial) nested mapping; missing keys take their defaults.

        Raises :class:`ParameterError` naming any unknown key.
        """
        where = where or cls.__name__
        if not isinstance(data, Mapping):
            raise ParameterError(f"{where} must be a mapping of field names to values, got {data!r}")
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(str(k) for k in data if k not in names)
        if unknown:
            raise ParameterError(
                f"{where}: unknown key(s) {', '.join(repr(u) for u in unknown)}; "
                f"allowed keys are {', '.join(sorted(names))}"
            )
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            nested = cls._NESTED.get(key)
            if nested is not None:
                kwargs[key] = nested.from_dict(value, where=f"{where}.{key}")  # type: ignore[attr-defined]
            elif isinstance(value, str) and value.lower() == "none":
                kwargs[key] = None
            else:
                kwargs[key] = value
        return cls(**kwargs)


_P = TypeVar("_P", bound=_ParamsBase)


# --------------------------------------------------------------------------------------------
# dataclasses
# --------------------------------------------------------------------------------------------
#: loss factor tan(delta) of the TPU assumed for the default Kelvin-Voigt damping (see
#: docs/stability.md: representative of polyurethane elastomers at room temperature)
TPU_LOSS_FACTOR = 0.1
#: default retardation times [s]: tan(delta) / omega of the paper robot's lowest mode that
#: loads the strain (elongation bounce: axial/shear; bending sway: bend/twist; docs/stability.md)
RETARDATION_AXIAL = 7.5e-5
RETARDATION_BEND = 1.0e-3
RETARDATION_FIELDS = (
    "retardation_time_axial",
    "retardation_time_shear",
    "retardation_time_bend",
    "retardation_time_twist",
)


@dataclass(frozen=True)
class RodParams(_ParamsBase):
    """One HSA rod: a hollow tube with the auxetic coupling of Eqs. (2)-(5).

    The stiffness law (Eq. 5) is, per element, with the handed twist strain ``kappa_h`` [rad/m]::

        S_zz = (youngs_modulus + E_slope * kappa_h) * area
        S_xx = S_yy = 27/28 * (shear_modulus + G_slope * kappa_h) * area
        B_xx = B_yy = B_xy + bend_rigidity_slope * kappa_h
        B_zz = B_z + twist_rigidity_slope * kappa_h

    and the rest-length law (Eqs. 2-3) is ``eps = clip(C_eps * kappa_h, eps_min, eps_max)``.

    Optional richer twist laws (not in the paper, whose conclusion notes that the linear law
    only holds in a limited range; all default to 0, the paper's linear model, bit-identical):
    with ``k = clip(kappa_h, eps_min / C_eps, eps_max / C_eps)`` (the clipped twist range of
    the linear law)::

        eps  = clip(C_eps * k + C_eps2 * k^2, eps_min, eps_max)
        S_zz = (youngs_modulus + E_slope * k + E_quad * k^2) * area
        B_zz = B_z + twist_rigidity_slope * k + twist_rigidity_quad * k^2

    ``C_eps2`` [m^2/rad^2], ``E_quad`` [Pa m^2/rad^2], ``twist_rigidity_quad``
    [N m^2 m^2/rad^2]; they need ``C_eps > 0`` (a bounded range), the rest-length polynomial
    must be non-decreasing and the stiffnesses positive over the whole range (validated).

    Rigid end caps (``cap_length_base``, ``cap_length_top`` [m], default 0): printed rods end
    in rigid caps that do not deform.  ``length`` and every law above describe the *flexible*
    auxetic part only.  The base cap stands on the base plate along the rod axis and turns with
    the motor about its own axis, so the flexible part starts ``cap_length_base`` above the
    plate with the same motor boundary condition; the top cap is part of the platform, so the
    joint attaches ``cap_length_top`` below the platform's lower face (see
    :func:`hsa_elastica.robots.builders.build_robot`).  The caps are massless (put their mass
    into ``PlatformParams.payload_mass`` if it matters).

    ``twist_filter_time`` [s] is not part of the paper's model: when > 0 the coupling low-passes
    the handed twist strain with this time constant (``AuxeticCoupling(twist_filter_time=...)``).
    It is a delayed feedback and does not make the model passive; the default is 0 (off): the
    Kelvin-Voigt material damping below keeps the robot stable (docs/stability.md).

    ``retardation_time_axial`` / ``_shear`` / ``_bend`` / ``_twist`` [s] are the Kelvin-Voigt
    retardation times of the TPU (viscous stress = retardation time x stiffness x strain rate;
    :mod:`hsa_elastica.physics.material_damping`): a mode of angular frequency ``omega`` that
    loads mainly one strain has the loss factor ``omega tau`` and the damping ratio
    ``omega tau / 2``.  Defaults: ``TPU_LOSS_FACTOR / omega`` of the paper robot's elongation
    bounce (axial, shear) and bending sway (bend, twist); 0 switches a term off.
    """

    n_elements: int = field(default=25, metadata={"unit": "-"})
    length: float = field(default=0.100, metadata={"unit": "m, printed length"})
    outer_radius: float = field(default=0.0127, metadata={"unit": "m"})
    wall_thickness: float = field(default=0.00243, metadata={"unit": "m"})
    density: float = field(default=1050.0, metadata={"unit": "kg/m^3"})
    youngs_modulus: float = field(default=10e6, metadata={"unit": "Pa"})
    shear_modulus: float = field(default=0.6e6, metadata={"unit": "Pa"})
    bend_rigidity: float | None = field(
        default=0.02, metadata={"unit": "N m^2, None = E*I of the tube"}
    )
    twist_rigidity: float | None = field(
        default=0.014, metadata={"unit": "N m^2, None = G*J of the tube"}
    )
    handedness: int = field(default=1, metadata={"unit": "-"})
    C_eps: float = field(default=0.01, metadata={"unit": "m/rad"})
    eps_min: float = field(default=0.0, metadata={"unit": "-"})
    eps_max: float = field(default=0.5, metadata={"unit": "-"})
    E_slope: float = field(default=0.0, metadata={"unit": "Pa m/rad"})
    G_slope: float = field(default=0.0, metadata={"unit": "Pa m/rad"})
    bend_rigidity_slope: float = field(default=0.0, metadata={"unit": "N m^2 m/rad"})
    twist_rigidity_slope: float = field(default=0.0, metadata={"unit": "N m^2 m/rad"})
    twist_filter_time: float = field(
        default=0.0, metadata={"unit": "s, low pass of the coupling's twist strain, 0 = off"}
    )
    # optional nonlinear twist laws (0 = the paper's linear model)
    C_eps2: float = field(default=0.0, metadata={"unit": "m^2/rad^2"})
    E_quad: float = field(default=0.0, metadata={"unit": "Pa m^2/rad^2"})
    twist_rigidity_quad: float = field(default=0.0, metadata={"unit": "N m^2 m^2/rad^2"})
    # rigid end caps of the printed rod (0 = none, the paper's model)
    cap_length_base: float = field(
        default=0.0, metadata={"unit": "m, rigid cap between base plate and flexible part"}
    )
    cap_length_top: float = field(
        default=0.0, metadata={"unit": "m, rigid cap between flexible part and platform"}
    )
    # Kelvin-Voigt material damping of the TPU (physics/material_damping.py); 0 = elastic
    retardation_time_axial: float = field(default=RETARDATION_AXIAL, metadata={"unit": "s"})
    retardation_time_shear: float = field(default=RETARDATION_AXIAL, metadata={"unit": "s"})
    retardation_time_bend: float = field(default=RETARDATION_BEND, metadata={"unit": "s"})
    retardation_time_twist: float = field(default=RETARDATION_BEND, metadata={"unit": "s"})

    def __post_init__(self) -> None:
        _check_int(self, "n_elements", ge=2, le=MAX_N_ELEMENTS)
        _check_real(self, "cap_length_base", ge=0.0)
        _check_real(self, "cap_length_top", ge=0.0)
        for name in ("length", "outer_radius", "density"):
            _check_real(self, name, gt=0.0)
        for name in ("youngs_modulus", "shear_modulus"):
            _check_real(self, name, gt=0.0, le=MAX_MODULUS)
        _check_real(self, "wall_thickness", gt=0.0)
        if self.wall_thickness > self.outer_radius:
            raise _fail(
                self,
                "wall_thickness",
                self.wall_thickness,
                f"must be > 0 and <= outer_radius = {self.outer_radius!r}",
            )
        _check_real(self, "bend_rigidity", gt=0.0, optional=True)
        _check_real(self, "twist_rigidity", gt=0.0, optional=True)
        object.__setattr__(
            self, "handedness", _check_handedness(self, "handedness", self.handedness)
        )
        _check_real(self, "C_eps", ge=0.0, le=MAX_C_EPS)
        # zero twist must map to the printed length: eps_min <= 0 <= eps_max
        _check_real(self, "eps_min", gt=-1.0, le=0.0)
        _check_real(self, "eps_max", ge=0.0, le=10.0)
        if self.eps_min > self.eps_max:
            raise _fail(
                self, "eps_min", self.eps_min, f"must be <= eps_max = {self.eps_max!r}"
            )
        for name in ("E_slope", "G_slope", "bend_rigidity_slope", "twist_rigidity_slope"):
            _check_real(self, name)
        _check_real(self, "twist_filter_time", ge=0.0)
        for name in RETARDATION_FIELDS:
            _check_real(self, name, ge=0.0, le=1.0)
        for name in ("C_eps2", "E_quad", "twist_rigidity_quad"):
            _check_real(self, name)
            if getattr(self, name) != 0.0 and self.C_eps == 0.0:
                raise _fail(
                    self, name, getattr(self, name),
                    "must be 0 when C_eps = 0 (the nonlinear laws need the bounded twist range "
                    "[eps_min/C_eps, eps_max/C_eps])",
                )
        self._check_stiffness_positive()
        self._check_rest_length_monotone()

    @property
    def is_nonlinear(self) -> bool:
        """True when any of the optional quadratic twist laws is on."""
        return self.C_eps2 != 0.0 or self.E_quad != 0.0 or self.twist_rigidity_quad != 0.0

    def _check_rest_length_monotone(self) -> None:
        """``d eps / d k = C_eps + 2 C_eps2 k >= 0`` over the clipped twist range (a rest length
        that shrinks under more twist would make the clip and the reciprocal couple ambiguous)."""
        if self.C_eps2 == 0.0:
            return
        for k in (self.eps_min / self.C_eps, self.eps_max / self.C_eps):
            slope = self.C_eps + 2.0 * self.C_eps2 * k
            if slope < 0.0:
                raise _fail(
                    self, "C_eps2", self.C_eps2,
                    f"makes d eps/d kappa_h = C_eps + 2 C_eps2 kappa_h = {slope:g} < 0 at "
                    f"kappa_h = {k:g} rad/m; must keep the rest-length law non-decreasing over "
                    f"[eps_min/C_eps, eps_max/C_eps]",
                )

    def _check_stiffness_positive(self) -> None:
        """Eq. 5 must give positive stiffnesses over the clipped strain range.

        The stiffness law sees ``kappa_h`` clipped to ``[eps_min, eps_max] / C_eps``; with
        ``C_eps == 0`` the range is unbounded and is checked by the stiffness law itself.
        """
        if self.C_eps == 0.0:
            return
        k_lo, k_hi = self.eps_min / self.C_eps, self.eps_max / self.C_eps
        checks = (
            # (field named in the error, base, slope, quadratic term, base field)
            ("E_quad" if self.E_quad else "E_slope", self.youngs_modulus, self.E_slope,
             self.E_quad, "youngs_modulus"),
            ("G_slope", self.shear_modulus, self.G_slope, 0.0, "shear_modulus"),
            ("bend_rigidity_slope", self.B_xy, self.bend_rigidity_slope, 0.0, "bend_rigidity"),
            ("twist_rigidity_quad" if self.twist_rigidity_quad else "twist_rigidity_slope",
             self.B_z, self.twist_rigidity_slope, self.twist_rigidity_quad, "twist_rigidity"),
        )
        for name, base, slope, quad, base_name in checks:
            worst = min(base + slope * k_lo + quad * k_lo**2, base + slope * k_hi + quad * k_hi**2)
            if quad > 0.0:  # convex: the minimum may be inside the range
                k_v = -slope / (2.0 * quad)
                if k_lo < k_v < k_hi:
                    worst = min(worst, base + slope * k_v + quad * k_v**2)
            if not worst > 0.0:
                law = f"{base_name} + slope * kappa_h" + (" + quad * kappa_h^2" if quad else "")
                raise _fail(
                    self,
                    name,
                    getattr(self, name),
                    f"makes {law} = {worst:g} <= 0 for kappa_h in "
                    f"[eps_min/C_eps, eps_max/C_eps] = [{k_lo:g}, {k_hi:g}] rad/m; "
                    "must keep the stiffness > 0",
                )

    # ---- derived geometry (m, m^2, m^4) ------------------------------------------------
    @property
    def inner_radius(self) -> float:
        """Inner radius of the tube [m]."""
        return self.outer_radius - self.wall_thickness

    @property
    def area(self) -> float:
        """Tube cross-section area ``pi (r_o^2 - r_i^2)`` [m^2]."""
        return math.pi * (self.outer_radius**2 - self.inner_radius**2)

    @property
    def second_moment(self) -> float:
        """Area second moment about a diameter ``pi/4 (r_o^4 - r_i^4)`` [m^4] (I_xx = I_yy)."""
        return math.pi / 4.0 * (self.outer_radius**4 - self.inner_radius**4)

    @property
    def polar_moment(self) -> float:
        """Polar area moment ``J = 2 I = pi/2 (r_o^4 - r_i^4)`` [m^4]."""
        return 2.0 * self.second_moment

    @property
    def equivalent_radius(self) -> float:
        """Radius of the solid disk with the tube's area, ``sqrt(A/pi)`` [m]."""
        return math.sqrt(self.area / math.pi)

    @property
    def B_xy(self) -> float:
        """Resolved bend rigidity [N m^2]: ``bend_rigidity`` or ``E I`` of the tube."""
        if self.bend_rigidity is not None:
            return self.bend_rigidity
        return self.youngs_modulus * self.second_moment

    @property
    def B_z(self) -> float:
        """Resolved twist rigidity [N m^2]: ``twist_rigidity`` or ``G J`` of the tube."""
        if self.twist_rigidity is not None:
            return self.twist_rigidity
        return self.shear_modulus * self.polar_moment

    @property
    def axial_stiffness(self) -> float:
        """Printed-state ``S_z = E A`` [N]."""
        return self.youngs_modulus * self.area

    @property
    def shear_stiffness(self) -> float:
        """Printed-state ``S_xy = 27/28 G A`` [N]."""
        return ALPHA_C * self.shear_modulus * self.area

    @property
    def mass(self) -> float:
        """Rod mass ``rho A L`` [kg] (printed length)."""
        return self.density * self.area * self.length

    def with_handedness(self, handedness: int) -> RodParams:
        """Copy with ``handedness`` (+1 right, -1 left)."""
        return self.replace(handedness=handedness)


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
        for name in ("diameter", "thickness", "density"):
            _check_real(self, name, gt=0.0)
        _check_real(self, "payload_mass", ge=0.0)
        m = self.marker_offset
        if (
            isinstance(m, (str, bytes))
            or not hasattr(m, "__len__")
            or len(m) != 3
            or not all(_is_real(x) and math.isfinite(float(x)) for x in m)
        ):
            raise _fail(self, "marker_offset", m, "must be 3 finite numbers")
        object.__setattr__(self, "marker_offset", tuple(float(x) for x in m))

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
        _check_real(self, "k_F", gt=0.0)
        _check_real(self, "k_tau", ge=0.0)
        _check_real(self, "nu_F", ge=0.0)
        _check_real(self, "nu_tau", ge=0.0)


_RAMP_SHAPES = ("linear", "smooth")


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

    def __post_init__(self) -> None:
        _check_real(self, "dt", gt=0.0)
        _check_real(self, "damping", ge=0.0, le=MAX_DAMPING)
        _check_real(self, "rotational_damping", ge=0.0, le=MAX_DAMPING)
        if self.gravity is not None:
            g = self.gravity
            if (
                isinstance(g, (str, bytes))
                or not hasattr(g, "__len__")
                or len(g) != 3
                or not all(_is_real(x) and math.isfinite(float(x)) for x in g)
            ):
                raise _fail(self, "gravity", g, "must be None or 3 finite numbers")
            object.__setattr__(self, "gravity", tuple(float(x) for x in g))
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

    def __post_init__(self) -> None:
        for name, cls in self._NESTED.items():
            if not isinstance(getattr(self, name), cls):
                raise _fail(self, name, getattr(self, name), f"must be a {cls.__name__}")
        _check_int(self, "n_rods", ge=1)
        _check_real(self, "circle_radius", gt=0.0)
        _check_real(self, "first_rod_angle")
        h = self.handedness
        if isinstance(h, (str, bytes)) or not hasattr(h, "__len__") or len(h) != self.n_rods:
            raise _fail(
                self, "handedness", h, f"must be a sequence of n_rods = {self.n_rods} values +-1"
            )
        object.__setattr__(
            self, "handedness", tuple(_check_handedness(self, "handedness", x) for x in h)
        )
        if self.circle_radius > self.platform.radius:
            raise _fail(
                self,
                "circle_radius",
                self.circle_radius,
                f"must be <= platform radius {self.platform.radius!r} so the rod tips attach "
                "to the platform",
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
        base on the plate."""
        x, y, _ = self.rod_base(i)
        return (x, y, self.rod.cap_length_base)

    def rod_params(self, i: int) -> RodParams:
        """Rod parameters of rod ``i`` with its handedness from ``handedness[i]``."""
        return self.rod.with_handedness(self.handedness[i])


RobotParams._NESTED = {
    "rod": RodParams,
    "platform": PlatformParams,
    "joint": JointParams,
    "simulation": SimulationParams,
}


# --------------------------------------------------------------------------------------------
# presets
# --------------------------------------------------------------------------------------------
def paper_robot_params() -> RobotParams:
    """The four-rod HSA robot of Section II-E of the paper.

    25 elements, printed length 100 mm, 25.4 mm outer *diameter* (r_o = 12.7 mm), wall 2.43 mm,
    rho = 1050 kg/m^3, E = 10 MPa, G = 0.6 MPa (so S_z = E A = 1753.5 N and
    S_xy = 27/28 G A = 101.5 N -- the paper prints the unit as N/m), B_xy = 0.02 N m^2,
    B_z = 0.014 N m^2, C_eps = 0.01 m/rad.  Rods on a 24 mm circle at 45 + 90 i deg with
    handedness right/left/right/left; platform 95 mm diameter, 3 mm thick, 700 kg/m^3;
    joints k_F = 5e5 N/m, k_tau = 20 N m/rad, no joint damping.  (The paper's public
    implementation used G = 0.8 MPa for the robot; we use the 0.6 MPa stated in the text.)
    """
    rod = RodParams(
        n_elements=25,
        length=0.100,
        outer_radius=0.0254 / 2.0,
        wall_thickness=0.00243,
        density=1050.0,
        youngs_modulus=10e6,
        shear_modulus=0.6e6,
        bend_rigidity=0.02,
        twist_rigidity=0.014,
        handedness=1,
        C_eps=0.01,
        eps_min=0.0,
        eps_max=0.5,
    )
    return RobotParams(
        rod=rod,
        n_rods=4,
        circle_radius=0.024,
        first_rod_angle=math.pi / 4,
        handedness=(1, -1, 1, -1),
        platform=PlatformParams(diameter=0.095, thickness=0.003, density=700.0),
        joint=JointParams(k_F=5e5, nu_F=0.0, k_tau=20.0, nu_tau=0.0),
        simulation=SimulationParams(),
    )


# Table I of the paper: rows -> (L [mm], c [1e-3 m/rad], E0 [kPa], E slope [kPa per rad/m],
# B_z [N m^2/rad]).  Kept verbatim; units are converted in table1_rod_params.
_TABLE1: dict[int, tuple[float, float, float, float, float]] = {
    4: (75.0, 3.04, 576.9, 36.1, 0.00375),
    6: (89.0, 3.50, 309.3, 13.1, 0.00213),
    8: (100.0, 3.77, 203.5, 10.6, 0.00183),
    10: (112.0, 3.64, 197.6, 7.5, 0.00167),
    12: (124.0, 3.53, 197.6, 2.4, 0.00124),
}


def table1_rod_params(rows: int) -> RodParams:
    """Closed Carbon FPU 50 characterization rod of Table I (Section II-C) for ``rows`` tilings.

    ``rows`` must be one of 4, 6, 8, 10, 12.  Table I reads ``L(1 + c kappa_z)``,
    ``E [kPa] = a + b kappa_z`` and ``B_z``; we convert:

    * ``C_eps = c * 1e-3 m/rad`` (e.g. 3.04e-3 m/rad for 4 rows) -- only this reading reproduces
      the measured minimum-energy lengths (see ``shared/data/README.md``);
    * ``youngs_modulus = a kPa``; ``E_slope = b kPa per (rad/m) = b * 1e3 Pa m/rad``;
    * geometry: 19 mm is read as the *outer radius*, wall 2 mm (only this reproduces the
      measured spring constants, e.g. E0 A / L = 1.74 N/mm vs. 1.73 N/mm measured for 4 rows);
    * ``twist_rigidity = B_z`` of Table I; these are per-discretization values fitted with
      ``n_elements = 10``, so another element count needs B_z checked again;
    * Table I gives no bend rigidity: ``bend_rigidity = None`` (E I of the tube);
    * Table I gives no shear modulus: ``shear_modulus = E/3`` (Poisson ratio 0.5, PyElastica's own
      default), ``G_slope = 0``;
    * ``density = 1050 kg/m^3``, ``eps_min = 0`` (closed HSAs only elongate), ``eps_max = 0.5``
      (not reached in the measured range), right-handed (use :meth:`RodParams.with_handedness`).

    Caveat: the paper's public code computed the stiffness law from only half of the twist
    strain, so Table I's E slopes may be about twice what this package's consistent law (Eq. 5
    with the same ``kappa_h`` as the rest length) needs.  The values are kept verbatim here; the
    validation against the measured spring constants decides.
    """
    if isinstance(rows, bool) or rows not in _TABLE1:
        raise ParameterError(
            f"table1_rod_params: rows = {rows!r} is invalid: must be one of "
            f"{sorted(_TABLE1)} (row tilings of Table I)"
        )
    length_mm, c, e0_kpa, b_kpa, b_z = _TABLE1[rows]
    youngs = e0_kpa * 1e3
    return RodParams(
        n_elements=10,
        length=length_mm * 1e-3,
        outer_radius=0.019,
        wall_thickness=0.002,
        density=1050.0,
        youngs_modulus=youngs,
        shear_modulus=youngs / 3.0,
        bend_rigidity=None,
        twist_rigidity=b_z,
        handedness=1,
        C_eps=c * 1e-3,
        eps_min=0.0,
        eps_max=0.5,
        E_slope=b_kpa * 1e3,
        G_slope=0.0,
    )


# --------------------------------------------------------------------------------------------
# I/O
# --------------------------------------------------------------------------------------------
_AnyParams = TypeVar("_AnyParams", bound=_ParamsBase)


def _header(params: _ParamsBase) -> str:
    lines = [
        f"hsa-elastica parameters: {type(params).__name__}",
        "SI units throughout. An optional value written as null (YAML) or \"none\" (TOML) means:",
        "  bend_rigidity -> E*I of the tube, twist_rigidity -> G*J of the tube, gravity -> off.",
        "field units:",
    ]

    def walk(obj: _ParamsBase, prefix: str) -> None:
        for f in dataclasses.fields(obj):  # type: ignore[arg-type]
            value = getattr(obj, f.name)
            if isinstance(value, _ParamsBase):
                walk(value, f"{prefix}{f.name}.")
            else:
                lines.append(f"  {prefix}{f.name} [{f.metadata.get('unit', '-')}]")

    walk(params, "")
    return "".join(f"# {line}\n" for line in lines)


def _toml_value(value: Any, key: str) -> str:
    if value is None:
        return '"none"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v, key) for v in value) + "]"
    raise ParameterError(f"cannot write {key} = {value!r} to TOML")


def _dump_toml(data: Mapping[str, Any], table: str = "") -> str:
    """Tiny TOML writer for nested dicts of numbers, strings, None and lists."""
    scalars = [(k, v) for k, v in data.items() if not isinstance(v, Mapping)]
    tables = [(k, v) for k, v in data.items() if isinstance(v, Mapping)]
    out = []
    if table and scalars:
        out.append(f"\n[{table}]\n")
    for k, v in scalars:
        out.append(f"{k} = {_toml_value(v, k)}\n")
    for k, v in tables:
        out.append(_dump_toml(v, f"{table}.{k}" if table else k))
    return "".join(out)


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix == ".toml":
        return "toml"
    raise ParameterError(
        f"parameter file {str(path)!r}: unsupported extension {suffix!r}; use .yaml, .yml or .toml"
    )


def save_params(params: _ParamsBase, path: str | Path) -> Path:
    """Write ``params`` (any of the parameter dataclasses) to ``path`` as YAML or TOML.

    The file starts with a comment block listing every field with its unit.  Returns the path.
    """
    path = Path(path)
    fmt = _format(path)
    if not isinstance(params, _ParamsBase):
        raise ParameterError(f"save_params: {params!r} is not a parameter dataclass")
    data = params.to_dict()
    if fmt == "yaml":
        body = yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
    else:
        body = _dump_toml(data)
    path.write_text(_header(params) + body, encoding="utf-8")
    return path


_SECTIONS = {
    "RodParams": "rod",
    "PlatformParams": "platform",
    "JointParams": "joint",
    "SimulationParams": "simulation",
    "AxialLawParams": "axial_law",
}


def _read_mapping(path: Path) -> Any:
    fmt = _format(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError(f"cannot read parameter file {str(path)!r}: {exc}") from exc
    try:
        data: Any = yaml.safe_load(text) if fmt == "yaml" else tomllib.loads(text)
    except (yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        raise ParameterError(f"cannot parse parameter file {str(path)!r}: {exc}") from exc
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ParameterError(
            f"parameter file {str(path)!r} must contain a mapping at top level, got {data!r}"
        )
    return data


def _split_key(path: str | Path) -> tuple[Path, str | None]:
    """``"file.yaml#10"`` -> (``file.yaml``, ``"10"``); no ``#`` -> (path, None)."""
    text = str(path)
    if "#" in text:
        head, _, key = text.rpartition("#")
        return Path(head), key
    return Path(path), None


def _is_keyed(data: Mapping[Any, Any]) -> bool:
    """A per-key file (e.g. one entry per row count): every top-level key is an integer."""
    return bool(data) and all(isinstance(k, int) and not isinstance(k, bool) for k in data)


def _section(data: Mapping[str, Any], cls: type) -> Mapping[str, Any]:
    """The part of ``data`` for ``cls``: ``data[section]`` when ``data`` groups several
    parameter sets (e.g. ``{rod: ..., axial_law: ...}``) and ``cls`` has no field of that name."""
    key = _SECTIONS.get(cls.__name__)
    if key is not None and isinstance(data.get(key), Mapping):
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        if key not in names and not set(map(str, data)) <= names:
            return data[key]  # type: ignore[no-any-return]
    return data


def load_params(path: str | Path, cls: type[_AnyParams] = RobotParams) -> _AnyParams:  # type: ignore[assignment]
    """Read a YAML/TOML file written by :func:`save_params` (or by hand) into ``cls``.

    Missing keys take their defaults; unknown keys, invalid values and unreadable or malformed
    files raise :class:`ParameterError`.

    Files holding one parameter set per key (the characterization fits in ``validation/``,
    one rod per row count) are read one entry at a time with ``"FILE.yaml#KEY"``, e.g.
    ``load_params("validation/fitted_params.yaml#10", RodParams)``, or all at once with
    :func:`load_params_per_key`.  An entry grouping several sets (``{rod: ..., axial_law:
    ...}``) gives ``cls`` its own section (``rod`` for :class:`RodParams`).
    """
    path, key = _split_key(path)
    data: Any = _read_mapping(path)
    if key is not None:
        matches = [k for k in data if str(k) == key]
        if not matches:
            raise ParameterError(
                f"parameter file {str(path)!r} has no entry {key!r}; entries: "
                f"{', '.join(str(k) for k in data)}"
            )
        data = data[matches[0]]
        if not isinstance(data, Mapping):
            raise ParameterError(f"{str(path)}#{key} must be a mapping, got {data!r}")
    elif _is_keyed(data):
        keys = ", ".join(str(k) for k in data)
        raise ParameterError(
            f"parameter file {str(path)!r} holds one parameter set per key ({keys}): select "
            f"one as '{path}#KEY' (e.g. '{path}#{next(iter(data))}') or read all with "
            f"load_params_per_key"
        )
    body = _section(data, cls)
    if issubclass(cls, _ParamsBase):
        return cls.from_dict(body, where=f"{path}#{key}" if key else str(path))
    return cls.from_dict(body)  # type: ignore[attr-defined, no-any-return]


def load_params_per_key(path: str | Path, cls: type[_AnyParams]) -> dict[int, _AnyParams]:
    """Read a per-key parameter file (e.g. ``validation/fitted_params.yaml``: one
    :class:`RodParams` per row count) into ``{key: cls}``."""
    path = Path(path)
    data = _read_mapping(path)
    if not _is_keyed(data):
        raise ParameterError(
            f"parameter file {str(path)!r} is not a per-key file (its top-level keys are not "
            f"integers); read it with load_params"
        )
    return {int(k): load_params(f"{path}#{k}", cls) for k in data}


# --------------------------------------------------------------------------------------------
# named presets
# --------------------------------------------------------------------------------------------
_PRESET_DIR = Path(__file__).resolve().parent / "presets"

#: preset names accepted wherever a parameter file is (``--params NAME``): name -> description
PRESETS: dict[str, str] = {
    "paper_robot": "the four-rod robot of Section II-E of the paper (paper_robot_params())",
    "fpu_robot_2022": "the real four-rod FPU robot (rigid caps, hanging mount), calibrated on "
    "the motion capture shipped in hsa_elastica/data (presets/fpu_robot_2022.yaml)",
}


def resolve_params(name_or_path: str | Path, cls: type[_AnyParams] = RobotParams) -> _AnyParams:  # type: ignore[assignment]
    """Parameters from a preset name (:data:`PRESETS`) or a file (:func:`load_params`,
    including ``FILE#KEY``).

    With ``cls = RobotParams`` a file holding only rod parameters (e.g. an entry of the
    characterization fits) gives ``RobotParams(rod=...)`` with the other defaults.
    """
    text = str(name_or_path)
    if text in PRESETS:
        if text == "paper_robot":
            robot = paper_robot_params()
        else:
            robot = load_params(_PRESET_DIR / f"{text}.yaml", RobotParams)
        if cls is RobotParams:
            return robot  # type: ignore[return-value]
        section = _SECTIONS.get(cls.__name__)
        if section is None or not hasattr(robot, section):
            raise ParameterError(f"preset {text!r} holds RobotParams, not {cls.__name__}")
        value = getattr(robot, section)
        return value.with_handedness(1) if isinstance(value, RodParams) else value  # type: ignore[no-any-return, return-value]
    path = Path(_split_key(text)[0])
    if not path.suffix and not path.exists():
        raise ParameterError(
            f"{text!r} is neither a preset ({', '.join(PRESETS)}) nor a parameter file"
        )
    try:
        return load_params(text, cls)
    except ParameterError:
        if cls is not RobotParams:
            raise
        try:
            rod = load_params(text, RodParams)
        except ParameterError:
            pass
        else:
            return RobotParams(rod=rod)  # type: ignore[return-value]
        raise
