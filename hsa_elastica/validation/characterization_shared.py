"""A characterization fit whose parameters are shared across the row counts.

The per-row-count fits of :mod:`hsa_elastica.validation.characterization_fit` give every row
count its own five (to ten) parameters for 16-28 points; they follow the points they were fitted
to and predict a left-out twist angle badly.  The fits here describe all five row counts with a
handful of parameters, from how a closed HSA is built: ``n`` identical rows of auxetic cells
stacked along the rod, printed from one material (Good et al. 2022), between end pieces.

* **Auxetic coupling**: every row shears by the twist it carries, so the elongation is
  ``C_eps * phi`` for any number of rows (one shared ``C_eps`` [m/rad], Eq. 3 with the printed
  length; the measured slopes are 3.0-3.9 mm/rad for every row count).
* **Stiffness magnitudes**: the zero-twist axial stiffness ``k0(n) = E0 A / L`` and torsional
  stiffness ``T0(n) = tau / phi`` are those of ``n`` rows in series, each with two shared
  parameters: the 8-row value and either an exponent (``law = "power"``: ``k0 ~ n^-p``) or the
  number of rigid-equivalent rows (``"series"``: ``1 / k0 ~ n - n0``; rows next to the end
  pieces deform less).  One material: every row count has the same cells, so these laws
  replace the per-row-count moduli (``E0 = k0 L / A``, ``B_z = T0 L (n_e - 1) / n_e``).
* **Stiffening with twist** (Eq. 5): each row stiffens with its own twist.  Relative slopes
  ``beta_E, beta_B`` are shared either per handed twist strain (``coupling = "strain"``:
  ``E_slope / E0 = beta_E h_8``, ``h_8 = L(8) / 8``) or per row twist angle ``phi / n``
  (``"row"``: ``E_slope / E0 = beta_E L(n) / n``, the printed length per row).
* optionally the compression law (``compression = True``,
  :mod:`hsa_elastica.physics.compression_law`): one compression / tension stiffness ratio
  ``r_c`` shared by every row count (the same material in compression).

:data:`STRUCTURES` lists the candidates; the report picks one by its cross-validated score
(:mod:`hsa_elastica.validation.characterization_cv`).  The fit evaluates the model's closed
forms (:func:`closed_form_fast`, the vectorised form of
:func:`hsa_elastica.experiments.characterization.closed_form` for linear laws; the tests check
them against each other), residuals normalised by the error bar on the side of the miss,
Cauchy loss, deterministic starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hsa_elastica.experiments.characterization import DATA_UNITS
from hsa_elastica.params import RodParams, table1_rod_params
from hsa_elastica.physics.compression_law import AxialLawParams

#: row count whose stiffness is the reference of the stiffness laws
N_REF = 8


@dataclass(frozen=True)
class SharedStructure:
    """One candidate structure of the shared fit (see the module docstring)."""

    name: str
    law: str  # "power" or "series": stiffness magnitude against the row count
    coupling: str  # "strain" or "row": what the stiffening slopes are shared per
    compression: bool = False

    @property
    def fields(self) -> tuple[str, ...]:
        """Names of the shared parameters, in fit-vector order."""
        shape = "p" if self.law == "power" else "n0"
        out = ("C_eps", "k_ref", f"{shape}_k", "beta_E", "T_ref", f"{shape}_T", "beta_B")
        return out + (("r_c",) if self.compression else ())

    @property
    def n_parameters(self) -> int:
        """Parameters of the whole fit (all row counts together)."""
        return len(self.fields)


#: the candidate structures (all linear twist laws)
STRUCTURES: dict[str, SharedStructure] = {
    s.name: s
    for s in (
        SharedStructure("shared_power_strain", "power", "strain"),
        SharedStructure("shared_power_row", "power", "row"),
        SharedStructure("shared_series_strain", "series", "strain"),
        SharedStructure("shared_series_row", "series", "row"),
        SharedStructure("shared_power_row_compression", "power", "row", compression=True),
        SharedStructure("shared_series_row_compression", "series", "row", compression=True),
    )
}


def _magnitude(law: str, ref: float, shape: float, n: int) -> float:
    """Zero-twist stiffness of ``n`` rows from the 8-row value ``ref`` and the law's shape."""
    if law == "power":
        return ref * (n / N_REF) ** (-shape)
    return ref * (N_REF - shape) / (n - shape)  # compliance ~ (n - n0)


