"""Off-screen rendering of HSA rods and robots with pyvista: mp4 videos and PNG stills.

The scene (rods, platform, local frames, title, legend, scale bar, world axes, camera) is
:class:`hsa_elastica.io.render_scene.RobotScene`; the diagnostics format it reads and the frame
timing are in :mod:`hsa_elastica.io.render_data`.  This module is the entry point:

* :func:`check_output_path` -- refuse an output path that cannot be written (wrong extension, a
  directory, an unwritable parent) before anything is simulated;
* :func:`render_video` -- an H.264 ``.mp4`` (imageio-ffmpeg, libx264) showing the run at
  ``speed`` times real time (default 0.25: a 1 s primitive lasts 4 s) followed by ``hold``
  seconds on the final state;
* :func:`render_still` -- a PNG of one sample (default: the final state).

Outputs are written to a temporary name in the target's directory and renamed onto the target
only once complete: a failed or interrupted (Ctrl-C) render leaves no file, or the previous
file, at the target path -- never a 0-byte or truncated one.
"""

from __future__ import annotations

import contextlib
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from hsa_elastica.io.render_data import frame_times, quaternion_to_matrix, resample, select_frames
from hsa_elastica.io.render_scene import RobotScene
from hsa_elastica.params.files import atomic_output, name_length_problem, output_path_problem

if TYPE_CHECKING:  # pragma: no cover
    from hsa_elastica.params import RobotParams, RodParams

__all__ = [
    "render_video", "render_still", "check_output_path", "RobotScene", "select_frames",
    "frame_times", "quaternion_to_matrix", "VIDEO_EXTENSIONS", "STILL_EXTENSIONS",
    "DEFAULT_FPS", "DEFAULT_SPEED", "DEFAULT_HOLD", "DEFAULT_SIZE", "MIN_FPS", "MAX_FPS", "MIN_SIZE",
    "MAX_SIZE", "MAX_HOLD", "check_video_options",
]

VIDEO_EXTENSIONS = (".mp4",)  # H.264 in MP4: plays in browsers, on GitHub and in every player
STILL_EXTENSIONS = (".png",)
HTML_EXTENSIONS = (".html",)  # the interactive view (io/view.py)
PLOT_EXTENSIONS = (".png", ".svg")  # the time plots (io/plot.py): raster or vector
DEFAULT_FPS = 30.0
DEFAULT_SPEED = 0.25  # simulated seconds per second of video: a 1 s primitive lasts 4 s
DEFAULT_HOLD = 1.5  # s of video on the final state
DEFAULT_SIZE = (960, 720)
MIN_FPS = 1.0
MAX_FPS = 240.0
MIN_SIZE = 16
MAX_SIZE = 4096  # px per side (H.264 level 5.2 tops out at 4096 wide)
MAX_HOLD = 60.0  # s
MAX_SPEED = 1e6


