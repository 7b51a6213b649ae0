"""Validated parameters of the environment a rod or robot touches: fixed obstacles (planes,
spheres, capsules, boxes), each with its contact law (docs/contact.md).

:class:`ContactParams` is the law of one obstacle: a smooth penalty normal force with one
smoothing length, optional normal damping as a damping ratio, and Coulomb friction smoothed
over one slip velocity.  :class:`PlaneObstacle`, :class:`SphereObstacle`,
:class:`CapsuleObstacle` and :class:`BoxObstacle` place it; :class:`EnvironmentParams` is a list of them.  Every field
is checked on construction: a bad value raises :class:`ParameterError` naming
``Class.field`` and the allowed range with its unit, in one line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

from hsa_elastica.params.base import (
    ParameterError,
    _check_real,
    _check_vector,
    _ParamsBase,
    _short,
)

__all__ = [
    "ContactParams",
    "PlaneObstacle",
    "SphereObstacle",
    "CapsuleObstacle",
    "BoxObstacle",
    "Obstacle",
    "ObjectParams",
    "EnvironmentParams",
]

#: N/m; the stiffest contact spring per contact point accepted (a typo guard: 1e9 N/m on a
#: 1 g node needs a time step below 2 us)
MAX_CONTACT_STIFFNESS = 1e9


@dataclass(frozen=True)
class ContactParams(_ParamsBase):
    """The contact law of one obstacle (per contact point: a rod node or a body's rim point).

    * ``stiffness`` [N/m]: slope of the normal force against penetration once the penetration
      is a few ``smoothing_length`` deep;
    * ``smoothing_length`` [m]: the one length over which the normal force switches on
      (``f_n = k l softplus(-g / l)``, ``g`` the gap); penetrations ``<< l`` and ``>> l`` are
      the two limits, docs/contact.md;
    * ``damping_ratio`` [-]: normal damping as a fraction of critical damping of the point's
      mass on ``stiffness`` (``c = 2 zeta sqrt(k m)``), active only in contact;
    * ``friction_coefficient`` [-]: Coulomb's mu (0: frictionless);
    * ``slip_velocity`` [m/s]: the tangential speed below which friction is smoothed
      (``f_t = -mu f_n v_t / sqrt(|v_t|^2 + v_s^2)``): a stuck contact creeps at
      ``v_s r / sqrt(1 - r^2)`` under a tangential load ``r mu f_n``;
    * ``rolling_resistance`` [-]: the rolling-resistance coefficient ``c_rr`` of a free sphere
      on this obstacle: a couple ``c_rr R f_n`` against its rolling (smoothed below the
      rolling speed ``slip_velocity``), so that a ball rolling on a level floor slows at
      ``(5/7) c_rr g`` and stops; 0 (the default): none, a rolling ball rolls on.  It acts on
      free spheres only (not on rods, rims or rods against objects).
    """

    stiffness: float = field(default=1e3, metadata={"unit": "N/m"})
    smoothing_length: float = field(default=1e-4, metadata={"unit": "m"})
    damping_ratio: float = field(default=0.0, metadata={"unit": "-"})
    friction_coefficient: float = field(default=0.0, metadata={"unit": "-"})
    slip_velocity: float = field(default=1e-3, metadata={"unit": "m/s"})
    rolling_resistance: float = field(default=0.0, metadata={"unit": "-"})

    def __post_init__(self) -> None:
        _check_real(self, "stiffness", gt=0.0, le=MAX_CONTACT_STIFFNESS)
        _check_real(self, "smoothing_length", gt=0.0, le=1.0)
        _check_real(self, "damping_ratio", ge=0.0, le=10.0)
        _check_real(self, "friction_coefficient", ge=0.0, le=10.0)
        _check_real(self, "slip_velocity", gt=0.0, le=10.0)
        _check_real(self, "rolling_resistance", ge=0.0, le=1.0)


def _contact(obj: Any) -> None:
    c = obj.contact
    if isinstance(c, dict):
        owner = type(obj).__name__
        object.__setattr__(obj, "contact", ContactParams.from_dict(c, where=f"{owner}.contact"))
    elif not isinstance(c, ContactParams):
        raise ParameterError(
            f"{type(obj).__name__}.contact = {_short(c)} is invalid: must be a ContactParams "
            "or a mapping of its fields"
        )


def _unit_vector(obj: Any, name: str) -> None:
    _check_vector(obj, name)
    v = getattr(obj, name)
    norm = math.sqrt(sum(x * x for x in v))
    if not norm > 1e-12:
        raise ParameterError(
            f"{type(obj).__name__}.{name} = {_short(v)} is invalid: must be a non-zero vector "
            "(length > 1e-12; it is normalised)"
        )
    object.__setattr__(obj, name, tuple(x / norm for x in v))


@dataclass(frozen=True)
class PlaneObstacle(_ParamsBase):
    """A half-space: the plane through ``point`` [m] with the unit ``normal`` pointing out of
    the solid (into the free side; a floor: ``(0, 0, 1)``).  ``normal`` is normalised."""

    point: tuple[float, float, float] = field(default=(0.0, 0.0, 0.0), metadata={"unit": "m"})
    normal: tuple[float, float, float] = field(default=(0.0, 0.0, 1.0), metadata={"unit": "-"})
    contact: ContactParams = field(default_factory=ContactParams)

    _NESTED: ClassVar[dict[str, type]] = {"contact": ContactParams}

    def __post_init__(self) -> None:
        _check_vector(self, "point")
        _unit_vector(self, "normal")
        _contact(self)


@dataclass(frozen=True)
class SphereObstacle(_ParamsBase):
    """A fixed rigid sphere of ``radius`` [m] centred at ``center`` [m]."""

    center: tuple[float, float, float] = field(default=(0.0, 0.0, 0.0), metadata={"unit": "m"})
    radius: float = field(default=0.01, metadata={"unit": "m"})
    contact: ContactParams = field(default_factory=ContactParams)

    _NESTED: ClassVar[dict[str, type]] = {"contact": ContactParams}

    def __post_init__(self) -> None:
        _check_vector(self, "center")
        _check_real(self, "radius", gt=0.0, le=1e3)
        _contact(self)


@dataclass(frozen=True)
class CapsuleObstacle(_ParamsBase):
    """A fixed rigid capsule: the points within ``radius`` [m] of the segment ``start`` ->
    ``end`` [m] (a cylinder with hemispherical caps; a rod-like obstacle, a post, a bar)."""

    start: tuple[float, float, float] = field(default=(0.0, 0.0, 0.0), metadata={"unit": "m"})
    end: tuple[float, float, float] = field(default=(0.0, 0.0, 0.1), metadata={"unit": "m"})
    radius: float = field(default=0.01, metadata={"unit": "m"})
    contact: ContactParams = field(default_factory=ContactParams)

    _NESTED: ClassVar[dict[str, type]] = {"contact": ContactParams}

    def __post_init__(self) -> None:
        _check_vector(self, "start")
        _check_vector(self, "end")
        _check_real(self, "radius", gt=0.0, le=1e3)
        length = math.dist(self.start, self.end)
        if not length > 1e-9:
            raise ParameterError(
                f"CapsuleObstacle.end = {_short(self.end)} is invalid: must differ from start "
                "by more than 1e-9 (m)"
            )
        _contact(self)


@dataclass(frozen=True)
class BoxObstacle(_ParamsBase):
    """A fixed rigid box (a block, a step, a table top): edge lengths ``size`` [m] along its
    own axes x, y, z, centred at ``center`` [m].  ``x_axis`` and ``z_axis`` give its x and z
    axes in the lab frame (normalised; they must be perpendicular; y = z x x).
    ``edge_radius`` [m] rounds its edges and corners (the box is the points within
    ``edge_radius`` of an inner box ``size - 2 edge_radius``; 0: sharp edges)."""

    center: tuple[float, float, float] = field(default=(0.0, 0.0, 0.0), metadata={"unit": "m"})
    size: tuple[float, float, float] = field(default=(0.1, 0.1, 0.1), metadata={"unit": "m"})
    x_axis: tuple[float, float, float] = field(default=(1.0, 0.0, 0.0), metadata={"unit": "-"})
    z_axis: tuple[float, float, float] = field(default=(0.0, 0.0, 1.0), metadata={"unit": "-"})
    edge_radius: float = field(default=0.0, metadata={"unit": "m"})
    contact: ContactParams = field(default_factory=ContactParams)

    _NESTED: ClassVar[dict[str, type]] = {"contact": ContactParams}

    def __post_init__(self) -> None:
        _check_vector(self, "center")
        _check_vector(self, "size")
        if not all(0.0 < a <= 1e3 for a in self.size):
            raise ParameterError(f"BoxObstacle.size = {_short(self.size)} is invalid: every edge "
                                 "length must be in (0, 1e3] (m)")
        _unit_vector(self, "x_axis")
        _unit_vector(self, "z_axis")
        cosine = sum(a * b for a, b in zip(self.x_axis, self.z_axis))
        if abs(cosine) > 1e-6:
            raise ParameterError(
                f"BoxObstacle.z_axis = {_short(self.z_axis)} is invalid: must be perpendicular "
                f"to x_axis (|cos| <= 1e-6, here {abs(cosine):.3g})"
            )
        _check_real(self, "edge_radius", ge=0.0, le=1e3)
        if not self.edge_radius < 0.5 * min(self.size):
            raise ParameterError(
                f"BoxObstacle.edge_radius = {self.edge_radius!r} is invalid: must be >= 0 and "
                f"< half the shortest edge, {0.5 * min(self.size):g} (m)"
            )
        _contact(self)


Obstacle = Union[PlaneObstacle, SphereObstacle, CapsuleObstacle, BoxObstacle]

_KINDS: dict[str, type] = {
    "plane": PlaneObstacle, "sphere": SphereObstacle, "capsule": CapsuleObstacle,
    "box": BoxObstacle,
}


#: the shapes of a free object (``ObjectParams.shape``)
OBJECT_SHAPES = ("sphere", "cylinder")

#: kg; the mass of an object given neither ``mass`` nor ``density``
DEFAULT_OBJECT_MASS = 0.05


@dataclass(frozen=True)
class ObjectParams(_ParamsBase):
    """A free rigid object the rods can push (docs/contact.md, "Moving objects"), uniform,
    centred at ``position`` [m], under gravity, resting on the environment's obstacles (each
    with its own law); ``contact`` is the law between the rods' nodes and it.

    * ``shape``: ``sphere`` of ``radius`` [m], or ``cylinder`` of ``radius`` and ``length``
      [m] along ``axis`` (a direction in the robot frame, normalised; PyElastica's
      ``Cylinder``: the rods touch it as the capsule of its radius about its axis segment, it
      rests on an obstacle by the rims of its two faces);
    * ``mass`` [kg] or ``density`` [kg/m^3]: with ``density`` the mass is the density times
      the shape's volume (``4 pi R^3 / 3``, ``pi R^2 L``); given both, they must agree (to
      1e-9); given neither, :data:`DEFAULT_OBJECT_MASS`.  After construction ``mass`` is
      always the object's mass.  The inertia is the uniform solid's (a cylinder:
      ``M (3 R^2 + L^2) / 12`` about a diameter, ``M R^2 / 2`` about its axis).
    * ``length`` and ``axis`` are not used by a sphere.
    """

    shape: str = "sphere"
    radius: float = field(default=0.02, metadata={"unit": "m"})
    mass: float | None = field(default=None, metadata={"unit": "kg"})
    position: tuple[float, float, float] = field(default=(0.0, 0.0, 0.02), metadata={"unit": "m"})
    contact: ContactParams = field(default_factory=ContactParams)
    density: float | None = field(default=None, metadata={"unit": "kg/m^3"})
    length: float = field(default=0.04, metadata={"unit": "m"})
    axis: tuple[float, float, float] = (1.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        if self.shape not in OBJECT_SHAPES:
            raise ParameterError(f"ObjectParams.shape = {_short(self.shape)} is invalid: must be "
                                 f"one of {', '.join(OBJECT_SHAPES)}")
        _check_real(self, "radius", gt=0.0, le=1.0)
        _check_real(self, "length", gt=0.0, le=1.0)
        _unit_vector(self, "axis")
        _check_real(self, "mass", gt=0.0, le=1000.0, optional=True)
        _check_real(self, "density", gt=0.0, le=1e5, optional=True)
        if self.density is not None:
            mass = self.density * self.volume
            if self.mass is not None and abs(self.mass - mass) > 1e-9 * mass:
                raise ParameterError(
                    f"ObjectParams.mass = {_short(self.mass)} is invalid: it disagrees with "
                    f"density * volume = {mass:.6g} (kg); give one of mass and density")
            if not 0.0 < mass <= 1000.0:
                raise ParameterError(
                    f"ObjectParams.density = {_short(self.density)} is invalid: the mass "
                    f"density * volume = {mass:.6g} must be > 0 and <= 1000 (kg)")
            object.__setattr__(self, "mass", mass)
        elif self.mass is None:
            object.__setattr__(self, "mass", DEFAULT_OBJECT_MASS)
        _check_vector(self, "position")
        _contact(self)

    def to_dict(self) -> dict[str, Any]:
        """The fields, without those the object does not use (a sphere's ``length`` and
        ``axis``, an absent ``density``), readable by ``from_dict``."""
        out = super().to_dict()
        if self.density is None:
            del out["density"]
        if self.shape == "sphere":
            del out["length"], out["axis"]
        return out

    @property
    def volume(self) -> float:
        """The shape's volume [m^3]."""
        if self.shape == "cylinder":
            return math.pi * self.radius**2 * self.length
        return 4.0 / 3.0 * math.pi * self.radius**3


