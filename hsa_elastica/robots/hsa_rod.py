"""An HSA rod on PyElastica's ``CosseratRod`` and its motor schedules: the rod of the paper's
Section II (printed geometry, stiffnesses and the auxetic coupling of Eq. 2-5 from
:class:`~hsa_elastica.params.RodParams`) as every builder makes it
(:mod:`hsa_elastica.robots.builders`, :mod:`hsa_elastica.robots.single_rod`)."""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence, Union

import numpy as np
from elastica import CosseratRod
from numpy.typing import NDArray

from hsa_elastica.params import (
    ParameterError,
    RodParams,
    SimulationParams,
    check_motor_angles,
)
from hsa_elastica.physics.actuation import (
    Ramp,
    rotate_about_own_axis,
)
from hsa_elastica.physics.auxetic_coupling import (
    ALPHA_C,
    AuxeticCoupling,
    TwistStiffnessLaw,
)

__all__ = ["make_hsa_rod", "stiffness_law", "coupling_kwargs", "Schedule", "pretwist"]

Schedule = Union[float, Callable[[float], float]]


# --------------------------------------------------------------------------------------------
# rods
# --------------------------------------------------------------------------------------------
def _unit_vector(name: str, value: Any) -> NDArray[np.float64]:
    try:
        v = np.array(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        v = np.array([])
    norm = float(np.linalg.norm(v)) if v.shape == (3,) else 0.0
    if v.shape != (3,) or not np.all(np.isfinite(v)) or norm == 0.0:
        raise ParameterError(f"{name} = {value!r} is invalid: must be 3 finite numbers, not all 0")
    return v / norm


def make_hsa_rod(
    rod_params: RodParams,
    *,
    base_position: Sequence[float] | NDArray[np.float64],
    direction: Sequence[float] | NDArray[np.float64] = (0.0, 0.0, 1.0),
    normal: Sequence[float] | NDArray[np.float64],
    handedness: int | None = None,
) -> CosseratRod:
    """Stock straight ``CosseratRod`` with the hollow-tube section of ``rod_params``.

    Parameters
    ----------
    rod_params : RodParams
        Geometry [m], density [kg/m^3], moduli [Pa], rigidities [N m^2].
    base_position : (3,) [m]
        Position of node 0.
    direction : (3,)
        Rod axis (d3), base -> tip; normalised.
    normal : (3,)
        PyElastica ``normal`` (d1), must be perpendicular to ``direction``; normalised.
    handedness : +1, -1 or None
        Overrides ``rod_params.handedness``.  The rod itself is handedness-free (the auxetic
        coupling carries it); the resolved parameters are attached as ``rod.hsa_params`` so
        that downstream code knows what the rod was built from.

    See the module docstring for the arrays that are overwritten (tube formulas).
    """
    if not isinstance(rod_params, RodParams):
        raise ParameterError(f"rod_params = {rod_params!r} is invalid: must be a RodParams")
    if handedness is not None:
        rod_params = rod_params.with_handedness(handedness)
    start = np.array(base_position, dtype=np.float64).reshape(-1)
    if start.shape != (3,) or not np.all(np.isfinite(start)):
        raise ParameterError(f"base_position = {base_position!r} is invalid: must be 3 finite numbers (m)")
    d3 = _unit_vector("direction", direction)
    d1 = _unit_vector("normal", normal)
    if abs(float(d1 @ d3)) > 1e-12:
        raise ParameterError(
            f"normal = {normal!r} is invalid: must be perpendicular to direction = {direction!r}"
        )

    p = rod_params
    n = p.n_elements
    area = p.area
    second = p.second_moment
    rod = CosseratRod.straight_rod(
        n,
        start,
        d3,
        d1,
        p.length,
        p.equivalent_radius,
        p.density,
        youngs_modulus=p.youngs_modulus,
        shear_modulus=p.shear_modulus,
    )
    # shear/stretch (elements), Eq. 1: S = diag(alpha_c G A, alpha_c G A, E A)  [N]
    rod.shear_matrix[:] = 0.0
    rod.shear_matrix[0, 0, :] = ALPHA_C * p.shear_modulus * area
    rod.shear_matrix[1, 1, :] = ALPHA_C * p.shear_modulus * area
    rod.shear_matrix[2, 2, :] = p.youngs_modulus * area
    # bend/twist (Voronoi domain, n - 1 entries): B = diag(B_xy, B_xy, B_z)  [N m^2]
    rod.bend_matrix[:] = 0.0
    rod.bend_matrix[0, 0, :] = p.B_xy
    rod.bend_matrix[1, 1, :] = p.B_xy
    rod.bend_matrix[2, 2, :] = p.B_z
    # mass second moment of inertia of a tube element: rho l diag(I, I, 2 I)  [kg m^2]
    rho_l = p.density * np.asarray(rod.rest_lengths)
    rod.mass_second_moment_of_inertia[:] = 0.0
    rod.inv_mass_second_moment_of_inertia[:] = 0.0
    for axis, moment in enumerate((second, second, 2.0 * second)):
        rod.mass_second_moment_of_inertia[axis, axis, :] = rho_l * moment
        rod.inv_mass_second_moment_of_inertia[axis, axis, :] = 1.0 / (rho_l * moment)
    rod.hsa_params = p  # type: ignore[attr-defined]
    return rod


def pretwist(rod: CosseratRod, offset: float) -> None:
    """Give a rod built by :func:`make_hsa_rod` a motor zero offset of ``offset`` [rad].

    Element ``k`` of the ``n`` is turned about its own axis by ``offset (1 - k / (n - 1))``
    (the base element by ``offset``, the tip element not at all): a uniform twist of the
    printed rod, whose rest state stays the untwisted one (``rest_kappa`` is 0).  Done before
    the motor's boundary condition is attached, the motor holds the base element turned by
    ``offset`` at motor angle 0 (its reference director is the initial base director), so
    every executor that reads the built model (operators, compiled, implicit, static) sees the
    offset.  ``offset = 0`` leaves the rod untouched.
    """
    if offset == 0.0:
        return
    directors = rod.director_collection
    n = directors.shape[2]
    out = np.empty((3, 3))
    for k in range(n):
        share = 1.0 - k / (n - 1) if n > 1 else 1.0
        rotate_about_own_axis(np.ascontiguousarray(directors[..., k]), offset * share, out)
        directors[..., k] = out


def stiffness_law(rod_params: RodParams) -> TwistStiffnessLaw | None:
    """Eq. 5 law of ``rod_params`` (None when every slope and quadratic term is zero)."""
    return TwistStiffnessLaw.from_params(rod_params)


def coupling_kwargs(rod_params: RodParams) -> dict[str, Any]:
    """Keyword arguments of :class:`AuxeticCoupling` for a rod built by :func:`make_hsa_rod`
    (:meth:`AuxeticCoupling.params_kwargs`: every law parameter of ``rod_params``)."""
    return AuxeticCoupling.params_kwargs(rod_params)


def _as_schedule(name: str, value: Any, sim_params: SimulationParams) -> Callable[[float], float]:
    """A number becomes ``Ramp(target=value, duration=ramp_time, shape=ramp_shape)``; a motor
    ``angle`` (a number or a :class:`Ramp`'s end points) is checked by
    :func:`~hsa_elastica.params.check_motor_angles`."""
    if callable(value):
        if name == "angle" and isinstance(value, Ramp):
            check_motor_angles([value.start, value.target], 2, field="angle (Ramp start, target)")
        return value  # type: ignore[no-any-return]
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or not math.isfinite(float(value)):
        raise ParameterError(f"{name} = {value!r} is invalid: must be a finite number or a callable t -> value")
    if name == "angle":
        check_motor_angles([value], 1, field="angle")
    return Ramp(target=float(value), duration=sim_params.ramp_time, shape=sim_params.ramp_shape)


def _motor_schedules(
    motor_angles: Any, n: int, *, angles: bool = True, field: str = "motor_angles"
) -> list[float | Callable[[float], float]]:
    """``n`` per-rod entries, each a finite float or a callable ``t -> value``.

    ``angles=True``: the numbers are motor angles [rad], checked by
    :func:`~hsa_elastica.params.check_motor_angles` (finite, within ``+-MAX_MOTOR_ANGLE``),
    as are the ``start`` and ``target`` of a :class:`Ramp`; other callables are taken as
    given.  ``angles=False``: motor torques [N m] (a torque drive), finite numbers.
    """
    message = (
        f"{field} = {motor_angles!r} is invalid: must be n_rods = {n} entries, each a "
        f"finite number ({'rad' if angles else 'N m'}) or a callable t -> "
        f"{'angle' if angles else 'torque'}"
    )
    if isinstance(motor_angles, (str, bytes)):
        raise ParameterError(message)
    try:
        items = list(motor_angles)
    except TypeError:
        raise ParameterError(message) from None
    if len(items) != n:
        raise ParameterError(message)
    out: list[float | Callable[[float], float]] = []
    for i, a in enumerate(items):
        if callable(a):
            out.append(a)
            if angles and isinstance(a, Ramp):  # a ramp's end points are angles too
                check_motor_angles([a.start, a.target], 2, field=f"{field}[{i}] (Ramp start, target)")
            continue
        if isinstance(a, (bool, str, bytes)):
            raise ParameterError(message)
        try:
            v = float(a)
        except (TypeError, ValueError, OverflowError):
            raise ParameterError(message) from None
        if not (angles or math.isfinite(v)):
            raise ParameterError(message)
        out.append(v)
    if angles:
        check_motor_angles([0.0 if callable(a) else a for a in out], n, field=field)
    return out


def _scaled(profile: Callable[[float], float], target: float) -> Callable[[float], float]:
    """``t -> target * profile(t)`` (a common dimensionless ramp scaled per rod)."""

    def schedule(t: float) -> float:
        return target * float(profile(t))

    return schedule


