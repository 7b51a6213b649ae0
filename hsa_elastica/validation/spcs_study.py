"""SPCS kinematic model fitted to simulated steady-state rod shapes (paper Section IV-D, Fig. 5).

For each motion primitive of Fig. 2(a) (elongation, bending N/S/E/W, twisting CW/CCW) and each
magnitude, the four-rod paper robot (Section II-E) is run from rest to its steady state with our
simulator.  Each rod then gives N = 25 poses, one per element:

* position: the element centre, the midpoint of its two nodes [m];
* orientation: the element's directors (``R = Q.T``: columns d1, d2, d3, d3 = tangent);
* arc length: the printed arc length of the element centre, ``s_k = (k + 1/2) L / 25``;
* frame: the rod's *un-actuated* base frame {S_B}: origin at the rod's base node, axes
  ``(radial, tangential, +z)`` of the straight rod before actuation, so that the motor angle is
  the SPCS ``phi0`` (``hsa_elastica.spcs.rod_element_poses`` with that base pose).

The SPCS model (twist and stretch constant over the rod, bend and shear piecewise constant over
``n_S = 1..5`` equal segments; ``n_q = 3 + 4 n_S``) is fitted to these poses by the
Levenberg-Marquardt IK of ``hsa_elastica.spcs.inverse_kinematics_lm`` (exact Jacobian, orientation
weight 0.1 L; the paper uses the gradient iteration of Eq. 14, which converges to the same
least-squares optimum, only slower).  Two variants:

* ``fixed``: ``phi0`` fixed to the motor angle (read from the encoder in the paper);
* ``free``: ``phi0`` fitted too.

Errors (Eq. 15-16, ``hsa_elastica.spcs.error_metrics``) are pooled per primitive over its magnitudes,
the four rods and the 25 poses: ``e_p`` [mm], ``e_quat`` [-] (quaternion vector part) and the
XYZ Euler-angle errors [rad].

This module holds the computations (:func:`run_study`, the fits, the metrics; implemented in
:mod:`hsa_elastica.validation.spcs_study_compute`).  The report (``spcs_study.md``,
``fig5_spcs.png``) is written by the checkout's ``python -m validation.spcs_study
[--magnitudes 0.25 0.5 0.75 1.0] [--results DIR]``, which caches every simulated steady state as
``<out>/spcs_<primitive>_m<mag>_<hash>.npz`` (the hash covers the robot parameters and settling
settings), so refits do not re-simulate.
"""

from __future__ import annotations

# the computation lives in its own module; its names are re-exported here
from hsa_elastica.validation.spcs_study_compute import (
    GROUPS as GROUPS,
    N_SEGMENTS as N_SEGMENTS,
    PRIMITIVE_NAMES as PRIMITIVE_NAMES,
    VARIANTS as VARIANTS,
    FloatArray as FloatArray,
    RodFit as RodFit,
    SettleSettings as SettleSettings,
    SteadyShape as SteadyShape,
    base_pose as base_pose,
    cache_key as cache_key,
    cache_path as cache_path,
    end_element_strain_ratio as end_element_strain_ratio,
    fit_rod as fit_rod,
    fit_shapes as fit_shapes,
    load_or_simulate as load_or_simulate,
    metrics_table as metrics_table,
    rod_poses as rod_poses,
    run_study as run_study,
    simulate_primitive as simulate_primitive,
    study_params as study_params,
)

