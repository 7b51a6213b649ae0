"""The pyvista meshes of a :class:`~hsa_elastica.io.render_world.World`: obstacles (a plane as a
translucent grey patch, spheres and capsules grey), free objects (magenta, moved to their
recorded pose per frame) and the contact forces as arrows (blue: sticking, red: sliding; the
scale in the legend, ``10 mm = F N``).  Built by :class:`~hsa_elastica.io.render_scene.RobotScene`
for a robot whose parameters hold an environment."""

from __future__ import annotations

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

__all__ = ["WorldActors"]


def _object_mesh(pv: Any, shape: str, radius: float, length: float) -> Any:
    if shape == "cylinder":
        return pv.Cylinder(center=(0.0, 0.0, 0.0), direction=(0.0, 0.0, 1.0), radius=radius,
                           height=length, resolution=48, capping=True).triangulate()
    return pv.Sphere(radius=radius, center=(0.0, 0.0, 0.0), theta_resolution=36,
                     phi_resolution=24).triangulate()


def _obstacle_mesh(pv: Any, ob: Any, world: World) -> Any:
    if hasattr(ob, "size"):
        corners, tris = box_mesh(ob)
        return pv.PolyData(corners, faces=np.hstack([np.full((len(tris), 1), 3), tris]).ravel())
    if hasattr(ob, "normal"):
        corners = plane_patch(ob, world.centre, world.plane_half)
        return pv.PolyData(corners, faces=np.array([4, 0, 1, 2, 3]))
    if hasattr(ob, "center"):
        return pv.Sphere(radius=float(ob.radius), center=tuple(ob.center), theta_resolution=36,
                         phi_resolution=24)
    a, b = np.asarray(ob.start, dtype=np.float64), np.asarray(ob.end, dtype=np.float64)
    r = float(ob.radius)
    tube = pv.Cylinder(center=tuple(0.5 * (a + b)), direction=tuple(b - a), radius=r,
                       height=float(np.linalg.norm(b - a)), resolution=36, capping=False)
    return tube.merge([pv.Sphere(radius=r, center=tuple(a)), pv.Sphere(radius=r, center=tuple(b))])


def _arrows(pv: Any, items: list[tuple[NDArray[np.float64], NDArray[np.float64]]], width: float) -> Any:
    """One PolyData of arrows (start, vector) with shafts ``width`` [m] thick (tips 2.5 x)."""
    blocks = []
    for start, vec in items:
        length = float(np.linalg.norm(vec))
        arrow = pv.Arrow(start=tuple(start), direction=tuple(vec), scale=length,
                         tip_length=min(0.35, 3.0 * width / length),
                         tip_radius=min(0.2, 1.25 * width / length),
                         shaft_radius=min(0.08, 0.5 * width / length)).triangulate()
        blocks.append(arrow)
    return blocks[0].merge(blocks[1:]) if len(blocks) > 1 else blocks[0]


class WorldActors:
    """The world's meshes in ``plotter``; the arrows at the scale of
    :func:`~hsa_elastica.io.render_world.force_scale`, ``width`` [m] thick."""

    def __init__(self, pv: Any, plotter: Any, world: World, width: float) -> None:
        self.pv, self.world, self.width = pv, world, float(width)
        for ob in world.obstacles:
            plane = hasattr(ob, "normal")
            plotter.add_mesh(_obstacle_mesh(pv, ob, world), color=OBSTACLE_COLOR,
                             opacity=0.35 if plane else 0.8)
        self.objects: list[tuple[Any, NDArray[np.float64]]] = []
        for o in world.objects:
            mesh = _object_mesh(pv, o.shape, o.radius, o.length)
            ref = np.array(mesh.points, dtype=np.float64)
            plotter.add_mesh(mesh, color=OBJECT_COLOR, smooth_shading=True, opacity=0.7)
            self.objects.append((mesh, ref))
        self.m_per_n, self.newtons_per_cm = force_scale(world)
        self.min_length = 0.5 * self.width
        self.arrows: dict[bool, tuple[Any, Any]] = {}
        if world.contacts and self.m_per_n > 0.0:
            seed = _arrows(pv, [(np.zeros(3), np.array([0.0, 0.0, 1.0]) * 10 * self.width)], self.width)
            for sliding, color in ((False, STICK_COLOR), (True, SLIDE_COLOR)):
                mesh = seed.copy()
                actor = plotter.add_mesh(mesh, color=color)
                self.arrows[sliding] = (mesh, actor)

    def legend_entries(self, arrow_glyph: Any) -> list[list[Any]]:
        """Legend lines: obstacle, object, and the arrows with their scale."""
        out: list[list[Any]] = []
        if self.world.obstacles:
            out.append(["obstacle", OBSTACLE_COLOR, "rectangle"])
        if self.objects:
            out.append(["object", OBJECT_COLOR, "rectangle"])
        if self.arrows:
            out.append([f"force, sticking: 10 mm = {self.newtons_per_cm:.3g} N", STICK_COLOR, arrow_glyph])
            out.append(["force, sliding", SLIDE_COLOR, arrow_glyph])
        return out

    def frame_points(self) -> NDArray[np.float64]:
        """Points to keep in view over the clip: objects, obstacles, arrows' starts and tips."""
        pts = [self.world.points()]
        for c in self.world.contacts:
            pts += [c.origin, c.origin + (1.0 if c.on_object else -1.0) * c.force * self.m_per_n]
        return np.concatenate(pts)

    def update(self, t: int) -> None:
        """Move the objects and redraw the arrows of frame ``t``."""
        for (mesh, ref), o in zip(self.objects, self.world.objects):
            mesh.points[:] = ref @ o.rotation[t].T + o.position[t]
            mesh.Modified()
        if not self.arrows:
            return
        items = arrows_at(self.world, t, self.m_per_n, self.min_length)
        for sliding, (mesh, actor) in self.arrows.items():
            if items[sliding]:
                mesh.copy_from(_arrows(self.pv, items[sliding], self.width))
                actor.SetVisibility(True)
            else:
                actor.SetVisibility(False)
