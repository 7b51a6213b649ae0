"""hsa-elastica: Handed Shearing Auxetic rods and robots as a PyElastica 1.0 plugin.

The public API is listed in ``__all__``; see ``docs/architecture.md`` for the module map.
"""

__version__ = "0.1.0"

__all__: list[str] = ["__version__"]

from hsa_elastica.kinematics import (  # noqa: E402  (SPCS kinematics, Eq. 8-16)
    ErrorMetrics, IKResult, KinematicsError, SPCSModel, error_metrics, inverse_kinematics_gradient,
    inverse_kinematics_lm, rod_element_poses,
)
__all__ += ["SPCSModel", "IKResult", "ErrorMetrics", "KinematicsError", "inverse_kinematics_lm",
            "inverse_kinematics_gradient", "error_metrics", "rod_element_poses"]
