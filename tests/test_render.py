"""Headless rendering tests (pyvista off screen + imageio-ffmpeg).

The input is a synthetic diagnostics frame in the contract format (docs/architecture.md): four
straight rods on the paper's circle that elongate by up to 30 % and twist, with the platform on
their tips rotating about +z, so every frame differs from the previous one by construction.
"""

from __future__ import annotations

import math

import imageio.v2 as imageio
import numpy as np
import pandas as pd
import pytest

from hsa_elastica.params import RobotParams
from hsa_elastica.io import render as render_mod
from hsa_elastica.io.render import (
    check_output_path,
    check_video_options,
    quaternion_to_matrix,
    render_still,
    render_video,
    select_frames,
)
from hsa_elastica.io.render_data import RodsView, frame_times, resample
from hsa_elastica.io.render_scene import (
    AXIS_COLORS,
    HANDEDNESS_COLORS,
    WORLD_AXIS_COLORS,
    RobotScene,
)
from hsa_elastica.io.render_layout import colorbar_ticks

PARAMS = RobotParams()
N_ELEM = PARAMS.rod.n_elements
L = PARAMS.rod.length


def synthetic_diagnostics(n_t: int = 20, t_end: float = 1.0) -> pd.DataFrame:
    """Rods elongating from 0 to 30 % and twisting, platform on top rotating about +z."""
    rows = []
    for t in np.linspace(0.0, t_end, n_t):
        s = t / t_end
        eps = 0.3 * s
        twist = 0.8 * s  # rad at the tip
        row: dict[str, float] = {"time": float(t)}
        for i in range(PARAMS.n_rods):
            bx, by, _ = PARAMS.rod_base(i)
            a = PARAMS.rod_angle(i)
            z = np.linspace(0.0, L * (1 + eps), N_ELEM + 1)
            for k in range(N_ELEM + 1):
                row[f"rod{i}/position_x_{k}"] = bx
                row[f"rod{i}/position_y_{k}"] = by
                row[f"rod{i}/position_z_{k}"] = z[k]
            for k in range(N_ELEM):
                b = a + twist * (k + 0.5) / N_ELEM
                q = np.array([[math.cos(b), math.sin(b), 0], [-math.sin(b), math.cos(b), 0], [0, 0, 1]])
                for r in range(3):
                    for c in range(3):
                        row[f"rod{i}/director_{r}{c}_{k}"] = q[r, c]
                row[f"rod{i}/rest_length_{k}"] = L / N_ELEM * (1 + eps)
        row["platform/position_x"] = 0.0
        row["platform/position_y"] = 0.0
        row["platform/position_z"] = L * (1 + eps) + 0.5 * PARAMS.platform.thickness
        row["platform/quaternion_x"] = 0.0
        row["platform/quaternion_y"] = 0.0
        row["platform/quaternion_z"] = math.sin(0.5 * twist)
        row["platform/quaternion_w"] = math.cos(0.5 * twist)
        rows.append(row)
    return pd.DataFrame(rows)


def test_quaternion_to_matrix_closed_form() -> None:
    # rotation by theta about z: q = (0, 0, sin(theta/2), cos(theta/2))
    th = 0.7
    m = quaternion_to_matrix(np.array([0.0, 0.0, math.sin(th / 2), math.cos(th / 2)]))
    c, s = math.cos(th), math.sin(th)
    np.testing.assert_allclose(m, [[c, -s, 0], [s, c, 0], [0, 0, 1]], atol=1e-15)
    # about x by 90 deg maps body y onto lab z
    m = quaternion_to_matrix(np.array([math.sin(math.pi / 4), 0, 0, math.cos(math.pi / 4)]))
    np.testing.assert_allclose(m @ [0, 1, 0], [0, 0, 1], atol=1e-15)


