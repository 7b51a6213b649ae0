"""Off-screen rendering of HSA rods and robots with pyvista: mp4 videos and PNG stills.

Input is a diagnostics :class:`pandas.DataFrame` in the format of ``recording.py`` (see
``docs/architecture.md``): a ``time`` column, per rod ``rod{i}/position_{x|y|z}_{node}`` and
``rod{i}/director_{r}{c}_{elem}`` (PyElastica directors: row ``r`` is the local axis ``d_{r+1}``
in lab coordinates), optionally ``rod{i}/<quantity>_{elem or vor}`` for colouring, and for a robot
``platform/position_{x|y|z}`` and ``platform/quaternion_{x|y|z|w}``.  A single-rod frame without
the ``rod{i}/`` prefix is accepted too.

Drawing (Fig. 2(c) of the paper):

* rods as tubes of the rod's outer radius, coloured by handedness (right = orange, left = teal) or
  by a per-element/per-Voronoi quantity (``color_by="elongation"`` = the auxetic rest-length strain
  ``rest_length / printed - 1`` of Eq. 3, or a recorded name such as ``"sigma_z"``, ``"kappa_z"``)
  with a scalar bar on a range fixed over the whole clip;
* the platform as a disk (cylinder of the platform diameter and thickness) at its recorded pose;
* local frames as arrows: red = local x (``d1``), green = local y (``d2``) at a few elements of each
  rod, plus blue = local z on the platform, as in the paper;
* a fixed isometric-ish camera framing the bounding box of the robot over the whole clip (so at
  its maximum extension).

The scene is built once; each frame only rewrites the point (and normal) arrays of the existing
meshes.  Rendering is off screen (``pv.OFF_SCREEN = True``); without an X display VTK's EGL
window is selected when libEGL is available (else VTK's own fallback, e.g. OSMesa).
"""

from __future__ import annotations

import ctypes.util
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

if TYPE_CHECKING:  # pragma: no cover
    from hsa_elastica.params import RobotParams, RodParams

__all__ = ["render_video", "render_still", "RobotScene", "select_frames"]

HANDEDNESS_COLORS = {1: "#d95f02", -1: "#1b9e77"}  # right-handed orange, left-handed teal
AXIS_COLORS = ("red", "green", "blue")
_N_SIDES = 20  # tube cross-section resolution
_ROD_FRAME_FRACTIONS = (1.0 / 6.0, 0.5, 5.0 / 6.0)  # where along a rod local frames are drawn


def _prepare_offscreen() -> Any:
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
# data extraction
# --------------------------------------------------------------------------------------------
def _rod_prefixes(df: pd.DataFrame) -> list[str]:
    prefixes = []
    i = 0
    while f"rod{i}/position_x_0" in df.columns:
        prefixes.append(f"rod{i}/")
        i += 1
    if not prefixes and "position_x_0" in df.columns:
        prefixes.append("")
    if not prefixes:
        raise ValueError(
            "diagnostics frame has no rod columns: expected 'rod{i}/position_x_0' (robot) or "
            "'position_x_0' (single rod)"
        )
    return prefixes


def _count(df: pd.DataFrame, prefix: str, stem: str) -> int:
    n = 0
    while f"{prefix}{stem}{n}" in df.columns:
        n += 1
    return n


def _block(df: pd.DataFrame, cols: list[str]) -> NDArray[np.float64]:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"diagnostics frame lacks column(s) {missing[:3]}{'...' if len(missing) > 3 else ''}")
    return df[cols].to_numpy(dtype=np.float64)


def _positions(df: pd.DataFrame, prefix: str) -> NDArray[np.float64]:
    n = _count(df, prefix, "position_x_")
    cols = [f"{prefix}position_{a}_{k}" for a in "xyz" for k in range(n)]
    return _block(df, cols).reshape(len(df), 3, n)


