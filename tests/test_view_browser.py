"""The interactive view (``hsa-elastica view``) in a real browser: headless Chromium, driven by
playwright (its Python package talks to the system's Chromium; no browser is downloaded).

The page is written for a synthetic run (no simulation: rods that elongate by 30 % and twist,
the platform rising and turning with them, motors turning to +-pi), loaded from a ``file://``
URL with every network request refused (the page must be self-contained), and must log no
console error; clicking the end of the time slider must change the picture of the 3D scene
(two screenshots of the scene's centre differ in more than 1 % of their pixels: the robot
grows by 30 % of its height, far more than that).

The browser is ``$HSA_ELASTICA_CHROMIUM``, else ``chromium``/``chromium-browser``/
``google-chrome`` on the PATH (Debian: ``apt-get install chromium``; ``.ci/run`` installs it).
Without one the test is skipped, except under CI (``CI=true``), where it fails.
"""

from __future__ import annotations

import io
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hsa_elastica.io.rundir import save_run
from hsa_elastica.io.view import DIV_ID, view_figure, write_view_html
from hsa_elastica.params import RobotParams

PARAMS = RobotParams()
N_ELEM = PARAMS.rod.n_elements
L = PARAMS.rod.length
#: flags of a headless Chromium on a machine without a GPU or network: WebGL through
#: SwiftShader (software), no background connections (refused here, and slow to fail)
CHROMIUM_ARGS = [
    "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-first-run", "--disable-quic", "--disable-dev-shm-usage",
]


def synthetic_run(out: Path, n_t: int = 12) -> Path:
    rows = []
    for t in np.linspace(0.0, 1.0, n_t):
        eps, twist = 0.3 * t, 0.8 * t
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
            row[f"sensors/motor_angle_{i}"] = math.pi * t * PARAMS.handedness[i]
        row.update({"platform/position_x": 0.0, "platform/position_y": 0.0,
                    "platform/position_z": L * (1 + eps) + 0.5 * PARAMS.platform.thickness,
                    "platform/quaternion_x": 0.0, "platform/quaternion_y": 0.0,
                    "platform/quaternion_z": math.sin(0.5 * twist),
                    "platform/quaternion_w": math.cos(0.5 * twist)})
        rows.append(row)
    summary = {"primitive": "elongation", "magnitude": 1.0, "target_position_m": [0.02, 0.0, 0.15]}
    return save_run(out, pd.DataFrame(rows), PARAMS, summary)


def find_chromium() -> str | None:
    env = os.environ.get("HSA_ELASTICA_CHROMIUM")
    if env:
        return env
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def test_figure_has_a_frame_per_sample_and_fixed_axes(tmp_path: Path) -> None:
    run = synthetic_run(tmp_path / "run")
    fig = view_figure(run)
    assert len(fig.frames) == 12
    assert fig.layout.sliders[0].steps[-1].label == "1.00"
    names = {t.name for t in fig.data}
    assert {"right-handed rod", "left-handed rod", "platform", "target"} <= names
    assert not fig.layout.scene.xaxis.autorange  # fixed over the run: no rescaling per frame
    assert "elongation, magnitude 1" in fig.frames[-1].layout.title.text
    # the last frame's title gives the motor angles of the last sample: +-180 deg
    assert "180, -180, 180, -180 deg" in fig.frames[-1].layout.title.text


def test_page_loads_without_errors_and_the_slider_changes_the_scene(tmp_path: Path) -> None:
    chromium = find_chromium()
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("no Chromium on this CI machine: .ci/run installs Debian's chromium")
        pytest.skip("no Chromium found (apt-get install chromium, or set HSA_ELASTICA_CHROMIUM)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
    import imageio.v2 as imageio

    page_path = write_view_html(synthetic_run(tmp_path / "run"), tmp_path / "view.html")
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1000, "height": 720})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))

            def refuse(route: object) -> None:  # the page must not need the network
                requests.append(route.request.url)  # type: ignore[attr-defined]
                route.abort()  # type: ignore[attr-defined]

            page.route("http*://**", refuse)
            page.goto(page_path.resolve().as_uri())
            page.wait_for_selector(f"#{DIV_ID} .slider-rail-rect", timeout=20_000)
            page.wait_for_function(f"document.getElementById('{DIV_ID}')._fullLayout !== undefined")
            page.wait_for_timeout(800)  # the first WebGL draw
            scene = page.locator(f"#{DIV_ID} .gl-container canvas").first.bounding_box()
            assert scene is not None and scene["width"] > 100 and scene["height"] > 100
            # the centre of the scene: the robot, not the title, legend or slider
            clip = {"x": scene["x"] + 0.3 * scene["width"], "y": scene["y"] + 0.12 * scene["height"],
                    "width": 0.4 * scene["width"], "height": 0.6 * scene["height"]}
            before = imageio.imread(io.BytesIO(page.screenshot(clip=clip)))
            rail = page.locator(f"#{DIV_ID} .slider-rail-rect").bounding_box()
            assert rail is not None
            page.mouse.click(rail["x"] + rail["width"] - 2, rail["y"] + 0.5 * rail["height"])
            page.wait_for_function(
                f"document.getElementById('{DIV_ID}')._fullLayout.sliders[0].active === 11"
            )
            page.wait_for_timeout(800)
            after = imageio.imread(io.BytesIO(page.screenshot(clip=clip)))
        finally:
            browser.close()
    assert errors == [], f"console errors: {errors}"
    assert requests == [], f"the page asked the network for {requests}"
    assert before.shape == after.shape
    for img in (before, after):  # the scene was drawn (WebGL works): the orange rods are there
        r, g, b = (img[..., c].astype(int) for c in range(3))
        assert np.mean((r > 120) & (r - b > 80) & (g < r - 30)) > 0.01
    changed = np.any(np.abs(before.astype(int) - after.astype(int)) > 16, axis=-1).mean()
    assert changed > 0.01, f"only {changed:.2%} of the scene's pixels changed"