def test_select_frames() -> None:
    t = np.arange(0.0, 1.0 + 1e-9, 0.01)  # 101 samples at 100 Hz
    idx = select_frames(t, fps=10.0)
    np.testing.assert_array_equal(idx, np.arange(0, 101, 10))  # one frame per 0.1 s
    idx = select_frames(t, fps=10.0, speed=0.5)  # slow motion: one frame per 0.05 s
    assert idx.size == 21 and idx[1] == 5
    np.testing.assert_array_equal(select_frames(t, n_frames=3), [0, 50, 100])
    # the final state is always shown, even off the frame grid (e.g. a stop at t = 0.425 s)
    t2 = np.append(np.arange(0.0, 0.42 + 1e-9, 0.01), 0.425)
    idx = select_frames(t2, fps=10.0)
    np.testing.assert_array_equal(idx, [0, 10, 20, 30, 40, 43])
    with pytest.raises(ValueError, match="fps"):
        select_frames(t, fps=0.0)


def test_video_decodes_with_expected_frames(tmp_path) -> None:
    df = synthetic_diagnostics()
    out = tmp_path / "clip.mp4"
    still = tmp_path / "final.png"
    n = render_video(df, PARAMS, out, fps=8, n_frames=8, hold=0.0, window_size=(320, 240), still=still)
    assert n == 8
    reader = imageio.get_reader(str(out))
    frames = [np.asarray(f, dtype=np.float64) for f in reader]
    reader.close()
    assert len(frames) == 8
    assert frames[0].shape == (240, 320, 3)
    # not blank: a uniform image has std 0; the robot on white gives tens of grey levels
    for f in frames:
        assert f.std() > 10.0
    # not identical: the robot moves every frame; H.264 noise on a static scene is < 0.5 level
    diffs = [np.abs(a - b).mean() for a, b in zip(frames[:-1], frames[1:])]
    assert min(diffs) > 0.5, diffs
    img = imageio.imread(str(still))
    assert img.shape[:2] == (240, 320) and img.std() > 10.0


def _orange_pixels(img: np.ndarray) -> int:
    """Pixels of the right-handed rod colour (#d95f02 under lighting: red high, blue low)."""
    r, g, b = (img[..., c].astype(int) for c in range(3))
    return int(np.sum((r > 120) & (r - b > 80) & (g < r - 30)))


def test_still_geometry_follows_data(tmp_path) -> None:
    # With the camera fixed over the whole run, the elongated (last) state shows more of the
    # right-handed (orange) rods than the rest state: the tubes are drawn where the data says.
    df = synthetic_diagnostics(n_t=5)
    first = render_still(df, PARAMS, tmp_path / "a.png", index=0, window_size=(320, 240), show_frames=False)
    last = render_still(df, PARAMS, tmp_path / "b.png", index=-1, window_size=(320, 240), show_frames=False)
    n0 = _orange_pixels(imageio.imread(str(first)))
    n1 = _orange_pixels(imageio.imread(str(last)))
    assert n0 > 100  # the rods are visible at all
    assert n1 > 1.1 * n0, (n0, n1)  # 30 % longer rods: clearly more visible pixels


def test_color_by_elongation_and_errors(tmp_path) -> None:
    df = synthetic_diagnostics(n_t=4)
    p = render_still(df, PARAMS, tmp_path / "e.png", window_size=(320, 240), color_by="elongation")
    assert imageio.imread(str(p)).std() > 10.0
    with pytest.raises(ValueError, match="no columns"):
        render_still(df, PARAMS, tmp_path / "x.png", color_by="sigma_q")
    with pytest.raises(ValueError, match="no rod columns"):
        render_still(df[["time"]], PARAMS, tmp_path / "y.png")


# --------------------------------------------------------------------------------------------
# readable videos: playback speed, hold, legend, world axes, scale bar, title, colour bar
# --------------------------------------------------------------------------------------------
def _decode(path) -> list[np.ndarray]:
    reader = imageio.get_reader(str(path))
    try:
        return [np.asarray(f) for f in reader]
    finally:
        reader.close()


def test_frame_times_and_resample() -> None:
    # 1 s at 10 fps and speed 0.5: a frame every 0.05 s of simulated time, 21 frames, the last
    # exactly at the end; an end off the grid (0.42 s) is appended as the final frame
    t = frame_times(0.0, 1.0, fps=10.0, speed=0.5)
    np.testing.assert_allclose(t, np.linspace(0.0, 1.0, 21), atol=1e-12)
    t = frame_times(0.0, 0.42, fps=10.0, speed=1.0)
    np.testing.assert_allclose(t, [0.0, 0.1, 0.2, 0.3, 0.4, 0.42], atol=1e-12)
    # linear interpolation between samples; the ends are the recorded states
    df = pd.DataFrame({"time": [0.0, 0.1, 0.2], "a": [0.0, 1.0, 5.0]})
    out = resample(df, np.array([0.0, 0.05, 0.15, 0.2]))
    np.testing.assert_allclose(out["a"], [0.0, 0.5, 3.0, 5.0])
    np.testing.assert_allclose(out["time"], [0.0, 0.05, 0.15, 0.2])


