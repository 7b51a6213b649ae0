"""Closed forms of the HSA characterization experiments and the measured data's layout (Section II-C).

The steady-state ``characteristic`` of the discrete model in closed form (:func:`closed_form`;
formulas in :mod:`hsa_elastica.experiments.characterization`, whose virtual experiments they
check), the four characteristics, the columns and units of the measured characterization
(Good et al. 2022) and its loader.  SI inside; :data:`DATA_UNITS` converts at the edges.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.physics.compression_law import AxialLawParams
from hsa_elastica.params import RodParams

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: The four characteristics of Fig. 3 (names as in the data file).
CHARACTERISTICS: tuple[str, ...] = (
    "blocked_force",
    "spring_constant",
    "minimum_energy_length",
    "holding_torque",
)

#: characteristic -> (unit string of the data file, factor: value_in_data_unit = factor * SI).
DATA_UNITS: dict[str, tuple[str, float]] = {
    "blocked_force": ("N", 1.0),
    "spring_constant": ("N/mm", 1e-3),
    "minimum_energy_length": ("mm", 1e3),
    "holding_torque": ("N*mm", 1e3),
}

#: Columns of ``good2022_closed_fpu50.csv``.
DATA_COLUMNS: tuple[str, ...] = (
    "characteristic",
    "rows",
    "twist_angle_deg",
    "value",
    "err_low",
    "err_high",
    "unit",
)


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------
def default_data_path() -> Path:
    """The measured characterization CSV: ``$HSA_ELASTICA_DATA`` if set, else the copy shipped
    with the package (``hsa_elastica.data.path("good2022_closed_fpu50.csv")``)."""
    override = os.environ.get("HSA_ELASTICA_DATA")
    if override:
        return Path(override)
    from hsa_elastica.data import path as data_path

    return data_path("good2022_closed_fpu50.csv")


def load_characterization_data(path: str | Path | None = None) -> "pd.DataFrame":
    """Read the measured characterization (Good et al. 2022) and check its columns and units.

    Returns the file's columns unchanged (values in the data units of :data:`DATA_UNITS`).
    """
    import pandas as pd

    p = default_data_path() if path is None else Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"characterization data not found: {p}")
    df = pd.read_csv(p)
    missing = [c for c in DATA_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{p}: missing columns {missing}; expected {list(DATA_COLUMNS)}")
    unknown = sorted(set(df["characteristic"]) - set(CHARACTERISTICS))
    if unknown:
        raise ValueError(f"{p}: unknown characteristic(s) {unknown}; known: {CHARACTERISTICS}")
    for ch, (unit, _) in DATA_UNITS.items():
        units = set(df.loc[df["characteristic"] == ch, "unit"])
        if units and units != {unit}:
            raise ValueError(f"{p}: {ch} has unit(s) {sorted(units)}, expected {unit!r}")
    if (df["err_low"] < 0).any() or (df["err_high"] < 0).any():
        raise ValueError(f"{p}: error bars must be >= 0 (distances below / above value)")
    return df


def to_data_unit(characteristic: str, value_si: float) -> float:
    """SI value of ``characteristic`` -> the data file's unit (N, N/mm, mm, N*mm)."""
    if characteristic not in DATA_UNITS:
        raise ValueError(
            f"characteristic = {characteristic!r} is invalid: must be one of {CHARACTERISTICS}"
        )
    return float(value_si) * DATA_UNITS[characteristic][1]


