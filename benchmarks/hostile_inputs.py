"""A hostile user's session, replayed: bad inputs, special output paths and failing runs.

Each case runs the command line (or the Python API) the way a user would and checks what the
reliability page (docs/reliability.md) promises: bad input exits 2 (or raises
``ParameterError``) with one line naming the key before any work, a run that fails after it
started exits 1 naming the time and keeps what it recorded, outputs never replace or delete a
device, a pipe or a symbolic link, and no result is reported converged when it is not.

    python benchmarks/hostile_inputs.py            # every case, a line each, a summary
    python benchmarks/hostile_inputs.py -k dump    # the cases whose name contains "dump"

Exits 1 when any case fails.  About 2-4 minutes with a warm numba cache (each command line is
a process of its own).  Run it from a checkout with the package installed.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ANGLES = ["--angles", "3", "0", "0", "-1"]
CASES: dict[str, Callable[[Path], str | None]] = {}


def case(fn: Callable[[Path], str | None]) -> Callable[[Path], str | None]:
    """Register a case: it returns None when the promise holds, else what went wrong."""
    CASES[fn.__name__] = fn
    return fn


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "HSA_ELASTICA_COMPILE_NOTICE": "0", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "hsa_elastica.cli", *args], capture_output=True, text=True,
        env=full_env, timeout=timeout, errors="backslashreplace",
    )


def expect(proc: subprocess.CompletedProcess[str], code: int, *words: str) -> str | None:
    """None if ``proc`` exited ``code`` with one stderr line holding every word."""
    err = [line for line in proc.stderr.splitlines() if line.strip() and "compil" not in line]
    if proc.returncode != code:
        return f"exit {proc.returncode}, expected {code}: {proc.stderr.strip()[-300:]!r}"
    if code != 0:
        if "Traceback" in proc.stderr:
            return f"traceback on stderr: {proc.stderr.strip()[-300:]!r}"
        if not err:
            return "no message on stderr"
        missing = [w for w in words if w.lower() not in proc.stderr.lower()]
        if missing:
            return f"message {err[-1]!r} does not name {missing}"
    return None


def dump(tmp: Path) -> str:
    text = cli("params", "--dump", "-").stdout
    assert "simulation:" in text, text
    return text


def edited(tmp: Path, name: str, old: str, new: str) -> Path:
    text = dump(tmp)
    assert old in text, (old, text)
    path = tmp / f"{name}.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


# -- parameter files: accepted whole or refused naming the key --------------------------------

BAD_FIELDS = {
    "misspelt_section": ("simulation:", "simulaton:", "simulaton"),
    "misspelt_key": ("  k_tau:", "  k_taw:", "k_taw"),
    "text_dt": ("  dt: ", "  dt: fast #", "dt"),
    "nan_dt": ("  dt: ", "  dt: .nan #", "dt"),
    "integrator_rk4": ("  integrator: explicit", "  integrator: rk4", "integrator"),
    "rho_inf_above_1": ("  implicit_rho_inf: 0.8", "  implicit_rho_inf: 1.5", "implicit_rho_inf"),
    "max_halvings_negative": ("  max_halvings: 4", "  max_halvings: -1", "max_halvings"),
    "max_halvings_21": ("  max_halvings: 4", "  max_halvings: 21", "max_halvings"),
    "max_halvings_fraction": ("  max_halvings: 4", "  max_halvings: 2.5", "max_halvings"),
    "negative_damping": ("  damping: ", "  damping: -1.0 #", "damping"),
    "n_rods_3": ("n_rods: 4", "n_rods: 3", "n_rods"),
    "wrong_nesting": ("joint:\n", "joint:\n  simulation:\n    dt: 1.0e-5\n", "simulation"),
}


def _bad_field_case(name: str, old: str, new: str, key: str) -> None:
    def run(tmp: Path) -> str | None:
        path = edited(tmp, name, old, new)
        for command in (["steady-state", *ANGLES], ["primitive", "bend_north", "--duration", "0.01"],
                        ["dataset", "--random", "2", "--out", str(tmp / f"{name}_ds")]):
            problem = expect(cli(*command, "--params", str(path)), 2, key)
            if problem:
                return f"{command[0]}: {problem}"
        return None

    run.__name__ = f"params_{name}"
    case(run)


for _name, (_old, _new, _key) in BAD_FIELDS.items():
    _bad_field_case(_name, _old, _new, _key)


@case
def params_full_dump_round_trips(tmp: Path) -> str | None:
    path = tmp / "full.yaml"
    path.write_text(dump(tmp))
    return expect(cli("steady-state", *ANGLES, "--params", str(path), "--json", "-"), 0)


@case
def params_python_refuses_misspelt_section(tmp: Path) -> str | None:
    from hsa_elastica.params import ParameterError, load_params, resolve_params

    path = edited(tmp, "py_misspelt", "simulation:", "simulaton:")
    for loader in (load_params, resolve_params):
        try:
            loader(str(path))
        except ParameterError as err:
            if "simulaton" not in str(err):
                return f"{loader.__name__}: message {err} does not name the key"
        else:
            return f"{loader.__name__} accepted a misspelt section"
    return None


# -- CSV inputs --------------------------------------------------------------------------------

@case
def csv_with_both_angle_column_sets(tmp: Path) -> str | None:
    path = tmp / "both.csv"
    path.write_text("angle_0,angle_1,angle_2,angle_3,motor_angles_rad_0,motor_angles_rad_1,"
                    "motor_angles_rad_2,motor_angles_rad_3\n0,0,0,0,1,1,1,1\n")
    return expect(cli("steady-state", "--angles-csv", str(path), "--out", str(tmp / "both.parquet")),
                  2, "angle_")


# -- outputs: devices, pipes, links, concurrent writers ------------------------------------------

def _char_device(path: Path) -> Path:
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a private /dev/null
    return path


def _still_a_device(path: Path) -> str | None:
    if not path.exists() or not stat.S_ISCHR(path.stat().st_mode):
        return f"{path.name} is no longer a character device"
    return None


@case
def parquet_onto_a_character_device(tmp: Path) -> str | None:
    src = tmp / "poses.csv"
    src.write_text("angle_0,angle_1,angle_2,angle_3\n0,0,0,0\n1,-1,1,-1\n")
    dev = _char_device(tmp / "null.parquet")
    problem = expect(cli("steady-state", "--angles-csv", str(src), "--out", str(dev), "--overwrite"), 0)
    return problem or _still_a_device(dev)


@case
def params_dump_to_dev_null(tmp: Path) -> str | None:
    return expect(cli("params", "--dump", "/dev/null"), 0)


@case
def save_state_onto_devices_and_fifo(tmp: Path) -> str | None:
    from hsa_elastica.params import paper_robot_params
    from hsa_elastica.robots.builders import build_fast_robot

    robot = build_fast_robot(paper_robot_params(), [0.0] * 4, record=False)
    dev = _char_device(tmp / "state.npz")
    robot.save_state(dev)
    if problem := _still_a_device(dev):
        return problem
    fifo = tmp / "state.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    robot.save_state(fifo)
    reader.join(30)
    if not stat.S_ISFIFO(fifo.stat().st_mode):
        return "the FIFO was replaced"
    return None if got and got[0] else "the FIFO's reader got nothing"


@case
def two_writers_into_one_new_directory(tmp: Path) -> str | None:
    out = tmp / "shared_out"
    cmd = [sys.executable, "-m", "hsa_elastica.cli", "steady-state", *ANGLES, "--out", str(out)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    codes = sorted(p.wait(600) for p in procs)
    return None if codes == [0, 2] else f"exit codes {codes}, expected one 0 and one 2"


@case
def overwrite_leaves_no_stale_files(tmp: Path) -> str | None:
    out = tmp / "run"
    if problem := expect(cli("primitive", "bend_north", "--duration", "0.02", "--out", str(out)), 0):
        return problem
    if problem := expect(cli("view", str(out)), 0):
        return problem
    if problem := expect(cli("primitive", "bend_south", "--duration", "0.02", "--out", str(out),
                             "--overwrite"), 0):
        return problem
    return "view.html of the previous run is still there" if (out / "view.html").exists() else None


@case
def non_ascii_out_path_under_ascii_locale(tmp: Path) -> str | None:
    out = tmp / "r\u00e9sultat"
    proc = cli("steady-state", *ANGLES, "--out", str(out), env={"LC_ALL": "C", "LANG": "C"})
    if proc.returncode == 0:
        return None if (out / "summary.json").exists() else "exit 0 without summary.json"
    return expect(proc, 2, "--out")


# -- runs that fail after they started ------------------------------------------------------------

@case
def refused_implicit_step_keeps_the_run(tmp: Path) -> str | None:
    path = tmp / "implicit.yaml"
    text = dump(tmp).replace("  integrator: explicit", "  integrator: implicit")
    text = text.replace("  max_halvings: 4", "  max_halvings: 0")
    text = "\n".join("  dt: 0.5" if line.startswith("  dt: ") else line for line in text.splitlines())
    path.write_text(text + "\n")
    out = tmp / "refused"
    proc = cli("primitive", "twist_cw", "--params", str(path), "--duration", "5", "--out", str(out))
    if proc.returncode == 0:
        return None  # the step converged at this size on this machine: nothing to check
    if problem := expect(proc, 1, "t ="):
        return problem
    summary = out / "summary.json"
    if not summary.exists():
        return "no run directory kept"
    return None if json.loads(summary.read_text()).get("converged") is False else "summary says converged"


# -- the Python API and the envs ------------------------------------------------------------------

def _raises_parameter_error(fn: Callable[[], object], *words: str) -> str | None:
    from hsa_elastica.params import ParameterError

    try:
        fn()
    except ParameterError as err:
        missing = [w for w in words if w not in str(err)]
        return f"message {err} does not name {missing}" if missing else None
    except Exception as err:  # noqa: BLE001 - the point is to report which exception it was
        return f"{type(err).__name__}: {err}"
    return "accepted"


@case
def steady_state_negative_max_time(tmp: Path) -> str | None:
    from hsa_elastica import steady_state
    from hsa_elastica.params import paper_robot_params

    return _raises_parameter_error(
        lambda: steady_state(paper_robot_params(), [0, 0, 0, 0], method="dynamic", max_time=-1),
        "max_time")


@case
def step_without_bound(tmp: Path) -> str | None:
    from hsa_elastica.params import paper_robot_params
    from hsa_elastica.robots.builders import build_fast_robot

    robot = build_fast_robot(paper_robot_params(), [0.0] * 4, record=False)
    return _raises_parameter_error(lambda: robot.step(1e9), "dt_control")


@case
def env_arguments_checked_at_construction(tmp: Path) -> str | None:
    import gymnasium as gym

    import hsa_elastica  # noqa: F401 - registers the envs

    for kwargs, word in (({"control_dt": 1e9}, "control_dt"), ({"control_dt": 1e-9}, "control_dt"),
                         ({"dt": 1.0}, "dt")):
        if problem := _raises_parameter_error(lambda kw=kwargs: gym.make("HSARobot-v1", integrator="explicit", **kw), word):
            return f"{kwargs}: {problem}"
    return None


@case
def six_rods_on_the_default_circle(tmp: Path) -> str | None:
    path = edited(tmp, "six_rods", "n_rods: 4", "n_rods: 6")
    return expect(cli("steady-state", "--angles", *["0"] * 6, "--params", str(path)), 2, "circle_radius")


@case
def payload_without_gravity_warns(tmp: Path) -> str | None:
    path = edited(tmp, "payload", "  payload_mass: 0.0", "  payload_mass: 0.1")
    proc = cli("steady-state", *ANGLES, "--params", str(path))
    return None if "gravity" in proc.stderr.lower() else f"no word of gravity: {proc.stderr!r}"


@case
def symmetric_twist_flags_the_branch(tmp: Path) -> str | None:
    proc = cli("steady-state", "--angles", "4.7123889", "0", "4.7123889", "0", "--json", "-")
    if proc.returncode != 0:
        return f"exit {proc.returncode}: {proc.stderr[-300:]!r}"
    result = json.loads(proc.stdout)
    if result.get("symmetry_broken") is not True:
        return f"symmetry_broken = {result.get('symmetry_broken')!r} on the buckled twist"
    return None if result.get("symmetry_branch_m") else "no symmetry_branch_m"


@case
def static_solve_accepts_a_dt_only_stepping_refuses(tmp: Path) -> str | None:
    text = dump(tmp)
    path = tmp / "big_dt.yaml"
    path.write_text("\n".join("  dt: 0.001" if line.startswith("  dt: ") else line
                              for line in text.splitlines()) + "\n")
    if problem := expect(cli("steady-state", *ANGLES, "--params", str(path)), 0):
        return f"static: {problem}"
    return expect(cli("steady-state", *ANGLES, "--dynamic", "--params", str(path)), 2, "dt")


@case
def dataset_messages_match_the_result(tmp: Path) -> str | None:
    out = tmp / "grid"
    proc = cli("dataset", "--grid", "5", "--out", str(out), "--workers", "1", timeout=1200)
    if proc.returncode != 0:
        return f"exit {proc.returncode}: {proc.stderr[-300:]!r}"
    lines = [line for line in proc.stderr.splitlines() if "sample" in line]
    if len(lines) != len(set(lines)):
        return "a message is repeated"
    import pandas as pd

    from hsa_elastica import load_dataset

    frame: pd.DataFrame = load_dataset(out)
    if not frame["converged"].all():
        return None  # a pose that did not converge may say so
    wrong = [line for line in lines if "not converged" in line and "result: converged" not in line]
    return f"says not converged of a converged pose: {wrong[0]!r}" if wrong else None


@case
def read_only_numba_cache(tmp: Path) -> str | None:
    cache = tmp / "ro_cache"
    cache.mkdir()
    cache.chmod(0o555)
    proc = cli("steady-state", *ANGLES, env={"NUMBA_CACHE_DIR": str(cache)}, timeout=1200)
    if os.geteuid() == 0:
        pass  # root writes anyway: the case then only checks that it runs
    return "traceback" if "Traceback" in proc.stderr else expect(proc, 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", default="", help="run only the cases whose name contains this")
    args = ap.parse_args()
    failed = 0
    selected = {n: f for n, f in CASES.items() if args.k in n}
    for name, fn in selected.items():
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="hostile_") as tmp:
            try:
                problem = fn(Path(tmp))
            except Exception as err:  # noqa: BLE001 - a crash of the case is a failure to report
                problem = f"crashed: {type(err).__name__}: {err}"
        failed += problem is not None
        print(f"{'FAIL' if problem else 'ok  '} {name} ({time.perf_counter() - t0:.1f} s)"
              + (f": {problem}" if problem else ""), flush=True)
    print(f"{len(selected) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