def test_video_duration_is_simulated_time_over_speed_plus_hold(tmp_path) -> None:
    # 1 s simulated, speed 0.5, 10 fps: 1 / 0.5 s of motion = 20 frame steps + the first frame,
    # then a 0.5 s hold = 5 frames: 26 frames, 2.6 s (within one frame of T / speed + hold)
    df = synthetic_diagnostics(n_t=11, t_end=1.0)
    out = tmp_path / "slow.mp4"
    n = render_video(df, PARAMS, out, fps=10, speed=0.5, hold=0.5, window_size=(96, 72))
    frames = _decode(out)
    assert n == len(frames) == 26
    assert abs(len(frames) / 10.0 - (1.0 / 0.5 + 0.5)) <= 1.0 / 10.0 + 1e-9
    # the hold repeats the final state; the motion before it changes every frame
    assert np.abs(frames[-1].astype(float) - frames[-5]).mean() < 0.5
    assert np.abs(frames[0].astype(float) - frames[10]).mean() > 0.5


def _colour_pixels(img: np.ndarray, hex_colour: str, tol: int = 40) -> int:
    rgb = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)])
    return int(np.sum(np.all(np.abs(img[..., :3].astype(int) - rgb) <= tol, axis=-1)))


def test_legend_drawn_in_its_corner(tmp_path) -> None:
    # the legend sits in the upper-right corner, which the camera keeps free of the robot: the
    # handedness colours appear there with the legend and not without it
    df = synthetic_diagnostics(n_t=3)
    with RobotScene(df, PARAMS, window_size=(320, 240)) as scene:
        assert scene.legend_entries[:2] == ["right-handed", "left-handed"]
        assert set(scene.legend_entries[2:]) == {"local x", "local y", "platform z"}
        with_legend = scene.image()
    with RobotScene(df, PARAMS, window_size=(320, 240), show_legend=False) as scene:
        assert scene.legend is None
        without = scene.image()
    corner = (slice(0, 80), slice(224, 320))  # top third, right 30 %
    for colour in (HANDEDNESS_COLORS[1], HANDEDNESS_COLORS[-1]):
        assert _colour_pixels(with_legend[corner], colour) >= 10, colour
        assert _colour_pixels(without[corner], colour) == 0, colour


def test_one_orientation_widget_the_world_axes() -> None:
    df = synthetic_diagnostics(n_t=2)
    with RobotScene(df, PARAMS, window_size=(160, 120)) as scene:
        axes = scene.world_axes
        world = [
            axes.GetXAxisShaftProperty().GetColor(),
            axes.GetYAxisShaftProperty().GetColor(),
            axes.GetZAxisShaftProperty().GetColor(),
        ]
        # robot frame: x = east, y = north
        assert axes.GetXAxisLabelText() == "x E" and axes.GetYAxisLabelText() == "y N"
        assert not hasattr(scene, "compass_points")  # no second widget (the N/E ground compass)
    with RobotScene(df, PARAMS, window_size=(160, 120), show_compass=False) as scene:
        assert scene.world_axes is None
    frame_rgb = [tuple(int(c[i : i + 2], 16) / 255 for i in (1, 3, 5)) for c in AXIS_COLORS]
    np.testing.assert_allclose(
        world, [tuple(int(c[i : i + 2], 16) / 255 for i in (1, 3, 5)) for c in WORLD_AXIS_COLORS],
        atol=1e-6,
    )
    # no world axis shares (or nearly shares) a colour with a local-frame arrow
    for w in world:
        for f in frame_rgb:
            assert np.abs(np.subtract(w, f)).max() > 0.2, (w, f)


