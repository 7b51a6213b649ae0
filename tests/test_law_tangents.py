"""Every registered law's consistent tangent (physics/laws.py, with the laws declared in their
own modules, physics/compiled_laws.py) against central differences of its force kernel, on a
random valid configuration (physics/law_cases.py).

Oracle: ``(f(+h e_j) - f(-h e_j)) / 2h`` of the law's own force kernel, positions moved by
``h``, directors turned by ``exp(-[h e_a])`` with the kinematic-update kernel (the static
solver's increment).  Steps: 1e-6 of an element's rest length / 1e-8 m at the joints (whose
springs are stiff: k_F |x| ~ 5e4 N against forces of ~1e3 N) / 1e-4 of the contact's smoothing
length, and 1e-6 rad.  The forces vary on scales of an element, a centimetre or a smoothing
length, so the truncation error is O((h / scale)^2) ~ 1e-8 relative at worst, and the round-off
about eps |f| / (h |df/du|) ~ 1e-9 relative; the largest errors measured on these cases are
7e-9 to 9e-9 (5.5e-8 for the contact, whose force varies on the smoothing length; 4.8e-8 for
the compression law).  A
tolerance of 1e-6 of each column's norm is thus well above the oracle's own error and far
below any missing or wrong term (those are O(1) of the column: leaving out the frame term of
the body's couple errs by 0.26 of its column).

The velocity tangents (the joints' and mounts' dampers; the linear, body and Kelvin-Voigt
dampers and the bodies' gyroscopic couple, which register theirs alone) are checked the same way in the
velocities of the unknowns (node and body velocities moved by 1e-2 m/s, angular velocities by
0.1 rad/s in their own frames).  The laws are linear in the velocities, so the differences
are exact up to round-off, eps |f| / (h |df/dv|) ~ 1e-16 * 3e4 N / (1e-2 m/s * 3 N s/m) ~
1e-10 relative (measured: 1.4e-10 for the joint force, 1e-13 to 4e-13 for the couples); the
same tolerance applies.  The gyroscopic couple is quadratic in the angular velocity, whose
central differences are exact up to round-off as well.  The rod contact's friction is not linear in the velocities (it
turns over the slip velocity, 1 mm/s): its velocities are moved by 1e-7 m/s, a truncation
error of O((1e-7 / 1e-3)^2) = 1e-8 relative.  A compiled law's node positions and velocities
are moved by 1e-6 of their largest value: the quadratic drag varies on the scale of the
velocity itself (0.5 m/s), a truncation error of O((1e-6)^2) relative; at its node at rest
the force is flat (zero derivative, and zero differences).
"""

from __future__ import annotations

import numpy as np
import pytest

from hsa_elastica.physics.laws import LawCase, all_laws, law, tangent_source

LAWS = all_laws()

RTOL = 1e-6


def _central_differences(case: LawCase) -> np.ndarray:
    fd = np.zeros((case.n, case.n))
    for j in range(case.n):
        dx = np.zeros(case.n)
        dx[j] = case.steps[j]
        fd[:, j] = (case.forces(dx) - case.forces(-dx)) / (2.0 * case.steps[j])
    return fd


def _column_error(exact: np.ndarray, fd: np.ndarray) -> float:
    """Largest entry error over its column's norm (a column of zeros: over the largest; all
    zero, as a law of the velocities alone in the positions: the error itself, which must
    then be zero up to the smallest normal number)."""
    scale = np.linalg.norm(fd, axis=0)
    scale = np.where(scale > 0.0, scale, max(scale.max(), np.finfo(float).tiny))
    return float(np.max(np.abs(exact - fd) / scale[None, :]))


@pytest.mark.parametrize("entry", LAWS, ids=[e.name for e in LAWS])
def test_registered_tangent_equals_central_differences(entry) -> None:  # type: ignore[no-untyped-def]
    if entry.tangent_kernel is None:
        assert tangent_source(entry) in ("finite differences", "velocities only")
        pytest.skip(f"{entry.name}: {tangent_source(entry)}")
    assert entry.case is not None and tangent_source(entry) == "exact"
    case = entry.case(np.random.default_rng(20261129))
    assert case.tangent is not None
    exact = case.tangent()
    fd = _central_differences(case)
    # the configuration loads the law: its forces vary with the positions, or, for a law of
    # the velocities alone (the quadratic drag), with the velocities (the velocity test)
    assert np.abs(fd).max() > 0.0 or entry.velocity_kernel is not None
    err = _column_error(exact, fd)
    assert err <= RTOL, f"{entry.name}: largest entry error {err:.3g} of its column's norm"


