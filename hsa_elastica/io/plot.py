"""A run directory against time (matplotlib, Agg): four panels sharing the time axis [s].

* platform position x, y, z [mm] in the robot base frame (a stack's top platform);
* platform tilt (angle of its normal from +z) and twist (yaw of its x axis about +z) [deg], the
  definitions of :attr:`hsa_elastica.SteadyStateResult.platform_tilt_rad` / ``_twist_rad``;
* motor angles [deg]: measured (``sensors/motor_angle_{i}``, solid) and commanded
  (``sensors/motor_angle_command_{i}``, dashed, when recorded and finite);
* motor torques [N m] (``sensors/motor_torque_{i}``, positive counter-clockwise seen from the
  tip).

A panel whose columns the run did not record says so instead of plotting.  Motors of a stack
are numbered segment by segment from the bottom (segment 0's rods first).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hsa_elastica.io import render_data as data

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from hsa_elastica.io.rundir import RunData

__all__ = ["run_plot", "write_run_plot"]

_XYZ_COLORS = ("#7b3294", "#c51b7d", "#4d4d4d")  # the world-axis colours of the stills


def run_plot(run: "RunData | str | Path | Any", *, params: Any = None) -> "Figure":
    """The matplotlib figure (not attached to pyplot) of ``run``: a run directory, a
    :class:`RunData`, or a recorded diagnostics frame / result with its ``params``
    (:func:`hsa_elastica.io.view.as_run_data`); see the module docstring."""
    from matplotlib.figure import Figure

    from hsa_elastica.io.view import as_run_data

    run = as_run_data(run, params)
    raw = run.diagnostics.reset_index(drop=True)
    if len(raw) == 0:
        raise ValueError(f"run {str(run.path)!r} has no samples: nothing to plot")
    n_seg = len(run.segments)
    df = data.stack_frame(raw, run.segments)[0] if n_seg else raw
    t = df["time"].to_numpy(dtype=np.float64) if "time" in df else np.arange(len(df), dtype=np.float64)

    fig = Figure(figsize=(10.0, 7.0), layout="constrained")
    axes = fig.subplots(2, 2, sharex=True)
    title, name = data.run_title(run.summary), run.path.resolve().name
    fig.suptitle(f"{title}  ({name})" if title and name else title or name)
    ax_pos, ax_rot, ax_ang, ax_tq = axes[0, 0], axes[0, 1], axes[1, 0], axes[1, 1]
    which = "top platform" if n_seg else "platform"

    if "platform/position_x" in df.columns:
        p = data.block(df, [f"platform/position_{a}" for a in "xyz"]) * 1e3
        for k, (axis, name) in enumerate(zip("xyz", ("east", "north", "up"))):
            ax_pos.plot(t, p[:, k], color=_XYZ_COLORS[k], label=f"{axis} ({name})")
        q = data.block(df, [f"platform/quaternion_{a}" for a in "xyzw"])
        tilt, twist = data.platform_tilt_twist(data.quaternion_to_matrix(q))
        ax_rot.plot(t, np.degrees(tilt), color="#1f4fd8", label="tilt")
        ax_rot.plot(t, np.degrees(twist), color="#e6550d", label="twist")
        ax_pos.legend(loc="best", fontsize="small")
        ax_rot.legend(loc="best", fontsize="small")
    else:
        _missing(ax_pos, "no platform recorded")
        _missing(ax_rot, "no platform recorded")
    ax_pos.set(title=f"{which} position", ylabel="position [mm]")
    ax_rot.set(title=f"{which} orientation", ylabel="angle [deg]")

    angle = data.sensor_series(raw, "motor_angle", n_seg)
    command = data.sensor_series(raw, "motor_angle_command", n_seg)
    torque = data.sensor_series(raw, "motor_torque", n_seg)
    colors = _motor_colors(max((a.shape[1] for a in (angle, torque) if a is not None), default=0))
    if angle is not None:
        for i in range(angle.shape[1]):
            ax_ang.plot(t, np.degrees(angle[:, i]), color=colors[i], label=f"motor {i}")
            if command is not None and i < command.shape[1] and np.isfinite(command[:, i]).any():
                ax_ang.plot(t, np.degrees(command[:, i]), color=colors[i], linestyle="--", linewidth=0.9)
        _legend(ax_ang, angle.shape[1], note="dashed: commanded" if command is not None else None)
    else:
        _missing(ax_ang, "no motor angles recorded")
    if torque is not None:
        for i in range(torque.shape[1]):
            ax_tq.plot(t, torque[:, i], color=colors[i], label=f"motor {i}")
        _legend(ax_tq, torque.shape[1])
    else:
        _missing(ax_tq, "no motor torques recorded")
    ax_ang.set(title="motor angles", ylabel="angle [deg]", xlabel="time [s]")
    ax_tq.set(title="motor torques", ylabel="torque [N m]", xlabel="time [s]")
    for ax in axes.ravel():
        ax.grid(True, alpha=0.3)
        ax.set_xlim(float(t[0]), float(t[-1]) if t[-1] > t[0] else float(t[0]) + 1.0)
    return fig


def _motor_colors(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def _legend(ax: Any, n: int, note: str | None = None) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if note:
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], color="grey", linestyle="--"))
        labels.append(note)
    ax.legend(handles, labels, loc="best", fontsize="small", ncol=2 if n > 4 else 1)


def _missing(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="grey")


def write_run_plot(run: "RunData | str | Path | Any", path: str | Path, *, params: Any = None) -> Path:
    """Write :func:`run_plot` of ``run`` to ``path`` (``.png`` at 120 dpi or ``.svg``; the path
    is checked first and the file written atomically); returns the path."""
    from hsa_elastica.io.render import check_output_path
    from hsa_elastica.params.files import atomic_output

    p = check_output_path(path, "plot")
    fig = run_plot(run, params=params)
    with atomic_output(p, create_parents=True) as tmp:
        fig.savefig(str(tmp), dpi=120, format=p.suffix.lower().lstrip("."))
    return p
