"""``hsa-elastica view`` and ``hsa-elastica plot`` on synthetic run directories (no simulation):
default outputs next to the run, bad input exit 2 with one line, what the figures contain.
The browser side of the view is tests/test_view_browser.py."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hsa_elastica.cli import main
from hsa_elastica.io.rundir import save_run
from test_view_browser import PARAMS, synthetic_run  # tests/ is on sys.path (rootdir conftest)


def stack_run(out: Path) -> Path:
    """A two-segment run directory (``seg{k}/...`` columns, params per segment): the synthetic
    robot twice, the upper one on the lower one's platform."""
    single = pd.read_parquet(synthetic_run(out.parent / "single") / "diagnostics.parquet")
    cols: dict[str, object] = {"time": single["time"]}
    h = single["platform/position_z"].to_numpy() + 0.5 * PARAMS.platform.thickness
    for k in range(2):
        for c in single.columns:
            if c == "time":
                continue
            v = single[c].to_numpy()
            if k == 1 and (c.endswith("position_z") or "/position_z_" in c):
                v = v + h
            cols[f"seg{k}/{c}"] = v
    seg = dataclasses.replace(PARAMS)
    return save_run(out, pd.DataFrame(cols), [seg, seg], {"primitive": "elongation", "magnitude": 0.5})


def test_view_writes_next_to_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = synthetic_run(tmp_path / "run")
    assert main(["view", str(run)]) == 0
    page = (run / "view.html").read_text(encoding="utf-8")
    assert "view written to" in capsys.readouterr().err
    # self-contained: plotly.js inside, no script fetched from elsewhere
    assert len(page) > 3_000_000 and "<script src=" not in page
    # the browser tab names the run: its directory and what it ran (the synthetic summary's)
    head = page[: page.index("</head>")]
    assert head.count("<title>") == 1
    assert "<title>hsa-elastica view: run (elongation, magnitude 1)</title>" in head


def test_plot_png_and_svg(tmp_path: Path) -> None:
    run = synthetic_run(tmp_path / "run")
    assert main(["plot", str(run), "--quiet"]) == 0
    import imageio.v2 as imageio

    img = imageio.imread(str(run / "plot.png"))
    assert img.shape[0] > 500 and img.shape[1] > 800 and img.std() > 10
    assert main(["plot", str(run), "--out", str(tmp_path / "p.svg"), "--quiet"]) == 0
    assert (tmp_path / "p.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")


def test_plot_panels_have_units_and_the_recorded_numbers(tmp_path: Path) -> None:
    from hsa_elastica import run_plot

    fig = run_plot(synthetic_run(tmp_path / "run"))
    axes = fig.axes
    labels = [ax.get_ylabel() for ax in axes]
    # one row per motor (small multiples: motors at the same angle do not hide each other),
    # named with its rod's handedness (R, L, R, L)
    motors = [f"motor {i} ({'RL'[i % 2]})" for i in range(4)]
    assert labels == ["position [mm]", "angle [deg]"] + [
        f"{m}\n{q}" for m in motors for q in ("angle [deg]", "torque [N m]")]
    assert [ax.get_xlabel() for ax in axes[-2:]] == ["time [s]", "time [s]"]
    # the synthetic platform rises to L (1 + 0.3) + t/2 and turns by 0.8 rad; motors reach +-pi
    z = axes[0].lines[2].get_ydata()
    assert z[-1] == pytest.approx((PARAMS.rod.length * 1.3 + 0.5 * PARAMS.platform.thickness) * 1e3)
    twist = axes[1].lines[1].get_ydata()
    assert twist[-1] == pytest.approx(math.degrees(0.8))
    finals = [[line.get_ydata()[-1] for line in ax.lines] for ax in axes[2::2]]
    assert finals == [[180.0], [-180.0], [180.0], [-180.0]]  # measured only: nothing commanded
    assert len({tuple(ax.lines[0].get_color()) for ax in axes[2::2]}) == 4  # a colour each
    assert all("no motor torques recorded" in [t.get_text() for t in ax.texts] for ax in axes[3::2])
    assert "elongation, magnitude 1" in fig.get_suptitle()