def _coupling_length(coupling: str, n: int) -> float:
    """Length [m] that turns a shared relative slope per radian into one per rad/m."""
    if coupling == "strain":
        return table1_rod_params(N_REF).length / N_REF
    return table1_rod_params(n).length / n


def shared_rods(
    structure: SharedStructure, x: np.ndarray, rows: list[int], checked: bool = True
) -> dict[int, tuple[RodParams, AxialLawParams | None]]:
    """The rod (and compression law) of each row count for the shared parameters ``x`` (SI,
    :attr:`SharedStructure.fields` order).  Geometry, density and element count are Table I's
    (the printed rods), the shear modulus ``E0 / 3`` as in Table I's rods (no characteristic
    depends on it); ``checked = False`` skips the validation (fit iterates)."""
    c_eps, k_ref, s_k, beta_e, t_ref, s_t, beta_b = (float(v) for v in x[:7])
    out: dict[int, tuple[RodParams, AxialLawParams | None]] = {}
    for n in rows:
        base = table1_rod_params(n)
        ell = _coupling_length(structure.coupling, n)
        e0 = _magnitude(structure.law, k_ref, s_k, n) * base.length / base.area
        ne = base.n_elements
        b0 = _magnitude(structure.law, t_ref, s_t, n) * base.length * (ne - 1) / ne
        fields = dict(C_eps=c_eps, youngs_modulus=e0, shear_modulus=e0 / 3.0, E_slope=e0 * beta_e * ell,
                      twist_rigidity=b0, twist_rigidity_slope=b0 * beta_b * ell)
        if checked:
            rod = base.replace(**fields)
        else:
            rod = _unchecked(base, **fields)
        law = AxialLawParams(compression_ratio=float(x[7]), compression_ratio_slope=0.0) if structure.compression else None
        out[n] = (rod, law)
    return out


def _unchecked(rod: RodParams, **changes: float) -> RodParams:
    import copy

    out = copy.copy(rod)
    for k, v in changes.items():
        object.__setattr__(out, k, float(v))
    return out


# --------------------------------------------------------------------------------------------
# vectorised closed forms (linear laws, right-handed rod)
# --------------------------------------------------------------------------------------------
def closed_form_fast(rod: RodParams, law: AxialLawParams | None, characteristic: np.ndarray,
                     angle: np.ndarray) -> np.ndarray:
    """:func:`hsa_elastica.experiments.characterization.closed_form` [data units] at many
    points of one rod at once: ``characteristic[i]`` at base twist ``angle[i]`` [rad].

    Linear twist laws only (``C_eps2 = E_quad = twist_rigidity_quad = 0``), ``handedness = +1``."""
    if rod.C_eps2 != 0.0 or rod.E_quad != 0.0 or rod.twist_rigidity_quad != 0.0 or rod.handedness != 1:
        raise ValueError("closed_form_fast: linear twist laws and handedness +1 only")
    n, l0 = rod.n_elements, rod.length / rod.n_elements
    kv = np.asarray(angle, dtype=float) / ((n - 1) * l0)
    ke = np.repeat(kv[:, None], n, axis=1)
    ke[:, 0] *= 0.5
    ke[:, -1] *= 0.5
    k_law = np.clip(ke, rod.eps_min / rod.C_eps, rod.eps_max / rod.C_eps)
    kv_law = np.clip(kv, rod.eps_min / rod.C_eps, rod.eps_max / rod.C_eps)
    rest = l0 * (1.0 + np.clip(rod.C_eps * ke, rod.eps_min, rod.eps_max))
    S = (rod.youngs_modulus + rod.E_slope * k_law) * rod.area
    comp = law is not None and not law.is_symmetric
    out = np.empty(len(kv))
    ch = np.asarray(characteristic)
    m = ch == "minimum_energy_length"
    out[m] = rest[m].sum(axis=1)
    m = ch == "holding_torque"
    out[m] = (rod.B_z + rod.twist_rigidity_slope * kv_law[m]) * kv[m]
    m = ch == "spring_constant"
    force = 0.01 * rod.youngs_modulus * rod.area if comp else 0.0
    out[m] = 1.0 / (rest[m] / (S[m] - force)).sum(axis=1)
    m = ch == "blocked_force"
    Sb = S[m] * (law.compression_ratio + law.compression_ratio_slope * k_law[m]) if comp and law else S[m]
    out[m] = _blocked_force_fast(rest[m], Sb, rod.length)
    units = np.array([DATA_UNITS[c][1] for c in ch]) if len(ch) else np.empty(0)
    return out * units