@pytest.mark.parametrize("length, bar", [(0.1, 0.05), (0.3, 0.1), (0.05, 0.02), (1.0, 0.5), (0.08, 0.02)])
def test_scale_bar_length_is_round(length: float, bar: float) -> None:
    from hsa_elastica.io.render_layout import scale_bar_length

    assert scale_bar_length(length) == pytest.approx(bar)


def _display_xy(scene: RobotScene, point) -> np.ndarray:
    """Pixel coordinates (x right, y up) of a world point, by VTK's own projection."""
    ren = scene.plotter.renderer
    ren.SetWorldPoint(float(point[0]), float(point[1]), float(point[2]), 1.0)
    ren.WorldToDisplay()
    return np.array(ren.GetDisplayPoint()[:2])


def test_scale_bar_measures_the_robot_at_its_depth_and_title() -> None:
    # the bar lies perpendicular to the line of sight at the depth of the robot's axis: in the
    # image it is as long as a segment of the same length across the base's centre (VTK's
    # projection, not ours), and the dark bar is drawn there
    from hsa_elastica.io.render_scene import SCALE_BAR_COLOR, _VIEW_DIRECTION

    df = synthetic_diagnostics(n_t=2)
    with RobotScene(df, PARAMS, window_size=(480, 360), show_frames=False, title="elongation, magnitude 1") as scene:
        assert scene.scale_length == pytest.approx(0.05)  # 10 cm rods: a 50 mm bar
        assert scene._text.GetInput().startswith("elongation, magnitude 1;  t = ")
        img = scene.image()
        a, b = (_display_xy(scene, p) for p in scene.scale_points[:2])
        d = np.array(_VIEW_DIRECTION[:2]) / np.hypot(*_VIEW_DIRECTION[:2])
        across = np.array([-d[1], d[0], 0.0])
        c0, c1 = _display_xy(scene, -0.025 * across), _display_xy(scene, 0.025 * across)
    bar_px = np.linalg.norm(b - a)
    assert bar_px == pytest.approx(np.linalg.norm(c1 - c0), rel=1e-6)
    assert abs(b[1] - a[1]) < 1.0  # horizontal in the image
    # the drawn bar: dark pixels on the bar's image row between its ends (+- the end ticks)
    row = img.shape[0] - 1 - int(round(0.5 * (a[1] + b[1])))
    rgb = np.array([int(SCALE_BAR_COLOR[i : i + 2], 16) for i in (1, 3, 5)])
    lo_x, hi_x = int(min(a[0], b[0])) - 15, int(max(a[0], b[0])) + 15  # beside the base plate
    band = img[row - 2 : row + 3, lo_x:hi_x].astype(int)
    dark = np.nonzero(np.all(np.abs(band - rgb) < 40, axis=-1).any(axis=0))[0]
    assert dark.size > 0.9 * bar_px  # drawn along its whole length
    assert abs((dark.max() - dark.min()) - bar_px) < 0.08 * bar_px + 4


def _stack_diagnostics() -> tuple[pd.DataFrame, RodsView]:
    """Two synthetic robots on top of each other, the upper one shifted 90 mm north (as the real two-segment bend_north stack): the
    format of ``render_data.stack_frame`` (rods 0-7, ``platform0/`` below, ``platform/`` top)."""
    lower = synthetic_diagnostics(n_t=3)
    h = lower["platform/position_z"].to_numpy() + 0.5 * PARAMS.platform.thickness
    cols = {}
    for c in lower.columns:
        if c.startswith("rod"):
            i, rest = c[3:].split("/", 1)
            cols[c] = lower[c]
            value = lower[c].to_numpy()
            if rest.startswith("position_z"):
                value = value + h
            elif rest.startswith("position_y"):
                value = value + 0.09
            cols[f"rod{int(i) + PARAMS.n_rods}/{rest}"] = value
        elif c.startswith("platform/"):
            cols["platform0/" + c.split("/", 1)[1]] = lower[c]
            value = lower[c].to_numpy()
            if c == "platform/position_z":
                value = value + h
            elif c == "platform/position_y":
                value = value + 0.09
            cols[c] = value
    cols["time"] = lower["time"]
    return pd.DataFrame(cols), RodsView.of_stack([PARAMS, PARAMS])


