"""Frame indifference (objectivity) of the Kelvin-Voigt material damping.

A constitutive law must not depend on the observer: the damper's velocity update of a rod
turned rigidly by a rotation R is R times the update of the unturned rod (node velocities, lab
frame) and the same local angular velocities.  Reference: the transformation rule itself, no
number from the code.  Tolerance 1e-12 of the update: round-off of a few hundred operations.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from hsa_elastica.params import RodParams
from hsa_elastica.physics.kelvin_voigt_damper import KelvinVoigtDamping
from hsa_elastica.robots.builders import make_hsa_rod


def _bent_moving_rod(seed: int):  # type: ignore[no-untyped-def]
    rod = make_hsa_rod(RodParams(n_elements=12), base_position=(0.0, 0.0, 0.0), normal=(1.0, 0.0, 0.0))
    rng = np.random.default_rng(seed)
    n = rod.n_elems
    # a bent, twisted pose: each element turned by a smooth rotation, nodes along the d3 chain
    angles = np.cumsum(rng.normal(0.0, 0.15, size=(n, 3)), axis=0)
    for k in range(n):
        rod.director_collection[:, :, k] = (
            rod.director_collection[:, :, k] @ Rotation.from_rotvec(angles[k]).as_matrix().T
        )
    for k in range(n):
        d3 = rod.director_collection[2, :, k]
        rod.position_collection[:, k + 1] = rod.position_collection[:, k] + 1.02 * rod.rest_lengths[k] * d3
    rod.velocity_collection[:] = rng.normal(0.0, 0.05, size=rod.velocity_collection.shape)
    rod.omega_collection[:] = rng.normal(0.0, 2.0, size=rod.omega_collection.shape)
    return rod


def _damped(rod, hold: bool, hold_tip: bool = False):  # type: ignore[no-untyped-def]
    damper = KelvinVoigtDamping(_system=rod, tau_axial=1e-4, tau_shear=1e-4, tau_bend=1e-3,
                                tau_twist=1e-3, time_step=2e-5, hold_base=hold,
                                hold_tip=hold_tip)
    # the damper reads the strains of the step, as PyElastica's stepper leaves them
    rod.compute_internal_forces_and_torques(np.float64(0.0))
    v0, w0 = rod.velocity_collection.copy(), rod.omega_collection.copy()
    damper.dampen_rates(rod, np.float64(0.0))
    return rod.velocity_collection - v0, rod.omega_collection - w0


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize(("hold", "hold_tip"), [(False, False), (True, False), (True, True)])
def test_kelvin_voigt_is_frame_indifferent(seed: int, hold: bool, hold_tip: bool) -> None:
    rod = _bent_moving_rod(seed)
    turned = _bent_moving_rod(seed)
    r = Rotation.from_rotvec([0.7, -1.1, 0.4]).as_matrix()
    turned.position_collection[:] = r @ rod.position_collection + np.array([[0.3], [-0.2], [0.1]])
    turned.velocity_collection[:] = r @ rod.velocity_collection
    turned.director_collection[:] = np.einsum("ijk,lj->ilk", rod.director_collection, r)
    dv, dw = _damped(rod, hold, hold_tip)
    dv_t, dw_t = _damped(turned, hold, hold_tip)
    assert np.abs(dv).max() > 1e-6 and np.abs(dw).max() > 1e-3  # the damper acts
    # held ends keep their rates exactly (set by a boundary condition)
    for end, held in ((0, hold), (-1, hold_tip)):
        if held:
            assert np.all(dv[:, end] == 0.0) and np.all(dw[:, end] == 0.0)
    np.testing.assert_allclose(dv_t, r @ dv, rtol=0.0, atol=1e-12 * np.abs(dv).max())
    np.testing.assert_allclose(dw_t, dw, rtol=0.0, atol=1e-12 * np.abs(dw).max())


@pytest.mark.parametrize("seed", [3, 4])
def test_kelvin_voigt_leaves_rigid_motion_undamped(seed: int) -> None:
    """A rigid motion (translation u plus rotation w about the origin: node velocities
    ``u + w x x``, local angular velocities ``Q w``) has zero strain rates, so the viscous
    stresses vanish and the update is zero (to round-off, 1e-12 of the velocities).  This also
    checks that the damper's strains (the rod's ``sigma``, ``dilatation`` of the step) belong
    to the current pose: with a strain of another pose ``sigma_dot = -w x a != 0``."""
    rod = _bent_moving_rod(seed)
    rng = np.random.default_rng(seed)
    u = rng.normal(0.0, 0.1, size=3)
    w = rng.normal(0.0, 3.0, size=3)
    rod.velocity_collection[:] = u[:, None] + np.cross(w, rod.position_collection.T).T
    rod.omega_collection[:] = np.einsum("ijk,j->ik", rod.director_collection, w)
    dv, dw = _damped(rod, hold=False)
    assert np.abs(dv).max() <= 1e-12 * np.abs(rod.velocity_collection).max()
    assert np.abs(dw).max() <= 1e-12 * np.abs(w).max()
    # the same rod with strains left from the straight pose is damped: the check can fail
    stale = _bent_moving_rod(seed)
    stale.velocity_collection[:] = rod.velocity_collection - dv
    stale.omega_collection[:] = rod.omega_collection - dw
    damper = KelvinVoigtDamping(_system=stale, tau_axial=1e-4, tau_shear=1e-4, tau_bend=1e-3,
                                tau_twist=1e-3, time_step=2e-5, hold_base=False)
    v0 = stale.velocity_collection.copy()
    damper.dampen_rates(stale, np.float64(0.0))
    assert np.abs(stale.velocity_collection - v0).max() > 1e-6


def test_a_rod_at_rest_stays_at_rest_and_nothing_compiles() -> None:
    """PyElastica's finalize() calls every damper once at t = 0, on a robot at rest: zero rates
    have zero viscous stresses, so the damper leaves the rod alone without compiling its
    per-rod kernel (a shorter cold start).  The kernel itself, run on the same rod, gives the
    same zero rates (the reference for the shortcut)."""
    from hsa_elastica.physics.kelvin_voigt_damper import material_damping_table
    from hsa_elastica.physics.material_damping import DampedRod, kelvin_voigt_damp

    rod = _bent_moving_rod(1)
    rod.velocity_collection[:] = 0.0
    rod.omega_collection[:] = 0.0
    damper = KelvinVoigtDamping(_system=rod, tau_axial=1e-4, tau_shear=1e-4, tau_bend=1e-3,
                                tau_twist=1e-3, time_step=2e-5, hold_base=True)
    rod.compute_internal_forces_and_torques(np.float64(0.0))
    damper.dampen_rates(rod, np.float64(0.0))
    assert damper._kernel is None
    assert not rod.velocity_collection.any() and not rod.omega_collection.any()
    record = DampedRod(rod.sigma, rod.dilatation, rod.velocity_collection, rod.omega_collection,
                       rod.director_collection, rod.rest_lengths, rod.rest_voronoi_lengths,
                       rod.shear_matrix, rod.bend_matrix, rod.mass,
                       rod.mass_second_moment_of_inertia)
    kelvin_voigt_damp(record, material_damping_table([(damper, rod)], [(0, 0, 0)]), 0)
    assert not rod.velocity_collection.any() and not rod.omega_collection.any()