def _velocity_differences(case: LawCase) -> np.ndarray:
    assert case.velocity_forces is not None and case.velocity_steps is not None
    fd = np.zeros((case.n, case.n))
    for j in range(case.n):
        dv = np.zeros(case.n)
        dv[j] = case.velocity_steps[j]
        fd[:, j] = (case.velocity_forces(dv) - case.velocity_forces(-dv)) / (2.0 * dv[j])
    return fd


VELOCITY_LAWS = [e for e in LAWS if e.velocity_kernel is not None]


@pytest.mark.parametrize("entry", VELOCITY_LAWS, ids=[e.name for e in VELOCITY_LAWS])
def test_registered_velocity_tangent_equals_central_differences(entry) -> None:  # type: ignore[no-untyped-def]
    assert entry.case is not None
    case = entry.case(np.random.default_rng(20261129))
    assert case.velocity_tangent is not None
    exact = case.velocity_tangent()
    fd = _velocity_differences(case)
    assert np.abs(fd).max() > 0.0  # the dampers act
    err = _column_error(exact, fd)
    assert err <= RTOL, f"{entry.name}: largest entry error {err:.3g} of its column's norm"


def test_a_wrong_velocity_tangent_fails_the_check() -> None:
    """The velocity check is sharp: the joint force's velocity tangent without the lever
    term of the attachment point's velocity (``w x r``: the node's force against the body's
    angular velocity) misses by 0.64 of its column."""
    make = law("joint force").case
    assert make is not None
    case = make(np.random.default_rng(3))
    assert case.velocity_tangent is not None
    exact = case.velocity_tangent()
    fd = _velocity_differences(case)
    assert _column_error(exact, fd) <= RTOL
    exact[0:3, 9:12] = 0.0
    assert _column_error(exact, fd) > 1e-1


def test_a_wrong_tangent_fails_the_check() -> None:
    """The check is sharp: the joint couple's tangent without the frame term ``[T_b]`` of the
    body (its couple turning with the body) misses by far more than the tolerance."""
    make = law("joint couple").case
    assert make is not None
    case = make(np.random.default_rng(3))
    assert case.tangent is not None
    exact = case.tangent()
    fd = _central_differences(case)
    tb = case.forces(np.zeros(case.n))[9:12]
    exact[9:12, 9:12] -= np.array([[0.0, -tb[2], tb[1]], [tb[2], 0.0, -tb[0]],
                                   [-tb[1], tb[0], 0.0]])
    assert _column_error(exact, fd) > 1e-2


def test_a_missing_rolling_term_fails_the_check() -> None:
    """The rolling check is sharp: the support row's tangent without the rolling couple's
    part (the same configuration with ``c_rr = 0``) against the differences of the row with
    it misses by more than 1e-2 of a column, in the positions and in the velocities."""
    from hsa_elastica.physics.object_contact_cases import rolling_couple_case

    rolling = rolling_couple_case(np.random.default_rng(3))
    without = rolling_couple_case(np.random.default_rng(3), c_rr=0.0)
    assert rolling.tangent is not None and rolling.velocity_tangent is not None
    assert without.tangent is not None and without.velocity_tangent is not None
    fd, fd_v = _central_differences(rolling), _velocity_differences(rolling)
    assert _column_error(rolling.tangent(), fd) <= RTOL
    assert _column_error(rolling.velocity_tangent(), fd_v) <= RTOL
    print("without the couple's tangent:", _column_error(without.tangent(), fd),
          _column_error(without.velocity_tangent(), fd_v))
    assert _column_error(without.tangent(), fd) > 1e-2
    assert _column_error(without.velocity_tangent(), fd_v) > 1e-2


def test_the_registry_holds_every_law_of_the_static_jacobian() -> None:
    names = [e.name for e in LAWS]
    assert len(set(names)) == len(names)
    for name in ("rod", "auxetic coupling", "contact", "object contact", "cylinder contact",
                 "body object contact", "body cylinder contact", "rolling couple",
                 "rod contact", "joint force", "joint couple", "motor mount", "twist mount",
                 "compression law"):
        assert tangent_source(law(name)) == "exact"
    assert tangent_source(law("quadratic drag")) == "exact"  # declared in physics/drag.py
    assert tangent_source(law("passive coupling")) == "finite differences"
    dampers = {"Kelvin-Voigt damping", "linear damper", "body damper", "gyroscopic couple"}
    for name in dampers:
        assert tangent_source(law(name)) == "velocities only"
    assert {e.name for e in VELOCITY_LAWS} == {"joint force", "joint couple", "motor mount",
                                               "twist mount", "rod contact", "object contact",
                                               "cylinder contact", "body object contact",
                                               "body cylinder contact", "rolling couple",
                                               "quadratic drag"} | dampers
    with pytest.raises(KeyError, match="registered: rod"):
        law("no such law")