def test_camera_frames_a_stack_tightly() -> None:
    # every node of every sample projects inside the image, and the stack spans more than 72 %
    # of the height (0.739 measured with the camera centred on the robot, which keeps the
    # legend clear of it; 0.76 when it sat left of the legend, 0.70 with the earlier camera,
    # which framed a frustum as wide as the stack's reach on every side; the real
    # bend_north,twist_ccw stack went from 0.65 to 0.85 of the height, docs/visualisation.md)
    df, view = _stack_diagnostics()
    with RobotScene(df, view, window_size=(480, 360), show_frames=False, title="stack") as scene:
        pts = np.concatenate([p.transpose(0, 2, 1).reshape(-1, 3) for p in scene.positions])
        xy = np.array([_display_xy(scene, p) for p in pts])
        top_band = scene.top_band
    assert xy[:, 0].min() >= 0 and xy[:, 0].max() <= 480 and xy[:, 1].min() >= 0
    assert xy[:, 1].max() <= 360 * (1 - top_band) + 1
    assert (xy[:, 1].max() - xy[:, 1].min()) / 360 > 0.72


@pytest.mark.parametrize(
    "lo, hi, labels",
    [
        (-8.881784197001252e-16, 0.3119, ["0.0", "0.1", "0.2", "0.3", "0.4"]),  # round-off -> 0
        (0.0, 0.0, ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]),  # constant zero field
        (-0.0123, 0.0456, ["-0.02", "0.00", "0.02", "0.04", "0.06"]),
        (1.2e5, 3.4e6, ["0", "1e+06", "2e+06", "3e+06", "4e+06"]),
    ],
)
def test_colorbar_ticks_are_round(lo: float, hi: float, labels: list[str]) -> None:
    t_lo, t_hi, ticks, fmt = colorbar_ticks(lo, hi)
    assert [fmt % v for v in ticks] == labels
    tol = 1e-9 * max(abs(lo), abs(hi), 1.0)  # the snapped round-off may lie outside by 1e-16
    assert t_lo <= lo + tol and t_hi >= hi - tol and t_lo == ticks[0] and t_hi == ticks[-1]


def test_scene_colour_bar_has_no_round_off_labels() -> None:
    # the first sample is unstrained: rest/(L/n) - 1 is 0 up to round-off (e.g. -8.9e-16)
    df = synthetic_diagnostics(n_t=3)
    with RobotScene(df, PARAMS, window_size=(160, 120), color_by="elongation") as scene:
        bar = scene.scalar_bar
        fmt = bar.GetLabelFormat()
        values = [bar.GetCustomLabels().GetValue(i) for i in range(bar.GetCustomLabels().GetNumberOfTuples())]
        lut_range = bar.GetLookupTable().GetRange()
    labels = [fmt % v for v in values]
    assert labels[0] == "0.0" and labels[-1] == "0.3"  # data range [~0, 0.3]
    assert not any("e" in lab or lab.startswith("-") for lab in labels), labels
    assert lut_range == (values[0], values[-1])


# --------------------------------------------------------------------------------------------
# safe output
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, kind, match",
    [
        ("x.webm", "video", "'.webm'.*\\.mp4"),
        ("x.mp4x", "video", "'.mp4x'"),
        ("x", "video", "no extension"),
        ("x.png", "video", "\\.mp4"),
        ("x.txt", "still", "\\.png"),
        ("x.mp4", "still", "\\.png"),
    ],
)
def test_bad_extensions_refused(tmp_path, name: str, kind: str, match: str) -> None:
    with pytest.raises(ValueError, match=match) as exc:
        check_output_path(tmp_path / name, kind, flag="--render")
    assert "--render" in str(exc.value) and "\n" not in str(exc.value)


