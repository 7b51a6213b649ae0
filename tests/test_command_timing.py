"""The wall times a dynamic run reports: the simulation loop (``wall_time_s``, the real-time
factor) apart from its set-up (``setup_wall_time_s``: building, compiling the model, the
engine, loading the kernels), and the command's own time (``command_wall_time_s``).

The kernels a settling loop calls are loaded before its clock starts: in a fresh process
(nothing loaded yet), no numba dispatcher takes a new signature (a load from the cache or a
compilation) between the end of the loading and the end of the loop."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hsa_elastica.cli import main

#: a fresh process: the loop of a settling run, with every first dispatch of a kernel counted
#: by phase (before the loop's clock starts, inside the loop)
_SCRIPT = textwrap.dedent("""
    import json, sys
    from numba.core import dispatcher
    from hsa_elastica.params import paper_robot_params
    from hsa_elastica.robots import compiled, settling, settling_watch
    from hsa_elastica.robots.primitives import primitive_angles
    from hsa_elastica.robots.steady_state import solve_steady_state

    phase = ["before"]
    counts = {"before": 0, "loop": 0, "after": 0}
    names = []
    first = dispatcher.Dispatcher._compile_for_args

    def counted(self, *a, **k):
        counts[phase[0]] += 1
        if phase[0] == "loop":
            names.append(self.py_func.__qualname__)
        return first(self, *a, **k)

    dispatcher.Dispatcher._compile_for_args = counted

    def loaded(owner, name):
        f = getattr(owner, name)
        def g(*a, **k):
            out = f(*a, **k)
            phase[0] = "loop"
            return out
        setattr(owner, name, g)

    loaded(settling_watch, "_load_kernels")
    loaded(compiled.FastRobot, "load_kernels")
    relax = settling.relax
    def timed_relax(*a, **k):
        try:
            return relax(*a, **k)
        finally:
            phase[0] = "after"
    settling.relax = timed_relax

    integrator, dt = sys.argv[1], float(sys.argv[2])
    p = paper_robot_params()
    p = p.replace(rod=p.rod.replace(n_elements=6),
                  simulation=p.simulation.replace(integrator=integrator, dt=dt, ramp_time=0.02))
    r = solve_steady_state(p, primitive_angles("bend_east", 1.0, p),
                           settle=settling.SettleOptions(max_time=0.04), stop_when_settled=False)
    print(json.dumps({"counts": counts, "names": names, "wall": r.wall_time_s,
                      "setup": r.setup_wall_time_s, "rtf": r.real_time_factor,
                      "sim": r.sim_time_s}))
""")


@pytest.mark.parametrize("integrator, dt", [("implicit", 2e-3), ("explicit", 5e-5)])
def test_the_loop_loads_no_kernel(integrator: str, dt: float) -> None:
    """Watched implicit loop and the fused explicit loop, each in a fresh process: kernels are
    dispatched for the first time before the loop (so the count can see them) and none
    inside it."""
    done = subprocess.run([sys.executable, "-c", _SCRIPT, integrator, str(dt)],
                          capture_output=True, text=True, check=True)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["counts"]["before"] > 5, out  # the set-up loads the kernels (a fresh process)
    assert out["counts"]["loop"] == 0, out["names"]
    assert out["setup"] > 0.0 and out["wall"] > 0.0
    # the real-time factor is the loop's: simulated time over the loop's wall time
    assert out["rtf"] == pytest.approx(out["sim"] / out["wall"], rel=1e-12)


def test_summary_reports_the_loop_the_setup_and_the_command(tmp_path: Path) -> None:
    """``primitive --out``: the summary's loop time, set-up time and real-time factor are the
    result's; the command's time covers both (and the rest of the command), and the keys are
    in the documented place."""
    out = tmp_path / "run"
    assert main(["primitive", "bend_east", "--integrator", "implicit", "--duration", "0.05",
                 "--quiet", "--out", str(out)]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["sim_time_s"] == pytest.approx(0.05, abs=1e-12)
    assert s["wall_time_s"] > 0.0 and s["setup_wall_time_s"] > 0.0
    assert s["real_time_factor"] == pytest.approx(s["sim_time_s"] / s["wall_time_s"], rel=1e-12)
    assert s["command_wall_time_s"] > s["setup_wall_time_s"] + s["wall_time_s"]
    keys = list(s)
    assert keys.index("setup_wall_time_s") == keys.index("stable") + 1
    assert keys[keys.index("setup_wall_time_s"):][:3] == [
        "setup_wall_time_s", "real_time_factor", "command_wall_time_s"]


def test_static_results_have_no_loop() -> None:
    """A static solve has no simulation loop: no real-time factor, no set-up time (null in
    JSON), and ``command_wall_time_s`` is null when the summary is not written by a command."""
    from hsa_elastica.params import RobotParams
    from hsa_elastica.robots.statics_api import solve_static

    r = solve_static(RobotParams(), [0.5, 0.5, 0.5, 0.5])
    assert r.real_time_factor is None and math.isnan(r.setup_wall_time_s)
    s = r.summary()
    assert s["setup_wall_time_s"] is None and s["real_time_factor"] is None
    assert s["command_wall_time_s"] is None


def test_a_stack_reports_the_same_times(tmp_path: Path) -> None:
    """A two-segment stack's ``primitive --out``: the same keys with the same meaning as a
    robot's (the stack's loop, set-up and real-time factor)."""
    from hsa_elastica.params import RobotParams, save_params

    p = RobotParams()
    path = tmp_path / "quick.yaml"
    save_params(p.replace(simulation=p.simulation.replace(dt=2e-5, ramp_time=0.01)), path)
    out = tmp_path / "run"
    assert main(["primitive", "elongation", "--params", f"{path},{path}", "--duration", "0.004",
                 "--quiet", "--out", str(out)]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["wall_time_s"] > 0.0 and s["setup_wall_time_s"] > 0.0
    assert s["real_time_factor"] == pytest.approx(s["sim_time_s"] / s["wall_time_s"], rel=1e-12)
    assert s["command_wall_time_s"] > s["setup_wall_time_s"] + s["wall_time_s"]
    assert all("setup_wall_time_s" not in seg for seg in s["segments"])


def test_console_script_ends_with_its_output_written(tmp_path: Path) -> None:
    """``python -m hsa_elastica.cli primitive ...`` (the console script's path, which ends the
    process without the interpreter's teardown): exit code 0, everything printed arrives
    through a pipe, the run directory is complete; bad input still exits 2 with one line."""
    out = tmp_path / "run"
    cli = [sys.executable, "-m", "hsa_elastica.cli"]
    done = subprocess.run([*cli, "primitive", "bend_east", "--integrator", "implicit",
                           "--duration", "0.02", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("bend_east (magnitude 1): NOT converged at t = 0.020 s")
    assert done.stdout.endswith(" deg\n")  # the whole line, flushed
    assert f"run saved to {out}" in done.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["command_wall_time_s"] > 0.0
    bad = subprocess.run([*cli, "primitive", "bend_east", "--duration", "-1"],
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
