"""A run that fails after it started keeps its data; a run directory holds one run.

* a step the implicit integrator refuses is a runtime failure (exit 1, one line naming the
  time and the cause) that keeps what was recorded in ``--out``, as a divergence does: both
  are ``SimulationFailed`` and take the same path;
* two commands writing one new ``--out`` directory: the second is refused (exit 2) while the
  first holds it;
* ``--overwrite`` leaves only the new run's files in the directory.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from hsa_elastica.cli import main
from hsa_elastica.engines.implicit import ImplicitStepFailed
from hsa_elastica.engines.timeloop import (
    SimulationDiverged,
    SimulationFailed,
    SolverFailed,
)
from hsa_elastica.io import rundir
from hsa_elastica.io.rundir import load_run
from hsa_elastica.params import ParameterError, paper_robot_params, save_params

ROBOT = [sys.executable, "-m", "hsa_elastica.cli"]


def _implicit(tmp_path: Path, dt: float, halvings: int) -> str:
    """Parameters whose implicit steps of ``dt`` [s] Newton cannot take on bend_north (pi
    in a 20 ms ramp; test_implicit.py measures the refusal at 10 ms)."""
    p = paper_robot_params()
    q = p.replace(simulation=p.simulation.replace(dt=dt, integrator="implicit", ramp_time=0.02,
                                                  max_halvings=halvings, record_fps=200.0))
    return str(save_params(q, tmp_path / f"implicit_{dt:g}_{halvings}.yaml"))


@pytest.mark.parametrize(("dt", "halvings"), [(0.01, 0), (0.5, 4)])
def test_refused_implicit_step_exits_1_and_keeps_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dt: float, halvings: int,
) -> None:
    """Refused at once (no halvings) or after 4 halvings of a 0.5 s step: exit 1 (it was exit
    2, "bad input", after simulating, with no run directory), one line naming the step, the
    time and Newton; the run directory holds what was recorded, marked not converged, the
    failure's time and cause in the summary."""
    out = tmp_path / "run"
    code = main(["primitive", "bend_north", "--params", _implicit(tmp_path, dt, halvings),
                 "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "refused by the implicit integrator at t = " in err and "Newton" in err, err
    assert "saved to " + str(out) in err, err
    run = load_run(out)
    s = run.summary
    assert s["converged"] is False and s["diverged"] is True
    assert s["divergence"]["system"] == "implicit integrator"
    assert "Newton did not converge" in s["divergence"]["reason"]
    assert s["sim_time_s"] == s["divergence"]["time_s"] < 0.02 + 3.0
    assert len(run.diagnostics) >= 1 and run.diagnostics["time"].iloc[0] == 0.0
    assert run.diagnostics["time"].iloc[-1] <= s["divergence"]["time_s"] + 1e-12


def test_failed_force_law_takes_the_same_path(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A force law that fails during the run (the engines raise ``FloatingPointError`` for a
    non-positive stiffness; injected here after the first 0.1 s) ends as a divergence does:
    exit 1, one line, the run so far saved with the cause."""
    from hsa_elastica.robots.compiled import FastRobot

    real = FastRobot.run

    def failing(self: FastRobot, duration: float, **kwargs: object) -> float:
        if self.time >= 0.1:
            raise FloatingPointError("AuxeticCoupling.stiffness of coupling 2 gave a "
                                     f"non-positive stiffness (-1) at t = {self.time:.6g} s")
        return real(self, duration, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(FastRobot, "run", failing)
    out = tmp_path / "run"
    code = main(["steady-state", "--angles", "0.5", "0", "0", "0", "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "non-positive stiffness" in err, err
    assert "simulation failed: AuxeticCoupling" in err and "saved to" in err, err
    s = load_run(out).summary
    assert s["converged"] is False and s["divergence"]["system"] == "force law"
    assert s["sim_time_s"] == pytest.approx(0.1, abs=0.02)


def test_failures_share_one_type_and_survive_pickling() -> None:
    """Divergence, a refused step and a failed force law are ``SimulationFailed`` (not
    ``ParameterError``: never exit 2); a refused step keeps its message through pickling
    (Dask workers send exceptions back pickled), halved-step note included."""
    refused = ImplicitStepFailed(0.01, 0.25, "singular Jacobian")
    refused.args = (f"{refused.args[0]} (a step of 0.02 s at t = 0.25 s, halved down to 0.01 s)",)
    failures = [SimulationDiverged(1.5, "rod0", 1.25), refused,
                SolverFailed(0.5, "force law", 0.5, "non-positive stiffness")]
    for exc in failures:
        assert isinstance(exc, SimulationFailed) and not isinstance(exc, ParameterError)
        back = pickle.loads(pickle.dumps(exc))
        assert type(back) is type(exc) and str(back) == str(exc)
        assert (back.time, back.name, back.reason) == (exc.time, exc.name, exc.reason)
    assert isinstance(failures[2], FloatingPointError)  # what callers caught before
    assert "halved down to 0.01 s" in str(pickle.loads(pickle.dumps(refused)))


# --------------------------------------------------------------------------------------------
# one run per directory
# --------------------------------------------------------------------------------------------
def test_second_writer_of_one_new_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While one command holds ``--out`` (made with an exclusive ``mkdir`` before its run),
    a second command into the same directory exits 2 naming it; both started when the
    directory did not exist (on main both exited 0 and mixed their files)."""
    out = tmp_path / "run"
    seen: list[tuple[int, str]] = []
    real = rundir.save_run

    def save_with_a_second_command(*args: object, **kwargs: object) -> Path:
        # the second command, started when --out did not exist, reaches the claim now
        seen.append((main(["steady-state", "--angles", "0.1", "0", "0", "0", "--out", str(out),
                           "--quiet", "--max-time", "0.3"]), capsys.readouterr().err))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(rundir, "save_run", save_with_a_second_command)
    monkeypatch.setattr(rundir, "run_dir_problem", lambda *a, **k: None)  # both pass the check
    code = main(["steady-state", "--angles", "0.1", "0", "0", "0", "--out", str(out), "--quiet",
                 "--max-time", "0.3"])
    assert code == 0, capsys.readouterr().err
    (second, err), = seen
    assert second == 2 and err.count("\n") == 1 and "--out" in err and "another" in err, err
    assert json.loads((out / "summary.json").read_text())["motor_angles_rad"][0] == 0.1
    assert not (out / rundir.CLAIM).exists()


def test_two_processes_into_one_new_directory(tmp_path: Path) -> None:
    """Two ``steady-state --out`` processes started together into one new directory: one
    exits 0, the other 2 (exclusive creation), never both 0."""
    out = tmp_path / "run"
    argv = [*ROBOT, "steady-state", "--angles", "0.1", "0", "0", "0", "--out", str(out),
            "--quiet", "--max-time", "0.3"]
    procs = [subprocess.Popen(argv, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.wait(timeout=600), p.stderr.read() if p.stderr else "") for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    err = next(e for c, e in results if c == 2)
    assert err.count("\n") == 1 and str(out) in err, err


def test_overwrite_leaves_only_this_runs_files(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """``--overwrite`` onto an older run that has a ``view.html``, a plot, a video and a file
    of the user's: the older run's derived outputs go (a ``view.html`` left behind showed the
    older run), the user's file and a subdirectory stay."""
    out = tmp_path / "run"
    argv = ["steady-state", "--angles", "0.1", "0", "0", "0", "--out", str(out), "--quiet",
            "--max-time", "0.3"]
    assert main(argv) == 0
    for name in ("view.html", "plot.png", "render.mp4", "notes.txt"):
        (out / name).write_text("older run")
    (out / "frames").mkdir()
    (out / "frames" / "0.png").write_text("older run")
    assert main([*argv[:1], "--angles", "0.2", "0", "0", "0", *argv[6:], "--overwrite"]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in out.iterdir()) == [
        "diagnostics.parquet", "frames", "notes.txt", "params.yaml", "summary.json"]
    assert (out / "frames" / "0.png").is_file()  # a subdirectory is the user's: it stays
    assert (out / "notes.txt").read_text() == "older run"  # so is a file of another name
    assert json.loads((out / "summary.json").read_text())["motor_angles_rad"][0] == 0.2


def test_derived_files_are_the_commands_default_names() -> None:
    """What ``--overwrite`` removes is what ``view``, ``plot`` and ``render`` write by default:
    a new default name would otherwise survive an overwrite and show the older run."""
    from hsa_elastica.cli.plot import DEFAULT_PLOT
    from hsa_elastica.cli.render import DEFAULT_STILL, DEFAULT_VIDEO
    from hsa_elastica.cli.view import DEFAULT_HTML
    from hsa_elastica.io.rundir import DERIVED_FILES

    assert {DEFAULT_PLOT, DEFAULT_STILL, DEFAULT_VIDEO, DEFAULT_HTML} <= set(DERIVED_FILES)
