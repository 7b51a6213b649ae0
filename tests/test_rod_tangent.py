"""The consistent tangent of a rod's internal forces and couples (physics/rod_tangent.py).

Oracle: central finite differences of the force kernels the engines evaluate
(``internal_forces_inplace`` + ``internal_torques_inplace``), nodes moved by ``+-h`` and
elements turned by ``R(+-h e_a)`` through ``statics_kernels._rotate`` (the solver's own
increment).  Steps: 1e-6 of the mean rest length for positions and 1e-6 rad for rotations.
The central difference's truncation error is O(h^2) relative (1e-12 here, the forces vary on
the scale of an element) and its rounding error about eps |F| / (h |dF/du|) ~ 1e-10 relative;
the rotation update normalises the axis by ``|w| + 1e-14``, which scales the step by
``1 - 1e-8``.  A tolerance of 1e-6 of each column's norm is thus three orders above the
oracle's own error and far below any missing term (those are O(1) of the column).
"""

from __future__ import annotations

import numpy as np
import pytest

from hsa_elastica.engines.statics_kernels import _rotate
from hsa_elastica.physics.rod_kernels import internal_forces_inplace, internal_torques_inplace, rod_work
from hsa_elastica.physics.rod_tangent import (
    HALF_BANDWIDTH,
    RodTangentState,
    band_to_dense,
    band_to_dgbtrf,
    rod_tangent_band,
    tangent_work,
)
from hsa_elastica.physics.tables import RodBlockArrays

N_ELEMS = 14
RTOL = 1e-6


def _pyelastica_rod(n: int, seed: int):  # type: ignore[no-untyped-def]
    """A PyElastica ``CosseratRod`` (its own shear and bend matrices: diagonal, shear
    coefficient 27/28 on the shear rows) of ``n`` elements, length 0.1 m, radius 5 mm,
    E = 1 MPa, G = E/3."""
    from elastica.rod.cosserat_rod import CosseratRod

    rng = np.random.default_rng(seed)
    normal = rng.normal(size=3)
    normal = normal - normal[2] * np.array([0.0, 0.0, 1.0])
    normal /= np.linalg.norm(normal)
    return CosseratRod.straight_rod(
        n, np.zeros(3), np.array([0.0, 0.0, 1.0]), normal, 0.1, 5e-3, 1000.0,
        youngs_modulus=1e6, shear_modulus=1e6 / 3.0,
    )


def _block(rod) -> RodBlockArrays:  # type: ignore[no-untyped-def]
    """A single-rod :class:`RodBlockArrays` (no ghosts) sharing the rod's arrays."""
    nn = rod.n_elems + 1
    fields = {
        "position": rod.position_collection, "velocity": np.zeros((3, nn)),
        "omega": np.zeros((3, rod.n_elems)), "director": rod.director_collection,
        "v_w": np.zeros((2, 3, nn)), "dvdt_dwdt": np.zeros((2, 3, nn)),
        "acceleration": np.zeros((3, nn)), "alpha": np.zeros((3, rod.n_elems)),
        "ghost_elems_idx": np.zeros(0, dtype=np.int64),
        "ghost_voronoi_idx": np.zeros(0, dtype=np.int64),
    }
    for name in RodBlockArrays._fields:
        if name not in fields:
            fields[name] = getattr(rod, name)
    return RodBlockArrays(**fields)


def _state(b: RodBlockArrays) -> RodTangentState:
    return RodTangentState(b.position, b.director, b.rest_lengths, b.rest_voronoi_lengths,
                           b.rest_sigma, b.rest_kappa, b.shear_matrix, b.bend_matrix)


