"""The pyvista scene of an HSA rod or robot, built once and updated in place per frame.

Drawing (Fig. 2(c) of the paper):

* rods as tubes of the rod's outer radius, coloured by handedness (right = orange, left = teal,
  with a legend) or by a per-element/per-Voronoi quantity (``color_by="elongation"`` = the
  auxetic rest-length strain ``rest_length / printed - 1`` of Eq. 3, or a recorded name such as
  ``"sigma_z"``) with a colour bar on a range fixed over the whole clip and rounded to nice ticks;
* the platform as a disk of the platform diameter and thickness at its recorded pose (and the
  lower platforms of a multi-segment stack, columns ``platform{k}/...``, likewise);
* local frames as arrows: red = local x (``d1``), green = local y (``d2``) at a few elements of
  each rod, plus blue = local z on the platform, as in the paper (listed in the legend);
* the robot frame, as the one orientation widget: a world-axes triad in the lower-right corner
  (``x E``, ``y N``, ``z``) whose colours (purple x, magenta y, grey z) are not those of the
  local frames;
* a scale bar (50 mm for the paper robot, :func:`~hsa_elastica.io.render_layout.scale_bar_length`)
  lying on the ground beside the base, perpendicular to the line of sight, so that it measures
  the robot at the robot's own depth;
* a title in the upper-left corner (the primitive and magnitude, or the motor angles:
  :func:`~hsa_elastica.io.render_data.run_title`) above the simulated time;
* a fixed camera from the south-east and above, placed as close as every sample of the run
  allows with the robot's projected bounding box centred in the image (below the title) and
  clear of the legend, colour bar and world axes, the same for the whole clip.

Rendering is off screen (``pv.OFF_SCREEN = True``); without an X display VTK's EGL window is
selected when libEGL is available (else VTK's own fallback, e.g. OSMesa).
"""

from __future__ import annotations

import ctypes.util
import math
import os
import sys
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from hsa_elastica.io import render_data as data
from hsa_elastica.io.render_world import world_of
from hsa_elastica.io.render_layout import (
    centred_camera,
    colorbar_ticks,
    scale_bar_length,
)

if TYPE_CHECKING:  # pragma: no cover
    from hsa_elastica.params import RobotParams, RodParams

__all__ = ["RobotScene", "HANDEDNESS_COLORS", "AXIS_COLORS", "WORLD_AXIS_COLORS", "SCALE_BAR_COLOR"]

HANDEDNESS_COLORS = {1: "#d95f02", -1: "#1b9e77"}  # right-handed orange, left-handed teal
HANDEDNESS_LABELS = {1: "right-handed", -1: "left-handed"}
AXIS_COLORS = ("#e41a1c", "#33a02c", "#1f4fd8")  # local frames: red x (d1), green y (d2), blue z
AXIS_LABELS = ("local x", "local y", "platform z")
WORLD_AXIS_COLORS = ("#7b3294", "#c51b7d", "#4d4d4d")  # robot frame x, y, z: purple, magenta, grey
SCALE_BAR_COLOR = "#202020"
_N_SIDES = 20  # tube cross-section resolution
_ROD_FRAME_FRACTIONS = (1.0 / 6.0, 0.5, 5.0 / 6.0)  # where along a rod local frames are drawn
_VIEW_DIRECTION = (1.0, -1.6, 0.9)  # from the focal point towards the camera: south-east, above
_VIEW_ANGLE_DEG = 30.0
_REACH_FRACTION = 0.35  # lateral reach framed in any case, per unit rod length


def prepare_offscreen() -> Any:
    """Import pyvista configured for off-screen rendering (no display needed)."""
    if (
        sys.platform.startswith("linux")
        and not os.environ.get("DISPLAY")
        and "VTK_DEFAULT_OPENGL_WINDOW" not in os.environ
        and ctypes.util.find_library("EGL") is not None
    ):
        # Avoid VTK's "bad X server connection" attempt; it would fall back to EGL anyway.
        os.environ["VTK_DEFAULT_OPENGL_WINDOW"] = "vtkEGLRenderWindow"
    import pyvista as pv

    pv.OFF_SCREEN = True
    return pv


