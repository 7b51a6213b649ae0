"""The optional rate-independent hysteresis of the auxetic coupling (a weighted play operator
on the handed twist strain; ``RodParams.hysteresis_width`` r, ``hysteresis_weight`` w;
hsa_elastica/physics/hysteresis.py, docs/model.md).

Reference numbers are the closed forms of the play operator, derived by hand: from the memory
0 an input rising monotonically to ``u`` gives ``F = max(u - r, 0)``; after a reversal at a
peak ``P`` the output stays ``F_P`` until the input has fallen by ``2 r``, then ``F = u + r``;
a triangle wave of amplitude ``A > r`` traces the parallelogram of vertices ``(A, A - r)``,
``(A - 2r, A - r)``, ``(-A, -A + r)``, ``(-A + 2r, -A + r)``, area ``4 r (A - r)``; the
weighted output ``y = u + w (F - u)`` has the area ``4 w r (A - r)``.
For the single rod with its base turned by ``phi`` and its distal twist held, the handed twist
strain is uniform, ``phi / sum(printed Voronoi lengths)`` (docs/architecture.md); the element
averages are that in the interior and half of it in the two end elements (zero padding).
"""

from __future__ import annotations

import contextlib
import io
import math
from pathlib import Path

import numpy as np
import pytest

from hsa_elastica.params import ParameterError, RodParams, SimulationParams, paper_robot_params

R = 3.0  # rad/m, play half-width of the rod tests
W = 0.5  # weight
LEG = 0.2  # s, one leg of the slow triangle of the executor test
PEAK = 1.0  # rad


# --------------------------------------------------------------------------------------------
# the kernels against the parallelogram
# --------------------------------------------------------------------------------------------
def _one_row(width: float, weight: float, n: int = 1):  # type: ignore[no-untyped-def]
    from hsa_elastica.physics.tables import CouplingTable

    table = CouplingTable(**{f: np.zeros(1) for f in CouplingTable._fields})
    return table._replace(play_width=np.array([width]), play_weight=np.array([weight]),
                          play_frozen=np.zeros(1, dtype=np.int64), play=np.zeros((1, n)),
                          play_last=np.array([-np.inf]), play_trial=np.zeros((1, 2 * n)),
                          last_time=np.zeros(1))