def _skew(v: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _expm_skew(v: np.ndarray) -> np.ndarray:
    th = np.linalg.norm(v)
    k = _skew(v / th) if th > 0 else np.zeros((3, 3))
    return np.eye(3) + np.sin(th) * k + (1.0 - np.cos(th)) * k @ k


def _deform(b: RodBlockArrays, seed: int) -> None:
    """Bend, twist, stretch and shear the rod: random node displacements (10 % of an element)
    and random element rotations up to 0.4 rad, random rest strains and curvatures."""
    rng = np.random.default_rng(seed)
    n = b.rest_lengths.shape[0]
    l0 = float(np.mean(b.rest_lengths))
    b.position[:] += 0.1 * l0 * rng.normal(size=b.position.shape)
    b.position[2] *= 1.05  # stretched
    for k in range(n):
        turn = _expm_skew(0.4 * rng.uniform(-1, 1, 3) + np.array([0.0, 0.0, 0.1 * k]))
        b.director[:, :, k] = b.director[:, :, k] @ turn.T
    b.rest_sigma[:] = 0.02 * rng.normal(size=b.rest_sigma.shape)
    b.rest_kappa[:] = 5.0 * rng.normal(size=b.rest_kappa.shape)


def _residual(b: RodBlockArrays) -> np.ndarray:
    """Internal forces and couples in the solver's order (node 0, element 0, node 1, ...)."""
    work = rod_work(b.lengths.shape[0], 1)
    internal_forces_inplace(b, work)
    internal_torques_inplace(b, work)
    n = b.lengths.shape[0]
    out = np.zeros(6 * n + 3)
    for i in range(n + 1):
        out[6 * i : 6 * i + 3] = b.internal_forces[:, i]
    for k in range(n):
        out[6 * k + 3 : 6 * k + 6] = b.internal_torques[:, k]
    return out


def _fd_jacobian(b: RodBlockArrays) -> np.ndarray:
    n = b.lengths.shape[0]
    hx = 1e-6 * float(np.mean(b.rest_lengths))
    hw = 1e-6
    scratch = np.empty((3, 3, 1))
    jac = np.zeros((6 * n + 3, 6 * n + 3))
    for j in range(6 * n + 3):
        idx, a = divmod(j, 6)
        cols = []
        for sign in (1.0, -1.0):
            if a < 3:
                saved = b.position.copy()
                b.position[a, idx] += sign * hx
            else:
                saved = b.director.copy()
                w = np.zeros(3)
                w[a - 3] = sign * hw
                _rotate(b.director, idx, w[0], w[1], w[2], scratch)
            cols.append(_residual(b))
            (b.position if a < 3 else b.director)[:] = saved
        jac[:, j] = (cols[0] - cols[1]) / (2.0 * (hx if a < 3 else hw))
    return jac


def _tangent(b: RodBlockArrays) -> np.ndarray:
    n = b.lengths.shape[0]
    band = np.full((6 * n + 3, 2 * HALF_BANDWIDTH + 1), np.nan)
    rod_tangent_band(_state(b), tangent_work(n), band)
    dense = np.empty((6 * n + 3, 6 * n + 3))
    band_to_dense(band, dense)
    return dense


def _assert_columns_close(tangent: np.ndarray, fd: np.ndarray) -> float:
    scale = np.linalg.norm(fd, axis=0)
    assert np.all(scale > 0.0)
    err = float(np.max(np.abs(tangent - fd) / scale[None, :]))
    assert err <= RTOL, f"largest entry error {err:.3g} of its column's norm"
    return err


@pytest.mark.parametrize("seed", [0, 1])
def test_tangent_matches_central_differences_on_a_deformed_rod(seed: int) -> None:
    rod = _pyelastica_rod(N_ELEMS, seed)
    b = _block(rod)
    _deform(b, seed)
    # full (not diagonal) stiffness matrices as well: random SPD on half the elements
    rng = np.random.default_rng(100 + seed)
    for k in range(0, N_ELEMS, 2):
        m = rng.normal(size=(3, 3))
        b.shear_matrix[:, :, k] = float(np.trace(b.shear_matrix[:, :, k])) / 3.0 * (m @ m.T / 3.0)
    for k in range(0, N_ELEMS - 1, 2):
        m = rng.normal(size=(3, 3))
        b.bend_matrix[:, :, k] = float(np.trace(b.bend_matrix[:, :, k])) / 3.0 * (m @ m.T / 3.0)
    fd = _fd_jacobian(b)
    # the deformation reaches every term: large forces and couples, curvature past 0.3 rad
    assert np.max(np.abs(b.kappa * b.rest_voronoi_lengths)) > 0.3
    _assert_columns_close(_tangent(b), fd)


def test_tangent_matches_central_differences_on_a_straight_rod() -> None:
    """A straight, untwisted, stretched rod: every rotation log at its small-angle branch."""
    rod = _pyelastica_rod(N_ELEMS, 3)
    b = _block(rod)
    b.position[2] *= 1.03
    b.rest_sigma[:] = 0.0
    b.rest_kappa[:] = 0.5
    fd = _fd_jacobian(b)
    assert np.max(np.abs(b.kappa)) < 1e-10
    _assert_columns_close(_tangent(b), fd)


def _rest_state_rod(seed: int) -> RodBlockArrays:
    """A deformed rod made its own rest state (rest lengths, strains, curvatures): unloaded."""
    rod = _pyelastica_rod(N_ELEMS, seed)
    b = _block(rod)
    _deform(b, seed)
    _residual(b)
    b.rest_lengths[:] = b.lengths
    b.rest_voronoi_lengths[:] = 0.5 * (b.lengths[1:] + b.lengths[:-1])
    _residual(b)
    b.rest_sigma[:] = b.sigma
    b.rest_kappa[:] = b.kappa
    return b


def test_tangent_annihilates_rigid_body_modes_of_an_unloaded_rod() -> None:
    """Moving or turning a free, unloaded rod as a whole changes no internal force: the
    tangent maps the 3 translations (``dx_i = u``) and 3 rotations (``dx_i = phi x x_i``,
    ``w_k = Q_k phi``) to zero; the residual itself stays zero to rounding."""
    b = _rest_state_rod(7)
    res = _residual(b)
    jac = _tangent(b)
    n = N_ELEMS
    scale = float(np.max(np.abs(jac)))
    assert np.max(np.abs(res)) < 1e-9 * scale * float(np.mean(b.rest_lengths))
    for a in range(6):
        mode = np.zeros(6 * n + 3)
        e = np.zeros(3)
        e[a % 3] = 1.0
        for i in range(n + 1):
            mode[6 * i : 6 * i + 3] = e if a < 3 else np.cross(e, b.position[:, i])
        if a >= 3:
            for k in range(n):
                mode[6 * k + 3 : 6 * k + 6] = b.director[:, :, k] @ e
        # a non-rigid mode of the same size is resisted at the tangent's scale
        out = jac @ mode
        assert np.max(np.abs(out)) < 1e-9 * scale * np.max(np.abs(mode)), a
    stretch = np.zeros(6 * n + 3)
    for i in range(n + 1):
        stretch[6 * i : 6 * i + 3] = b.position[:, i] - b.position[:, 0]
    assert np.max(np.abs(jac @ stretch)) > 1e-3 * scale * np.max(np.abs(stretch))


def test_axial_block_of_a_straight_unloaded_rod_is_ea_over_l0_times_the_laplacian() -> None:
    """Straight rod along z, directors aligned, no load: the axial (z) force rows against the
    nodes' z positions are ``EA/l0`` times the free-free discrete Laplacian, and the lateral
    ones the same with the shear stiffness ``S_xx`` (PyElastica's ``27/28 G A``, Timoshenko's
    coefficient of a circular section; the values are the factory's inputs, not read back)."""
    rod = _pyelastica_rod(N_ELEMS, 4)
    b = _block(rod)
    n = N_ELEMS
    jac = _tangent(b)
    area = np.pi * 5e-3**2
    l0 = 0.1 / n
    lap = np.zeros((n + 1, n + 1))
    for k in range(n):
        lap[k : k + 2, k : k + 2] += np.array([[-1.0, 1.0], [1.0, -1.0]])
    nodes = 6 * np.arange(n + 1)
    shear = 27.0 / 28.0 * 1e6 / 3.0 * area
    for comp, stiff in ((2, 1e6 * area), (0, shear), (1, shear)):
        block = jac[np.ix_(nodes + comp, nodes + comp)]
        # relative 1e-12: the rest lengths are 0.1/n to rounding, the stiffness is PyElastica's
        np.testing.assert_allclose(block, stiff / l0 * lap, rtol=1e-12, atol=1e-12 * stiff / l0)


def test_band_writer_places_entries_in_dgbtrf_storage() -> None:
    """``band_to_dgbtrf`` puts ``A[i, j]`` at ``abt[offset + j, kl + ku + i - j]``."""
    rod = _pyelastica_rod(6, 5)
    b = _block(rod)
    _deform(b, 5)
    n = 6
    m = 6 * n + 3
    band = np.zeros((m, 2 * HALF_BANDWIDTH + 1))
    rod_tangent_band(_state(b), tangent_work(n), band)
    dense = np.empty((m, m))
    band_to_dense(band, dense)
    kl = ku = 14
    abt = np.zeros((m + 2, 2 * kl + ku + 1))
    band_to_dgbtrf(band, kl, ku, 2, abt)
    back = np.zeros((m, m))
    for i in range(m):
        for j in range(max(0, i - kl), min(m, i + ku + 1)):
            back[i, j] = abt[2 + j, kl + ku + i - j]
    np.testing.assert_array_equal(back, dense)
    # the rod alone reaches 11 places off the diagonal (node k+2 from element k), as stated
    rows, cols = np.nonzero(dense)
    assert np.max(np.abs(rows - cols)) == 11 < HALF_BANDWIDTH


# --------------------------------------------------------------------------------------------
# the one-way auxetic law's chain rule (physics/auxetic_tangent.py)
# --------------------------------------------------------------------------------------------
def _coupling(b: RodBlockArrays, quadratic: bool):  # type: ignore[no-untyped-def]
    """A one-row coupling table on the rod's printed geometry: rest strain C_eps = 0.01 m/rad
    (and C_eps2 = 2e-4 m^2/rad^2), rounded clip to [-0.3, 0.32] over 0.05, stiffness slopes
    that change S and B by tens of per cent over the rod's twist strains (|k| up to ~80 rad/m),
    the stiffness law clipped to [-40, 40] rad/m (some elements are outside)."""
    from hsa_elastica.physics.tables import CouplingTable

    one = np.ones(1)
    area = np.pi * 5e-3**2
    return CouplingTable(**{f: np.zeros(1) for f in CouplingTable._fields})._replace(
        handedness=-1.0 * one, C_eps=0.01 * one, C_eps2=(2e-4 if quadratic else 0.0) * one,
        eps_min=-0.3 * one, eps_max=0.32 * one, kappa_min=-40.0 * one, kappa_max=40.0 * one,
        area=area * one, E_slope=1e4 * one, G_slope=5e3 * one, bend_slope=5e-6 * one,
        twist_slope=4e-6 * one, E_quad=(100.0 if quadratic else 0.0) * one,
        twist_quad=(1e-7 if quadratic else 0.0) * one, clip_width=0.05 * one,
        printed_lengths=b.rest_lengths.copy()[None], printed_voronoi=b.rest_voronoi_lengths.copy()[None],
        printed_shear=b.shear_matrix.copy()[None], printed_bend=b.bend_matrix.copy()[None],
        **{f: np.zeros((1, b.rest_voronoi_lengths.shape[0])) for f in
           ("kappa_vor_raw", "kappa_vor", "kappa_vor_clipped", "couple")},
        **{f: np.zeros((1, b.rest_lengths.shape[0])) for f in
           ("kappa_elem", "kappa_elem_clipped", "eps", "eps_creep", "play")},
        play_trial=np.zeros((1, 2 * b.rest_lengths.shape[0])),  # this time's and the last output
    )


def _coupled_residual(b: RodBlockArrays, table) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The static residual's order of evaluation: auxetic update (filter off), then the rod."""
    from hsa_elastica.physics.auxetic_law import auxetic_update
    from hsa_elastica.physics.rod_kernels import rotation_log_inplace

    vor = np.empty((3, b.rest_voronoi_lengths.shape[0]))
    rotation_log_inplace(b.director, vor)
    auxetic_update(vor, table, 0, -1.0, b.rest_lengths, b.rest_voronoi_lengths, b.shear_matrix,
                   b.bend_matrix)
    return _residual(b)


@pytest.mark.parametrize("quadratic", [False, True])
def test_auxetic_chain_rule_matches_central_differences(quadratic: bool) -> None:
    """Rod tangent + auxetic chain rule = derivative of (auxetic update, internal forces) on a
    bent, twisted, stretched rod; same steps and tolerance as the rod alone.  Without the
    chain rule the rod tangent alone misses it by far more than the tolerance."""
    from hsa_elastica.physics.auxetic_tangent import auxetic_tangent_band, auxetic_tangent_work

    rod = _pyelastica_rod(N_ELEMS, 11)
    b = _block(rod)
    _deform(b, 11)
    table = _coupling(b, quadratic)
    fd = np.zeros((6 * N_ELEMS + 3, 6 * N_ELEMS + 3))
    # central differences of the coupled residual (same perturbation as _fd_jacobian)
    hx = 1e-6 * float(np.mean(table.printed_lengths))
    scratch = np.empty((3, 3, 1))
    for j in range(6 * N_ELEMS + 3):
        idx, a = divmod(j, 6)
        cols = []
        for sign in (1.0, -1.0):
            keep = (b.position.copy(), b.director.copy())
            if a < 3:
                b.position[a, idx] += sign * hx
            else:
                w = np.zeros(3)
                w[a - 3] = sign * 1e-6
                _rotate(b.director, idx, w[0], w[1], w[2], scratch)
            cols.append(_coupled_residual(b, table))
            b.position[:], b.director[:] = keep
        fd[:, j] = (cols[0] - cols[1]) / (2.0 * (hx if a < 3 else 1e-6))
    _coupled_residual(b, table)  # the rest configuration of the present directors
    kv = table.kappa_vor[0]
    assert np.any(np.abs(kv) > 40.0) and np.any(np.abs(kv) < 40.0)  # both sides of the clip
    eps = table.eps[0]  # rest strains on the line, in the rounded corner and clipped
    assert np.any(eps < 0.27) and np.any((eps > 0.27) & (eps < 0.32)) and np.any(eps == 0.32)
    band = np.zeros((6 * N_ELEMS + 3, 2 * HALF_BANDWIDTH + 1))
    rod_tangent_band(_state(b), tangent_work(N_ELEMS), band)
    alone = np.empty_like(fd)
    band_to_dense(band, alone)
    auxetic_tangent_band(_state(b), table, 0, auxetic_tangent_work(N_ELEMS), band)
    coupled = np.empty_like(fd)
    band_to_dense(band, coupled)
    scale = np.linalg.norm(fd, axis=0)
    assert np.max(np.abs(alone - fd) / scale) > 1e-3
    _assert_columns_close(coupled, fd)


def _newton_cantilever(n: int, load: float, iterations: int) -> tuple[RodBlockArrays, list[float]]:
    """Newton with the tangent as the Jacobian on a cantilever: node 0 and element 0 held
    (PyElastica's fixed end), a lateral force ``load`` [N] on the last node along the rod's
    first director; the solver's increment (positions added, ``_rotate`` per element)."""
    rod = _pyelastica_rod(n, 0)
    b = _block(rod)
    free = np.arange(6, 6 * n + 3)
    external = np.zeros(6 * n + 3)
    external[6 * n : 6 * n + 3] = load * b.director[0, :, 0]
    scratch = np.empty((3, 3, 1))
    norms = []
    for _ in range(iterations):
        res = _residual(b) + external
        norms.append(float(np.linalg.norm(res[free])))
        step = np.zeros(6 * n + 3)
        step[free] = np.linalg.solve(_tangent(b)[np.ix_(free, free)], -res[free])
        for i in range(n + 1):
            b.position[:, i] += step[6 * i : 6 * i + 3]
        for k in range(n):
            _rotate(b.director, k, step[6 * k + 3], step[6 * k + 4], step[6 * k + 5], scratch)
    return b, norms


def test_newton_with_the_tangent_solves_a_cantilever() -> None:
    """A 20-element cantilever under a tip force bending it by an eighth of its length: Newton
    with the tangent reaches the rounding floor (about 5e-13 N here; 1e-10 N asked) within 7
    iterations from the straight rod, the last steps quadratically.  At a small load
    (deflection 1 % of L) the tip deflection is the Euler-Bernoulli + Timoshenko cantilever's,
    ``P L'^3 / (3 EI) + P L / (alpha_c G A)``, with ``L' = L - l/2``: the discrete rod bends
    from its first Voronoi point (element 0 is held).  Tolerance 0.3 %: the geometric
    nonlinearity at 1 % deflection is O(1e-4) and the discrete curvature's sampling of the
    linear moment is exact, so what remains is well below it."""
    n, length, radius, young = 20, 0.1, 5e-3, 1e6
    b, norms = _newton_cantilever(n, 0.02, 8)
    assert abs(float(b.director[0, :, 0] @ b.position[:, -1])) > 0.12 * length
    assert min(norms) < 1e-10, norms
    first = next(i for i, r in enumerate(norms) if r < 1e-10)
    assert first <= 7, norms
    assert norms[first] < 1e-2 * norms[first - 1] ** 1.5 / norms[0] ** 0.5, norms  # superlinear
    load = 1.5e-3
    b, norms = _newton_cantilever(n, load, 5)
    assert norms[-1] < 1e-10
    ei = young * np.pi * radius**4 / 4.0
    ga = 27.0 / 28.0 * young / 3.0 * np.pi * radius**2
    expected = load * (length - 0.5 * length / n) ** 3 / (3.0 * ei) + load * length / ga
    tip = float(b.director[0, :, 0] @ b.position[:, -1])
    assert abs(tip / expected - 1.0) < 3e-3, tip / expected