def test_plot_shows_the_command_as_applied_over_time(tmp_path: Path) -> None:
    """The dashed line is the angle the motor's schedule imposed at each sample
    (``sensors/motor_angle_imposed_{i}``: here a ramp 0 -> pi over the run), not the ramp's
    target; a run recorded without that column shows the target, labelled so."""
    from hsa_elastica import run_plot

    run = synthetic_run(tmp_path / "run")
    df = pd.read_parquet(run / "diagnostics.parquet")
    t = df["time"].to_numpy()
    for i in range(4):
        df[f"sensors/motor_angle_imposed_{i}"] = math.pi * t * PARAMS.handedness[i]
        df[f"sensors/motor_angle_command_{i}"] = math.pi * PARAMS.handedness[i]
    fig = run_plot(df, params=PARAMS)
    _, commanded = fig.axes[2].lines
    assert commanded.get_label() == "commanded (as applied)" and commanded.get_linestyle() == "--"
    np.testing.assert_allclose(commanded.get_ydata(), 180.0 * t)  # the ramp, degrees
    old = df.drop(columns=[f"sensors/motor_angle_imposed_{i}" for i in range(4)])
    _, target = run_plot(old, params=PARAMS).axes[4].lines
    assert target.get_label() == "target (ramp end)"
    np.testing.assert_allclose(target.get_ydata(), -180.0)


def test_stack_run_is_viewed_and_plotted(tmp_path: Path) -> None:
    from hsa_elastica import run_plot, show

    run = stack_run(tmp_path / "stack")
    fig = show(run)
    rods = [t for t in fig.data if t.name and t.name.endswith("handed rod")]
    platforms = [t for t in fig.data if t.name == "platform"]
    assert len(rods) == 8 and len(platforms) == 2
    plot = run_plot(run)
    assert plot.axes[0].get_title() == "top platform position"
    assert len(plot.axes) == 2 + 2 * 8  # a row for every motor, segment 0 first
    assert plot.axes[-2].get_ylabel() == "motor 7 (L)\nangle [deg]"


@pytest.mark.parametrize(
    "argv, match",
    [
        (["view", "{tmp}/missing"], "does not exist"),
        (["view", "{run}", "--html", "{tmp}/x.htm"], "must end in .html"),
        (["view", "{tmp}/file.txt", "--html", "{tmp}/x.html"], "is not a run directory"),
        (["plot", "{tmp}/missing"], "does not exist"),
        (["plot", "{run}", "--out", "{tmp}/x.pdf"], "must end in .png or .svg"),
        (["plot", "{tmp}", "--out", "{tmp}/x.png"], "has no diagnostics.parquet"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], match: str
) -> None:
    run = synthetic_run(tmp_path / "run")
    (tmp_path / "file.txt").write_text("x")
    args = [a.format(tmp=tmp_path, run=run) for a in argv]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1, err
    assert not list(tmp_path.glob("x.*"))


def test_view_figure_refuses_bad_arguments(tmp_path: Path) -> None:
    from hsa_elastica.io.view import view_figure

    run = synthetic_run(tmp_path / "run")
    with pytest.raises(ValueError, match="max_frames"):
        view_figure(run, max_frames=0)
    with pytest.raises(ValueError, match="target"):
        view_figure(run, target=[0.0, np.nan, 0.1])
    fig = view_figure(run, max_frames=4)
    assert len(fig.frames) == 4 and fig.layout.sliders[0].steps[-1].label == "1.00"


def test_show_displays_inline_in_a_jupyter_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a fresh kernel: `hsa_elastica.show(run)` as a cell's last expression puts the plotly
    # figure (its JSON, which Jupyter draws) into the cell's output
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    import os

    run = synthetic_run(tmp_path / "run")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"import hsa_elastica\nhsa_elastica.show({str(run)!r}, max_frames=3)")]
    root = str(Path(__file__).resolve().parents[1])  # this checkout's package in the kernel
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = nb.cells[0].outputs
    kinds = {k for o in outputs for k in o.get("data", {})}
    assert "application/vnd.plotly.v1+json" in kinds, outputs


def test_show_takes_a_recorded_frame_or_result_with_its_params(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from hsa_elastica import show

    df = pd.read_parquet(synthetic_run(tmp_path / "run") / "diagnostics.parquet")
    fig = show(df, params=PARAMS, max_frames=5)
    assert len(fig.frames) == 5 and sum(t.name == "platform" for t in fig.data) == 1
    result = SimpleNamespace(diagnostics=df, to_json_dict=lambda: {"motor_angles_rad": [0, 0, math.pi, -math.pi]})
    assert "motor angles 0, 0, 180, -180 deg" in show(result, params=PARAMS).layout.title.text
    with pytest.raises(ValueError, match="record=True"):
        show(SimpleNamespace(diagnostics=None))


def test_run_plot_takes_a_recorded_frame_with_its_params(tmp_path: Path) -> None:
    from hsa_elastica import run_plot

    df = pd.read_parquet(synthetic_run(tmp_path / "run") / "diagnostics.parquet")
    fig = run_plot(df, params=PARAMS)
    assert len(fig.axes) == 2 + 2 * 4 and fig.axes[0].get_title() == "platform position"
