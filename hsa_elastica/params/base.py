"""Shared pieces of the parameter dataclasses.

:class:`ParameterError`, the field checks, the ``_ParamsBase`` mixin and the upper bounds
(``MAX_N_ELEMENTS``, ``MAX_MODULUS``, ...) of the validated fields, SI units.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings
from typing import Any, ClassVar, Mapping, TypeVar

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
#: rad/m; half-width of the auxetic coupling's hysteresis play (``RodParams.hysteresis_width``):
#: 1000 rad/m is 16 turns over 0.1 m, far beyond the twist strain any motor angle reaches
#: (1.5 pi over 0.1 m = 47 rad/m), so a wider play would never slide.
MAX_PLAY_WIDTH = 1e3
#: 1/s; velocity decay time 1 ms.  Far above it the robot only creeps (overdamped with a
#: relaxation time c / omega^2 of hours for its slow modes) and nothing settles in a run.
MAX_DAMPING = 1e3
#: rad; motor angles are bounded to three quarters of a turn each way, 1.5 pi = 4.71 rad (the
#: paper's phi_max and every measured run use at most pi).  Physics: the rest-length strain of
#: the paper's rods saturates at eps_max at eps_max / C_eps * L = 5 rad of twist, so a larger
#: angle only adds twist; the elongated straight robot then buckles in torsion (the static
#: solver's smallest stability eigenvalue crosses zero at 6.0 rad = 1.91 pi for the paper
#: robot), and past about 3 pi the rods collapse in the dynamics, turn neighbouring elements
#: by more than pi against each other and lose whole turns of twist (the discrete rod keeps
#: rotations modulo a turn): at 3.7 pi the dynamics settled at the rest height with 4 pi of
#: twist missing, while the statics reported the saturated height.  1.5 pi keeps the motors
#: in the range where the angle still sets the elongation, below both.
MAX_MOTOR_ANGLE = 1.5 * math.pi
#: Hz; ``record_fps`` is at most this, or 1 / dt (one sample per step) if that is larger
MAX_RECORD_FPS = 1e4
#: ``simulation.max_halvings``: a refused implicit step is retried down to ``dt / 2**20`` at
#: most (2 ns at the envs' 2 ms step; below it round-off, not the step, limits Newton)
MAX_HALVINGS = 20
#: longest run of any entry point, in time steps: 600 s of simulated time at the default
#: dt = 3e-5 s, about the 578 s a run directory's recording limit allows at 100 fps (the fused
#: loop takes ~15 min of wall time for it on one core).  The command line's ``--duration`` /
#: ``--max-time``, the dynamic steady states' ``max_time`` and the step API's control interval
#: are checked against it (:func:`check_run_length`): without it ``--duration 1e9`` or
#: ``robot.step(1e9)`` would run until killed (or allocate for 1e9 / dt steps)
MAX_STEPS = 20_000_000
#: default of ``simulation.max_halvings`` (and the Gymnasium envs' value): a refused step is
#: retried down to 1/16 of ``dt``
DEFAULT_MAX_HALVINGS = 4
#: the implicit integrator's recommended step [s] (docs/performance.md, "Implicit integrator":
#: sway mode within 0.6 % in frequency and 1.2 % in damping, poses within 0.1 um of the
#: explicit stepper on the primitives); the step of the Gymnasium envs and of the CLI's
#: ``--integrator implicit`` when the params select the explicit integrator
DEFAULT_IMPLICIT_DT = 2e-3


#: Lower bounds of the fields that would make the model singular near zero (a 1e-300 density
#: overflowed the stability estimate's eigenvalue solve; a 1e-300 modulus gave a zero bending
#: matrix): each far below any HSA robot, yet far from the round-off of the solvers.
#: kg/m^3; the lightest solids (silica aerogels) are ~1 kg/m^3, air 1.2 kg/m^3
MIN_DENSITY = 1.0
#: m; 0.1 mm, the finest printed wall (rod length, radii, wall, platform size, rod circle)
MIN_LENGTH = 1e-4
#: Pa; 1 kPa, fifty times softer than the softest cast silicone (Ecoflex 00-10, ~55 kPa)
MIN_MODULUS = 1e3
#: N m^2; bend/twist rigidity, E I of a 0.3 mm solid rod of 1 kPa is ~4e-13: 1e-9 is a
#: hair-thin rod of a stiff elastomer
MIN_RIGIDITY = 1e-9
#: N/m; the rod-tip/platform joint spring k_F (default 5e5): 1 N/m barely holds the platform
MIN_JOINT_STIFFNESS = 1.0


class ParameterError(ValueError):
    """An invalid parameter value, an unknown key or an unreadable parameter file."""


class HSADeprecationWarning(DeprecationWarning):
    """The package's own deprecations (an old name still read for one release): a
    ``DeprecationWarning``, of its own class so that a test suite (this package's turns them
    into errors: ``filterwarnings`` in setup.cfg) or a user can single them out."""


class MassWithoutGravityWarning(UserWarning):
    """A payload or another mass set on a robot without gravity: it adds inertia to the
    dynamics but no weight, so steady states are those without it
    (:func:`warn_mass_without_gravity`)."""


class ContactStepWarning(UserWarning):
    """An explicit run's step is above a contact's dissipation limit
    (:func:`hsa_elastica.physics.contact.step_limits`): the contact chatters (sticking friction
    reversing the motion every step, or a bouncing normal contact) instead of holding or
    settling."""


# one report per distinct message per process (the static solve, its dynamic fallback and
# every pose of a batch would otherwise each repeat it)
warnings.filterwarnings("once", category=MassWithoutGravityWarning)


def mass_without_gravity(segments: Any, motor_mass: float = 0.0) -> str | None:
    """The sentence of :class:`MassWithoutGravityWarning` for robot parameters ``segments``
    (one ``RobotParams`` or a stack's list) and a stack's ``motor_mass`` [kg], or None when
    every mass set has gravity to act on (or none is set)."""
    items = segments if isinstance(segments, (list, tuple)) else [segments]
    masses = [f"platform.payload_mass = {p.platform.payload_mass:g} kg" for p in items
              if p.platform.payload_mass > 0.0 and p.simulation.gravity is None]
    if motor_mass > 0.0 and len(items) > 1 and any(p.simulation.gravity is None for p in items[:-1]):
        masses.append(f"motor_mass = {motor_mass:g} kg")
    if not masses:
        return None
    return (f"{' and '.join(dict.fromkeys(masses))} without gravity (simulation.gravity is "
            "None): it adds inertia but no weight, so the steady state is that without it; set "
            "simulation.gravity, e.g. [0.0, 0.0, -9.81]")


def warn_mass_without_gravity(segments: Any, motor_mass: float = 0.0) -> None:
    """Warn (:class:`MassWithoutGravityWarning`, once per message) when a steady state is
    asked of a robot with a payload or motor mass but no gravity (:func:`mass_without_gravity`)."""
    message = mass_without_gravity(segments, motor_mass)
    if message is not None:
        warnings.warn(message, MassWithoutGravityWarning, stacklevel=3)


def check_motor_angles(
    values: Any, n: int | None = None, *, field: str = "motor_angles", ndim: int | None = None
) -> Any:
    """Motor angles [rad] as a float64 array, or ``ParameterError`` naming ``field``.

    The one check of motor angles, called by every entry point (CLI single and batch, datasets,
    calibration data, the Python API, the step API, the environments) before any work: ``n``
    finite numbers (any count if ``n`` is None; a 2-D array is checked row by row, its rows
    named in the message), each within ``+-MAX_MOTOR_ANGLE``.  ``ndim`` = 1 (one pose) or 2 (a
    table of poses) requires that shape.
    """
    import numpy as np

    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(
            f"{field} = {_short(values)} is invalid: must be "
            f"{'' if n is None else f'{n} '}finite numbers (rad)"
        ) from None
    if a.ndim not in ((1, 2) if ndim is None else (ndim,)) or (n is not None and a.shape[-1] != n):
        table = ndim == 2 or (ndim is None and a.ndim == 2)
        count = "" if n is None else f"{n} "
        raise ParameterError(
            f"{field} has shape {a.shape}: must be "
            + (f"a table of poses, {count}angles per row (rad)" if table else f"{count}angles (rad)")
        )
    bad = ~np.isfinite(a) | (np.abs(a) > MAX_MOTOR_ANGLE)
    if bad.any():
        where = np.argwhere(bad)[0]
        v = float(a[tuple(where)])
        at = f" (row {int(where[0])}, angle {int(where[1])})" if a.ndim == 2 else f" (angle {int(where[0])})"
        raise ParameterError(
            f"{field}{at} = {v!r} is invalid: each motor angle must be finite and within "
            f"+-{MAX_MOTOR_ANGLE:.6g} rad ({MAX_MOTOR_ANGLE / math.pi:g} pi)"
        )
    return a


def check_run_length(duration: Any, dt: float, field: str, *, minimum: float = 0.0) -> float:
    """``duration`` [s] as a float: finite, > ``minimum`` (or >= it when ``minimum`` > 0) and
    at most :data:`MAX_STEPS` steps of ``dt`` [s]; else ``ParameterError`` naming ``field``
    and the range (the one cap of every run's length)."""
    limit = MAX_STEPS * dt
    v = _as_finite(duration)
    low_ok = v is not None and (v >= minimum * (1.0 - 1e-9) if minimum > 0.0 else v > 0.0)
    if v is None or not low_ok or v > limit:
        low = f">= {minimum:g}" if minimum > 0.0 else "> 0"
        shown = _short(duration) if v is None else f"{v:g}"
        raise ParameterError(
            f"{field} = {shown} is invalid: must be a finite number {low} and "
            f"<= {limit:g} s ({MAX_STEPS:.0e} steps of simulation.dt = {dt:g} s)"
        )
    return v


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
    if isinstance(value, (list, tuple, dict, set)):
        import reprlib  # bounded: a container is not printed whole

        text = reprlib.repr(value)
    else:
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


def _check_vector(obj: Any, name: str, *, optional: bool = False) -> None:
    """Check that ``obj.name`` is 3 finite real numbers (or None if ``optional``); store it as
    a tuple of floats."""
    v = getattr(obj, name)
    if optional and v is None:
        return
    if (
        isinstance(v, (str, bytes))
        or not hasattr(v, "__len__")
        or len(v) != 3
        or not all(_is_real(x) and math.isfinite(float(x)) for x in v)
    ):
        raise _fail(obj, name, v, "must be " + ("None or " if optional else "") + "3 finite numbers")
    object.__setattr__(obj, name, tuple(float(x) for x in v))


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
            raise ParameterError(f"{where} must be a mapping of field names to values, got {_short(data)}")
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(str(k) for k in data if k not in names)
        if unknown:
            raise ParameterError(
                f"{where}: unknown key(s) {', '.join(_short(u) for u in unknown[:10])}"
                f"{' ...' if len(unknown) > 10 else ''}; "
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