def check_output_path(path: str | Path, kind: str, *, flag: str | None = None) -> Path:
    """Check that ``path`` can take a render output of ``kind`` (``"video"``: ``.mp4``;
    ``"still"``: ``.png``; ``"page"``: ``.html``; ``"plot"``: ``.png`` or ``.svg``) and return it as a :class:`~pathlib.Path`, without creating anything.

    Refused, with a one-line :class:`ValueError` naming ``flag`` (e.g. ``"--render"``) and the
    value: a path that is an existing directory, another extension (case-insensitive match), a
    parent that is a file or where a file cannot be created (probed with a temporary file that
    is removed at once), an existing unwritable file.  Missing parent directories are fine: they
    are created when the file is written.  Only ``.mp4`` is offered for videos: the encoder
    (imageio-ffmpeg, libx264) could also mux ``.mkv``/``.mov``, but ``.mp4`` is the one that
    plays everywhere, and one format keeps the check simple.
    """
    allowed = {"video": VIDEO_EXTENSIONS, "still": STILL_EXTENSIONS, "page": HTML_EXTENSIONS,
               "plot": PLOT_EXTENSIONS}.get(kind)
    if allowed is None:
        raise ValueError(f"kind = {kind!r} is invalid: must be 'video', 'still', 'page' or 'plot'")
    name = f"{flag} {str(path)!r}" if flag else repr(str(path))
    p = Path(path)
    if str(path).strip() == "" or p.name in ("", ".", ".."):
        raise ValueError(f"{name}: not a file name (allowed extensions: {', '.join(allowed)})")
    problem = name_length_problem(p)  # before any stat (ENAMETOOLONG)
    if problem is not None:
        raise ValueError(f"{name}: {problem}")
    if p.is_dir():
        raise ValueError(f"{name} is a directory; give a file name ending in {', '.join(allowed)}")
    if p.suffix.lower() not in allowed:
        got = f"has the extension {p.suffix!r}" if p.suffix else "has no extension"
        raise ValueError(f"{name} {got}; a {kind} must end in {' or '.join(allowed)}")
    # the name's length, the nearest existing directory (probed with a temporary file that is
    # removed at once: permission bits do not tell for read-only mounts or root), a writable
    # existing file, not a block device or socket
    problem = output_path_problem(p, create_parents=True)
    if problem is not None:
        raise ValueError(f"{name}: {problem}")
    return p


def check_video_options(
    *, fps: float = DEFAULT_FPS, speed: float = DEFAULT_SPEED, hold: float = DEFAULT_HOLD,
    window_size: tuple[int, int] = DEFAULT_SIZE,
) -> None:
    """Raise a one-line :class:`ValueError` naming the option if a video option is out of range:
    1 <= fps <= 240, 0 < speed <= 1e6, 0 <= hold <= 60 s, 16 <= width, height <= 4096 px."""
    if not (isinstance(fps, (int, float)) and math.isfinite(fps) and MIN_FPS <= fps <= MAX_FPS):
        raise ValueError(
            f"fps = {fps!r} is invalid: must be in [{MIN_FPS:g}, {MAX_FPS:g}] (frames per second)"
        )
    if not (isinstance(speed, (int, float)) and math.isfinite(speed) and 0 < speed <= MAX_SPEED):
        raise ValueError(f"speed = {speed!r} is invalid: must be > 0 and <= {MAX_SPEED:g} (x real time)")
    if not (isinstance(hold, (int, float)) and math.isfinite(hold) and 0 <= hold <= MAX_HOLD):
        raise ValueError(f"hold = {hold!r} is invalid: must be >= 0 and <= {MAX_HOLD:g} (s)")
    w, h = window_size
    if not all(isinstance(v, (int, np.integer)) and MIN_SIZE <= v <= MAX_SIZE for v in (w, h)):
        raise ValueError(
            f"window size = {w}x{h} is invalid: width and height must be integers in "
            f"[{MIN_SIZE}, {MAX_SIZE}] pixels"
        )


def _write_png(image: NDArray[np.uint8], path: str | Path) -> Path:
    import imageio.v2 as imageio

    p = Path(path)
    with atomic_output(p, create_parents=True) as tmp:
        imageio.imwrite(str(tmp), image, format="png")
    return p


def _open_writer(path: Path, fps: float) -> Any:
    import imageio.v2 as imageio

    return imageio.get_writer(
        str(path), format="FFMPEG", fps=float(fps), codec="libx264", macro_block_size=2, quality=7,
        ffmpeg_log_level="error",
    )


def _frames_of(diagnostics: pd.DataFrame, fps: float, speed: float, n_frames: int | None) -> pd.DataFrame:
    df = diagnostics.reset_index(drop=True)
    if len(df) == 0:
        raise ValueError("diagnostics frame is empty: nothing to render")
    if "time" not in df:
        df = df.assign(time=np.arange(len(df), dtype=np.float64))
    times = df["time"].to_numpy(dtype=np.float64)
    if n_frames is not None:
        return df.iloc[select_frames(times, n_frames=n_frames)].reset_index(drop=True)
    return resample(df, frame_times(float(times[0]), float(times[-1]), fps=fps, speed=speed))


