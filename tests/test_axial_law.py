"""Compression-softening axial law (hsa_elastica.physics.compression_law).

References are closed forms of PyElastica's stretch law, independent of the code under test:
a free rod loaded by an axial tip force ``F`` has, in every element, ``F = k (1 - rest / l)``
with ``k = S_zz`` in tension and ``k = r_c S_zz`` in compression (the law's definition), so
its length is ``sum(rest) / (1 - F / k)`` (``~ L (1 + F / k)`` to first order).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from hsa_elastica.experiments import characterization as ch
from hsa_elastica.physics.compression_law import (
    AxialLawParams,
    compression_correction_forces,
    compression_ratio_kernel,
)
from hsa_elastica.params import ParameterError, table1_rod_params

ROWS = 4


def test_params_validated():
    with pytest.raises(ParameterError, match="compression_ratio"):
        AxialLawParams(compression_ratio=0.0)
    with pytest.raises(ParameterError, match="compression_ratio"):
        AxialLawParams(compression_ratio=1.2)
    with pytest.raises(ParameterError, match="compression_ratio_slope"):
        AxialLawParams(compression_ratio_slope=float("nan"))
    # r_c = 0.5 - 0.01 * kappa reaches <= 0 at kappa = 50 rad/m
    with pytest.raises(ParameterError, match="compression_ratio_slope"):
        AxialLawParams(0.5, -0.01).check_range(0.0, 60.0)
    AxialLawParams(0.5, -0.005).check_range(0.0, 60.0)  # r_c = 0.2 at the end: fine
    assert AxialLawParams.from_dict(AxialLawParams(0.3, 0.001).to_dict()) == AxialLawParams(0.3, 0.001)


def test_kernel_is_equal_and_opposite_and_only_in_compression():
    """Hand values: one compressed element (n_z = -2 N, e = 0.8) along d3 = +x, one stretched."""
    sigma_z = np.array([-0.2, 0.1])
    factor = np.zeros(2)
    compression_ratio_kernel(np.array([10.0, 10.0]), 0.5, 0.01, sigma_z, factor)
    assert factor == pytest.approx([0.6, 1.0])  # 0.5 + 0.01 * 10 where compressed
    stress = np.array([[0.0, 0.0], [0.0, 0.0], [-2.0, 3.0]])
    Q = np.zeros((3, 3, 2))
    Q[0, 1, :] = Q[1, 2, :] = 1.0  # rows: d1 = y, d2 = z
    Q[2, 0, :] = 1.0  # d3 = +x
    ext = np.zeros((3, 3))
    compression_correction_forces(factor, stress, Q, np.array([0.8, 1.1]), ext)
    # (0.6 - 1) * (-2) / 0.8 = +1 N on node 0 along +x, -1 N on node 1; nothing else
    expected = np.zeros((3, 3))
    expected[0, 0], expected[0, 1] = 1.0, -1.0
    assert ext == pytest.approx(expected, abs=1e-14)
    assert ext.sum(axis=1) == pytest.approx(np.zeros(3), abs=1e-14)  # momentum


def _tip_loaded_length(rod, law, force):
    """Untwisted rod (motor base at 0 rad, distal twist locked), axial tip force [N]."""
    from hsa_elastica.robots.builders import OperatorRef

    tip: OperatorRef[ch._AdjustableTipForce] = OperatorRef()
    h, ref = ch._build(rod, 0.0, None, distal="twist_locked", finalize=False, axial_law=law)
    h.simulator.add_forcing_to(h.rod).using(tip.capture(ch._AdjustableTipForce), force=force)
    h.simulator.finalize()
    opts = dataclasses.replace(ch.ROD_SETTLE, tol_velocity=2e-5 * rod.length)  # 2e-5 lengths/s
    ch._settle(h, quiet_after=h.sim_params.ramp_time, settle=opts)
    pos = h.rod.position_collection
    return float(pos[2, -1] - pos[2, 0]), ref


@pytest.mark.parametrize("r_c", [0.4, 1.0])
def test_tip_force_closed_form_compression_softened_tension_unchanged(r_c):
    """Push: L / (1 + F / (r_c S)); pull: L / (1 - F / S) (exact for n = S(1 - rest/l)).

    F = 0.5 % of S (first-order length change F L / (r_c S) = 0.94 mm for r_c = 0.4).
    Tolerance 2e-3 of the length change: settling (speed < 2e-6 L/s) and the O(dt) lag.
    """
    rod = table1_rod_params(ROWS)
    S = rod.youngs_modulus * rod.area
    L = rod.length
    law = AxialLawParams(compression_ratio=r_c)
    F = 0.005 * S
    l_push, ref = _tip_loaded_length(rod, law, -F)
    assert L - l_push == pytest.approx(L - L / (1.0 + F / (r_c * S)), rel=2e-3)
    # first order F L / (r_c S): the neglected term is relatively O(F / (r_c S)) (1.25 %)
    assert L - l_push == pytest.approx(F * L / (r_c * S), rel=2.0 * F / (r_c * S))
    if r_c < 1.0:
        assert ref is not None and np.all(ref.instance.factor == pytest.approx(r_c))
    l_pull, _ = _tip_loaded_length(rod, law, +F)
    assert l_pull - L == pytest.approx(L / (1.0 - F / S) - L, rel=2e-3)


def test_blocked_force_with_law_matches_closed_form_and_is_softer():
    """Blocked rod at 90 deg: simulator vs the closed-form root with S -> r_c(kappa) S.

    1e-2: the closed form assumes uniform twist (the blocked rod's Voronoi dilatations differ
    slightly, see characterization.closed_form), as in tests/test_characterization.py.
    """
    rod = table1_rod_params(ROWS)
    phi = math.pi / 2
    law = AxialLawParams(compression_ratio=0.6, compression_ratio_slope=-0.002)
    fb = ch.blocked_force(rod, phi, axial_law=law)
    assert fb == pytest.approx(ch.closed_form(rod, "blocked_force", phi, axial_law=law), rel=1e-2)
    assert fb < 0.8 * ch.closed_form(rod, "blocked_force", phi)
    # free length is not affected by the law (no axial load)
    assert ch.minimum_energy_length(rod, phi, axial_law=law) == pytest.approx(
        rod.length + rod.C_eps * phi, rel=1e-5
    )


def test_fitted_compression_law_8_rows_blocked_force_inside_error_bars():
    """Measured data (Good et al. 2022), tolerance = the error bar: with the committed
    compression-law fit (hsa_elastica/data/fitted_params_compression.yaml, --fit --law compression)
    the 8-row blocked force at 60 and 150 deg is inside the bars (the linear fit misses both:
    validation/results.md)."""
    from hsa_elastica.validation.characterization import FITTED_COMPRESSION, load_fitted_compression

    if not FITTED_COMPRESSION.is_file():
        pytest.skip("hsa_elastica/data/fitted_params_compression.yaml not generated (run --fit --law compression)")
    rod, law = load_fitted_compression(FITTED_COMPRESSION)[8]
    assert not law.is_symmetric
    d = ch.load_characterization_data()
    for angle in (60.0, 150.0):
        r = d[(d["rows"] == 8) & (d["characteristic"] == "blocked_force") & (d["twist_angle_deg"] == angle)].iloc[0]
        sim = ch.blocked_force(rod, math.radians(angle), axial_law=law)
        assert r["value"] - r["err_low"] <= sim <= r["value"] + r["err_high"], (angle, sim)