# --------------------------------------------------------------------------------------------
# closed forms of the discrete model
# --------------------------------------------------------------------------------------------
def _element_strains(rod: RodParams, angle: float) -> dict[str, Any]:
    """Uniform-twist steady state of ``rod`` twisted by ``angle`` [rad] (printed length)."""
    n = rod.n_elements
    l0 = rod.length / n
    kappa_v = rod.handedness * angle / ((n - 1) * l0)  # handed Voronoi twist strain [rad/m]
    kappa_e = np.full(n, kappa_v)
    kappa_e[0] = kappa_e[-1] = 0.5 * kappa_v  # zero-padded average to elements
    if rod.C_eps > 0.0:
        lo, hi = rod.eps_min / rod.C_eps, rod.eps_max / rod.C_eps
        kappa_e_law = np.clip(kappa_e, lo, hi)
        kappa_v_law = float(np.clip(kappa_v, lo, hi))
    else:
        kappa_e_law, kappa_v_law = kappa_e, kappa_v
    if rod.C_eps2 == 0.0:
        eps = np.clip(rod.C_eps * kappa_e, rod.eps_min, rod.eps_max)
    else:  # optional quadratic law of the clipped twist strain
        eps = np.clip(rod.C_eps * kappa_e_law + rod.C_eps2 * kappa_e_law**2, rod.eps_min, rod.eps_max)
    rest = l0 * (1.0 + eps)
    S = (rod.youngs_modulus + rod.E_slope * kappa_e_law + rod.E_quad * kappa_e_law**2) * rod.area
    B_z = rod.B_z + rod.twist_rigidity_slope * kappa_v_law + rod.twist_rigidity_quad * kappa_v_law**2
    return dict(n=n, l0=l0, kappa_v=kappa_v, rest=rest, S=S, B_z=B_z, kappa_e_law=kappa_e_law)


def _blocked_force_closed(rest: NDArray[np.float64], S: NDArray[np.float64], length: float) -> float:
    """Root ``f >= 0`` of ``sum(rest / (1 + f/S)) = length`` (Newton; monotone, convex)."""
    if float(np.sum(rest)) <= length:
        return 0.0
    f = 0.0
    for _ in range(100):
        g = float(np.sum(rest / (1.0 + f / S))) - length
        dg = -float(np.sum(rest / S / (1.0 + f / S) ** 2))
        step = g / dg
        f -= step
        if abs(step) <= 1e-13 * max(1.0, abs(f)):
            break
    return f


def _compressive(axial_law: AxialLawParams | None) -> bool:
    return axial_law is not None and not axial_law.is_symmetric


def closed_form(
    rod: RodParams, characteristic: str, angle: float, *, axial_law: AxialLawParams | None = None
) -> float:
    """Steady-state ``characteristic`` [SI] of the discrete model at base twist ``angle`` [rad].

    With an asymmetric ``axial_law`` (:mod:`hsa_elastica.physics.compression_law`): the blocked rod's
    elements are all in compression, so ``S_i -> r_c(kappa_i) S_i`` in the blocked-force root;
    the spring constant is the one-sided *pull* value of :func:`spring_constant` (tension
    only, exact for PyElastica's ``n = S (1 - rest / l)``): ``k = 1 / sum(rest_i / (S_i - F))``
    with ``F = 0.01 E0 A``; length and holding torque are unaffected (no axial load).

    See :mod:`hsa_elastica.experiments.characterization` for the formulas (Eqs. 2-5 with the contract's averaging).  The
    twist is assumed uniform (exact for the free rod; for the blocked rod the Voronoi
    dilatations differ slightly between end and interior regions, a second-order effect that
    the simulator includes).  ``holding_torque`` is signed like ``angle`` for ``handedness=+1``.
    """
    st = _element_strains(rod, float(angle))
    if characteristic == "minimum_energy_length":
        return float(np.sum(st["rest"]))
    if characteristic == "holding_torque":
        return float(rod.handedness * st["B_z"] * st["kappa_v"])
    if characteristic == "spring_constant":
        if _compressive(axial_law):
            force = 0.01 * rod.youngs_modulus * rod.area
            return float(1.0 / np.sum(st["rest"] / (st["S"] - force)))
        return float(1.0 / np.sum(st["rest"] / st["S"]))
    if characteristic == "blocked_force":
        S = st["S"]
        if _compressive(axial_law):
            assert axial_law is not None
            S = S * (axial_law.compression_ratio + axial_law.compression_ratio_slope * st["kappa_e_law"])
        return _blocked_force_closed(st["rest"], S, rod.length)
    raise ValueError(
        f"characteristic = {characteristic!r} is invalid: must be one of {CHARACTERISTICS}"
    )