def _directors(df: pd.DataFrame, prefix: str, n_elem: int) -> NDArray[np.float64]:
    cols = [f"{prefix}director_{r}{c}_{k}" for r in range(3) for c in range(3) for k in range(n_elem)]
    return _block(df, cols).reshape(len(df), 3, 3, n_elem)


def quaternion_to_matrix(q_xyzw: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rotation matrices ``(..., 3, 3)`` from scalar-last unit quaternions ``(..., 4)``.

    The matrix maps body-frame vectors to the lab frame (its columns are the body axes in lab
    coordinates), the convention of ``platform/quaternion_{x|y|z|w}``.
    """
    q = np.asarray(q_xyzw, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    m = np.empty(q.shape[:-1] + (3, 3))
    m[..., 0, 0] = 1 - 2 * (y * y + z * z)
    m[..., 0, 1] = 2 * (x * y - z * w)
    m[..., 0, 2] = 2 * (x * z + y * w)
    m[..., 1, 0] = 2 * (x * y + z * w)
    m[..., 1, 1] = 1 - 2 * (x * x + z * z)
    m[..., 1, 2] = 2 * (y * z - x * w)
    m[..., 2, 0] = 2 * (x * z - y * w)
    m[..., 2, 1] = 2 * (y * z + x * w)
    m[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return m


def _node_scalars(values: NDArray[np.float64], n_nodes: int) -> NDArray[np.float64]:
    """Map per-element (n_nodes-1) or per-Voronoi (n_nodes-2) values ``(n_t, m)`` to nodes by
    linear interpolation in arc-length fraction (clamped at the ends)."""
    m = values.shape[1]
    if m == n_nodes:
        return values
    if m == n_nodes - 1:
        at = (np.arange(m) + 0.5) / m  # element centres
    elif m == n_nodes - 2:
        at = (np.arange(m) + 1.0) / (n_nodes - 1)  # interior nodes
    else:
        raise ValueError(f"cannot map {m} values onto {n_nodes} nodes")
    s = np.linspace(0.0, 1.0, n_nodes)
    return np.stack([np.interp(s, at, row) for row in values])


def _rod_scalars(
    df: pd.DataFrame, prefix: str, color_by: str, n_nodes: int, printed_length: float
) -> NDArray[np.float64]:
    if color_by == "elongation":
        n = _count(df, prefix, "rest_length_")
        if n == 0:
            raise ValueError(f"color_by='elongation' needs the columns '{prefix}rest_length_{{k}}'")
        rest = _block(df, [f"{prefix}rest_length_{k}" for k in range(n)])
        values = rest / (printed_length / n) - 1.0
    else:
        n = _count(df, prefix, f"{color_by}_")
        if n == 0:
            raise ValueError(
                f"color_by={color_by!r}: no columns '{prefix}{color_by}_{{k}}' in the diagnostics; "
                "use 'handedness', 'elongation' or a recorded per-element quantity (e.g. 'sigma_z')"
            )
        values = _block(df, [f"{prefix}{color_by}_{k}" for k in range(n)])
    return _node_scalars(values, n_nodes)


def select_frames(
    times: NDArray[np.float64] | Sequence[float],
    *,
    fps: float = 30.0,
    speed: float = 1.0,
    n_frames: int | None = None,
) -> NDArray[np.int64]:
    """Row indices of the samples shown in a video.

    With ``n_frames`` the clip has exactly that many frames spread evenly over the rows; otherwise
    one frame every ``speed / fps`` seconds of simulated time (``speed`` = simulated seconds per
    second of video), each the nearest recorded sample, plus the last sample if it was not
    picked (the clip always ends on the final state).
    """
    t = np.asarray(times, dtype=np.float64)
    if t.size == 0:
        raise ValueError("diagnostics frame is empty: nothing to render")
    if n_frames is not None:
        if int(n_frames) < 1:
            raise ValueError(f"n_frames = {n_frames!r} is invalid: must be an integer >= 1")
        return np.round(np.linspace(0, t.size - 1, int(n_frames))).astype(np.int64)
    if not (fps > 0 and math.isfinite(fps)):
        raise ValueError(f"fps = {fps!r} is invalid: must be a finite number > 0 (1/s)")
    if not (speed > 0 and math.isfinite(speed)):
        raise ValueError(f"speed = {speed!r} is invalid: must be a finite number > 0")
    targets = np.arange(t[0], t[-1] + 0.5 * speed / fps, speed / fps)
    idx = np.clip(np.searchsorted(t, targets), 0, t.size - 1)
    prev = np.clip(idx - 1, 0, t.size - 1)
    nearer_prev = np.abs(t[prev] - targets) < np.abs(t[idx] - targets)
    rows = np.where(nearer_prev, prev, idx).astype(np.int64)
    if rows[-1] != t.size - 1:  # always end on the final state
        rows = np.append(rows, t.size - 1)
    return rows


# --------------------------------------------------------------------------------------------
# the scene
# --------------------------------------------------------------------------------------------
def _rod_geometry(params: Any) -> tuple[Any, list[int], Any]:
    """(RodParams, handedness per rod, RobotParams or None) for a RobotParams or RodParams."""
    if hasattr(params, "n_rods"):
        return params.rod, list(params.handedness), params
    return params, [int(params.handedness)], None


def _tube_faces(n_nodes: int, n_sides: int) -> NDArray[np.int64]:
    faces = []
    for k in range(n_nodes - 1):
        for j in range(n_sides):
            a = k * n_sides + j
            b = k * n_sides + (j + 1) % n_sides
            faces.append([4, a, b, b + n_sides, a + n_sides])
    return np.asarray(faces, dtype=np.int64).ravel()


def _node_frames(
    directors: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Unit cross-section axes at the nodes ``(3, n_nodes)`` from element directors ``(3,3,n)``:
    the average of the adjacent elements' d1 (and d2), end nodes take their element's."""
    d1 = directors[0]
    d2 = directors[1]
    n1 = np.concatenate([d1[:, :1], 0.5 * (d1[:, :-1] + d1[:, 1:]), d1[:, -1:]], axis=1)
    n2 = np.concatenate([d2[:, :1], 0.5 * (d2[:, :-1] + d2[:, 1:]), d2[:, -1:]], axis=1)
    n1 /= np.linalg.norm(n1, axis=0, keepdims=True)
    n2 /= np.linalg.norm(n2, axis=0, keepdims=True)
    return n1, n2


class RobotScene:
    """A pyvista off-screen scene of rods (+ platform) whose meshes are updated in place.

    Parameters
    ----------
    diagnostics
        the frame to draw (only the rows that will be shown, see :func:`select_frames`).
    params
        :class:`RobotParams` (robot) or :class:`RodParams` (single rod): radii, platform size,
        printed length and handedness.
    window_size
        (width, height) in pixels; rounded up to even numbers for the H.264 encoder.
    color_by
        ``"handedness"`` (default), ``"elongation"`` or a recorded per-element quantity name.
    show_frames
        draw the local frames as arrows.
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
    ) -> None:
        pv = _prepare_offscreen()
        df = diagnostics.reset_index(drop=True)
        if len(df) == 0:
            raise ValueError("diagnostics frame is empty: nothing to render")
        w, h = (int(window_size[0]), int(window_size[1]))
        if w < 16 or h < 16:
            raise ValueError(f"window_size = {window_size!r} is invalid: both sides must be >= 16 px")
        self.window_size = (w + w % 2, h + h % 2)
        rod, handedness, robot = _rod_geometry(params)
        prefixes = _rod_prefixes(df)
        self.times = df["time"].to_numpy(dtype=np.float64) if "time" in df else np.arange(len(df), dtype=np.float64)
        self.positions = [_positions(df, p) for p in prefixes]  # (n_t, 3, n_nodes)
        n_nodes = self.positions[0].shape[2]
        self.directors = [_directors(df, p, n_nodes - 1) for p in prefixes]
        self.radius = float(rod.outer_radius)
        if len(handedness) < len(prefixes):
            raise ValueError(
                f"diagnostics frame has {len(prefixes)} rods but the parameters describe "
                f"{len(handedness)}"
            )
        self.color_by = color_by
        self.scalars: list[NDArray[np.float64]] | None = None
        if color_by != "handedness":
            self.scalars = [
                _rod_scalars(df, p, color_by, n_nodes, float(rod.length)) for p in prefixes
            ]
        self.has_platform = robot is not None and "platform/position_x" in df.columns
        if self.has_platform:
            self.platform_pos = _block(df, [f"platform/position_{a}" for a in "xyz"])
            q = _block(df, [f"platform/quaternion_{a}" for a in "xyzw"])
            self.platform_rot = quaternion_to_matrix(q)

        self.plotter = pv.Plotter(off_screen=True, window_size=list(self.window_size))
        self.plotter.set_background("white")
        self._build_rods(pv, handedness, color_by)
        if self.has_platform:
            assert robot is not None
            self._build_platform(pv, robot)
        self._build_ground(pv, robot)
        self._frames: list[tuple[Any, NDArray[np.float64], list[Any]]] = []
        if show_frames:
            self._build_frames(pv)
        self._text = (
            self.plotter.add_text("", position="upper_left", font_size=10, color="black")
            if show_time
            else None
        )
        self.plotter.add_axes(line_width=2, labels_off=False)
        self._set_camera(rod, robot)
        self.index = -1
        self.update(0)

    # ---- construction ---------------------------------------------------------------------
    def _build_rods(self, pv: Any, handedness: list[int], color_by: str) -> None:
        n_nodes = self.positions[0].shape[2]
        faces = _tube_faces(n_nodes, _N_SIDES)
        a = 2.0 * np.pi * np.arange(_N_SIDES) / _N_SIDES
        self._cos, self._sin = np.cos(a), np.sin(a)
        self.rod_meshes = []
        clim = None
        if self.scalars is not None:
            lo = min(float(s.min()) for s in self.scalars)
            hi = max(float(s.max()) for s in self.scalars)
            clim = (lo, hi if hi > lo else lo + 1e-12)
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
                    mesh,
                    scalars=color_by,
                    clim=clim,
                    cmap="viridis",
                    show_scalar_bar=(i == 0),
                    scalar_bar_args={
                        "title": "eps (Eq. 3)" if color_by == "elongation" else color_by,
                        "color": "black",
                        "vertical": True,
                        "position_x": 0.82,
                        "position_y": 0.15,
                        "width": 0.06,
                        "height": 0.6,
                        "title_font_size": 12,
                        "label_font_size": 10,
                        "fmt": "%.3g",
                    },
                )
            # shade with our own point normals (updated per frame; pyvista's smooth_shading
            # would compute normals on a copy of the mesh and break the in-place updates)
            actor.prop.interpolation = "phong"
            self.rod_meshes.append(mesh)

    def _build_platform(self, pv: Any, robot: Any) -> None:
        plat = robot.platform
        self._plat_thickness = float(plat.thickness)
        self._plat_radius = 0.5 * float(plat.diameter)
        disk = pv.Cylinder(
            center=(0.0, 0.0, 0.0),
            direction=(0.0, 0.0, 1.0),
            radius=self._plat_radius,
            height=self._plat_thickness,
            resolution=64,
            capping=True,
        ).triangulate()
        self._plat_ref = np.array(disk.points, dtype=np.float64)
        self.platform_mesh = disk
        self.plotter.add_mesh(disk, color="#bdbdbd", opacity=0.85)

    def _build_ground(self, pv: Any, robot: Any) -> None:
        r0 = max(
            (float(robot.circle_radius) if robot is not None else 0.0) + 2.0 * self.radius,
            0.5 * float(robot.platform.diameter) if robot is not None else 0.0,
        )
        base = pv.Cylinder(
            center=(0.0, 0.0, -0.0015), direction=(0.0, 0.0, 1.0), radius=r0, height=0.003,
            resolution=64,
        )
        self.plotter.add_mesh(base, color="#636363")

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
            blocks = []
            ref_blocks = []
            faces_all = []
            offset = 0
            for L in lengths:
                arrow = pv.Arrow(
                    start=(0.0, 0.0, 0.0), direction=direction, scale=L,
                    tip_length=0.3, tip_radius=0.12, shaft_radius=0.05,
                ).triangulate()
                pts = np.array(arrow.points, dtype=np.float64)
                f = np.array(arrow.faces, dtype=np.int64).reshape(-1, 4)
                f[:, 1:] += offset
                faces_all.append(f.ravel())
                ref_blocks.append(pts)
                blocks.append(pts)
                offset += pts.shape[0]
            mesh = pv.PolyData(np.concatenate(blocks), faces=np.concatenate(faces_all))
            self.plotter.add_mesh(mesh, color=AXIS_COLORS[axis], smooth_shading=False)
            self._frames.append((mesh, np.stack(ref_blocks), [axis < 2, self.has_platform]))

    def _set_camera(self, rod: Any, robot: Any) -> None:
        """Fixed camera for the whole clip, from the south-east and above.

        It frames the union of (a) the data over all samples and (b) the robot at its maximum
        auxetic extension (rods of ``L (1 + min(eps_max, C_eps pi / L))`` plus the platform),
        made symmetric in x and y about the robot axis, so that e.g. the four bending
        primitives are seen from the same distance.
        """
        pts = [p.transpose(0, 2, 1).reshape(-1, 3) for p in self.positions]
        if self.has_platform:
            r = self._plat_radius
            pts.append(self.platform_pos + np.array([r, r, self._plat_thickness]))
            pts.append(self.platform_pos - np.array([r, r, 0.0]))
        allp = np.concatenate(pts)
        lo = allp.min(axis=0) - self.radius
        hi = allp.max(axis=0) + self.radius
        eps_max = min(float(rod.eps_max), float(rod.C_eps) * math.pi / float(rod.length))
        z_max = float(rod.length) * (1.0 + max(eps_max, 0.0))
        reach = self.radius
        if robot is not None:
            z_max += float(robot.platform.thickness)
            reach = max(reach, 0.5 * float(robot.platform.diameter))
        hi[2] = max(hi[2], z_max)
        lo[2] = min(lo[2], 0.0)
        xy = max(float(np.max(np.abs(lo[:2]))), float(np.max(np.abs(hi[:2]))), reach)
        lo[:2], hi[:2] = -xy, xy
        center = 0.5 * (lo + hi)
        radius = 0.5 * float(np.linalg.norm(hi - lo))
        view_angle = 30.0
        direction = np.array([1.0, -1.6, 0.9])
        direction /= np.linalg.norm(direction)
        distance = 0.9 * radius / math.sin(math.radians(0.5 * view_angle))
        cam = self.plotter.camera
        cam.focal_point = tuple(center)
        cam.position = tuple(center + distance * direction)
        cam.up = (0.0, 0.0, 1.0)
        cam.view_angle = view_angle
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
            q = self.directors[r][i]  # (3, 3, n_elem)
            n1, n2 = _node_frames(q)
            normals = (
                n1.T[:, None, :] * self._cos[None, :, None] + n2.T[:, None, :] * self._sin[None, :, None]
            )  # (n_nodes, n_sides, 3)
            mesh.points[:] = (pos.T[:, None, :] + self.radius * normals).reshape(-1, 3)
            mesh.point_data["Normals"][:] = normals.reshape(-1, 3)
            if self.scalars is not None:
                mesh.point_data[self.color_by][:] = np.repeat(self.scalars[r][i], _N_SIDES)
            mesh.Modified()
        if self.has_platform:
            rot = self.platform_rot[i]
            p = self.platform_pos[i]
            self.platform_mesh.points[:] = self._plat_ref @ rot.T + p
            self.platform_mesh.Modified()
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
            o = np.asarray(origins)
            R = np.asarray(rots)
            new = np.einsum("sij,spj->spi", R, ref) + o[:, None, :]
            mesh.points[:] = new.reshape(-1, 3)
            mesh.Modified()
        if self._text is not None:
            self._text.set_text("upper_left", f"t = {self.times[i]:.2f} s")
        self.index = i

    def image(self) -> NDArray[np.uint8]:
        """The current view as an RGB image ``(height, width, 3)``."""
        self.plotter.render()
        img = self.plotter.screenshot(return_img=True)
        return np.ascontiguousarray(np.asarray(img)[..., :3], dtype=np.uint8)

    def close(self) -> None:
        self.plotter.close()

    def __enter__(self) -> "RobotScene":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------------------------
# public entry points
# --------------------------------------------------------------------------------------------
def render_video(
    diagnostics: pd.DataFrame,
    params: "RobotParams | RodParams",
    path: str | Path,
    *,
    fps: float = 30.0,
    speed: float = 1.0,
    n_frames: int | None = None,
    window_size: tuple[int, int] = (960, 720),
    color_by: str = "handedness",
    show_frames: bool = True,
    still: str | Path | None = None,
    progress: bool = False,
) -> int:
    """Render ``diagnostics`` to an H.264 mp4 at ``path`` (imageio-ffmpeg); return the frame count.

    ``fps`` is the video frame rate (1/s); frames are taken every ``speed / fps`` seconds of
    simulated time (nearest sample), or exactly ``n_frames`` evenly spread samples.  ``still``
    optionally writes a PNG of the final state.  See :class:`RobotScene` for the other options.
    """
    import imageio.v2 as imageio

    if not (fps > 0 and math.isfinite(fps)):
        raise ValueError(f"fps = {fps!r} is invalid: must be a finite number > 0 (1/s)")
    df = diagnostics.reset_index(drop=True)
    times = df["time"].to_numpy() if "time" in df else np.arange(len(df), dtype=np.float64)
    rows = select_frames(times, fps=fps, speed=speed, n_frames=n_frames)
    sub = df.iloc[rows].reset_index(drop=True)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    scene = RobotScene(sub, params, window_size=window_size, color_by=color_by, show_frames=show_frames)
    try:
        writer = imageio.get_writer(
            str(path), fps=float(fps), codec="libx264", macro_block_size=2, quality=7,
            ffmpeg_log_level="error",
        )
        iterator: Any = range(len(sub))
        if progress:
            from tqdm import tqdm

            iterator = tqdm(iterator, desc="render", unit="frame", delay=2.0, disable=not sys.stderr.isatty())
        try:
            for k in iterator:
                scene.update(k)
                writer.append_data(scene.image())
        finally:
            writer.close()
        if still is not None:
            scene.update(len(sub) - 1)
            _write_png(scene.image(), still)
    finally:
        scene.close()
    return int(len(sub))


def _write_png(image: NDArray[np.uint8], path: str | Path) -> Path:
    import imageio.v2 as imageio

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    imageio.imwrite(str(p), image)
    return p


def render_still(
    diagnostics: pd.DataFrame,
    params: "RobotParams | RodParams",
    path: str | Path,
    *,
    index: int = -1,
    window_size: tuple[int, int] = (960, 720),
    color_by: str = "handedness",
    show_frames: bool = True,
) -> Path:
    """Write a PNG of the sample ``index`` (default: the final state) of ``diagnostics``.

    The camera frames the whole run, so stills of one run share the same view.
    """
    scene = RobotScene(diagnostics, params, window_size=window_size, color_by=color_by, show_frames=show_frames)
    try:
        scene.update(index)
        return _write_png(scene.image(), path)
    finally:
        scene.close()
