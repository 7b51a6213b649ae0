"""The real FPU robot's imperfections, fitted and judged on poses not used for fitting.

The calibrated preset ``fpu_robot_2022`` is a perfectly symmetric robot; the real one is not
(printing, assembly, motor zeros).  This study frees a few per-rod imperfections of
:class:`~hsa_elastica.params.RobotParams` on top of the preset (everything else fixed):

* ``motor_offset`` [rad]: the motor angle at which each printed rod is untwisted;
* ``rod_C_eps_deviation`` [-]: each rod's elongation per radian, relative to ``rod.C_eps``;
* ``rod_bend_deviation`` [-]: each rod's bending rigidity, relative to ``rod.bend_rigidity``
  (rod 3 is the reference: a common change is ``rod.bend_rigidity`` itself);
* ``rod_tilt`` [rad]: a lean common to all rods (about the base's x and y), the imperfection
  in the shape of the buckling mode: it breaks the half turn about the robot axis and, leaning
  toward -y, keeps the mirror in ``x = 0`` that the measured tilt shows.  A lean moves the
  platform's rest position by about ``H sin(tilt)`` (``H`` the rods' printed height), which the
  preset's marker offset (fitted on the elongation run) had absorbed, so it is also fitted
  together with ``platform.marker_offset.x/.y`` (candidate ``TM``);

and judges each candidate on honest splits of the two motion-capture runs (no pose of a
held-out set is a neighbour in time of a fitted one, except at the block edges):

* ``twist->elong`` / ``elong->twist``: fit on one run, predict the other;
* ``blocks``: both runs cut into blocks of 20 consecutive poses (a range of motor angles);
  the even blocks are fitted, the odd ones predicted;
* ``halves``: the first half in time of each run is fitted, the second half predicted (in
  the twisting run the other pair is elongated then: the other end of the sweep).

Buckling onset (:func:`onset`): on each side of the twisting sweep, the motor differential
``Delta = u_R - u_L`` (``u = handedness * angle``, averaged over each handed pair) nearest to
the middle of the sweep at which the platform's tilt (angle of its normal from the base's
+z) first exceeds :data:`ONSET_TILT_DEG`, for the measured robot and for the model.

Usage::

    python -m hsa_elastica.validation.real_robot_imperfections            # all candidates
    python -m hsa_elastica.validation.real_robot_imperfections --candidates O C --splits blocks

writes ``real_robot_imperfections.json`` (the rows of candidates and splits not run are kept
from an earlier study in the same ``--results``) and prints the markdown tables quoted in
``validation/real_robot.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from hsa_elastica.experiments.calibration import MocapRun, calibrate, load_runs, predict, pose_errors
from hsa_elastica.params import RobotParams, resolve_params
from hsa_elastica.params.files import write_text_atomic
from hsa_elastica.params.robot import MAX_ROD_TILT
from hsa_elastica.validation.real_robot import DEFAULT_RESULTS, MIRROR_BRANCH

#: tilt of the platform [deg] above which a twisting pose counts as buckled (the measured
#: robot's tilt is 2-3 deg in the middle of the sweep, 9-11 deg at its ends)
ONSET_TILT_DEG = 5.0
#: poses per block of the ``blocks`` split (a motor-angle range of 35 deg in the elongation
#: run, 35 deg of differential in the twisting run)
BLOCK = 20
OFFSET_BOUND = 0.2  # rad (11.5 deg), inside MAX_MOTOR_OFFSET
DEVIATION_BOUND = 0.4  # inside MAX_ROD_DEVIATION
TILT_BOUND = MAX_ROD_TILT  # rad (5.7 deg)
#: bound of the marker offset's lateral components [m] when freed with a lean (a lean of
#: TILT_BOUND moves the rest pose by 11 mm; the preset's offset is (3.0, -1.8) mm)
MARKER_BOUND = 0.02

CANDIDATES: dict[str, dict[str, tuple[float, float]]] = {
    "O": {f"motor_offset.{i}": (-OFFSET_BOUND, OFFSET_BOUND) for i in range(4)},
    "C": {f"rod_C_eps_deviation.{i}": (-DEVIATION_BOUND, DEVIATION_BOUND) for i in range(3)},
    "B": {f"rod_bend_deviation.{i}": (-DEVIATION_BOUND, DEVIATION_BOUND) for i in range(3)},
}
CANDIDATES["OC"] = {**CANDIDATES["O"], **CANDIDATES["C"]}
CANDIDATES["OCB"] = {**CANDIDATES["O"], **CANDIDATES["C"], **CANDIDATES["B"]}
CANDIDATES["T"] = {f"rod_tilt.{c}": (-TILT_BOUND, TILT_BOUND) for c in "xy"}
CANDIDATES["TM"] = {**CANDIDATES["T"],
                    **{f"platform.marker_offset.{c}": (-MARKER_BOUND, MARKER_BOUND) for c in "xy"}}
#: the lean with the bending rigidity: how far the straight robot is from its critical
#: differential sets how much a lean is amplified (bounds of the preset's own fit)
CANDIDATES["TB"] = {**CANDIDATES["T"], "rod.bend_rigidity": (0.01, 0.12)}
CANDIDATE_TEXT = {
    "none": "the preset (symmetric)",
    "O": "motor zero offsets (4)",
    "C": "C_eps deviations (3)",
    "B": "bending-rigidity deviations (3)",
    "OC": "motor offsets + C_eps deviations (7)",
    "OCB": "motor offsets + C_eps + bending deviations (10)",
    "T": "rods' lean (2)",
    "TM": "rods' lean + marker offset x, y (4)",
    "TB": "rods' lean + bending rigidity (3)",
}


def _blocks(n: int, parity: int) -> np.ndarray:
    idx = np.arange(n)
    return idx[(idx // BLOCK) % 2 == parity]


def splits(runs: dict[str, MocapRun]) -> dict[str, tuple[list[MocapRun], list[MocapRun]]]:
    """Fitted and held-out poses of each split (module doc)."""
    e, t = runs["elongation"], runs["twisting"]
    out = {
        "twist->elong": ([t], [e]),
        "elong->twist": ([e], [t]),
        "blocks": ([r.subset(_blocks(len(r), 0)) for r in (e, t)],
                   [r.subset(_blocks(len(r), 1)) for r in (e, t)]),
        "halves": ([r.subset(np.arange(len(r) // 2)) for r in (e, t)],
                   [r.subset(np.arange(len(r) // 2, len(r))) for r in (e, t)]),
    }
    return out


def differential(params: RobotParams, run: MocapRun) -> np.ndarray:
    """``Delta = u_R - u_L`` [deg] of each pose (``u = handedness * angle``, pair means)."""
    h = np.asarray(params.handedness, dtype=np.float64)
    u = run.motor_angles * h
    return np.degrees(u[:, h > 0].mean(axis=1) - u[:, h < 0].mean(axis=1))


def tilt_deg(rot: np.ndarray) -> np.ndarray:
    """Angle [deg] between the platform normal (rotations (N, 3, 3)) and the base's +z."""
    return np.degrees(np.arccos(np.clip(rot[:, 2, 2], -1.0, 1.0)))


