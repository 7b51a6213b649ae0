"""What a solve tells on stderr about a pose: one line per pose whose solve needed more than one
attempt or whose mirror branch round-off chose, saying what happened and what the returned
result is; never "not converged" for a result that converged, never the same line twice.

The case of ``hsa-elastica dataset --grid 5`` (paper robot): at motor angles (0, -3 pi/4, 0,
-3 pi/4), a symmetric command that buckles, the static solver asks the dynamic relaxation which
mirror branch it reaches; the relaxation stays on the unstable symmetric pose (its warning "not
converged" is about that auxiliary run), and the static result converges on one branch."""

from __future__ import annotations

import json
import logging
import math

import numpy as np
import pytest

from hsa_elastica.experiments.dataset_chunks import ChunkTask, solve_chunk
from hsa_elastica.params import paper_robot_params

P = paper_robot_params()
#: sample 78 of ``dataset --grid 5``
UNDECIDED = [0.0, -0.75 * math.pi, 0.0, -0.75 * math.pi]


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.slow
def test_dataset_chunk_says_once_per_sample_what_happened_to_the_result(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    task = ChunkTask(chunk=0, samples=np.array([78, 79]),
                     angles=np.array([UNDECIDED, [0.0, -0.75 * math.pi, 0.0, -math.pi]]),
                     params_json=json.dumps(P.to_dict()), solver="static", shapes=False)
    rows = {r["sample"]: r for r in solve_chunk(task).to_pylist()}
    assert rows[78]["converged"] and rows[78]["method"] == "static"
    lines = _lines(caplog)
    assert len(lines) == 1, lines  # sample 79 (no symmetry) needed one attempt: nothing to say
    (line,) = lines
    assert line.startswith("sample 78: motor angles [ 0.     -2.3562  0.     -2.3562]: ")
    assert "stayed on the unstable symmetric pose, so round-off chose the branch" in line
    assert "result: converged (static)" in line and "not converged" not in line.lower()


def test_fallback_says_the_static_failure_and_the_dynamic_outcome_in_one_line(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """A static solve that fails (forced here) falls back to relaxation: one line with the
    reason and the fallback's result, converged."""
    from hsa_elastica.robots import statics_api

    real = statics_api._checked

    def failing(solver, out):  # type: ignore[no-untyped-def]
        out = real(solver, out)
        out.converged, out.message = False, "continuation failed"
        return out

    monkeypatch.setattr(statics_api, "_checked", failing)
    res = statics_api.solve_static(P, [0.5, -0.5, 0.5, -0.5])
    assert res.method == "dynamic" and res.converged
    x, y, z = res.platform_position_m * 1e3
    assert _lines(caplog) == [
        ("motor angles [ 0.5 -0.5  0.5 -0.5]: the static solve stopped: continuation failed; "
         "retried by dynamic relaxation from rest; result: converged (dynamic), platform at "
         f"({x:.2f}, {y:.2f}, {z:.2f}) mm")
    ]


def test_a_solve_that_needs_one_attempt_says_nothing(caplog: pytest.LogCaptureFixture) -> None:
    from hsa_elastica.robots.statics_api import solve_static

    assert solve_static(P, [0.5, -0.5, 0.5, -0.5]).converged
    assert _lines(caplog) == []


def test_held_warnings_hold_warnings_and_pass_the_rest_on(caplog: pytest.LogCaptureFixture) -> None:
    from hsa_elastica.io.held_messages import held_warnings

    caplog.set_level(logging.INFO)
    log = logging.getLogger("hsa_elastica.some.module")
    with held_warnings() as said:
        log.warning("about an inner run: %s", "not converged")
        log.info("progress")
        assert caplog.records == []  # nothing shown inside the block
    assert said == ["about an inner run: not converged"]
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [(logging.INFO, "progress")]
    log.warning("after")  # the logger works as before afterwards
    assert caplog.records[-1].getMessage() == "after"
