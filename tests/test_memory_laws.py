"""The material memory laws of the auxetic coupling (creep, hysteresis play) on the implicit
integrator and in the stability test of a dynamic run's pose.

* A refused implicit step is taken again from the memory of its start: after a step refused
  and retried in halves, the creep strain, the creep clock and the play's memory are those of
  the same halves taken without the refusal.
* ``static_cache.pose_stability`` of a dynamic run's state reads the run's memory, not the
  cached static solver's (zero).
"""

from __future__ import annotations

import numpy as np
import pytest

from hsa_elastica.params import paper_robot_params

H = 4e-3  # s, implicit step
ANGLES = (1.2, -1.2, 1.2, -1.2)  # rad, elongation primitive
RAMP = 0.2  # s, motor ramp: the step examined is inside it (the twist is changing)
N_BEFORE = 20  # steps before the examined one
CREEP = (0.3, 0.05)  # creep fraction, creep time [s]: short, so that one step moves it visibly
PLAY = (0.5, 0.5)  # play half-width [rad/m], weight
MEMORY = ("eps_creep", "creep_last", "play", "play_last", "play_trial")


def _params(creep: tuple[float, float] = CREEP, play: tuple[float, float] = PLAY):  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    rod = p.rod.replace(n_elements=6, creep_fraction=creep[0], creep_time=creep[1],
                        hysteresis_width=play[0], hysteresis_weight=play[1])
    return p.replace(rod=rod, simulation=p.simulation.replace(integrator="implicit", dt=H))


def _prepared():  # type: ignore[no-untyped-def]
    from hsa_elastica.robots.builders import build_fast_robot

    robot = build_fast_robot(_params(), ANGLES, ramp=RAMP, record=False)
    engine = robot.engine
    t = engine.run_steps(N_BEFORE, 0.0)
    return robot, engine, t


def test_refused_step_retried_in_halves_advances_the_memory_once() -> None:
    """Twin robots at the same state inside a motor ramp.  One takes the next step as two
    half steps directly; the other first has that step refused (a Newton budget of no
    iteration), then takes the same halves.  The refused attempt's evaluations must leave no
    trace: the creep strain and clock, the play's memory and the pose equal the twin's.  Both
    halves run the same operations from the same state (a fresh Jacobian each), so equal to
    round-off (1e-12 of the value; observed equal bit for bit).  Without the memory put back
    the creep is advanced by the refused full step at its predicted pose and again by the
    halves: with a 0.05 s creep time, a 4 ms step moves the creep strain by about 8 % of its
    distance to ``creep_fraction * eps``, far above round-off (checked below)."""
    from hsa_elastica.engines.implicit import ImplicitStepFailed

    _, direct, t = _prepared()
    _, refused, t2 = _prepared()
    assert t2 == t
    before = direct.model.tables.couplings.eps_creep.copy()
    times = t + H * np.arange(2, dtype=np.float64)
    values, rates = direct.motor_rows(times)
    direct.max_halvings = 1
    direct.run_table(times, values, rates, refused=True)  # the halves, no refusal before
    assert direct.time == pytest.approx(t + H, rel=1e-15)

    budget = refused._coef[5]  # coef[5]: Newton's iteration budget (engines/implicit_newton.py)
    refused._coef[5] = 0.0
    with pytest.raises(ImplicitStepFailed):
        refused.run_steps(1, t)
    refused._coef[5] = budget
    assert refused.time == t
    refused.max_halvings = 1
    refused.run_table(times, values, rates, refused=True)
    assert refused.n_halved == direct.n_halved == 1

    a, b = direct.model.tables.couplings, refused.model.tables.couplings
    moved = np.abs(a.eps_creep - before).max()
    assert moved > 1e-6  # the creep moved in the step: a second advance would show
    for field in MEMORY:
        np.testing.assert_allclose(getattr(b, field), getattr(a, field), rtol=1e-12, atol=1e-15,
                                   err_msg=field)
    assert np.all(np.isfinite(a.play_last)) and np.any(a.play != 0.0)  # the play is running
    np.testing.assert_allclose(refused.model.rod_arrays.position, direct.model.rod_arrays.position,
                               rtol=0, atol=1e-12)


