"""The world around a robot as the videos, stills and the browser view draw it: fixed
obstacles, free objects at their recorded poses, and the contact forces as arrows.

Read from a run (pure numpy; the pyvista meshes are :mod:`hsa_elastica.io.render_world_meshes`):

* the obstacles from the run's parameters (``RobotParams.environment.obstacles``): a plane as a
  square patch of side ``2 * plane_half`` centred under the robot, a sphere, a capsule, a box
  (drawn with sharp edges whatever its ``edge_radius``);
* each free object from the columns ``object{j}/position_{x|y|z}`` [m] and
  ``object{j}/quaternion_{x|y|z|w}`` (body->robot_base) with its shape from
  ``environment.objects[j]``;
* each contact ``k`` of the robot (the order of ``Robot.contacts``: per obstacle the rods' in
  order, then the platform's; then per object the obstacles' contacts on it, then the rods',
  then the platform's)
  from ``sensors/contact_force_{x|y|z}_{k}`` [N], ``sensors/contact_sliding_{k}`` and
  ``sensors/contact_sticking_{k}`` (counts).  An arrow shows the force on the body that is
  *touched and moves*: on a rod or the platform from an obstacle, on an object from an
  obstacle or from a rod or the platform (the negative of the recorded force on them).  It is drawn at the
  contact's deepest point projected onto the surface it touches (the node or rim point with
  the smallest signed distance; the force is the sum over the contact's points): on a rod or
  the platform ending there, pushing from outside; on an object (drawn translucent) starting
  there, inside it.  Its colour tells whether more of the contact's points slide than stick.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from hsa_elastica.io import render_data as data

__all__ = ["World", "ObjectTrack", "ContactTrack", "world_of", "signed_distance", "force_scale",
           "box_mesh"]

OBSTACLE_COLOR = "#8c8c8c"
OBJECT_COLOR = "#e7298a"  # a free object: magenta (no other drawn thing uses it)
STICK_COLOR = "#2166ac"  # a sticking contact's force: blue
SLIDE_COLOR = "#d7301f"  # a sliding one: red
ARROW_FRACTION = 0.3  # the largest force of a clip is drawn about this fraction of a rod long


@dataclass
class ObjectTrack:
    """A free object over the frames: ``shape`` ``"sphere"`` or ``"cylinder"`` (axis the
    body's z), ``radius`` and ``length`` [m], centre ``position`` (n_t, 3) [m], ``rotation``
    (n_t, 3, 3) body -> robot_base."""

    shape: str
    radius: float
    length: float
    position: NDArray[np.float64]
    rotation: NDArray[np.float64]


@dataclass
class ContactTrack:
    """A contact's drawn force (n_t, 3) [N] at ``origin`` (n_t, 3) [m]; ``sliding`` (n_t,):
    more of its points slide than stick; ``on_object``: the force on an object (its arrow
    starts at the origin, else it ends there)."""

    force: NDArray[np.float64]
    origin: NDArray[np.float64]
    sliding: NDArray[np.bool_]
    on_object: bool = False


@dataclass
class World:
    """Obstacles (parameter records), objects and contacts of a clip; ``centre`` [m] and
    ``plane_half`` [m]: where a plane's patch is centred (projected on the plane) and half
    its side; ``length`` [m]: the largest force is drawn ``ARROW_FRACTION`` of it long (a
    rod's length)."""

    obstacles: tuple[Any, ...]
    objects: list[ObjectTrack] = field(default_factory=list)
    contacts: list[ContactTrack] = field(default_factory=list)
    centre: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
    plane_half: float = 0.1
    length: float = 0.1

    def points(self) -> NDArray[np.float64]:
        """Points the camera frames: the objects' surfaces' extremes over the clip, the
        arrows' tips and the sphere, capsule and box obstacles (not the plane patches)."""
        pts = [np.zeros((0, 3))]  # (arrows: each renderer adds them at its scale)
        for o in self.objects:
            reach = o.radius + 0.5 * o.length
            for a in np.vstack([np.eye(3), -np.eye(3)]):
                pts.append(o.position + reach * a)
        for ob in self.obstacles:
            if hasattr(ob, "size"):
                pts.append(box_mesh(ob)[0])
            elif hasattr(ob, "center"):
                pts.append(np.asarray(ob.center) + ob.radius * np.vstack([np.eye(3), -np.eye(3)]))
            elif hasattr(ob, "start"):
                for end in (ob.start, ob.end):
                    pts.append(np.asarray(end) + ob.radius * np.vstack([np.eye(3), -np.eye(3)]))
        return np.concatenate(pts)


def signed_distance(obstacle: Any, x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(phi (n,), n (n, 3))``: signed distance [m] of the points ``x`` (n, 3) from a plane,
    sphere, capsule or box record (or a ``("sphere"|"capsule", centre, radius, a, b)`` tuple
    of an object) and its outward unit normal (docs/contact.md, "The model")."""
    if hasattr(obstacle, "size"):  # a box: the contact law's own kernel
        from hsa_elastica.physics.contact_laws import geometry_record, surface_values

        pts = np.ascontiguousarray(np.asarray(x, dtype=np.float64).reshape(-1, 3).T)
        phi, normal = np.empty(pts.shape[1]), np.empty_like(pts)
        surface_values(pts, geometry_record(obstacle), phi, normal)
        return phi.reshape(np.shape(x)[:-1]), normal.T.reshape(np.shape(x))
    if hasattr(obstacle, "normal"):
        n0 = np.asarray(obstacle.normal, dtype=np.float64)
        n0 = n0 / np.linalg.norm(n0)
        return (x - np.asarray(obstacle.point)) @ n0, np.broadcast_to(n0, x.shape).copy()
    if hasattr(obstacle, "center"):
        return _round(x, np.broadcast_to(np.asarray(obstacle.center, dtype=np.float64), x.shape),
                      float(obstacle.radius))
    a, b = np.asarray(obstacle.start, dtype=np.float64), np.asarray(obstacle.end, dtype=np.float64)
    return _capsule(x, a, b, float(obstacle.radius))


def _round(x: NDArray[np.float64], c: NDArray[np.float64], r: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    d = x - c
    dist = np.linalg.norm(d, axis=-1)
    n = d / np.maximum(dist, 1e-300)[..., None]
    return dist - r, n


def _capsule(x: NDArray[np.float64], a: NDArray[np.float64], b: NDArray[np.float64],
             r: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    ab = b - a
    s = np.clip(np.einsum("...i,...i->...", x - a, ab) / np.einsum("...i,...i->...", ab, ab), 0.0, 1.0)
    return _round(x, a + s[..., None] * ab, r)


def _object_distance(obj: ObjectTrack, t: int, x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    c = obj.position[t]
    if obj.shape == "cylinder":
        axis = obj.rotation[t][:, 2] * 0.5 * obj.length
        return _capsule(x, c - axis, c + axis, obj.radius)
    return _round(x, np.broadcast_to(c, x.shape), obj.radius)


def _deepest(phi: NDArray[np.float64], normal: NDArray[np.float64],
             x: NDArray[np.float64]) -> NDArray[np.float64]:
    """The surface point under the point of ``x`` (n, 3) with the smallest ``phi``."""
    k = int(np.argmin(phi))
    return x[k] - phi[k] * normal[k]  # type: ignore[no-any-return]


def _rim_points(pos: NDArray[np.float64], rot: NDArray[np.float64], radius: float,
                thickness: float) -> NDArray[np.float64]:
    a = np.linspace(0.0, 2.0 * math.pi, 16, endpoint=False)
    rim = radius * np.column_stack([np.cos(a), np.sin(a), np.zeros_like(a)])
    body = np.vstack([rim + [0.0, 0.0, -0.5 * thickness], rim + [0.0, 0.0, 0.5 * thickness]])
    return body @ rot.T + pos  # type: ignore[no-any-return]


@dataclass
class _Touch:
    """One contact of the layout: what touches what (``rod``: a rod index or -1 for the
    platform; ``obstacle`` or ``obj``: the touched thing; ``on_object``: the arrow is the force
    on object ``obj``)."""

    rod: int
    obstacle: Any = None
    obj: int = -1
    rod_on_object: bool = False


def contact_layout(n_rods: int, obstacles: Sequence[Any], n_objects: int) -> list[_Touch]:
    """The contacts of a robot in the order of ``Robot.contacts`` (robots/builders.py)."""
    out = [_Touch(r, ob) for ob in obstacles for r in [*range(n_rods), -1]]
    for j in range(n_objects):
        out += [_Touch(-2, ob, j) for ob in obstacles]
        out += [_Touch(r, None, j, True) for r in [*range(n_rods), -1]]
    return out


def _contact_track(df: pd.DataFrame, k: int, touch: _Touch, rods: list[NDArray[np.float64]],
                   platform: Any, objects: list[ObjectTrack]) -> ContactTrack:
    force = data.block(df, [f"sensors/contact_force_{a}_{k}" for a in "xyz"])
    force = np.nan_to_num(force)
    sliding = np.nan_to_num(df[f"sensors/contact_sliding_{k}"].to_numpy(np.float64))
    sticking = np.nan_to_num(df[f"sensors/contact_sticking_{k}"].to_numpy(np.float64))
    n_t = len(df)
    origin = np.zeros((n_t, 3))
    for t in range(n_t):
        if touch.rod_on_object:  # the rod's (platform's) force on the object, at its surface
            if touch.rod == -1:
                pos, rot, radius, thickness = platform
                x = _rim_points(pos[t], rot[t], radius, thickness)
            else:
                x = rods[touch.rod][t].T[1:-1]
            phi, n = _object_distance(objects[touch.obj], t, x)
        elif touch.rod == -2:  # the object on an obstacle: its support point
            x = objects[touch.obj].position[t][None, :]
            phi, n = signed_distance(touch.obstacle, x)
        elif touch.rod == -1:
            pos, rot, radius, thickness = platform
            x = _rim_points(pos[t], rot[t], radius, thickness)
            phi, n = signed_distance(touch.obstacle, x)
        else:
            x = rods[touch.rod][t].T[1:-1]
            phi, n = signed_distance(touch.obstacle, x)
        origin[t] = _deepest(phi, n, x)
    if touch.rod_on_object:
        force = -force
    return ContactTrack(force=force, origin=origin, sliding=sliding > sticking,
                        on_object=touch.rod_on_object or touch.rod == -2)


def object_tracks(df: pd.DataFrame, shapes: Sequence[tuple[str, float, float]]) -> list[ObjectTrack]:
    """The objects ``object{j}/...`` of ``df`` with ``(shape, radius, length)`` each; an
    object without recorded columns is left out."""
    out = []
    for j, (shape, radius, length) in enumerate(shapes):
        if f"object{j}/position_x" not in df.columns:
            continue
        pos = data.block(df, [f"object{j}/position_{a}" for a in "xyz"])
        q = data.block(df, [f"object{j}/quaternion_{a}" for a in "xyzw"])
        out.append(ObjectTrack(shape, float(radius), float(length), pos, data.quaternion_to_matrix(q)))
    return out


def world_of(df: pd.DataFrame, params: Any) -> World | None:
    """The world of a robot's run (``params`` a ``RobotParams`` with an environment), or
    None when there is nothing to draw (no environment, a single rod, a stack)."""
    env = getattr(params, "environment", None)
    if env is None or not (env.obstacles or env.objects) or not hasattr(params, "n_rods"):
        return None
    objects = object_tracks(df, [(o.shape, o.radius, o.length if o.shape == "cylinder" else 0.0)
                                  for o in env.objects])
    prefixes = data.rod_prefixes(df)
    rods = [data.positions(df, p) for p in prefixes]
    world = World(obstacles=tuple(env.obstacles), objects=objects, length=float(params.rod.length))
    world.plane_half = max(0.6 * float(params.rod.length), float(params.circle_radius) * 3.0,
                           *[float(np.abs(o.position[:, :2]).max()) + 2.0 * o.radius for o in objects])
    n_contacts = sum(1 for c in df.columns if c.startswith("sensors/contact_force_x_"))
    layout = contact_layout(int(params.n_rods), env.obstacles, len(env.objects))
    if n_contacts != len(layout) or len(objects) != len(env.objects) or "platform/position_x" not in df:
        return world  # contacts not recorded (or not of this layout): obstacles and objects only
    pos = data.block(df, [f"platform/position_{a}" for a in "xyz"])
    rot = data.quaternion_to_matrix(data.block(df, [f"platform/quaternion_{a}" for a in "xyzw"]))
    platform = (pos, rot, 0.5 * float(params.platform.diameter), float(params.platform.thickness))
    world.contacts = [_contact_track(df, k, t, rods, platform, objects) for k, t in enumerate(layout)]
    return world


def force_scale(world: World) -> tuple[float, float]:
    """``(m_per_N, newtons_per_cm)``: arrows of ``m_per_N`` metres per newton such that the
    largest force of the clip is drawn at most ``ARROW_FRACTION * world.length`` [m] long, with
    ``newtons_per_cm`` (1, 2 or 5 times a power of ten) the force a 10 mm arrow shows
    (the legend's line)."""
    fmax = max([float(np.linalg.norm(c.force, axis=1).max()) for c in world.contacts] + [0.0])
    if not fmax > 0.0:
        return 0.0, 0.0
    raw = fmax / (ARROW_FRACTION * world.length) * 0.01  # N per 10 mm
    exp = math.floor(math.log10(raw))
    nice = next(m * 10.0**exp for m in (1.0, 2.0, 5.0, 10.0) if m * 10.0**exp >= raw * (1 - 1e-12))
    return 0.01 / nice, nice


def arrows_at(world: World, t: int, m_per_n: float, min_length: float) -> dict[bool, list[tuple[NDArray[np.float64], NDArray[np.float64]]]]:
    """The arrows of frame ``t``: ``{sliding: [(start, vector [m]), ...]}``, each at its
    contact point (starting there on an object, else ending there); those shorter than
    ``min_length`` [m] left out."""
    out: dict[bool, list[tuple[NDArray[np.float64], NDArray[np.float64]]]] = {False: [], True: []}
    for c in world.contacts:
        v = c.force[t] * m_per_n
        if float(np.linalg.norm(v)) >= min_length:
            out[bool(c.sliding[t])].append((c.origin[t] if c.on_object else c.origin[t] - v, v))
    return out


def box_mesh(obstacle: Any) -> tuple[NDArray[np.float64], NDArray[np.int32]]:
    """A box obstacle's 8 corners (8, 3) [m] and its 12 outward triangles (12, 3)."""
    x = np.asarray(obstacle.x_axis, dtype=np.float64)
    z = np.asarray(obstacle.z_axis, dtype=np.float64)
    axes = np.column_stack([x, np.cross(z, x), z]) * (0.5 * np.asarray(obstacle.size))
    signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], dtype=float)
    corners = np.asarray(obstacle.center, dtype=np.float64) + signs @ axes.T
    # corner index = 4 i + 2 j + k for the signs (i, j, k) in {0: -, 1: +}
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    tris = [t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))]
    return corners, np.array(tris, dtype=np.int32)


def plane_patch(obstacle: Any, centre: NDArray[np.float64], half: float) -> NDArray[np.float64]:
    """The four corners (4, 3) [m] of a plane's square patch of half side ``half`` centred at
    ``centre`` projected onto the plane."""
    n = np.asarray(obstacle.normal, dtype=np.float64)
    n = n / np.linalg.norm(n)
    c = centre - ((centre - np.asarray(obstacle.point)) @ n) * n
    helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(n, helper)
    u /= np.linalg.norm(u)
    v = np.cross(n, u)
    return np.array([c + half * (su * u + sv * v) for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