def _drive(table, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    """Advance the play of a one-element row through ``inputs`` (one time each); the outputs
    ``y`` and the play's slopes (``play_output`` from the memory of each time, as the static
    solver evaluates it: the same ``y`` bit for bit)."""
    from hsa_elastica.physics.hysteresis import advance_play, hysteretic_twist, play_output

    ys, slopes = np.empty_like(inputs), np.empty_like(inputs)
    x = np.zeros(1)
    for k, u in enumerate(inputs):
        table.last_time[0] = float(k)
        x[0] = u
        advance_play(table, 0, x)
        ys[k] = hysteretic_twist(table, 0, 0, u)[0]
        y, slopes[k] = play_output(table.play[0, 0], u, table.play_width[0], table.play_weight[0])
        assert y == ys[k]
    return ys, slopes


def test_triangle_wave_traces_the_parallelogram() -> None:
    """Amplitude A = 10, r = 2 (on the input grid, step 0.01): after the first rise the cycle
    is the closed-form parallelogram (every sample, round-off tolerance), the switches are flat
    over 2 r of input and the lag of the loading branch is r; the weighted loop's area
    ``4 w r (A - r)`` = 32 (w = 0.5) by the trapezoid rule, exact on this grid up to round-off
    (the corners are grid points); slope 1 - w inside the play, 1 while sliding."""
    a, r, w = 10.0, 2.0, 0.5
    up = np.linspace(0.0, a, 1001)
    down = np.linspace(a, -a, 2001)[1:]
    rise = np.linspace(-a, a, 2001)[1:]
    u = np.concatenate([up, down, rise])
    y, slope = _drive(_one_row(r, w), u)
    f = np.where(np.arange(u.size) < up.size, np.maximum(u - r, 0.0), 0.0)
    d = slice(up.size, up.size + down.size)
    f[d] = np.minimum(a - r, u[d] + r)
    g = slice(up.size + down.size, None)
    f[g] = np.maximum(-a + r, u[g] - r)
    np.testing.assert_allclose(y, u + w * (f - u), rtol=0, atol=1e-12)
    # loading branch lags by w r, unloading leads by w r; flat over 2 r after each reversal
    assert y[up.size - 1] == pytest.approx(a - w * r, abs=1e-12)
    flat = (u[d] > a - 2 * r + 1e-9)
    np.testing.assert_allclose(np.diff(y[d][flat]), (1 - w) * np.diff(u[d][flat]), atol=1e-12)
    assert set(np.round(slope[d][flat][1:], 12)) == {1 - w}
    assert set(np.round(slope[d][~flat], 12)) == {1.0}
    cycle = slice(up.size - 1, None)
    area = abs(float(np.trapezoid(y[cycle], u[cycle])))
    assert area == pytest.approx(4 * w * r * (a - r), rel=1e-9)


def test_zero_width_is_the_input_exactly_and_the_memory_is_advanced_once_per_time() -> None:
    """r = 0: ``y`` is the input bit for bit (any weight).  The play's output is computed at
    the first evaluation of a time (later ones at that time, the implicit integrator's
    Newton iterations, keep it), the play at the latest evaluation of a time is the next
    time's memory, a step taken again in halves (an earlier time) starts from the same
    memory, and a frozen row (the static solver) evaluates the play itself and never moves
    the memory."""
    u = np.random.default_rng(3).normal(size=200) * 20.0
    y, _ = _drive(_one_row(0.0, 0.7), u)
    assert np.array_equal(y, u)
    table = _one_row(2.0, 1.0)

    def at(t: float, x: float, row=table) -> float:  # type: ignore[no-untyped-def]
        from hsa_elastica.physics.hysteresis import advance_play, hysteretic_twist

        row.last_time[0] = t
        advance_play(row, 0, np.array([x]))
        return float(hysteretic_twist(row, 0, 0, x)[0])

    assert at(1.0, 5.0) == 3.0  # from the memory 0
    assert at(1.0, -5.0) == 3.0  # same time (a Newton iteration): the time's output is kept
    assert at(2.0, 0.0) == -2.0  # memory -3: the play at the latest evaluation of t = 1
    assert at(3.0, 10.0) == 8.0  # an attempt at t = 3 ...
    assert at(2.5, -1.0) == -2.0  # ... taken again in halves: from the memory of t = 2 (-2)
    assert at(3.0, 4.0) == 2.0  # the memory of t = 2.5 (-2), slid to 4 - 2
    frozen = table._replace(play_frozen=np.ones(1, dtype=np.int64))
    assert at(4.0, 10.0, frozen) == 8.0 and at(5.0, -10.0, frozen) == -8.0  # memory -2 stays
    assert table.play[0, 0] == -2.0 and list(table.play_trial[0]) == [2.0, 2.0]


# --------------------------------------------------------------------------------------------
# the rod: closed form, law off bit for bit, the executors, the static solver, the tangent
# --------------------------------------------------------------------------------------------
def _triangle(t: float) -> float:
    """phi(t) [rad]: 0 -> PEAK over LEG, back to 0 over LEG, up again to 0.6 PEAK."""
    if t < LEG:
        return PEAK * t / LEG
    if t < 2 * LEG:
        return PEAK * (2.0 - t / LEG)
    return PEAK * min((t - 2 * LEG) / LEG, 0.6)


def _closed_form_rest_lengths(rod: RodParams, t: float) -> np.ndarray:
    """Element rest lengths [m] of the quasi-static rod under :func:`_triangle` (module doc)."""
    n, le = rod.n_elements, rod.length / rod.n_elements
    share = np.full(n, 1.0)
    share[[0, -1]] = 0.5
    x_peak = PEAK / (le * (n - 1))
    u = _triangle(t) / (le * (n - 1)) * share
    r, w = rod.hysteresis_width, rod.hysteresis_weight
    if t <= LEG:
        f = np.maximum(u - r, 0.0)
    else:
        f_peak = np.maximum(x_peak * share - r, 0.0)
        f = np.minimum(f_peak, u + r)  # unloading; the trough at 0 is within 2 r of f_peak - r
        if t > 2 * LEG:
            f_trough = np.minimum(f_peak, r)  # the memory at the trough u = 0
            f = np.maximum(f_trough, u - r)
    y = u + w * (f - u)
    return (1.0 + rod.C_eps * y) * le


def _single_rod(rod: RodParams, integrator: str, dt: float):  # type: ignore[no-untyped-def]
    from hsa_elastica.robots.builders import build_single_rod

    return build_single_rod(rod, SimulationParams(dt=dt, integrator=integrator), angle=_triangle,
                            record=False)


CHECKS = (0.1, 0.2, 0.25, 0.3, 0.4, 0.45, 0.5)


def _history(kind: str, rod: RodParams) -> np.ndarray:
    from hsa_elastica.robots.compiled import FastRobot, ImplicitRobot

    if kind == "operators":
        handle = _single_rod(rod, "explicit", 2e-5)
        run = handle.run
    elif kind == "fused":
        handle = _single_rod(rod, "explicit", 2e-5)
        run = FastRobot(handle).run
    else:
        handle = _single_rod(rod, "implicit", 2e-3)
        run = ImplicitRobot(handle).run
    out, t = [], 0.0
    for t_check in CHECKS:
        run(t_check - t)
        t = t_check
        out.append(np.array(handle.rod.rest_lengths))
    return np.array(out)


@pytest.fixture(scope="module")
def histories() -> dict[str, np.ndarray]:
    rod = RodParams(n_elements=6, hysteresis_width=R, hysteresis_weight=W)
    plain = rod.replace(hysteresis_width=0.0, hysteresis_weight=0.0)
    out = {kind: _history(kind, rod) for kind in ("operators", "fused", "implicit")}
    out.update({f"{kind} plain": _history(kind, plain) for kind in ("operators", "fused", "implicit")})
    return out


def test_rod_rest_lengths_follow_the_closed_form(histories: dict[str, np.ndarray]) -> None:
    """Operator path, slow triangle of the base angle (1 rad in 0.2 s, down, up again): every
    element's rest length is the closed form of the play on its twist strain.  The closed
    form takes the twist uniform; the moving rod's is not quite (the rod without the play
    misses its own closed form ``(1 + C_eps u) l`` by up to 4 % of the play's element loop
    width ``2 w r C_eps l`` = 0.5 mm, most at the end elements), and the play passes that
    on at most one to one: the error with the play is at most the plain rod's plus 1 % of
    the loop width (measured: 3.9 % against 3.9 %), and below 5 % of it."""
    rod = RodParams(n_elements=6, hysteresis_width=R, hysteresis_weight=W)
    plain = rod.replace(hysteresis_width=0.0, hysteresis_weight=0.0)
    width = 2 * W * R * rod.C_eps * rod.length / rod.n_elements
    errors, plain_errors = [], []
    for k, t in enumerate(CHECKS):
        errors.append(np.abs(histories["operators"][k] - _closed_form_rest_lengths(rod, t)))
        plain_errors.append(np.abs(histories["operators plain"][k] - _closed_form_rest_lengths(plain, t)))
    worst, worst_plain = float(np.max(errors)), float(np.max(plain_errors))
    print(f"closed form: {worst / width:.3%} of the loop width (plain {worst_plain / width:.3%})")
    assert worst < min(worst_plain + 0.01 * width, 0.05 * width)
    # the hysteresis acted: on the way down at 0.3 s (phi = 0.5 rad) the rod is longer than
    # on the way up at 0.1 s (same angle) by 2.5 mm (closed form), 12x the tolerance
    gap = float(histories["operators"][3].sum() - histories["operators"][0].sum())
    expected = float(_closed_form_rest_lengths(rod, 0.3).sum() - _closed_form_rest_lengths(rod, 0.1).sum())
    assert expected > 10 * 0.05 * width * rod.n_elements
    assert gap == pytest.approx(expected, abs=0.05 * width * rod.n_elements)


def test_every_executor_gives_the_same_rest_length_history(histories: dict[str, np.ndarray]) -> None:
    """Fused stepper = operators to round-off (1e-12 m; observed bit-identical).  Implicit
    integrator (2 ms steps; the play implicit in each step: its output at the step's end pose,
    physics/hysteresis.settle_play) against the explicit one: within 1 % of the element loop width ``2 w r C_eps l`` =
    0.5 mm (measured 0.41 %; without the play the two integrators' rest lengths differ by
    0.11 % of it)."""
    rod = RodParams(n_elements=6, hysteresis_width=R, hysteresis_weight=W)
    width = 2 * W * R * rod.C_eps * rod.length / rod.n_elements
    np.testing.assert_allclose(histories["fused"], histories["operators"], rtol=0, atol=1e-12)
    implicit = float(np.abs(histories["implicit"] - histories["fused"]).max())
    plain = float(np.abs(histories["implicit plain"] - histories["fused plain"]).max())
    print(f"implicit - explicit: {implicit / width:.3%} of the loop width (plain {plain / width:.3%})")
    assert implicit < 0.01 * width


def test_zero_width_is_the_law_off_bit_for_bit() -> None:
    """r = 0 with a weight, and the law off: the same fused robot trajectory bit for bit."""
    from hsa_elastica.robots.builders import build_fast_robot

    p = paper_robot_params()
    p = p.replace(rod=p.rod.replace(n_elements=6), simulation=p.simulation.replace(ramp_time=0.01))
    angles = (0.9, -0.4, 0.3, -0.7)
    runs = []
    for rod in (p.rod, p.rod.replace(hysteresis_weight=0.8)):
        robot = build_fast_robot(p.replace(rod=rod), angles, record=False)
        robot.run(400 * p.simulation.dt)
        runs.append([np.array(a) for a in (robot.rod_arrays.position, robot.rod_arrays.director,
                                           robot.rod_arrays.rest_lengths, robot.body_arrays.position)])
    for a, b in zip(*runs):
        assert np.array_equal(a, b)


def test_static_solver_freezes_the_play_and_gives_the_loading_branch() -> None:
    """A static solve of a fresh rod (memory 0, frozen) at 1 rad: the loading branch's closed
    form ``l (1 + C_eps (u - w min(u, r)))`` per element to 1e-9 m (Newton's tolerance on a
    stiff axial law), and the memory left at 0."""
    from hsa_elastica.robots.rod_statics import RodStaticSolver

    rod = RodParams(n_elements=6, hysteresis_width=R, hysteresis_weight=W)
    solver = RodStaticSolver(rod, distal="twist_locked")
    solver.solve(angle=PEAK)
    le = rod.length / rod.n_elements
    share = np.full(6, 1.0)
    share[[0, -1]] = 0.5
    u = PEAK / (le * 5) * share
    expected = le * (1 + rod.C_eps * (u - W * np.minimum(u, R)))
    couplings = solver.solver.tables.couplings
    np.testing.assert_allclose(np.asarray(solver.solver.state.rod.rest_lengths), expected, atol=1e-9)
    assert np.all(couplings.play == 0.0) and np.all(couplings.play_trial == 0.0)


def test_tangent_with_the_play_matches_central_differences() -> None:
    """The auxetic chain rule with the play on (memory frozen, elements inside the play and
    sliding on either side, none within a difference step of an edge) against central
    differences of (auxetic update, internal forces), as the law without the play in
    tests/test_rod_tangent.py; the play's slope matters (the tangent without it is off)."""
    from tests.test_rod_tangent import (
        HALF_BANDWIDTH, N_ELEMS, _assert_columns_close, _block, _coupled_residual, _coupling,
        _deform, _pyelastica_rod, _rotate, _state, band_to_dense, rod_tangent_band, tangent_work)
    from hsa_elastica.physics.auxetic_tangent import auxetic_tangent_band, auxetic_tangent_work

    rod = _pyelastica_rod(N_ELEMS, 11)
    b = _block(rod)
    _deform(b, 11)
    base = _coupling(b, False)
    _coupled_residual(b, base)
    ke = base.kappa_elem[0].copy()
    memory = ke.copy()
    memory[0::3] += 6.0  # inside the play of half-width 8
    memory[1::3] -= 20.0  # sliding (loading side)
    memory[2::3] += 20.0  # sliding (unloading side)
    table = base._replace(play_width=np.array([8.0]), play_weight=np.array([0.6]),
                          play_frozen=np.ones(1, dtype=np.int64), play=memory[None].copy(),
                          play_last=np.zeros(1), play_trial=np.zeros((1, 2 * N_ELEMS)))
    n = 6 * N_ELEMS + 3
    fd = np.zeros((n, n))
    hx = 1e-6 * float(np.mean(table.printed_lengths))
    scratch = np.empty((3, 3, 1))
    for j in range(n):
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
    _coupled_residual(b, table)
    assert np.array_equal(table.play[0], memory)  # frozen
    band = np.zeros((n, 2 * HALF_BANDWIDTH + 1))
    rod_tangent_band(_state(b), tangent_work(N_ELEMS), band)
    auxetic_tangent_band(_state(b), table, 0, auxetic_tangent_work(N_ELEMS), band)
    coupled = np.empty_like(fd)
    band_to_dense(band, coupled)
    _assert_columns_close(coupled, fd)
    # the law's tangent without the play's slope (memory far away: always sliding) is off
    band[:] = 0.0
    rod_tangent_band(_state(b), tangent_work(N_ELEMS), band)
    auxetic_tangent_band(_state(b), table._replace(play=memory[None] + 1e3), 0,
                         auxetic_tangent_work(N_ELEMS), band)
    sliding = np.empty_like(fd)
    band_to_dense(band, sliding)
    assert np.max(np.abs(sliding - fd) / np.linalg.norm(fd, axis=0)) > 1e-3


# --------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("changes, field", [
    ({"hysteresis_width": -1.0, "hysteresis_weight": 0.5}, "hysteresis_width"),
    ({"hysteresis_width": 2e3, "hysteresis_weight": 0.5}, "hysteresis_width"),
    ({"hysteresis_width": math.nan, "hysteresis_weight": 0.5}, "hysteresis_width"),
    ({"hysteresis_width": 1.0, "hysteresis_weight": 1.5}, "hysteresis_weight"),
    ({"hysteresis_width": 1.0, "hysteresis_weight": -0.1}, "hysteresis_weight"),
    ({"hysteresis_width": 1.0, "hysteresis_weight": 0.0}, "hysteresis_weight"),
    ({"hysteresis_width": 1.0, "hysteresis_weight": math.inf}, "hysteresis_weight"),
])
def test_bad_hysteresis_parameters_name_the_field_in_one_line(changes: dict, field: str) -> None:
    from hsa_elastica.physics.auxetic_coupling import AuxeticCoupling

    with pytest.raises(ParameterError, match=f"RodParams.{field}") as rod_err:
        RodParams(**changes)
    with pytest.raises(ParameterError, match=f"AuxeticCoupling.{field}") as op_err:
        AuxeticCoupling(handedness=1, C_eps=0.01, **changes)
    for err in (rod_err, op_err):
        assert "\n" not in str(err.value)


