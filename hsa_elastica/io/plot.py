"""A run directory against time (matplotlib, Agg), every panel sharing the time axis [s].

Top row:

* platform position x, y, z [mm] in the robot base frame (a stack's top platform);
* platform tilt (angle of its normal from +z) and twist (yaw of its x axis about +z) [deg], the
  definitions of :attr:`hsa_elastica.SteadyStateResult.platform_tilt_rad` / ``_twist_rad``.

Below, one row per motor (small multiples, so that motors at the same angle, e.g. the two
unactuated rods of a bend, do not hide each other), each in its own colour and named with its
rod's handedness:

* left, its angle [deg]: measured (``sensors/motor_angle_{i}``, solid) and commanded as the
  run applied it (``sensors/motor_angle_imposed_{i}``, the ramp included; black, dashed); a
  run recorded before that column existed shows the ramp's target
  (``sensors/motor_angle_command_{i}``) instead, labelled "target";
* right, its torque [N m] (``sensors/motor_torque_{i}``, positive counter-clockwise seen from
  the tip).

A panel whose columns the run did not record says so instead of plotting.  Motors of a stack
are numbered segment by segment from the bottom (segment 0's rods first).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.io import render_data as data

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from hsa_elastica.io.rundir import RunData

__all__ = ["run_plot", "write_run_plot"]

_XYZ_COLORS = ("#7b3294", "#c51b7d", "#4d4d4d")  # the world-axis colours of the stills
_COMMAND_COLOR = "#111111"


def run_plot(run: RunData | str | Path | Any, *, params: Any = None) -> Figure:
    """The matplotlib figure (not attached to pyplot) of ``run``: a run directory, a
    :class:`RunData`, or a recorded diagnostics frame / result with its ``params``
    (:func:`hsa_elastica.io.view.as_run_data`); see the module docstring.  ``fig.axes``: the
    position and orientation panels, then each motor's angle and torque panels in turn."""
    from matplotlib.figure import Figure

    from hsa_elastica.io.view import as_run_data

    run = as_run_data(run, params)
    raw = run.diagnostics.reset_index(drop=True)
    if len(raw) == 0:
        raise ValueError(f"run {str(run.path)!r} has no samples: nothing to plot")
    n_seg = len(run.segments)
    df = data.stack_frame(raw, run.segments)[0] if n_seg else raw
    t = df["time"].to_numpy(dtype=np.float64) if "time" in df else np.arange(len(df), dtype=np.float64)
    motors = _motor_series(raw, n_seg)
    n_rows = max((a.shape[1] for a in motors.values() if a is not None), default=0)

    fig = Figure(figsize=(10.0, 3.6 + 1.25 * max(n_rows, 1)), layout="constrained")
    grid = fig.add_gridspec(1 + max(n_rows, 1), 2, height_ratios=[3.0] + [1.0] * max(n_rows, 1))
    ax_pos = fig.add_subplot(grid[0, 0])
    ax_rot = fig.add_subplot(grid[0, 1], sharex=ax_pos)
    title, name = data.run_title(run.summary), run.path.resolve().name
    fig.suptitle(f"{title}  ({name})" if title and name else title or name)
    _platform_panels(df, t, ax_pos, ax_rot, "top platform" if n_seg else "platform")
    # one y range per column (the motors compare at a glance; round-off is not magnified)
    rows: list[tuple[Axes, Axes]] = []
    for r in range(max(n_rows, 1)):
        share = rows[0] if rows else (None, None)
        rows.append((fig.add_subplot(grid[1 + r, 0], sharex=ax_pos, sharey=share[0]),
                     fig.add_subplot(grid[1 + r, 1], sharex=ax_pos, sharey=share[1])))
    hands = [h for seg in (run.segments or (run.params,)) for h in seg.handedness]
    _motor_panels(t, motors, rows, hands)
    for ax in fig.axes:
        ax.grid(True, alpha=0.3)
        ax.set_xlim(float(t[0]), float(t[-1]) if t[-1] > t[0] else float(t[0]) + 1.0)
    for ax in fig.axes[:-2]:
        ax.tick_params(labelbottom=False)
    for ax in fig.axes[-2:]:
        ax.set_xlabel("time [s]")
    return fig


def _motor_series(raw: Any, n_seg: int) -> dict[str, NDArray[np.float64] | None]:
    out = {stem: data.sensor_series(raw, stem, n_seg)
           for stem in ("motor_angle", "motor_angle_imposed", "motor_angle_command", "motor_torque")}
    for stem in ("motor_angle_imposed", "motor_angle_command"):
        series = out[stem]
        if series is not None and not np.isfinite(series).any():
            out[stem] = None  # torque drives only: nothing commanded in angle
    return out


def _platform_panels(df: Any, t: NDArray[np.float64], ax_pos: Axes, ax_rot: Axes, which: str) -> None:
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


def _motor_panels(t: NDArray[np.float64], motors: dict[str, NDArray[np.float64] | None],
                  rows: list[tuple[Axes, Axes]], hands: list[int]) -> None:
    """Row ``i``: motor ``i``'s angle (measured, commanded) and torque."""
    angle, torque = motors["motor_angle"], motors["motor_torque"]
    command, label = motors["motor_angle_imposed"], "commanded (as applied)"
    if command is None:  # recorded before the imposed angle was: the ramp's target
        command, label = motors["motor_angle_command"], "target (ramp end)"
    colors = _motor_colors(len(rows))
    for i, (ax_a, ax_t) in enumerate(rows):
        hand = f" ({'R' if hands[i] > 0 else 'L'})" if i < len(hands) else ""
        ax_a.set_ylabel(f"motor {i}{hand}\nangle [deg]")
        ax_t.set_ylabel(f"motor {i}{hand}\ntorque [N m]")
        if angle is not None and i < angle.shape[1]:
            ax_a.plot(t, np.degrees(angle[:, i]), color=colors[i], linewidth=2.2, label="measured")
            if command is not None and i < command.shape[1] and np.isfinite(command[:, i]).any():
                ax_a.plot(t, np.degrees(command[:, i]), color=_COMMAND_COLOR, linestyle="--",
                          linewidth=1.0, label=label)
        else:
            _missing(ax_a, "no motor angles recorded")
        if torque is not None and i < torque.shape[1]:
            ax_t.plot(t, torque[:, i], color=colors[i], linewidth=2.2, label=f"motor {i}")
        else:
            _missing(ax_t, "no motor torques recorded")
    rows[0][0].set_title("motor angles")
    rows[0][1].set_title("motor torques")
    if rows[0][0].lines:
        rows[0][0].legend(loc="best", fontsize="x-small")


def _motor_colors(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def _missing(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="grey")


def write_run_plot(run: RunData | str | Path | Any, path: str | Path, *, params: Any = None) -> Path:
    """Write :func:`run_plot` of ``run`` to ``path`` (``.png`` at 120 dpi or ``.svg``; the path
    is checked first and the file written atomically); returns the path."""
    from hsa_elastica.io.render import check_output_path
    from hsa_elastica.params.files import atomic_output

    p = check_output_path(path, "plot")
    fig = run_plot(run, params=params)
    with atomic_output(p, create_parents=True) as tmp:
        fig.savefig(str(tmp), dpi=120, format=p.suffix.lower().lstrip("."))
    return p