def _blocked_force_fast(rest: np.ndarray, S: np.ndarray, length: float) -> np.ndarray:
    """Roots ``f >= 0`` of ``sum(rest / (1 + f/S)) = length``, row by row (Newton from 0:
    the function is decreasing and convex, so the iterates increase monotonically to the root)."""
    f = np.zeros(len(rest))
    active = rest.sum(axis=1) > length
    for _ in range(100):
        g = (rest / (1.0 + f[:, None] / S)).sum(axis=1) - length
        dg = -(rest / S / (1.0 + f[:, None] / S) ** 2).sum(axis=1)
        step = np.where(active, g / np.where(dg == 0.0, -1.0, dg), 0.0)
        f -= step
        if np.all(np.abs(step) <= 1e-13 * np.maximum(1.0, np.abs(f))):
            break
    return np.where(active, f, 0.0)


def predict(rods: dict[int, tuple[RodParams, AxialLawParams | None]], data: pd.DataFrame) -> np.ndarray:
    """Closed-form values [data units] at the points of ``data`` (any row counts of ``rods``)."""
    out = np.full(len(data), np.nan)
    rows = data["rows"].to_numpy()
    ch = data["characteristic"].to_numpy()
    ang = np.radians(data["twist_angle_deg"].to_numpy(dtype=float))
    for n, (rod, law) in rods.items():
        m = rows == n
        if m.any():
            out[m] = closed_form_fast(rod, law, ch[m], ang[m])
    return out