def onset(delta: np.ndarray, tilt: np.ndarray, threshold: float = ONSET_TILT_DEG
          ) -> tuple[float | None, float | None]:
    """Buckling onset on the negative and the positive side of the sweep [deg of Delta]:
    the pose of smallest abs(Delta), going outward from the middle, from which on the tilt stays
    above ``threshold`` (None if it never does)."""
    out: list[float | None] = []
    for side in (-1.0, 1.0):
        mask = side * delta > 0
        d, t = np.abs(delta[mask]), tilt[mask]
        order = np.argsort(d)
        d, t = d[order], t[order]
        above = t > threshold
        if not above.any():
            out.append(None)
            continue
        k = len(above) - int(np.argmin(above[::-1])) if not above.all() else 0
        out.append(float(side * d[k]) if k < len(d) else None)
    return out[0], out[1]


def _rms(run: MocapRun, pos: np.ndarray, rot: np.ndarray) -> tuple[float, float]:
    dp, dr = pose_errors(run, pos, rot)
    return (float(np.sqrt(np.mean(np.sum(dp**2, axis=1)))) * 1e3,
            math.degrees(float(np.sqrt(np.mean(np.sum(dr**2, axis=1))))))


def judge(params: RobotParams, runs: list[MocapRun]) -> dict[str, tuple[float, float]]:
    """(position RMS [mm], orientation RMS [deg]) of each run's poses at ``params``."""
    out = {}
    for run in runs:
        pos, rot = predict(params, run, mirror_branch=MIRROR_BRANCH)
        out[run.name.split("_")[0]] = _rms(run, pos, rot)
    return out


