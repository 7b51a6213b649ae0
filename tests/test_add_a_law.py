"""The worked example of docs/architecture.md ("How to add a new law"): a toy law -- play-type
hysteresis of the rest length -- built from one kernel, one table and one operator
(``docs/examples/hysteresis_law.py``) runs as written, gives the hand-computed rest strains,
runs in PyElastica's own time loop, and is refused (not dropped) by the compiled engines."""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "hysteresis_law.py"


def test_example_gives_the_play_operator_by_hand() -> None:
    proc = subprocess.run([sys.executable, str(EXAMPLE)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = [float(v) for v in re.findall(r"rest strain ([-+0-9.eE]+)", proc.stdout)]
    # play operator of half-width 0.02 driven by the strain 0.05, 0, -0.01 from m = 0:
    # clip(0, 0.03, 0.07) = 0.03, clip(0.03, -0.02, 0.02) = 0.02, clip(0.02, -0.03, 0.01) = 0.01.
    # Tolerance 1e-9: the printed 12 decimals and the round-off of l / l_printed (observed 1e-12).
    assert np.allclose(got, [0.03, 0.02, 0.01], rtol=0.0, atol=1e-9), proc.stdout


def test_law_runs_in_the_time_loop_and_is_refused_by_the_compiler() -> None:
    from elastica import BaseSystemCollection, CosseratRod, Forcing, PositionVerlet, integrate

    from hsa_elastica.engines.compile import FastPathUnsupported, compile_simulator

    example = runpy.run_path(str(EXAMPLE))  # the module's definitions, not its __main__ demo

    class Sim(BaseSystemCollection, Forcing):
        pass

    def build() -> tuple[Sim, CosseratRod]:
        sim = Sim()
        rod = CosseratRod.straight_rod(
            5, np.zeros(3), np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]),
            0.1, 0.01, 1000.0, youngs_modulus=1e6, shear_modulus=4e5,
        )
        rod.velocity_collection[2] = np.linspace(0.0, 0.5, 6)  # stretching at 5 /s
        sim.append(rod)
        sim.add_forcing_to(rod).using(example["RestLengthHysteresis"], width=0.001)
        sim.finalize()
        return sim, rod

    sim, rod = build()
    printed = np.array(rod.rest_lengths)
    integrate(PositionVerlet(), sim, 2e-3, 100, progress_bar=False)
    # the stretching rod has dragged its rest lengths along (beyond the dead band)
    assert np.all(np.isfinite(rod.rest_lengths)) and np.all(rod.rest_lengths > printed)
    with pytest.raises(FastPathUnsupported):
        compile_simulator(build()[0])