# --------------------------------------------------------------------------------------------
# fit
# --------------------------------------------------------------------------------------------
def _bar_scale(data: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Measured values and the two error bars, floored at 1e-3 of each curve's largest value
    (a zero-width bar would give an infinite weight; as in the per-row-count fits)."""
    scale = data.groupby(["characteristic", "rows"])["value"].transform(lambda v: np.abs(v).max()).to_numpy()
    lo = np.maximum(data["err_low"].to_numpy(), 1e-3 * scale)
    hi = np.maximum(data["err_high"].to_numpy(), 1e-3 * scale)
    return data["value"].to_numpy(dtype=float), lo, hi


def _start(structure: SharedStructure) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Start, scale and bounds (SI) of the fit vector, from Table I's 8-row rod."""
    r8 = table1_rod_params(N_REF)
    k8 = r8.youngs_modulus * r8.area / r8.length
    t8 = r8.B_z * r8.n_elements / ((r8.n_elements - 1) * r8.length)
    shape0, shape_lo, shape_hi = (1.0, 0.0, 4.0) if structure.law == "power" else (0.0, -20.0, 3.5)
    x0 = [r8.C_eps, k8, shape0, 0.5, t8, shape0, 0.1]
    lo = [0.5 * r8.C_eps, 0.2 * k8, shape_lo, -0.4, 0.2 * t8, shape_lo, -0.4]
    hi = [2.0 * r8.C_eps, 5.0 * k8, shape_hi, 10.0, 5.0 * t8, shape_hi, 10.0]
    scale = [r8.C_eps, k8, 1.0, 1.0, t8, 1.0, 1.0]
    if structure.compression:
        x0, lo, hi, scale = x0 + [0.8], lo + [0.05], hi + [1.0], scale + [1.0]
    return np.array(x0), np.array(scale), np.array(lo), np.array(hi)


def fit_shared(structure: SharedStructure, data: pd.DataFrame) -> tuple[np.ndarray, dict[str, Any]]:
    """Least-squares fit of the shared parameters to ``data`` (any subset of the measured
    points, all row counts together).  Returns the parameters (SI, ``structure.fields``
    order) and the optimiser's summary.  Deterministic: fixed starts, the lowest cost wins."""
    from scipy.optimize import least_squares

    rows = sorted(int(r) for r in set(data["rows"]))
    value, e_lo, e_hi = _bar_scale(data)
    x0, scale, lo, hi = _start(structure)

    def res(z: np.ndarray) -> np.ndarray:
        sim = predict(shared_rods(structure, z * scale, rows, checked=False), data)
        return (sim - value) / np.where(sim > value, e_hi, e_lo)

    starts = [x0.copy()]
    alt = x0.copy()
    alt[2] = alt[5] = 1.5 if structure.law == "power" else 2.0
    alt[3], alt[6] = 2.0, 0.5
    starts.append(alt)
    best = None
    for s in starts:
        z0 = np.clip(s, lo + 1e-9 * scale, hi - 1e-9 * scale) / scale
        r = least_squares(res, z0, bounds=(lo / scale, hi / scale), loss="cauchy", f_scale=1.0, x_scale="jac")
        if best is None or r.cost < best.cost:
            best = r
    assert best is not None
    x = best.x * scale
    shared_rods(structure, x, rows)  # validated: every rod must be a valid RodParams
    return x, {"cost": float(best.cost), "nfev": int(best.nfev), "status": int(best.status)}


# --------------------------------------------------------------------------------------------
# the shipped shared fit
# --------------------------------------------------------------------------------------------
#: the structure shipped as ``fitted_params_shared.yaml`` (parameter set ``fitted_shared``): the
#: candidate with the best cross-validated score (``python -m validation.characterization_cv``)
CHOSEN = "shared_series_row"


def save_shared(structure: SharedStructure, x: np.ndarray, rows: list[int], path: Path) -> None:
    """Write the rods of the shared fit as a per-row-count parameter file (the format of
    ``fitted_params.yaml``: ``rows -> RodParams fields``, SI; with the compression law that of
    ``fitted_params_compression.yaml``), the shared parameters in the header."""
    import yaml

    from hsa_elastica.params.files import write_text_atomic

    rods = shared_rods(structure, x, rows)
    if structure.compression:
        body: dict[int, Any] = {int(r): {"rod": rod.to_dict(), "axial_law": law.to_dict() if law else {}}
                                for r, (rod, law) in rods.items()}
    else:
        body = {int(r): rod.to_dict() for r, (rod, _) in rods.items()}
    shared = ", ".join(f"{f} = {v:.6g}" for f, v in zip(structure.fields, x))
    header = (
        "# Closed-HSA rods of the fit shared across row counts (python -m hsa_elastica.validation.characterization --fit;\n"
        f"# hsa_elastica.validation.characterization_shared, structure {structure.name}, "
        f"{structure.n_parameters} parameters for all row counts):\n"
        f"# {shared}\n"
        "# (SI; k_ref [N/m], T_ref [N m/rad] are the zero-twist axial / torsional stiffness of the 8-row rod,\n"
        "# p_* exponents, n0_* rigid-equivalent rows, beta_* relative stiffening [1/rad]).  RodParams fields, SI;\n"
        "# geometry, density and element count are Table I's.\n"
    )
    write_text_atomic(path, header + yaml.safe_dump(body, sort_keys=True))