def _write_frames(writer: Any, scene: RobotScene, n_frames: int, n_hold: int, progress: bool) -> None:
    iterator: Any = range(n_frames)
    if progress:
        from hsa_elastica.io.progress import progress_bar

        iterator = progress_bar(iterator, desc="render", unit="frame", delay=0.5)
    image = None
    for k in iterator:
        scene.update(k)
        image = scene.image()
        writer.append_data(image)
    for _ in range(n_hold):
        writer.append_data(image)


def render_video(
    diagnostics: pd.DataFrame,
    params: "RobotParams | RodParams",
    path: str | Path,
    *,
    fps: float = DEFAULT_FPS,
    speed: float = DEFAULT_SPEED,
    hold: float = DEFAULT_HOLD,
    n_frames: int | None = None,
    window_size: tuple[int, int] = DEFAULT_SIZE,
    color_by: str = "handedness",
    show_frames: bool = True,
    still: str | Path | None = None,
    progress: bool = False,
    title: str = "",
) -> int:
    """Render ``diagnostics`` to an H.264 mp4 at ``path``; return the number of frames written.

    ``fps`` is the video frame rate (1/s, at most 240); the clip shows the run at ``speed`` times
    real time (frames every ``speed / fps`` s of simulated time, interpolated linearly between
    recorded samples, the last frame the final state), then holds the final state for ``hold``
    seconds: ``(t_end - t_0) fps / speed + 1`` frames (to one frame) plus ``round(hold fps)``.
    ``n_frames`` instead shows exactly that many evenly spread recorded samples (plus the hold).
    ``still`` also writes a PNG of the final state; ``title`` is written above the time (e.g.
    :func:`~hsa_elastica.io.render_data.run_title` of the run's summary).  See
    :class:`RobotScene` for the rest.
    The paths are checked with :func:`check_output_path` first; the files appear only when
    complete.
    """
    check_video_options(fps=fps, speed=speed, hold=hold, window_size=tuple(window_size))  # type: ignore[arg-type]
    path = check_output_path(path, "video")
    if still is not None:
        still = check_output_path(still, "still")
    sub = _frames_of(diagnostics, fps, speed, n_frames)
    n_hold = int(round(hold * fps))
    scene = RobotScene(
        sub, params, window_size=window_size, color_by=color_by, show_frames=show_frames,
        speed=None if n_frames is not None else speed, title=title,
    )
    try:
        with atomic_output(path, create_parents=True) as tmp:
            writer = _open_writer(tmp, fps)
            try:
                _write_frames(writer, scene, len(sub), n_hold, progress)
            except BaseException:
                # keep the original error (e.g. Ctrl-C, which also stops ffmpeg: its close fails)
                with contextlib.suppress(Exception):
                    writer.close()
                raise
            writer.close()
        if still is not None:
            scene.speed = None  # a still has no playback speed
            scene.update(len(sub) - 1)
            _write_png(scene.image(), still)
    finally:
        scene.close()
    return int(len(sub)) + n_hold


def render_still(
    diagnostics: pd.DataFrame,
    params: "RobotParams | RodParams",
    path: str | Path,
    *,
    index: int = -1,
    window_size: tuple[int, int] = DEFAULT_SIZE,
    color_by: str = "handedness",
    show_frames: bool = True,
    title: str = "",
) -> Path:
    """Write a PNG of the sample ``index`` (default: the final state) of ``diagnostics``.

    The camera frames the whole run, so stills of one run share the same view; ``title`` is
    written above the time.
    """
    check_video_options(window_size=tuple(window_size))  # type: ignore[arg-type]
    p = check_output_path(path, "still")
    scene = RobotScene(diagnostics, params, window_size=window_size, color_by=color_by,
                       show_frames=show_frames, title=title)
    try:
        scene.update(index)
        return _write_png(scene.image(), p)
    finally:
        scene.close()
