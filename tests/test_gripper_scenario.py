"""scenarios/gripper.py: its input checks and its motor schedules (the run itself, two robots
on PyElastica's loop, takes about a minute of CPU and is not repeated here; docs/contact.md,
"A gripper", has its measured numbers)."""

from __future__ import annotations

import math
import runpy
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scenarios" / "gripper.py"


def _module() -> dict[str, Any]:
    return runpy.run_path(str(SCRIPT), run_name="gripper_under_test")


@pytest.mark.parametrize("argv, flag", [
    (["--duration", "0"], "--duration"),
    (["--extend", "1.5"], "--extend"),
    (["--extend", "0.7", "--squeeze", "0.4"], "--squeeze"),
    (["--mass", "-1"], "--mass"),
    (["--video", "out.avi"], "--video"),
    (["--integrator", "rk4"], "--integrator"),
])
def test_bad_input_exits_2_with_one_line_naming_the_flag(argv: list[str], flag: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        _module()["main"](argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    message = [line for line in err if not line.startswith(("usage:", " "))]  # argparse's usage
    assert len(message) == 1 and flag in message[0] and "error" in message[0]
    assert not list(tmp_path.iterdir())  # nothing written


def test_schedules_close_then_shorten_keeping_the_bend() -> None:
    schedules = _module()["_schedules"]
    duration, extend, squeeze = 2.0, 0.6, 0.4
    outer, inner = schedules(duration, extend, squeeze, (1, -1))
    assert outer(0.0) == 0.0 and inner(0.0) == 0.0
    # closed at 40 % of the run: both rods at extend, the outer one squeeze more (handedness
    # +1 and -1: the angle's sign)
    assert outer(0.8) == pytest.approx((extend + squeeze) * math.pi)
    assert inner(0.8) == pytest.approx(-extend * math.pi)
    # shortened by 85 %: the common twist gone, the outer rod's extra twist (the bend) kept
    for t in (1.7, 2.0):
        assert outer(t) == pytest.approx(squeeze * math.pi)
        assert inner(t) == pytest.approx(0.0, abs=1e-15)
