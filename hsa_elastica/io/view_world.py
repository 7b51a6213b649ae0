"""The plotly traces of a :class:`~hsa_elastica.io.render_world.World` for the browser view
(:mod:`hsa_elastica.io.view`): obstacles (static meshes), free objects (a mesh per object, moved
per frame) and the contact forces (one line trace per colour: sticking, sliding), in mm."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.io.render_world import (
    OBJECT_COLOR,
    OBSTACLE_COLOR,
    SLIDE_COLOR,
    STICK_COLOR,
    World,
    arrows_at,
    box_mesh,
    force_scale,
    plane_patch,
)

__all__ = ["obstacle_traces", "dynamic_traces", "frame_points", "sphere_mesh", "cylinder_mesh"]

_MM = 1e3


def sphere_mesh(radius: float, n: int = 16) -> tuple[NDArray[np.float64], NDArray[np.int32]]:
    """A UV sphere of ``radius`` about the origin: vertices (m, 3) and triangles (k, 3)."""
    th = np.linspace(0.0, math.pi, n + 1)
    ph = np.linspace(0.0, 2.0 * math.pi, 2 * n, endpoint=False)
    t, p = np.meshgrid(th, ph, indexing="ij")
    v = radius * np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], axis=-1).reshape(-1, 3)
    m = 2 * n
    tri = []
    for i in range(n):
        for j in range(m):
            a, b = i * m + j, i * m + (j + 1) % m
            tri += [[a, b, b + m], [a, b + m, a + m]]
    return v, np.array(tri, dtype=np.int32)


def cylinder_mesh(radius: float, length: float, n: int = 32) -> tuple[NDArray[np.float64], NDArray[np.int32]]:
    """A closed cylinder along z about the origin: vertices and triangles."""
    a = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    ring = np.column_stack([radius * np.cos(a), radius * np.sin(a), np.zeros(n)])
    v = np.vstack([ring - [0, 0, 0.5 * length], ring + [0, 0, 0.5 * length],
                   [[0, 0, -0.5 * length], [0, 0, 0.5 * length]]])
    tri = []
    for j in range(n):
        k = (j + 1) % n
        tri += [[j, k, n + k], [j, n + k, n + j], [2 * n, k, j], [2 * n + 1, n + j, n + k]]
    return v, np.array(tri, dtype=np.int32)


def _mesh(v: NDArray[np.float64], tri: NDArray[np.int32], **kw: Any) -> Any:
    import plotly.graph_objects as go

    v = v * _MM
    return go.Mesh3d(x=v[:, 0], y=v[:, 1], z=v[:, 2], i=tri[:, 0], j=tri[:, 1], k=tri[:, 2],
                     flatshading=False, **kw)


def _obstacle_mesh(ob: Any, world: World) -> tuple[NDArray[np.float64], NDArray[np.int32]]:
    if hasattr(ob, "size"):
        return box_mesh(ob)
    if hasattr(ob, "normal"):
        return plane_patch(ob, world.centre, world.plane_half), np.array([[0, 1, 2], [0, 2, 3]], dtype=np.int32)
    if hasattr(ob, "center"):
        v, t = sphere_mesh(float(ob.radius))
        return v + np.asarray(ob.center), t
    a, b = np.asarray(ob.start, dtype=np.float64), np.asarray(ob.end, dtype=np.float64)
    r = float(ob.radius)
    v, t = cylinder_mesh(r, float(np.linalg.norm(b - a)))
    e = (b - a) / np.linalg.norm(b - a)
    helper = np.array([1.0, 0.0, 0.0]) if abs(e[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(e, helper)
    u /= np.linalg.norm(u)
    rot = np.column_stack([u, np.cross(e, u), e])
    sv, st = sphere_mesh(r)
    verts = [v @ rot.T + 0.5 * (a + b), sv + a, sv + b]
    tris = [t, st + len(v), st + len(v) + len(sv)]
    return np.vstack(verts), np.vstack(tris)


def obstacle_traces(world: World) -> list[Any]:
    """The fixed obstacles, one mesh each (the first in the legend as "obstacle")."""
    out = []
    for k, ob in enumerate(world.obstacles):
        v, t = _obstacle_mesh(ob, world)
        out.append(_mesh(v, t, color=OBSTACLE_COLOR, opacity=0.35 if hasattr(ob, "normal") else 0.8,
                         name="obstacle", legendgroup="obstacle", showlegend=k == 0,
                         hovertemplate="obstacle<extra></extra>"))
    return out


def _object_ref(o: Any) -> tuple[NDArray[np.float64], NDArray[np.int32]]:
    return cylinder_mesh(o.radius, o.length) if o.shape == "cylinder" else sphere_mesh(o.radius)


def _lines(items: list[tuple[NDArray[np.float64], NDArray[np.float64]]]) -> dict[str, list[float | None]]:
    xs: list[float | None] = []
    ys: list[float | None] = []
    zs: list[float | None] = []
    for start, vec in items:
        for p in (start, start + vec):
            xs.append(float(p[0]) * _MM)
            ys.append(float(p[1]) * _MM)
            zs.append(float(p[2]) * _MM)
        xs.append(None)
        ys.append(None)
        zs.append(None)
    return dict(x=xs, y=ys, z=zs)


def dynamic_traces(world: World, f: int, radius: float, *, style: bool = True) -> list[Any]:
    """The objects and the two force traces at frame ``f`` (``style``: with colours and
    names, for the figure's first data; without, for its frames).  ``radius`` [m]: a rod's,
    the shortest arrow drawn is half of it."""
    import plotly.graph_objects as go

    out: list[Any] = []
    for j, o in enumerate(world.objects):
        v, t = _object_ref(o)
        moved = v @ o.rotation[f].T + o.position[f]
        kw = dict(color=OBJECT_COLOR, opacity=0.7, name="object", legendgroup="object", showlegend=j == 0,
                  hovertemplate=f"object {j}<extra></extra>") if style else {}
        out.append(_mesh(moved, t, **kw) if style else go.Mesh3d(
            x=moved[:, 0] * _MM, y=moved[:, 1] * _MM, z=moved[:, 2] * _MM))
    if world.contacts:
        m_per_n, n_per_cm = force_scale(world)
        items = arrows_at(world, f, m_per_n, 0.5 * radius) if m_per_n > 0 else {False: [], True: []}
        for sliding in (False, True):
            kw = dict(mode="lines", line=dict(color=SLIDE_COLOR if sliding else STICK_COLOR, width=8),
                      hoverinfo="skip",
                      name="force, sliding" if sliding else f"force, sticking: 10 mm = {n_per_cm:.3g} N")
            out.append(go.Scatter3d(**_lines(items[sliding]), **(kw if style else {})))
    return out


def frame_points(world: World, radius: float) -> NDArray[np.float64]:
    """Points [m] the view's axes take in: objects, obstacles, plane patches, arrows."""
    pts = [world.points()]
    pts += [plane_patch(ob, world.centre, world.plane_half) for ob in world.obstacles if hasattr(ob, "normal")]
    m_per_n, _ = force_scale(world) if world.contacts else (0.0, 0.0)
    for c in world.contacts:
        pts += [c.origin, c.origin + (1.0 if c.on_object else -1.0) * c.force * m_per_n]
    return np.concatenate(pts)