def test_output_path_checks(tmp_path) -> None:
    # accepted: any case of the extension, missing parents (not created by the check)
    assert check_output_path(tmp_path / "a" / "b" / "x.MP4", "video") == tmp_path / "a" / "b" / "x.MP4"
    assert not (tmp_path / "a").exists()
    assert check_output_path(tmp_path / "s.png", "still").name == "s.png"
    (tmp_path / "d.mp4").mkdir()
    with pytest.raises(ValueError, match="is a directory"):
        check_output_path(tmp_path / "d.mp4", "video")
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match="not a directory"):
        check_output_path(tmp_path / "f" / "x.mp4", "video")
    # the render functions check before drawing anything
    with pytest.raises(ValueError, match="\\.mp4"):
        render_video(synthetic_diagnostics(n_t=2), PARAMS, tmp_path / "x.avi")
    with pytest.raises(ValueError, match="\\.png"):
        render_still(synthetic_diagnostics(n_t=2), PARAMS, tmp_path / "x.jpg")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"fps": 0.0}, "fps"), ({"fps": 1e-9}, "fps"), ({"fps": 241.0}, "fps"),
        ({"fps": float("nan")}, "fps"), ({"speed": 0.0}, "speed"), ({"speed": -1.0}, "speed"),
        ({"hold": -0.1}, "hold"), ({"hold": 61.0}, "hold"),
        ({"window_size": (15, 100)}, "size"), ({"window_size": (100, 5000)}, "size"),
    ],
)
def test_video_option_bounds(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        check_video_options(**kwargs)


class _FailingWriter:
    """Wraps the real ffmpeg writer: writes ``n_ok`` frames to the temporary file, then raises."""

    def __init__(self, real, n_ok: int, exc: BaseException) -> None:
        self.real, self.n_ok, self.exc, self.n = real, n_ok, exc, 0

    def append_data(self, image) -> None:
        if self.n >= self.n_ok:
            raise self.exc
        self.real.append_data(image)
        self.n += 1

    def close(self) -> None:
        self.real.close()


@pytest.mark.parametrize("exc", [RuntimeError("encoder failed"), KeyboardInterrupt()])
def test_failed_or_interrupted_render_leaves_no_file(tmp_path, monkeypatch, exc) -> None:
    real_open = render_mod._open_writer
    written: list = []

    def failing_open(path, fps):
        written.append(path)
        return _FailingWriter(real_open(path, fps), 3, exc)

    monkeypatch.setattr(render_mod, "_open_writer", failing_open)
    df = synthetic_diagnostics(n_t=6)
    out = tmp_path / "clip.mp4"
    with pytest.raises(type(exc)):
        render_video(df, PARAMS, out, fps=10, speed=1.0, hold=0.0, window_size=(64, 48))
    assert written and written[0].parent == tmp_path and written[0] != out  # a temporary name
    assert list(tmp_path.iterdir()) == []  # neither the target nor the partial file
    # an older file at the target is left untouched
    out.write_bytes(b"previous video")
    with pytest.raises(type(exc)):
        render_video(df, PARAMS, out, fps=10, speed=1.0, hold=0.0, window_size=(64, 48))
    assert out.read_bytes() == b"previous video"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4"]


def test_failed_still_leaves_no_file(tmp_path, monkeypatch) -> None:
    def failing_imwrite(path, image, **kw):
        with open(path, "wb") as f:
            f.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(imageio, "imwrite", failing_imwrite)
    with pytest.raises(OSError, match="disk full"):
        render_still(synthetic_diagnostics(n_t=2), PARAMS, tmp_path / "s.png", window_size=(64, 48))
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------
# the render subcommand
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "extra, match",
    [
        (["--out", "{d}/x.webm"], "--out '{d}/x.webm'"),
        (["--out", "{d}/x.mp4", "--still", "{d}/x.txt"], "--still '{d}/x.txt'"),
        (["--out", "{d}/x.mp4", "--fps", "1e-9"], "--fps"),
        (["--out", "{d}/x.mp4", "--fps", "1000"], "--fps"),
        (["--out", "{d}/x.mp4", "--size", "5000x300"], "--size"),
        (["--out", "{d}/x.mp4", "--speed", "0"], "--speed"),
        (["--out", "{d}/x.mp4", "--hold", "-1"], "--hold"),
        ([], "does not exist"),  # no output flag: RUN_DIR/render.mp4, so RUN_DIR must exist
    ],
)
def test_cli_render_refuses_bad_output_before_reading(tmp_path, capsys, extra, match) -> None:
    from hsa_elastica.cli import main

    # the run directory does not exist: the output problem is reported first, exit 2, one line
    code = main(["render", str(tmp_path / "no_run"), *[a.format(d=tmp_path) for a in extra]])
    err = capsys.readouterr().err
    assert code == 2
    assert match.format(d=tmp_path) in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []


def test_cli_render_writes_video_and_still(tmp_path, capsys) -> None:
    from hsa_elastica.cli import main
    from hsa_elastica.io.rundir import save_run

    save_run(tmp_path / "run", synthetic_diagnostics(n_t=6, t_end=0.5), PARAMS, {"converged": True})
    code = main([
        "render", str(tmp_path / "run"), "--out", str(tmp_path / "v.mp4"), "--still",
        str(tmp_path / "s.png"), "--size", "64x48", "--fps", "10", "--speed", "0.5", "--hold", "0.3",
        "--quiet",
    ])
    assert code == 0, capsys.readouterr().err
    # 0.5 s / 0.5 = 1 s of motion at 10 fps (11 frames) + 0.3 s hold (3 frames)
    assert len(_decode(tmp_path / "v.mp4")) == 14
    assert imageio.imread(str(tmp_path / "s.png")).shape[:2] == (48, 64)


def test_fit_camera_is_tight() -> None:
    # every point projects inside the central 90 % of the left 70 % of the image, and some point
    # touches that boundary (no closer camera would fit), checked with an independent pinhole
    # projection of the returned camera
    from hsa_elastica.io.render_layout import fit_camera

    rng = np.random.default_rng(0)
    pts = rng.normal(size=(200, 3)) * [0.03, 0.05, 0.08] + [0.01, 0.0, 0.1]
    focal, pos = fit_camera(pts, direction=(1.0, -1.6, 0.9), view_angle_deg=30.0, aspect=4 / 3,
                            fill=0.9, left_fraction=0.7)
    fwd = (focal - pos) / np.linalg.norm(focal - pos)
    right = np.cross(fwd, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, fwd)
    depth = (pts - pos) @ fwd
    t = math.tan(math.radians(15.0))
    u = ((pts - pos) @ right) / (depth * t * 4 / 3)  # -1 .. 1 across the full width
    v = ((pts - pos) @ up) / (depth * t)
    assert np.all(depth > 0)
    strip = (-1.0 + 0.7 * (1 - 0.9), -1.0 + 1.4 - 0.7 * (1 - 0.9))  # left 70 %, 90 % fill
    assert u.min() >= strip[0] - 0.02 and u.max() <= strip[1] + 0.02
    assert np.abs(v).max() <= 0.9 + 1e-6
    assert max(np.abs(v).max() / 0.9, (u.max() - u.min()) / (strip[1] - strip[0])) > 0.97


@pytest.mark.parametrize("size", [(960, 720), (480, 360), (360, 480)])
def test_still_centres_the_robot_clear_of_the_legend(size: tuple[int, int]) -> None:
    # the robot's projected bounding box (VTK's own projection of every rod node and of the
    # platform's rim, all samples) is centred in the image (it sat in the left two thirds,
    # beside the legend), within 2 % of the width (re-centring stops at 0.1 %, the rest is the
    # tube radius and the rim's 16 points), and nothing of it lies under the legend
    df = synthetic_diagnostics(n_t=5)
    bent = df.copy()  # lean the whole robot 15 mm north, as a bend does
    for c in [c for c in df.columns if c.endswith("position_y") or "/position_y_" in c]:
        bent[c] = df[c] + 0.015 * df["time"] / df["time"].max()
    with RobotScene(bent, PARAMS, window_size=size, title="bend") as scene:
        pts = np.concatenate([p.transpose(0, 2, 1).reshape(-1, 3) for p in scene.positions])
        xy = np.array([_display_xy(scene, p) for p in pts])
        x0, y0 = scene.legend.GetPosition()
        w0, h0 = scene.legend.GetPosition2()
    w, h = scene.window_size
    centre = 0.5 * (xy[:, 0].min() + xy[:, 0].max())
    assert abs(centre - 0.5 * w) < 0.02 * w, (centre, w)
    assert xy[:, 1].min() >= 0 and xy[:, 1].max() <= h
    under = (xy[:, 0] >= x0 * w) & (xy[:, 0] <= (x0 + w0) * w) & (xy[:, 1] >= y0 * h) & (xy[:, 1] <= (y0 + h0) * h)
    assert not under.any()