def _objects(items: Any) -> tuple[ObjectParams, ...]:
    if isinstance(items, (str, bytes, dict)) or not hasattr(items, "__iter__"):
        raise ParameterError(f"EnvironmentParams.objects = {_short(items)} is invalid: must be a "
                             "list of ObjectParams (or mappings of their fields)")
    out = []
    for k, item in enumerate(items):
        where = f"EnvironmentParams.objects[{k}]"
        if isinstance(item, dict):
            try:
                item = ObjectParams.from_dict(item, where=where)
            except ParameterError as e:  # name the entry of the list (one line)
                text = str(e)
                raise ParameterError(text if text.startswith(where) else f"{where}: {text}") from None
        if not isinstance(item, ObjectParams):
            raise ParameterError(f"{where} = {_short(item)} is invalid: must be an ObjectParams")
        out.append(item)
    return tuple(out)


@dataclass(frozen=True)
class EnvironmentParams(_ParamsBase):
    """The fixed obstacles of a scene (a tuple of plane, sphere, capsule and box records; a
    mapping with ``kind: plane | sphere | capsule | box`` and the record's fields is accepted too) and the
    free objects in it (:class:`ObjectParams`, or mappings of their fields), and
    ``rod_contact``: the law between the rods of a robot (:class:`ContactParams` or a mapping of
    its fields; None, the default: the rods pass through each other; docs/contact.md, "Rod
    against rod")."""

    obstacles: tuple[Any, ...] = ()
    objects: tuple[Any, ...] = ()
    rod_contact: Any = None

    def __post_init__(self) -> None:
        items = self.obstacles
        if isinstance(items, (str, bytes, dict)) or not hasattr(items, "__iter__"):
            raise ParameterError(
                f"EnvironmentParams.obstacles = {_short(items)} is invalid: must be a list of "
                "PlaneObstacle, SphereObstacle, CapsuleObstacle or BoxObstacle"
            )
        out = []
        for k, item in enumerate(items):
            if isinstance(item, dict):
                fields = dict(item)
                kind = fields.pop("kind", None)
                if kind not in _KINDS:
                    raise ParameterError(
                        f"EnvironmentParams.obstacles[{k}].kind = {_short(kind)} is invalid: "
                        f"must be one of {', '.join(_KINDS)}"
                    )
                where = f"EnvironmentParams.obstacles[{k}]"
                try:
                    item = _KINDS[kind].from_dict(fields, where=where)  # type: ignore[attr-defined]
                except ParameterError as e:  # name the entry of the list (one line)
                    text = str(e)
                    raise ParameterError(text if text.startswith(where) else f"{where}: {text}") from None
            if not isinstance(item, tuple(_KINDS.values())):
                raise ParameterError(
                    f"EnvironmentParams.obstacles[{k}] = {_short(item)} is invalid: must be a "
                    "PlaneObstacle, SphereObstacle, CapsuleObstacle or BoxObstacle"
                )
            out.append(item)
        object.__setattr__(self, "obstacles", tuple(out))
        object.__setattr__(self, "objects", _objects(self.objects))
        c = self.rod_contact
        if isinstance(c, dict):
            where = "EnvironmentParams.rod_contact"
            try:
                c = ContactParams.from_dict(c, where=where)
            except ParameterError as e:  # name the field of the environment (one line)
                text = str(e)
                raise ParameterError(text if text.startswith(where) else f"{where}: {text}") from None
        elif c is not None and not isinstance(c, ContactParams):
            raise ParameterError(
                f"EnvironmentParams.rod_contact = {_short(c)} is invalid: must be None (no "
                "contact between the rods) or a ContactParams (or a mapping of its fields)"
            )
        object.__setattr__(self, "rod_contact", c)

    def to_dict(self) -> dict[str, Any]:
        """``{"obstacles": [{"kind": ..., fields...}, ...]}`` (and ``"objects"`` when there
        are any), readable by ``from_dict``."""
        kinds = {cls: name for name, cls in _KINDS.items()}
        out: dict[str, Any] = {
            "obstacles": [{"kind": kinds[type(o)], **o.to_dict()} for o in self.obstacles]}
        if self.objects:
            out["objects"] = [o.to_dict() for o in self.objects]
        if self.rod_contact is not None:
            out["rod_contact"] = self.rod_contact.to_dict()
        return out
