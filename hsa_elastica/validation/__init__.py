"""Validation of the simulator against measured data, as runnable modules (they work after
``pip install``, from any directory; the measured data is the package's ``hsa_elastica/data``):

* ``python -m hsa_elastica.validation.characterization`` -- the four virtual experiments of the
  closed-HSA characterization (Good et al. 2022, paper Section II-C, Fig. 3), Table I and fitted
  rods: points, scores and fitted rods (its report, ``results.md`` and Fig. 3, is written by the
  checkout's ``python -m validation.characterization``); ``characterization_cv`` -- the
  cross-validated scores of every parameter set (one twist angle left out per row count, one
  row count left out), including the fit shared across row counts
  (``characterization_shared``);
* ``python -m hsa_elastica.validation.real_robot`` -- the real four-rod robot against its motion
  capture, and the calibration (``--fit``) of the ``fpu_robot_2022`` preset;
* ``hsa_elastica.validation.spcs_study`` -- the computations of the SPCS kinematic model against
  simulated steady states (paper Fig. 5); its report is written by the checkout's
  ``python -m validation.spcs_study``.

Each writes its tables and figures into ``--results`` (default ``./validation_results``).
"""

#: the runnable validations (module names under hsa_elastica.validation)
VALIDATIONS = ("characterization", "characterization_cv", "real_robot")