# --------------------------------------------------------------------------------------------
# geometry helpers
# --------------------------------------------------------------------------------------------
def _rod_geometry(params: Any) -> tuple[Any, list[int], Any]:
    """(RodParams, handedness per rod, RobotParams or None) for a RobotParams or RodParams."""
    if hasattr(params, "n_rods"):
        return params.rod, list(params.handedness), params
    return params, [int(params.handedness)], None


def _tube_faces(n_nodes: int, n_sides: int) -> NDArray[np.int64]:
    """Quads ``[4, a, b, b + n_sides, a + n_sides]`` between consecutive rings of ``n_sides``."""
    k, j = np.meshgrid(np.arange(n_nodes - 1), np.arange(n_sides), indexing="ij")
    a, b = (k * n_sides + j).ravel(), (k * n_sides + (j + 1) % n_sides).ravel()
    return np.stack([np.full_like(a, 4), a, b, b + n_sides, a + n_sides], axis=1).ravel()


def _node_frames(
    directors: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Unit cross-section axes at the nodes ``(3, n_nodes)`` from element directors ``(3,3,n)``:
    the average of the adjacent elements' d1 (and d2), end nodes take their element's."""
    n1, n2 = (np.concatenate([d[:, :1], 0.5 * (d[:, :-1] + d[:, 1:]), d[:, -1:]], axis=1)
              for d in directors[:2])
    return n1 / np.linalg.norm(n1, axis=0, keepdims=True), n2 / np.linalg.norm(n2, axis=0, keepdims=True)


def _merged_arrows(pv: Any, starts: list[Any], directions: list[Any], lengths: list[float]) -> Any:
    """One PolyData holding an arrow per (start, direction, length)."""
    blocks, faces, offset = [], [], 0
    for s, d, L in zip(starts, directions, lengths):
        arrow = pv.Arrow(
            start=tuple(s), direction=tuple(d), scale=L, tip_length=0.3, tip_radius=0.12,
            shaft_radius=0.05,
        ).triangulate()
        f = np.array(arrow.faces, dtype=np.int64).reshape(-1, 4)
        f[:, 1:] += offset
        faces.append(f.ravel())
        pts = np.array(arrow.points, dtype=np.float64)
        blocks.append(pts)
        offset += pts.shape[0]
    return pv.PolyData(np.concatenate(blocks), faces=np.concatenate(faces))


# --------------------------------------------------------------------------------------------
# the scene
# --------------------------------------------------------------------------------------------
class RobotScene:
    """A pyvista off-screen scene of rods (+ platform) whose meshes are updated in place.

    Parameters
    ----------
    diagnostics
        the frame to draw (only the rows that will be shown, see ``render_data.resample``).
    params
        :class:`RobotParams` (robot) or :class:`RodParams` (single rod): radii, platform size,
        printed length and handedness.
    window_size
        (width, height) in pixels; rounded up to even numbers for the H.264 encoder.
    color_by
        ``"handedness"`` (default), ``"elongation"`` or a recorded per-element quantity name.
    show_frames
        draw the local frames as arrows.
    show_time
        write the simulated time in the upper-left corner (with ``speed``, the playback speed,
        e.g. ``t = 0.50 s (0.25x)``).
    show_legend, show_compass
        the legend of the colours and arrows; the world axes (the orientation widget).
    show_scale
        the scale bar on the ground.
    title
        a line above the time (e.g. ``"bend_north, magnitude 1"``; none if empty).
    world
        a :class:`~hsa_elastica.io.render_world.World` to draw (obstacles, objects, contact
        forces); default: the world of ``params.environment`` read from the frame
        (:func:`~hsa_elastica.io.render_world.world_of`), none without an environment.
    show_base
        the base plate (a grey disk at z = 0 under the rods' circle).
    """

    def __init__(
        self,
        diagnostics: pd.DataFrame,
        params: "RobotParams | RodParams",
        *,
        window_size: tuple[int, int] = (960, 720),
        color_by: str = "handedness",
        show_frames: bool = True,
        show_time: bool = True,
        show_legend: bool = True,
        show_compass: bool = True,
        show_scale: bool = True,
        speed: float | None = None,
        title: str = "",
        world: Any = None,
        show_base: bool = True,
    ) -> None:
        pv = prepare_offscreen()
        df = diagnostics.reset_index(drop=True)
        if len(df) == 0:
            raise ValueError("diagnostics frame is empty: nothing to render")
        w, h = (int(window_size[0]), int(window_size[1]))
        if w < 16 or h < 16:
            raise ValueError(f"window_size = {window_size!r} is invalid: both sides must be >= 16 px")
        self.window_size = (w + w % 2, h + h % 2)
        rod, handedness, robot = _rod_geometry(params)
        self._load(df, rod, handedness, robot, color_by)
        # legend line height, by the height of a 4:3 window at most (a portrait window keeps
        # the legend narrow, leaving the width to the robot)
        self._entry_px = min(40.0, max(18.0, 0.042 * min(self.window_size[1], 0.75 * self.window_size[0])))
        self.side_panel = 0.0  # fraction of the width kept free of the robot (legend, colour bar)
        #: panels drawn over the scene, (x0, y0, x1, y1) as fractions from the lower left:
        #: the camera keeps the robot out of them
        self.keep_out: list[tuple[float, float, float, float]] = []
        self.plotter = pv.Plotter(off_screen=True, window_size=list(self.window_size))
        self.plotter.set_background("white")
        self._build_rods(pv, handedness, color_by)
        if self.has_platform:
            self._build_platform(pv, robot)
        if show_base:
            self._build_ground(pv, robot)
        self.world_actors = self._build_world(pv, world if world is not None else world_of(df, params))
        self._frames: list[tuple[Any, NDArray[np.float64], list[Any]]] = []
        if show_frames:
            self._build_frames(pv)
        self.world_axes: Any = None
        if show_compass:
            self._build_world_axes()
        self.scale_points = np.zeros((0, 3))
        self.scale_length = 0.0
        if show_scale:
            self._build_scale_bar(pv, rod)
        self.speed = speed
        self.title = str(title)
        font = max(8, int(round(self.window_size[1] / 50)))
        # the longest line this scene writes fits the width (a glyph is about one font size wide)
        suffix = f"  ({speed:g}x speed)" if speed is not None else ""
        longest = len(f"{self.title};  t = 00.00 s{suffix}") if self.title else 0
        if longest:
            font = max(6, min(font, int(0.95 * self.window_size[0] / longest)))
        self._text = None
        self.show_time = show_time
        pad = max(4, self.window_size[1] // 60)
        line = int(round(1.5 * 1.333 * font))  # font pt -> px, with line spacing
        top = self.window_size[1] - pad - line
        self.top_band = 0.0  # fraction of the height kept free of the robot (title, time)
        if self.title or show_time:  # one line a few pixels in from the upper-left corner
            self._text = self.plotter.add_text(self.title or "t", position=(pad, top), font_size=font,
                                               color="black")
            self.top_band = (line + 2 * pad) / self.window_size[1]
        self.legend: Any = None
        if show_legend:  # below the title's line: a long title runs across the width
            self._build_legend(pv, handedness, show_frames, below=self.top_band if self.title else 0.0)
        self._set_camera(rod, robot)
        self.index = -1
        self.update(0)

    # ---- construction ---------------------------------------------------------------------
    def _load(self, df: pd.DataFrame, rod: Any, handedness: list[int], robot: Any, color_by: str) -> None:
        prefixes = data.rod_prefixes(df)
        self.times = df["time"].to_numpy(dtype=np.float64) if "time" in df else np.arange(len(df), dtype=np.float64)
        self.positions = [data.positions(df, p) for p in prefixes]  # (n_t, 3, n_nodes)
        n_nodes = self.positions[0].shape[2]
        self.directors = [data.directors(df, p, n_nodes - 1) for p in prefixes]
        self.radius = float(rod.outer_radius)
        if len(handedness) < len(prefixes):
            raise ValueError(
                f"diagnostics frame has {len(prefixes)} rods but the parameters describe "
                f"{len(handedness)}"
            )
        self.color_by = color_by
        self.scalars: list[NDArray[np.float64]] | None = None
        if color_by != "handedness":
            self.scalars = [data.rod_scalars(df, p, color_by, n_nodes, float(rod.length)) for p in prefixes]
        self.has_platform = robot is not None and "platform/position_x" in df.columns
        if self.has_platform:
            self.platform_pos = data.block(df, [f"platform/position_{a}" for a in "xyz"])
            q = data.block(df, [f"platform/quaternion_{a}" for a in "xyzw"])
            self.platform_rot = data.quaternion_to_matrix(q)
        # the lower platforms of a multi-segment stack: columns ``platform{k}/...``
        self.lower_platforms: list[tuple[NDArray[np.float64], NDArray[np.float64]]] = []
        k = 0
        while self.has_platform and f"platform{k}/position_x" in df.columns:
            pos = data.block(df, [f"platform{k}/position_{a}" for a in "xyz"])
            q = data.block(df, [f"platform{k}/quaternion_{a}" for a in "xyzw"])
            self.lower_platforms.append((pos, data.quaternion_to_matrix(q)))
            k += 1
        self.ground_radius = max(
            (float(robot.circle_radius) if robot is not None else 0.0) + 2.0 * self.radius,
            0.5 * float(robot.platform.diameter) if robot is not None else 0.0,
        )

    def _build_rods(self, pv: Any, handedness: list[int], color_by: str) -> None:
        n_nodes = self.positions[0].shape[2]
        faces = _tube_faces(n_nodes, _N_SIDES)
        a = 2.0 * np.pi * np.arange(_N_SIDES) / _N_SIDES
        self._cos, self._sin = np.cos(a), np.sin(a)
        self.rod_meshes = []
        self.colorbar: tuple[float, float, list[float], str] | None = None
        self.scalar_bar: Any = None
        if self.scalars is not None:
            lo = min(float(s.min()) for s in self.scalars)
            hi = max(float(s.max()) for s in self.scalars)
            self.colorbar = colorbar_ticks(lo, hi)
        for i in range(len(self.positions)):
            mesh = pv.PolyData(np.zeros((n_nodes * _N_SIDES, 3)), faces=faces)
            mesh.point_data["Normals"] = np.zeros((n_nodes * _N_SIDES, 3))
            mesh.point_data.active_normals_name = "Normals"
            if self.scalars is None:
                actor = self.plotter.add_mesh(
                    mesh, color=HANDEDNESS_COLORS[int(handedness[i])], smooth_shading=False
                )
            else:
                mesh.point_data[color_by] = np.zeros(n_nodes * _N_SIDES)
                actor = self.plotter.add_mesh(
                    mesh, scalars=color_by, cmap="viridis", show_scalar_bar=False,
                    clim=self.colorbar[:2] if self.colorbar else None,
                )
            # shade with our own point normals (updated per frame; pyvista's smooth_shading
            # would compute normals on a copy of the mesh and break the in-place updates)
            actor.prop.interpolation = "phong"
            self.rod_meshes.append(mesh)
        if self.colorbar is not None:
            self._build_scalar_bar(color_by)

    def _build_scalar_bar(self, color_by: str) -> None:
        assert self.colorbar is not None
        from vtkmodules.vtkCommonCore import vtkDoubleArray

        _, _, ticks, fmt = self.colorbar
        w, h = self.window_size
        font = int(round(0.6 * self._entry_px))
        bar_w = 1.5 * self._entry_px / w
        label_w = (0.62 * font * max(len(fmt % v) for v in ticks) + 0.5 * font) / w
        bar = self.plotter.add_scalar_bar(
            title="strain (Eq. 3)" if color_by == "elongation" else color_by,
            color="black", vertical=True, position_x=1.0 - bar_w - label_w - 0.02,
            position_y=0.25, width=bar_w + label_w, height=0.45, title_font_size=font,
            label_font_size=font, fmt=fmt, n_labels=len(ticks), unconstrained_font_size=True,
        )
        labels = vtkDoubleArray()
        for v in ticks:
            labels.InsertNextValue(v)
        bar.SetUseCustomLabels(True)
        bar.SetCustomLabels(labels)
        self.scalar_bar = bar
        self.side_panel = max(self.side_panel, bar_w + label_w + 0.05)
        self.keep_out.append((1.0 - bar_w - label_w - 0.02, 0.25, 1.0, 0.75))

    def _build_platform(self, pv: Any, robot: Any) -> None:
        plat = robot.platform
        self._plat_thickness = float(plat.thickness)
        self._plat_radius = 0.5 * float(plat.diameter)
        disk = pv.Cylinder(
            center=(0.0, 0.0, 0.0), direction=(0.0, 0.0, 1.0), radius=self._plat_radius,
            height=self._plat_thickness, resolution=64, capping=True,
        ).triangulate()
        self._plat_ref = np.array(disk.points, dtype=np.float64)
        self.platform_mesh = disk
        self.plotter.add_mesh(disk, color="#bdbdbd", opacity=0.85)
        self.lower_meshes = []
        for _ in self.lower_platforms:
            mesh = disk.copy()
            self.lower_meshes.append(mesh)
            self.plotter.add_mesh(mesh, color="#bdbdbd", opacity=0.85)

    def _build_ground(self, pv: Any, robot: Any) -> None:
        base = pv.Cylinder(
            center=(0.0, 0.0, -0.0015), direction=(0.0, 0.0, 1.0), radius=self.ground_radius,
            height=0.003, resolution=64,
        )
        self.plotter.add_mesh(base, color="#636363")

    def _build_world(self, pv: Any, world: Any) -> Any:
        """The meshes of ``world`` (obstacles, objects, forces), or None without one."""
        if world is None:
            return None
        from hsa_elastica.io.render_world_meshes import WorldActors

        return WorldActors(pv, self.plotter, world, 0.5 * self.radius)

    def _build_world_axes(self) -> None:
        """The world axes in the lower-right corner: the scene's one orientation widget."""
        self.world_axes = self.plotter.add_axes(
            line_width=3, xlabel="x E", ylabel="y N", zlabel="z",
            x_color=WORLD_AXIS_COLORS[0], y_color=WORLD_AXIS_COLORS[1], z_color=WORLD_AXIS_COLORS[2],
            viewport=(0.78, 0.0, 1.0, 0.28), label_size=(0.36, 0.13),
        )
        self.keep_out.append((0.8, 0.0, 1.0, 0.24))  # the axes' glyph inside their viewport

    def _build_scale_bar(self, pv: Any, rod: Any) -> None:
        """A bar of :func:`scale_bar_length` on the ground beside the base (to its right in the
        image, at the base's depth), perpendicular to the line of sight, with end ticks and its
        length as label below it."""
        length = scale_bar_length(float(rod.length))
        d = np.asarray(_VIEW_DIRECTION, dtype=np.float64)
        towards = np.array([d[0], d[1], 0.0]) / math.hypot(d[0], d[1])
        across = np.array([-towards[1], towards[0], 0.0])  # horizontal, perpendicular to the view
        half = 0.5 * length
        centre = across * (self.ground_radius + half + max(2.0 * self.radius, 0.15 * length))
        ends = [centre - half * across, centre + half * across]
        bar_w = max(0.012 * length, 0.2 * self.radius)
        bar = pv.Box(bounds=(-half, half, -0.5 * bar_w, 0.5 * bar_w, 0.0, bar_w))
        ticks = [pv.Box(bounds=(x - 0.5 * bar_w, x + 0.5 * bar_w, -2.0 * bar_w, 2.0 * bar_w, 0.0, bar_w))
                 for x in (-half, half)]
        mesh = bar.merge(ticks)
        angle = math.degrees(math.atan2(across[1], across[0]))
        mesh = mesh.rotate_z(angle, inplace=False).translate(centre, inplace=False)
        self.plotter.add_mesh(mesh, color=SCALE_BAR_COLOR)
        label_at = centre + towards * (0.12 * length)
        mm = length * 1e3
        text = f"{mm:.0f} mm" if mm >= 1 else f"{mm:g} mm"
        self.scale_label = self.plotter.add_point_labels(
            label_at[None, :], [text], font_size=max(10, int(round(self.window_size[1] / 40))),
            text_color=SCALE_BAR_COLOR, shape=None, show_points=False, always_visible=True,
            justification_horizontal="center", justification_vertical="top",
        )
        self.scale_length = length
        self.scale_points = np.vstack([ends, label_at + towards * 0.2 * length])

    def _build_legend(self, pv: Any, handedness: list[int], show_frames: bool, below: float = 0.0) -> None:
        entries: list[list[Any]] = []
        if self.scalars is None:
            for h in (1, -1):
                if h in handedness[: len(self.positions)]:
                    entries.append([HANDEDNESS_LABELS[h], HANDEDNESS_COLORS[h], "rectangle"])
        arrow = pv.Arrow(start=(-0.5, 0.0, 0.0), direction=(1.0, 0.0, 0.0), scale=1.0,
                         tip_length=0.35, tip_radius=0.2, shaft_radius=0.07)
        if show_frames:
            for axis in range(3 if self.has_platform else 2):
                entries.append([AXIS_LABELS[axis], AXIS_COLORS[axis], arrow])
        if self.world_actors is not None:
            entries += self.world_actors.legend_entries(arrow)
        if entries:
            w, h = self.window_size
            entry = self._entry_px
            n_chars = max(len(e[0]) for e in entries)
            size = (min(0.45, entry * (1.6 + 0.6 * n_chars) / w), min(0.9, entry * len(entries) / h))
            self.legend = self.plotter.add_legend(entries, bcolor="white", loc="upper right", size=size)
            # pyvista places 'upper right' by the legend's height; anchor it by its width
            self.legend.SetPosition(1.0 - size[0] - 0.01, 1.0 - size[1] - 0.01 - below)
            self.legend.SetPosition2(size[0], size[1])
            self.legend_entries = [e[0] for e in entries]
            self.side_panel = max(self.side_panel, size[0] + 0.04)
            self.keep_out.append((1.0 - size[0] - 0.01, 1.0 - size[1] - 0.01 - below, 1.0, 1.0 - below))

    def _build_frames(self, pv: Any) -> None:
        """Arrow meshes, one per axis colour, each the concatenation of one arrow per site."""
        n_elem = self.directors[0].shape[3]
        self._rod_sites = sorted({min(n_elem - 1, int(f * n_elem)) for f in _ROD_FRAME_FRACTIONS})
        rod_len = 1.7 * self.radius
        plat_len = 0.6 * self._plat_radius if self.has_platform else 0.0
        n_rods = len(self.positions)
        for axis in range(3):
            lengths: list[float] = []
            if axis < 2:  # the local z of a rod runs inside the tube: not drawn (as in Fig. 2)
                lengths += [rod_len] * (n_rods * len(self._rod_sites))
            if self.has_platform:
                lengths.append(plat_len)
            if not lengths:
                continue
            direction = np.eye(3)[axis]
            mesh = _merged_arrows(pv, [np.zeros(3)] * len(lengths), [direction] * len(lengths), lengths)
            ref = np.array(mesh.points, dtype=np.float64).reshape(len(lengths), -1, 3)
            self.plotter.add_mesh(mesh, color=AXIS_COLORS[axis], smooth_shading=False)
            self._frames.append((mesh, ref, [axis < 2, self.has_platform]))

    def _set_camera(self, rod: Any, robot: Any) -> None:
        """Fixed camera for the whole clip, from the south-east and above, as close as fits.

        It frames (a) the data over all samples, (b) the scale bar and, for a single robot,
        (c) a frustum about the robot axis from the base up to the robot at its maximum auxetic
        extension (rods of ``L (1 + min(eps_max, C_eps pi / L))`` plus the platform), as wide at
        the top as the farther of the data's reach and a fixed reach (platform radius + 0.35 L,
        about the platform's edge in a full bending primitive), so that the runs of one robot,
        e.g. the seven primitives, are seen from the same distance unless one reaches farther.
        A multi-segment stack is framed by (a), (b) and the base alone: a frustum as wide as its
        farthest reach on every side would leave most of the image empty (a two-segment stack
        bent north filled about a fifth of it).
        """
        nodes = np.concatenate([p.transpose(0, 2, 1).reshape(-1, 3) for p in self.positions])
        pad = self.radius * np.vstack([np.eye(3), -np.eye(3)])  # tube surface around the nodes
        pts = [(nodes[:, None, :] + pad[None, :, :]).reshape(-1, 3)]
        if self.has_platform:  # the rims of both faces of the disk at every sample
            a = np.linspace(0.0, 2.0 * math.pi, 16, endpoint=False)
            rim = self._plat_radius * np.column_stack([np.cos(a), np.sin(a), np.zeros_like(a)])
            for dz in (-0.5 * self._plat_thickness, 0.5 * self._plat_thickness):
                body = rim + [0.0, 0.0, dz]
                for pos, rot in [(self.platform_pos, self.platform_rot), *self.lower_platforms]:
                    pts.append((np.einsum("tij,pj->tpi", rot, body) + pos[:, None, :]).reshape(-1, 3))
        if self.world_actors is not None:
            pts.append(self.world_actors.frame_points())
        allp = np.concatenate(pts)
        lo = allp.min(axis=0)
        hi = allp.max(axis=0)
        eps_max = min(float(rod.eps_max), float(rod.C_eps) * math.pi / float(rod.length))
        z_max = float(rod.length) * (1.0 + max(eps_max, 0.0))
        # a reach every run is framed with, so that stills of different runs share one scale:
        # the platform's edge when bent like the Fig. 2 primitives (centre ~0.35 L off axis)
        reach = max(self.radius, self.ground_radius) + _REACH_FRACTION * float(rod.length)
        if robot is not None:
            z_max += float(robot.platform.thickness)
            reach = max(reach, 0.5 * float(robot.platform.diameter) + _REACH_FRACTION * float(rod.length))
        hi[2] = max(hi[2], z_max)
        lo[2] = min(lo[2], 0.0)
        xy = max(float(np.max(np.abs(lo[:2]))), float(np.max(np.abs(hi[:2]))), reach)
        lo[:2], hi[:2] = -xy, xy
        a = np.linspace(0.0, 2.0 * math.pi, 48, endpoint=False)
        ring = np.column_stack([np.cos(a), np.sin(a), np.zeros_like(a)])
        hull = np.vstack([  # the base at the bottom, the widest reach at the top
            self.ground_radius * ring + [0.0, 0.0, lo[2]], xy * ring + [0.0, 0.0, hi[2]]
        ])
        if self.lower_platforms:  # a stack: its own motion, not a frustum around its axis
            hull = self.ground_radius * ring + [0.0, 0.0, min(0.0, float(allp[:, 2].min()))]
        framed = np.vstack([hull, allp, self.scale_points])
        w, h = self.window_size
        # the robot (every sample, and its base plate) at the image's centre, the panels kept
        # clear of it and of the scale bar
        base = self.ground_radius * ring + [0.0, 0.0, min(0.0, float(allp[:, 2].min()))]
        focal, position = centred_camera(
            np.vstack([allp, base]), framed, np.vstack([allp, base, self.scale_points]),
            direction=_VIEW_DIRECTION, view_angle_deg=_VIEW_ANGLE_DEG, aspect=w / h, fill=0.94,
            top_fraction=1.0 - self.top_band, boxes=self.keep_out,
        )
        cam = self.plotter.camera
        cam.focal_point = tuple(focal)
        cam.position = tuple(position)
        cam.up = (0.0, 0.0, 1.0)
        cam.view_angle = _VIEW_ANGLE_DEG
        self.plotter.reset_camera_clipping_range()

    # ---- per frame ------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        return int(self.times.size)

    def update(self, index: int) -> None:
        """Move every mesh to the sample ``index`` (a row of the frame given at construction)."""
        i = int(index) % self.n_samples
        for r, mesh in enumerate(self.rod_meshes):
            pos = self.positions[r][i]  # (3, n_nodes)
            n1, n2 = _node_frames(self.directors[r][i])
            normals = (
                n1.T[:, None, :] * self._cos[None, :, None] + n2.T[:, None, :] * self._sin[None, :, None]
            )  # (n_nodes, n_sides, 3)
            mesh.points[:] = (pos.T[:, None, :] + self.radius * normals).reshape(-1, 3)
            mesh.point_data["Normals"][:] = normals.reshape(-1, 3)
            if self.scalars is not None:
                mesh.point_data[self.color_by][:] = np.repeat(self.scalars[r][i], _N_SIDES)
            mesh.Modified()
        if self.has_platform:
            self.platform_mesh.points[:] = self._plat_ref @ self.platform_rot[i].T + self.platform_pos[i]
            self.platform_mesh.Modified()
            for mesh, (pos, rot) in zip(self.lower_meshes, self.lower_platforms):
                mesh.points[:] = self._plat_ref @ rot[i].T + pos[i]
                mesh.Modified()
        self._update_frames(i)
        if self.world_actors is not None:
            self.world_actors.update(i)
        if self._text is not None and self.show_time:
            label = f"{self.title};  t = {self.times[i]:.2f} s" if self.title else f"t = {self.times[i]:.2f} s"
            if self.speed is not None:
                label += f"  ({self.speed:g}x speed)"
            self._text.SetInput(label)
        self.index = i

    def _update_frames(self, i: int) -> None:
        for mesh, ref, (with_rods, with_platform) in self._frames:
            origins, rots = [], []
            if with_rods:
                for r in range(len(self.positions)):
                    pos = self.positions[r][i]
                    q = self.directors[r][i]
                    for k in self._rod_sites:
                        origins.append(0.5 * (pos[:, k] + pos[:, k + 1]))
                        rots.append(q[:, :, k].T)  # columns = d1, d2, d3 in lab
            if with_platform:
                rot = self.platform_rot[i]
                origins.append(self.platform_pos[i] + rot @ np.array([0, 0, 0.5 * self._plat_thickness]))
                rots.append(rot)
            new = np.einsum("sij,spj->spi", np.asarray(rots), ref) + np.asarray(origins)[:, None, :]
            mesh.points[:] = new.reshape(-1, 3)
            mesh.Modified()

    def image(self) -> NDArray[np.uint8]:
        """The current view as an RGB image ``(height, width, 3)``."""
        self.plotter.render()  # a no-op before the first screenshot, which renders by itself
        img = self.plotter.screenshot(return_img=True)
        return np.ascontiguousarray(np.asarray(img)[..., :3], dtype=np.uint8)

    def close(self) -> None:
        self.plotter.close()

    def __enter__(self) -> "RobotScene":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
