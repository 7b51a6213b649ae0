"""The ring-marker comparison of the real robot (``hsa_elastica.validation.ring_marker``).

* The tracking-flip detector is checked on synthetic orientation sequences: a one-pose flip is
  found, a real large step (the ring turning with the motor, kept in the next poses) is not.
* The clamp fit is checked by recovery: ring poses synthesised from model rod frames with a
  known clamp (place, offset, mounting rotation) give that clamp back (1e-6: least-squares
  round-off on exact data).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from hsa_elastica.params import paper_robot_params
from hsa_elastica.validation.ring_marker import (
    RingRun,
    fit_ring,
    ring_pose,
    rod_frames,
    tracking_flips,
    turn_slope,
)


def _about_z(angle: np.ndarray) -> Rotation:
    return Rotation.from_rotvec(np.outer(angle, [0.0, 0.0, 1.0]))


def test_tracking_flips_finds_one_pose_flips_only() -> None:
    yaw = np.radians(np.r_[np.linspace(0.0, 40.0, 9), np.linspace(115.0, 130.0, 4)])
    rots = _about_z(yaw)
    q = rots.as_quat()
    q[4] = (rots[4] * Rotation.from_euler("x", 177.0, degrees=True)).as_quat()  # a flip
    flags = tracking_flips(q)
    # pose 4 is the flip; the 75-deg step from pose 8 to 9 is a real turn (it stays)
    assert np.flatnonzero(flags).tolist() == [4]


def test_turn_slope_of_a_uniform_turn() -> None:
    phi = np.linspace(-2.0, 2.0, 21)
    assert abs(turn_slope(_about_z(0.37 * phi), phi) - 0.37) < 1e-12


def test_clamp_fit_recovers_a_synthetic_clamp() -> None:
    p = paper_robot_params()
    p = p.replace(rod=p.rod.replace(n_elements=8))
    angles = np.array([[0.5, -0.5, 0.5, -0.5], [1.5, -0.2, 0.9, -1.1], [2.5, -2.5, 2.5, -2.5],
                       [0.0, 0.0, 2.0, -2.0]])
    x, q = rod_frames(p, angles)
    truth = np.array([0.43, 0.004, -0.011, 0.002, 0.2, -0.1, 2.3])
    pos, rot = ring_pose(x, q, truth)
    run = RingRun("synthetic", angles, pos, rot.as_quat())
    fitted = fit_ring(x, q, run)
    np.testing.assert_allclose(fitted, truth, rtol=0.0, atol=1e-6)