def test_pose_stability_reads_the_runs_memory() -> None:
    """A full-weight play (w = 1: inside the play the rest length does not follow the twist)
    after a ramp up and a small way back down (less than 2 r of twist): the play is inside,
    the stability of that pose is the static solver's with the run's play memory in it
    (assembled here by hand on a fresh solver: memory = the play's output at the run's latest
    evaluation), to 1e-9 relative (same operations; eigenvalue round-off).  The cached
    solver's zero memory gives another value (the play sliding from 0), and is left zero."""
    from hsa_elastica.engines.compile import compile_simulator
    from hsa_elastica.engines.statics import StaticSolver
    from hsa_elastica.robots.builders import build_fast_robot, build_robot
    from hsa_elastica.robots.static_cache import pose_stability, static_solver

    params = _params(creep=(0.0, 0.0), play=(3.0, 1.0))
    robot = build_fast_robot(params, ANGLES, ramp=RAMP, record=False)
    robot.run(0.3)
    back = np.array(ANGLES) * 0.95  # ~ 0.06 rad of twist back: ~1.7 rad/m < 2 r = 6 rad/m
    robot.set_motor_angles(back)
    robot.step(0.2)
    model = robot.model
    c = model.tables.couplings
    n = c.play.shape[1]
    x = c.kappa_elem
    run_memory = c.play_trial[:, n:].copy()
    inside = np.abs(x - run_memory) < 3.0 - 1e-9
    assert inside[:, 1:-1].all()  # the interior elements are inside the play

    lam = pose_stability(params, model, back)

    # the reference: a fresh static solver of the robot, the run's pose and play memory
    fresh = build_robot(params, [0.0] * 4, ramp=0.0, record=False, finalize=True, check_dt=False)
    ref = StaticSolver(compile_simulator(fresh.simulator))
    ref.state.memory["couplings"]["play"][:] = run_memory
    ref.set_pose(model.state.pose)
    lam_ref, _ = ref.stability(back, ref.stability_modes, vectors=False)
    assert lam == pytest.approx(lam_ref, rel=1e-9)

    cached, _ = static_solver(params)
    assert np.all(cached.state.memory["couplings"]["play"] == 0.0)
    zero = StaticSolver(compile_simulator(build_robot(
        params, [0.0] * 4, ramp=0.0, record=False, finalize=True, check_dt=False).simulator))
    zero.set_pose(model.state.pose)
    lam_zero, _ = zero.stability(back, zero.stability_modes, vectors=False)
    print(f"stability with the run's memory {lam:.6g} 1/s^2, with zero memory {lam_zero:.6g}")
    assert abs(lam - lam_zero) > 1e-6 * abs(lam_ref)


def _run_with_memory(params, memory_value: float | None, steps: int):  # type: ignore[no-untyped-def]
    """``params`` built, every memory array of the coupling table set to ``memory_value``
    (None: as built), ``steps`` steps of its compiled engine; the state arrays after them."""
    from hsa_elastica.robots.builders import build_fast_robot

    robot = build_fast_robot(params, ANGLES, ramp=RAMP, record=False)
    c = robot.model.tables.couplings
    for name in MEMORY if memory_value is not None else ():
        getattr(c, name)[...] = memory_value
    robot.engine.run_steps(steps, 0.0)
    rod, body = robot.rod_arrays, robot.body_arrays
    return [np.array(a) for a in (rod.position, rod.velocity, rod.director, rod.omega,
                                  rod.rest_lengths, body.position, body.velocity)]


@pytest.mark.parametrize("integrator, steps", [("explicit", 400), ("implicit", 20)])
def test_laws_off_never_touch_the_memory(integrator: str, steps: int) -> None:
    """With the creep and the play off, the model never reads its memory arrays: a robot whose
    creep strain, play memory and clocks are all NaN (as if the fields did not exist) ends
    ``steps`` steps (inside the motor ramp) bit for bit where the one as built does, on the
    fused explicit step and on the implicit integrator.  The poison does reach the engine:
    with the creep on, the same NaNs make the rest lengths NaN (checked below)."""
    p = _params(creep=(0.0, 0.0), play=(0.0, 0.0))
    if integrator == "explicit":
        p = p.replace(simulation=paper_robot_params().simulation.replace(dt=3e-5))
    clean = _run_with_memory(p, None, steps)
    poisoned = _run_with_memory(p, np.nan, steps)
    for a, b in zip(clean, poisoned):
        assert np.all(np.isfinite(a)) and np.array_equal(a, b)
    if integrator == "explicit":
        on = p.replace(rod=p.rod.replace(creep_fraction=CREEP[0], creep_time=CREEP[1]))
        assert not np.all(np.isfinite(_run_with_memory(on, np.nan, 1)[4]))
