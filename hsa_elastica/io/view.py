"""The interactive 3D view of a run: one self-contained HTML page (plotly), or the same figure
inline in Jupyter (:func:`hsa_elastica.show`).

What it draws, in millimetres in the robot base frame (x = east, y = north, z = up):

* each rod as a tube of its outer radius along its recorded centreline, coloured by handedness
  (right-handed orange, left-handed teal: the colours of the stills and videos,
  :data:`hsa_elastica.io.render_scene.HANDEDNESS_COLORS`);
* the platform (and the lower platforms of a multi-segment stack) as a disk of the platform's
  diameter and thickness at its recorded pose, and the base plate as a grey disk at z = 0;
* a motor "clock hand" at each rod's base: a black line along the base element's local x
  (``d1``), which the motor turns, beside a grey line at its orientation at t = 0, so the angle
  between the two is the motor angle (the value, from ``sensors/motor_angle_{i}``, is in the
  hover text and the title);
* the world of a robot with an environment (``RobotParams.environment``): fixed obstacles (a
  plane as a square patch under the robot, spheres, capsules) in grey, free objects in magenta
  at their recorded poses, and the contact forces as lines from the contact's deepest point
  (blue: sticking, red: sliding; the scale, ``10 mm = F N``, in the legend), as the videos
  draw them (:mod:`hsa_elastica.io.render_world`);
* the target as a red diamond when the run has one: ``summary.json`` key
  ``target_position_m`` (constant) or columns ``target/position_{x|y|z}`` (m, per sample);
* a time slider and a play button (frames: at most ``max_frames`` recorded samples spread
  evenly over the run, the last one the final state); rotate, zoom and pan with the mouse.

The axes' ranges are fixed over the whole run (the scene does not rescale between frames).
The page embeds plotly.js (about 4.7 MB), so it opens offline and can be sent as one file.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.io import render_data as data
from hsa_elastica.io import view_world
from hsa_elastica.io.render_world import world_of

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

    from hsa_elastica.io.rundir import RunData

__all__ = ["view_figure", "write_view_html", "show", "as_run_data", "DEFAULT_MAX_FRAMES", "DIV_ID"]

DEFAULT_MAX_FRAMES = 120  # frames of the slider: enough for a smooth scrub, a few MB of page
DIV_ID = "hsa-elastica-view"  # the plot's element id in the page (the browser test finds it)
TARGET_COLOR = "#e31a1c"  # as the Gymnasium env's rendered target
PLATFORM_COLOR = "#9e9e9e"
GROUND_COLOR = "#636363"
MOTOR_COLOR = "#111111"
MOTOR_ZERO_COLOR = "#9e9e9e"
_SIDES = 12  # tube cross-section resolution
_DISK_SIDES = 40
_MM = 1e3  # the view is in millimetres


def as_run_data(run: Any, params: Any = None) -> "RunData":
    """A :class:`RunData` from a run directory, a RunData, or a diagnostics DataFrame / a
    result with ``.diagnostics`` (``SteadyStateResult``, ``StackSteadyStateResult``) and
    ``params`` (RobotParams, or a stack's list of them, bottom first; default the paper robot)."""
    import pandas as pd

    from hsa_elastica.io.rundir import RunData, load_run
    from hsa_elastica.params import RobotParams

    if isinstance(run, RunData):
        return run
    if isinstance(run, (str, Path)):
        return load_run(run)
    diagnostics = run if isinstance(run, pd.DataFrame) else getattr(run, "diagnostics", None)
    if not isinstance(diagnostics, pd.DataFrame):
        raise ValueError(
            f"run = {type(run).__name__} is invalid: give a run directory, a RunData, a "
            "diagnostics DataFrame or a result recorded with record=True"
        )
    segments: tuple[Any, ...] = tuple(params) if isinstance(params, (list, tuple)) else ()
    robot = segments[0] if segments else (params if params is not None else RobotParams())
    summary: dict[str, Any] = {}
    to_json = getattr(run, "to_json_dict", None)
    if callable(to_json):
        summary = dict(to_json())
    return RunData(path=Path("."), diagnostics=diagnostics, params=robot, summary=summary,
                   segments=segments)


def _tube_triangles(n_nodes: int, sides: int) -> NDArray[np.int32]:
    """Triangles ``(m, 3)`` of a tube of ``n_nodes`` rings of ``sides`` vertices each."""
    k = np.arange(n_nodes - 1)[:, None]
    j = np.arange(sides)[None, :]
    a = k * sides + j
    b = k * sides + (j + 1) % sides
    c, d = b + sides, a + sides
    tri = np.concatenate([np.stack([a, b, c], -1), np.stack([a, c, d], -1)], axis=1)
    return tri.reshape(-1, 3).astype(np.int32)


def _tube_vertices(pos: NDArray[np.float64], dirs: NDArray[np.float64], radius: float) -> NDArray[np.float64]:
    """Vertices ``(n_nodes * sides, 3)`` of a tube around the nodes ``pos`` (3, n_nodes) with
    cross-section axes from the element directors ``dirs`` (3, 3, n_elem)."""
    from hsa_elastica.io.render_scene import _node_frames

    n1, n2 = _node_frames(dirs)
    a = 2.0 * np.pi * np.arange(_SIDES) / _SIDES
    normals = n1.T[:, None, :] * np.cos(a)[None, :, None] + n2.T[:, None, :] * np.sin(a)[None, :, None]
    return (pos.T[:, None, :] + radius * normals).reshape(-1, 3)


def _disk(radius: float, thickness: float) -> tuple[NDArray[np.float64], NDArray[np.int32]]:
    """Vertices (body frame, centred) and triangles of a closed disk (a short cylinder)."""
    a = 2.0 * np.pi * np.arange(_DISK_SIDES) / _DISK_SIDES
    ring = np.column_stack([radius * np.cos(a), radius * np.sin(a), np.zeros_like(a)])
    h = 0.5 * thickness
    verts = np.vstack([ring - [0, 0, h], ring + [0, 0, h], [[0, 0, -h], [0, 0, h]]])
    n = _DISK_SIDES
    j = np.arange(n)
    jn = (j + 1) % n
    side = np.concatenate([np.stack([j, jn, jn + n], 1), np.stack([j, jn + n, j + n], 1)])
    caps = np.concatenate([np.stack([np.full(n, 2 * n), jn, j], 1), np.stack([np.full(n, 2 * n + 1), j + n, jn + n], 1)])
    return verts, np.concatenate([side, caps]).astype(np.int32)


def _mesh(verts: NDArray[np.float64], tri: NDArray[np.int32], **kw: Any) -> "go.Mesh3d":
    import plotly.graph_objects as go

    v = (verts * _MM).astype(np.float32)
    return go.Mesh3d(x=v[:, 0], y=v[:, 1], z=v[:, 2], i=tri[:, 0], j=tri[:, 1], k=tri[:, 2],
                     flatshading=False, lighting=dict(ambient=0.55, diffuse=0.7, specular=0.15), **kw)


def _xyz(verts: NDArray[np.float64]) -> dict[str, NDArray[np.float32]]:
    v = (verts * _MM).astype(np.float32)
    return dict(x=v[:, 0], y=v[:, 1], z=v[:, 2])


def _segments(starts: NDArray[np.float64], ends: NDArray[np.float64]) -> dict[str, list[float | None]]:
    """x, y, z lists [mm] of line segments ``starts[k] -> ends[k]`` separated by gaps."""
    out: dict[str, list[float | None]] = {"x": [], "y": [], "z": []}
    for s, e in zip(starts, ends):
        for axis, key in enumerate("xyz"):
            out[key] += [round(float(s[axis]) * _MM, 3), round(float(e[axis]) * _MM, 3), None]
    return out


class _Scene:
    """The recorded data of a run at the frames the view shows (SI units, as recorded; the
    figure converts to mm): rod centrelines ``pos[r]`` (n_f, 3, n_nodes) and directors
    ``dirs[r]``, platform poses, motor angles [rad] (None if not recorded), the target [m] and
    the fixed meshes (platform disk, base plate)."""

    def __init__(self, run: "RunData", max_frames: int, target: Any) -> None:
        raw = run.diagnostics.reset_index(drop=True)
        if len(raw) == 0:
            raise ValueError(f"run {str(run.path)!r} has no samples: nothing to show")
        n_seg = len(run.segments)
        df, params = data.stack_frame(raw, run.segments) if n_seg else (raw, run.params)
        self.times = (df["time"].to_numpy(dtype=np.float64) if "time" in df
                      else np.arange(len(df), dtype=np.float64))
        self.rows = np.unique(data.select_frames(self.times, n_frames=min(int(max_frames), len(df))))
        rows = self.rows
        self.prefixes = data.rod_prefixes(df)
        self.pos = [data.positions(df, p)[rows] for p in self.prefixes]  # (n_f, 3, n_nodes)
        self.n_nodes = self.pos[0].shape[2]
        self.dirs = [data.directors(df, p, self.n_nodes - 1)[rows] for p in self.prefixes]
        self.hand = list(params.handedness)
        self.radius = float(params.rod.outer_radius)
        motor = data.sensor_series(raw, "motor_angle", n_seg)
        self.motor = motor[rows] if motor is not None and motor.shape[1] == len(self.prefixes) else None
        self.platforms: list[tuple[NDArray[np.float64], NDArray[np.float64]]] = []
        for key in [f"platform{k}/" for k in range(max(0, n_seg - 1))] + ["platform/"]:
            if f"{key}position_x" in df.columns:
                p = data.block(df, [f"{key}position_{a}" for a in "xyz"])[rows]
                q = data.block(df, [f"{key}quaternion_{a}" for a in "xyzw"])[rows]
                self.platforms.append((p, data.quaternion_to_matrix(q)))
        self.disk_v, self.disk_t = _disk(0.5 * float(params.platform.diameter), float(params.platform.thickness))
        ground_r = max(float(params.circle_radius) + 2.0 * self.radius, 0.5 * float(params.platform.diameter))
        ground_v, self.ground_t = _disk(ground_r, 0.003)
        self.ground_v = ground_v - [0.0, 0.0, 0.0015]
        self.tgt = _target(run, df, rows, target)
        self.world = None if n_seg else world_of(df.iloc[rows].reset_index(drop=True), params)
        self.title = data.run_title(run.summary)
        self.hand_len = 4.0 * self.radius  # from the rod's axis: 3 radii show outside the tube
        self.d1_0 = np.array([dd[0][0, :, 0] for dd in self.dirs])
        # the motor's zero turns with the body it is bolted to: the base plate (fixed) for the
        # bottom segment, the platform below for segment k > 0 of a stack
        per_seg = int(run.segments[0].n_rods) if n_seg else len(self.pos)
        plats = self.platforms
        self.mounts: list[NDArray[np.float64] | None] = [
            None if r // per_seg == 0 or r // per_seg > len(plats) - 1
            else plats[r // per_seg - 1][1] @ plats[r // per_seg - 1][1][0].T
            for r in range(len(self.pos))
        ]

    def zero_trace(self, f: int) -> dict[str, Any]:
        """The motors' zero lines at frame ``f`` (mm)."""
        base = np.array([pp[f][:, 0] for pp in self.pos])
        zero = np.array([self.d1_0[r] if m is None else m[f] @ self.d1_0[r]
                         for r, m in enumerate(self.mounts)])
        return _segments(base, base + self.hand_len * zero)

    def motor_trace(self, f: int) -> dict[str, Any]:
        """The motors' clock hands (base ``d1``) at frame ``f`` (mm), with hover text."""
        base = np.array([pp[f][:, 0] for pp in self.pos])
        d1 = np.array([dd[f][0, :, 0] for dd in self.dirs])
        seg = _segments(base, base + self.hand_len * d1)
        if self.motor is None:
            text = [f"rod {r} base" for r in range(len(self.pos))]
        else:
            text = [f"motor {r}: {math.degrees(self.motor[f, r]):.1f} deg" for r in range(len(self.pos))]
        seg["text"] = [t for t in text for _ in range(3)]  # type: ignore[misc]
        return seg

    def frame_title(self, f: int) -> str:
        parts = [self.title] if self.title else []
        parts.append(f"t = {self.times[self.rows[f]]:.3f} s")
        if self.motor is not None:
            parts.append("motors " + ", ".join(f"{math.degrees(a):.0f}" for a in self.motor[f]) + " deg")
        return "  |  ".join(parts)

    def moving_target(self) -> bool:
        return self.tgt is not None and len(self.tgt) > 1


def _initial_traces(sc: _Scene) -> tuple[list[Any], int, int | None]:
    """The traces at frame 0: the dynamic ones first (rods, platforms, motor hands and zeros),
    then the target and the base plate; returns them, the number of dynamic ones and the
    target's index (None without a target)."""
    import plotly.graph_objects as go

    from hsa_elastica.io.render_scene import HANDEDNESS_COLORS, HANDEDNESS_LABELS

    tube_tri = _tube_triangles(sc.n_nodes, _SIDES)
    traces: list[Any] = []
    shown: set[int] = set()
    for r in range(len(sc.prefixes)):
        h = int(sc.hand[r])
        traces.append(_mesh(
            _tube_vertices(sc.pos[r][0], sc.dirs[r][0], sc.radius), tube_tri, color=HANDEDNESS_COLORS[h],
            name=f"{HANDEDNESS_LABELS[h]} rod", legendgroup=f"hand{h}", showlegend=h not in shown,
            hovertemplate=f"rod {r} ({HANDEDNESS_LABELS[h]})<extra></extra>",
        ))
        shown.add(h)
    for k, (p, rot) in enumerate(sc.platforms):
        traces.append(_mesh(sc.disk_v @ rot[0].T + p[0], sc.disk_t, color=PLATFORM_COLOR, opacity=0.9,
                            name="platform", legendgroup="platform", showlegend=k == 0,
                            hovertemplate="platform<extra></extra>"))
    traces.append(go.Scatter3d(
        mode="lines+markers", line=dict(color=MOTOR_COLOR, width=7), marker=dict(size=2.5, color=MOTOR_COLOR),
        name="motor angle (base d1)", hovertemplate="%{text}<extra></extra>", **sc.motor_trace(0),
    ))
    traces.append(go.Scatter3d(
        mode="lines", line=dict(color=MOTOR_ZERO_COLOR, width=4), name="motor angle 0",
        hoverinfo="skip", **sc.zero_trace(0),
    ))
    if sc.world is not None:
        traces += view_world.dynamic_traces(sc.world, 0, float(sc.radius))
    n_dynamic = len(traces)
    tgt_index = None
    tgt = sc.tgt
    if tgt is not None:
        tgt_index = len(traces)
        traces.append(go.Scatter3d(
            mode="markers", marker=dict(symbol="diamond", size=7, color=TARGET_COLOR),
            name="target", x=[tgt[0, 0] * _MM], y=[tgt[0, 1] * _MM], z=[tgt[0, 2] * _MM],
            hovertemplate="target (%{x:.1f}, %{y:.1f}, %{z:.1f}) mm<extra></extra>",
        ))
    traces.append(_mesh(sc.ground_v, sc.ground_t, color=GROUND_COLOR, name="base", showlegend=False,
                        hoverinfo="skip"))
    if sc.world is not None:
        traces += view_world.obstacle_traces(sc.world)
    return traces, n_dynamic, tgt_index


def _frames(sc: _Scene, dynamic: list[int]) -> list[Any]:
    """One plotly frame per shown sample: the dynamic traces ``dynamic`` and the title."""
    import plotly.graph_objects as go

    frames = []
    for f in range(len(sc.rows)):
        fdata: list[Any] = [
            go.Mesh3d(**_xyz(_tube_vertices(sc.pos[r][f], sc.dirs[r][f], sc.radius)))
            for r in range(len(sc.pos))
        ]
        fdata += [go.Mesh3d(**_xyz(sc.disk_v @ rot[f].T + p[f])) for p, rot in sc.platforms]
        fdata.append(go.Scatter3d(**sc.motor_trace(f)))
        fdata.append(go.Scatter3d(**sc.zero_trace(f)))
        if sc.world is not None:
            fdata += view_world.dynamic_traces(sc.world, f, float(sc.radius), style=False)
        if sc.moving_target():
            assert sc.tgt is not None
            t = sc.tgt
            fdata.append(go.Scatter3d(x=[t[f, 0] * _MM], y=[t[f, 1] * _MM], z=[t[f, 2] * _MM]))
        frames.append(go.Frame(data=fdata, traces=dynamic, name=str(f),
                               layout=go.Layout(title_text=sc.frame_title(f))))
    return frames


def _scene_layout(sc: _Scene) -> dict[str, Any]:
    """The 3D scene with axes fixed over the whole run (mm, 5 % margin, true aspect)."""
    pts = [np.concatenate([p.transpose(0, 2, 1).reshape(-1, 3) for p in sc.pos]), sc.ground_v]
    for p, rot in sc.platforms:
        pts.append((np.einsum("tij,pj->tpi", rot, sc.disk_v) + p[:, None, :]).reshape(-1, 3))
    if sc.tgt is not None:
        pts.append(sc.tgt)
    if sc.world is not None:
        pts.append(view_world.frame_points(sc.world, float(sc.radius)))
    allp = np.concatenate(pts) * _MM
    lo, hi = allp.min(axis=0) - sc.radius * _MM, allp.max(axis=0) + sc.radius * _MM
    span = hi - lo
    pad = 0.05 * float(span.max())
    lo, hi = lo - pad, hi + pad
    span = hi - lo
    ratio = span / span.max()
    return dict(
        domain=dict(x=[0.0, 1.0], y=[0.11, 1.0]),  # the slider and buttons below
        xaxis=dict(title="x east [mm]", range=[lo[0], hi[0]], autorange=False),
        yaxis=dict(title="y north [mm]", range=[lo[1], hi[1]], autorange=False),
        zaxis=dict(title="z up [mm]", range=[lo[2], hi[2]], autorange=False),
        aspectmode="manual", aspectratio=dict(x=ratio[0], y=ratio[1], z=ratio[2]),
        camera=dict(eye=dict(x=1.0, y=-1.6, z=0.9), up=dict(x=0, y=0, z=1)),
    )


def _player(sc: _Scene) -> dict[str, Any]:
    """The play / pause buttons and the time slider (layout entries)."""
    step_ms = _frame_duration_ms(sc.times[sc.rows])
    animate = dict(mode="immediate", frame=dict(duration=0, redraw=True), transition=dict(duration=0))
    return dict(
        updatemenus=[dict(
            type="buttons", direction="left", x=0.01, y=0.02, xanchor="left", yanchor="bottom",
            pad=dict(r=8, t=8), showactive=False,
            buttons=[
                dict(label="\u25b6 play", method="animate", args=[None, dict(
                    mode="immediate", fromcurrent=True, frame=dict(duration=step_ms, redraw=True),
                    transition=dict(duration=0))]),
                dict(label="\u275a\u275a pause", method="animate", args=[[None], animate]),
            ],
        )],
        sliders=[dict(
            active=0, x=0.18, y=0.02, len=0.8, xanchor="left", yanchor="bottom", pad=dict(t=8, b=4),
            currentvalue=dict(prefix="t = ", suffix=" s", visible=True),
            steps=[dict(method="animate", label=f"{sc.times[r]:.2f}", args=[[str(f)], animate])
                   for f, r in enumerate(sc.rows)],
        )],
    )


def view_figure(
    run: Any, *, params: Any = None, max_frames: int = DEFAULT_MAX_FRAMES, target: Any = None,
    height: int = 720,
) -> "go.Figure":
    """The interactive plotly figure of a run: a run directory, a loaded
    :class:`~hsa_elastica.io.rundir.RunData`, or in Python a diagnostics DataFrame or a result
    recorded with ``record=True`` together with its ``params`` (a stack: the list of segment
    parameters, bottom first); see the module docstring for what it shows.

    ``target``: a point [m] drawn as the target (overrides the run's own); ``max_frames``
    (>= 1): the most samples the slider steps through.  Raises ``ValueError`` (one line) for
    a run that cannot be drawn, :class:`FileNotFoundError` for a missing run directory."""
    import plotly.graph_objects as go

    if isinstance(max_frames, bool) or not isinstance(max_frames, (int, np.integer)) or max_frames < 1:
        raise ValueError(f"max_frames = {max_frames!r} is invalid: must be an integer >= 1")
    sc = _Scene(as_run_data(run, params), max_frames, target)
    traces, n_dynamic, tgt_index = _initial_traces(sc)
    dynamic = list(range(n_dynamic)) + ([tgt_index] if sc.moving_target() and tgt_index is not None else [])
    fig = go.Figure(data=traces, frames=_frames(sc, dynamic))
    fig.update_layout(
        title=dict(text=sc.frame_title(len(sc.rows) - 1 if len(sc.rows) == 1 else 0), x=0.01,
                   font=dict(size=15)),
        height=height, margin=dict(l=0, r=0, t=40, b=0), paper_bgcolor="white",
        legend=dict(x=0.01, y=0.95, bgcolor="rgba(255,255,255,0.8)"),
        scene=_scene_layout(sc),
        uirevision="keep",  # the user's rotation and zoom survive the frames
    )
    fig.update_layout(**_player(sc))
    return fig


def _frame_duration_ms(t: NDArray[np.float64]) -> int:
    """Play-back time per frame [ms]: a quarter of real time (the videos' default speed 0.25),
    at least 40 ms (a 3D redraw takes about that long)."""
    if t.size < 2:
        return 100
    return int(max(40.0, 1e3 * float(np.median(np.diff(t))) / 0.25))


def _target(run: "RunData", df: Any, rows: NDArray[np.int64], target: Any) -> NDArray[np.float64] | None:
    """The target [m] as ``(1, 3)`` (constant) or ``(n_frames, 3)``, or None."""
    if target is None and "target/position_x" in df.columns:
        return data.block(df, [f"target/position_{a}" for a in "xyz"])[rows]
    if target is None:
        target = run.summary.get("target_position_m") if isinstance(run.summary, dict) else None
    if target is None:
        return None
    t = np.asarray(target, dtype=np.float64).reshape(-1)
    if t.shape != (3,) or not np.all(np.isfinite(t)):
        raise ValueError(f"target = {target!r} is invalid: must be three finite numbers (x, y, z in m)")
    return t[None, :]


def write_view_html(run: Any, path: str | Path, **kw: Any) -> Path:
    """Write :func:`view_figure` of ``run`` as one self-contained HTML page (plotly.js embedded)
    to ``path`` (``.html``; checked first, written atomically); returns the path."""
    from hsa_elastica.io.render import check_output_path
    from hsa_elastica.params.files import atomic_output

    p = check_output_path(path, "page")
    run_data = as_run_data(run, kw.pop("params", None))
    fig = view_figure(run_data, **kw)
    page = fig.to_html(
        include_plotlyjs=True, full_html=True, auto_play=False, div_id=DIV_ID,
        config=dict(displaylogo=False, responsive=True),
    )
    title = f"<title>{html.escape(page_title(run_data))}</title>"
    page = page.replace("<head>", "<head>" + title, 1) if "<head>" in page else title + page
    with atomic_output(p, create_parents=True) as tmp:
        Path(tmp).write_text(page, encoding="utf-8")
    return p


def page_title(run: RunData) -> str:
    """The browser tab's title of a run's page: the run directory's name and the run's title
    (``"hsa-elastica view: bend_run (bend_north, magnitude 1)"``)."""
    name = Path(str(run.path)).name if getattr(run, "path", None) else ""
    what = data.run_title(run.summary)
    label = " ".join(x for x in (name, f"({what})" if what and name else what) if x)
    return f"hsa-elastica view: {label}" if label else "hsa-elastica view"


def show(run: Any, **kw: Any) -> "go.Figure":
    """The interactive view of ``run`` (a run directory, :class:`RunData`, or a recorded
    result / diagnostics DataFrame with ``params=``) as a plotly figure: displayed inline when
    it is the last expression of a Jupyter cell; ``.show()`` opens it in a browser elsewhere.
    Keywords as :func:`view_figure`."""
    return view_figure(run, **kw)