def test_hysteresis_refused_with_the_passive_model() -> None:
    from hsa_elastica.physics.auxetic_coupling import AuxeticCoupling

    with pytest.raises(ParameterError, match="RodParams.hysteresis_weight"):
        RodParams(hysteresis_width=1.0, hysteresis_weight=0.5, coupling_law="passive")
    with pytest.raises(ParameterError, match="AuxeticCoupling.hysteresis_weight"):
        AuxeticCoupling(handedness=1, C_eps=0.01, hysteresis_width=1.0, hysteresis_weight=0.5,
                        reciprocal=True)


def test_bad_hysteresis_in_a_parameter_file_exits_2(tmp_path: Path) -> None:
    """The command line refuses the value before any work: exit 2, one line naming the key."""
    from hsa_elastica.cli import main

    path = tmp_path / "p.yaml"
    path.write_text("rod:\n  hysteresis_width: -2.0\n  hysteresis_weight: 0.5\n", encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["steady-state", "--angles", "1", "0", "0", "-1", "--params", str(path), "--quiet"])
    assert code == 2, err.getvalue()
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and "hysteresis_width" in lines[0], lines


def test_fit_module_refuses_a_bad_step_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from hsa_elastica.validation import real_robot_hysteresis as rh

    assert rh.main(["--dt", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "dt" in err
    with pytest.raises(ParameterError, match="hysteresis_weight"):
        rh.with_hysteresis(paper_robot_params(), 1.0, 0.0)
