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
from hsa_elastica.io.render import quaternion_to_matrix, render_still, render_video, select_frames

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
    n = render_video(df, PARAMS, out, fps=8, n_frames=8, window_size=(320, 240), still=still)
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
