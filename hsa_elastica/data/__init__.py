"""Measured data shipped with hsa-elastica (sources and licences: ``README.md`` next to this file).

* ``good2022_closed_fpu50.csv`` -- mechanical characterization of closed FPU 50 HSAs (Good et
  al., ICRA 2022, Fig. 4), used by :mod:`hsa_elastica.experiments.characterization`.
* ``elongation_20221011_174514_steady_state.csv``, ``twisting_20221012_103309_steady_state.csv``
  -- motion-capture steady states of the four-rod robot of the RoboSoft 2023 paper, used by
  :mod:`hsa_elastica.experiments.calibration` and the ``fpu_robot_2022`` preset.

:func:`path` returns the installed file's path (works outside a source checkout).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["path", "names", "MOCAP_RUNS"]

_HERE = Path(__file__).resolve().parent

#: the two motion-capture runs of the real robot (steady states), by short name
MOCAP_RUNS: dict[str, str] = {
    "elongation": "elongation_20221011_174514_steady_state.csv",
    "twisting": "twisting_20221012_103309_steady_state.csv",
}


def names() -> list[str]:
    """File names of the shipped data sets."""
    return sorted(p.name for p in _HERE.glob("*.csv"))


def path(name: str) -> Path:
    """Path of the shipped data file ``name`` (a file name from :func:`names`, or a short
    mocap run name from :data:`MOCAP_RUNS`); ``FileNotFoundError`` naming the choices."""
    name = MOCAP_RUNS.get(name, name)
    p = _HERE / name
    if p.parent != _HERE or not p.is_file():
        raise FileNotFoundError(
            f"no shipped data file {name!r}; available: {', '.join(names())} "
            f"(or a run name: {', '.join(MOCAP_RUNS)})"
        )
    return p