def model_onset(params: RobotParams, twisting: MocapRun) -> tuple[float | None, float | None]:
    """:func:`onset` of the model's poses over the whole twisting run."""
    _, rot = predict(params, twisting, mirror_branch=MIRROR_BRANCH)
    return onset(differential(params, twisting), tilt_deg(rot))


def measured_onset(params: RobotParams, twisting: MocapRun) -> tuple[float | None, float | None]:
    """:func:`onset` of the measured twisting run."""
    from scipy.spatial.transform import Rotation

    rot = Rotation.from_quat(twisting.quaternion).as_matrix()
    return onset(differential(params, twisting), tilt_deg(rot))


def study_one(preset: RobotParams, runs: dict[str, MocapRun], candidate: str, split: str,
              verbose: bool) -> dict[str, Any]:
    """Fit ``candidate`` on the fitted poses of ``split``; RMS in-sample and held out."""
    fit_runs, held_runs = splits(runs)[split]
    t0 = time.perf_counter()
    if candidate == "none":
        params, fitted = preset, {}
    else:
        free = CANDIDATES[candidate]
        res = calibrate(preset, fit_runs, list(free), bounds=dict(free), diff_step=1e-3,
                        max_nfev=12, verbose=verbose, mirror_branch=MIRROR_BRANCH)
        params, fitted = res.params, res.fitted
    return {
        "candidate": candidate, "split": split, "fitted": fitted,
        "in_sample": judge(params, fit_runs), "held_out": judge(params, held_runs),
        "all": judge(params, [runs["elongation"], runs["twisting"]]),
        "onset": model_onset(params, runs["twisting"]),
        "seconds": time.perf_counter() - t0,
    }


def _fmt(d: dict[str, tuple[float, float]]) -> str:
    return "; ".join(f"{k[:5]} {p:.2f}, {a:.2f}" for k, (p, a) in d.items())


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown table of the study rows."""
    lines = ["| candidate | split | fitted on: RMS [mm, deg] | held out: RMS [mm, deg] | "
             "all poses [mm, deg] | onset (model) [deg of Delta] |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        on = ", ".join("-" if v is None else f"{v:+.0f}" for v in r["onset"])
        lines.append(f"| {CANDIDATE_TEXT[r['candidate']]} | {r['split']} | {_fmt(r['in_sample'])} | "
                     f"{_fmt(r['held_out'])} | {_fmt(r['all'])} | {on} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hsa_elastica.validation.real_robot_imperfections",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--params", default="fpu_robot_2022", help="start robot (preset or file)")
    ap.add_argument("--candidates", nargs="+", default=list(CANDIDATE_TEXT),
                    choices=list(CANDIDATE_TEXT))
    ap.add_argument("--splits", nargs="+", default=["twist->elong", "elong->twist", "blocks", "halves"],
                    choices=["twist->elong", "elong->twist", "blocks", "halves"])
    ap.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    preset: RobotParams = resolve_params(args.params)
    runs = {r.name.split("_")[0]: r for r in load_runs(["elongation", "twisting"])}
    meas = measured_onset(preset, runs["twisting"])
    print(f"measured onset (tilt > {ONSET_TILT_DEG:g} deg): Delta = {meas[0]}, {meas[1]} deg",
          flush=True)
    out = Path(args.results)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "real_robot_imperfections.json"
    rows = _earlier_rows(path)
    for cand in args.candidates:
        for split in args.splits:
            row = study_one(preset, runs, cand, split, not args.quiet)
            rows = merge_rows(rows, [row])
            print(table([row]).splitlines()[-1], f"({row['seconds']:.0f} s)", flush=True)
            write_text_atomic(path, json.dumps({"measured_onset": meas, "rows": rows}, indent=1) + "\n")
    print(table(rows))
    return 0


def _earlier_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of an earlier study in ``path`` (none if it does not exist or is unreadable)."""
    try:
        rows = json.loads(path.read_text())["rows"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [r for r in rows if isinstance(r, dict) and r.get("candidate") in CANDIDATE_TEXT]


def merge_rows(rows: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with each of ``new`` in place of the row of its candidate and split (appended
    if there is none): a study of some candidates keeps the others' rows."""
    out = list(rows)
    for row in new:
        key = (row["candidate"], row["split"])
        hit = [i for i, r in enumerate(out) if (r["candidate"], r["split"]) == key]
        if hit:
            out[hit[0]] = row
        else:
            out.append(row)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
