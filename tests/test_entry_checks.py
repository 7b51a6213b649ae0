"""Input checks of the Python entry points that users hit: the keyword arguments of
``steady_state`` (each refused with ``ParameterError`` naming it and its range, before any
work), the batch CSV's two column sets, the static solve's time step, and the warning for a
mass that gravity does not act on."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from hsa_elastica.params import ParameterError, RobotParams
from hsa_elastica.robots import statics_api
from hsa_elastica.robots import steady_state as steady_state_module
from hsa_elastica.robots.steady_state_api import steady_state

ANGLES = [0.0, 0.0, 0.0, 0.0]


@pytest.fixture
def no_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building a robot fails the test: a refusal must come before the work."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a robot was built")

    monkeypatch.setattr(steady_state_module, "build_robot", refuse)
    monkeypatch.setattr(statics_api, "solve_static", refuse)


@pytest.mark.parametrize(
    "options, needle",
    [
        ({"max_time": -1}, "max_time = -1 is invalid: must be a finite number > 0 and <= 600 s"),
        # 1e9 s: beyond the command line's cap of 2e7 steps of dt = 3e-5 s
        ({"max_time": 1e9}, "max_time = 1e+09 is invalid: must be a finite number > 0 and <= 600 s"),
        ({"max_time": math.nan}, "max_time = nan is invalid"),
        ({"tol_velocity": "abc"}, "tol_velocity = 'abc' is invalid: must be a finite number > 0 (m/s)"),
        ({"tol_omega": 0.0}, "tol_omega = 0.0 is invalid: must be a finite number > 0 (rad/s)"),
        ({"window": -0.1}, "window = -0.1 is invalid: must be a finite number >= 0 (s)"),
        ({"check_interval": True}, "check_interval = True is invalid"),
        ({"ramp": -1.0}, "ramp = -1.0 is invalid: must be a finite number >= 0 (s)"),
        ({"max_speed": math.inf}, "max_speed = inf is invalid"),
        ({"tol_residual": -1.0}, "tol_residual = -1.0 is invalid"),
        ({"max_tme": 1.0}, "keyword 'max_tme' is invalid: solve_steady_state takes"),
    ],
)
def test_dynamic_steady_state_options_refused_naming_the_keyword(
        no_solve: None, options: dict[str, Any], needle: str) -> None:
    with pytest.raises(ParameterError) as info:
        steady_state(RobotParams(), ANGLES, method="dynamic", **options)
    assert needle in str(info.value) and "\n" not in str(info.value), str(info.value)


def test_static_steady_state_refuses_the_dynamic_keywords() -> None:
    # a keyword of the other method was a TypeError from deep inside; now named with the
    # solver's own keywords
    with pytest.raises(ParameterError, match=r"method='static'\): keyword 'max_time' is invalid: "
                       r"solve_static takes initial, check_stability, fallback, mirror_branch"):
        steady_state(RobotParams(), ANGLES, max_time=1.0)
    with pytest.raises(ParameterError, match="keyword 'max_time'.*solve_static_batch takes"):
        steady_state(RobotParams(), [ANGLES, ANGLES], max_time=1.0)


def test_batch_csv_with_both_angle_column_sets_refused(
        tmp_path: Path, no_solve: None, capsys: pytest.CaptureFixture[str]) -> None:
    # angle_* and motor_angles_rad_* both present: one set was used and the other ignored
    from hsa_elastica.cli import main
    from hsa_elastica.experiments.datasets import read_angles_csv

    path = tmp_path / "poses.csv"
    path.write_text("angle_0,angle_1,angle_2,angle_3,motor_angles_rad_0,motor_angles_rad_1,"
                    "motor_angles_rad_2,motor_angles_rad_3\n0.1,0,0,0,0.2,0,0,0\n", encoding="utf-8")
    code = main(["steady-state", "--angles-csv", str(path), "--out", str(tmp_path / "r.csv"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "angle_0" in err and "motor_angles_rad_0" in err and "both" in err, err
    assert not (tmp_path / "r.csv").exists()
    with pytest.raises(ParameterError, match="both angle_.*motor_angles_rad_"):
        read_angles_csv(path, 4)
    # either set alone is read
    path.write_text("motor_angles_rad_0,motor_angles_rad_1,motor_angles_rad_2,motor_angles_rad_3,"
                    "angle\n0.2,0,0,0,7\n", encoding="utf-8")
    assert read_angles_csv(path, 4).tolist() == [[0.2, 0.0, 0.0, 0.0]]


def test_static_steady_state_accepts_a_dt_it_does_not_use(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a static solve does not step in time: a dt above the explicit limit (3.47e-5 s for the
    # paper robot) gives the same equilibrium; a command that steps in time refuses it
    from hsa_elastica.cli import main
    from hsa_elastica.params import save_params

    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    p = RobotParams()
    save_params(p, good)
    save_params(p.replace(simulation=p.simulation.replace(dt=1e-4)), bad)
    outs = []
    for path in (good, bad):
        code = main(["steady-state", "--angles", "1", "0", "0", "-1", "--params", str(path), "--json", "-"])
        out, err = capsys.readouterr()
        assert code == 0, err
        outs.append(out)
    a, b = (json.loads(o) for o in outs)
    assert a["method"] == b["method"] == "static"
    assert a["platform_position_m"] == b["platform_position_m"]  # same equilibrium, bit for bit
    code = main(["steady-state", "--angles", "1", "0", "0", "-1", "--params", str(bad), "--dynamic"])
    err = capsys.readouterr().err
    assert code == 2 and "simulation.dt = 0.0001 is invalid" in err, err


def test_payload_without_gravity_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # without gravity a payload has no weight: the static pose is bit for bit that without it
    import warnings

    from hsa_elastica.cli import main
    from hsa_elastica.params import (
        MassWithoutGravityWarning,
        mass_without_gravity,
        save_params,
    )

    p = RobotParams()
    loaded = p.replace(platform=p.platform.replace(payload_mass=0.1))
    with pytest.warns(MassWithoutGravityWarning, match=r"payload_mass = 0.1 kg without gravity"):
        heavy = steady_state(loaded, [1.0, 0.0, 0.0, -1.0]).top.platform_position_m
    with warnings.catch_warnings():
        warnings.simplefilter("error", MassWithoutGravityWarning)  # no warning without a payload
        plain = steady_state(p, [1.0, 0.0, 0.0, -1.0]).top.platform_position_m
    assert heavy.tolist() == plain.tolist()  # what the warning says: the payload changed nothing
    # with gravity, or for a stack's motors: named or silent as they act or not
    hanging = loaded.replace(simulation=p.simulation.replace(gravity=(0.0, 0.0, -9.81)))
    assert mass_without_gravity(hanging) is None
    assert "motor_mass = 0.07 kg" in str(mass_without_gravity([p, p], 0.07))
    assert mass_without_gravity([p, p], 0.0) is None and mass_without_gravity(p, 0.07) is None
    # the command line: one line on stderr, the run goes on
    path = save_params(loaded, tmp_path / "payload.yaml")
    code = main(["steady-state", "--angles", "1", "0", "0", "-1", "--params", str(path), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0
    lines = [x for x in err.splitlines() if "warning" in x]
    assert lines == [lines[0]] and lines[0].startswith("hsa-elastica: warning: platform.payload_mass"), err
