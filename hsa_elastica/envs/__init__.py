"""Gymnasium environments of HSA robots (optional: ``pip install hsa-elastica[rl]``).

``import hsa_elastica`` registers (by entry-point string, without importing these modules;
``hsa_elastica/_gym.py``), with ``max_episode_steps`` in the spec:

* ``HSARobot-v1`` -- :class:`~hsa_elastica.envs.hsa_robot.HSARobotEnv`, the paper's four-rod
  robot reaching a platform position with normalised motor commands in ``[-1, 1]``::

      import gymnasium as gym
      import hsa_elastica  # noqa: F401  (registers the ids)
      env = gym.make("HSARobot-v1")  # or gym.make("hsa_elastica:HSARobot-v1") without the import
      obs, info = env.reset(seed=0)
      obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

* ``HSAStack-v1`` -- :class:`~hsa_elastica.envs.hsa_stack.HSAStackEnv`, two paper robots
  stacked (the upper stage's motors on the lower platform), reaching with the top platform.

* ``HSAPush-v0`` -- :class:`~hsa_elastica.envs.hsa_push.HSAPushEnv`, the paper robot pushing
  a ball on a rough floor to a target (``max_episode_steps = 250``, 5 s).

``-v1``: the implicit integrator and motors limited to the paper robot's servo speed (the
classes' defaults); ``HSARobot-v0`` / ``HSAStack-v0``: the earlier defaults (explicit stepper,
unlimited motors), kept so that earlier results reproduce.

``gym.make_vec(id, num_envs=N)`` without a ``vectorization_mode`` builds
:class:`~hsa_elastica.envs.vector.ThreadVectorEnv`: the sub-envs' steps on threads, side by
side (the step kernels release the GIL), results as Gymnasium's ``SyncVectorEnv``.
"""

from __future__ import annotations

try:
    import gymnasium as _gym  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        "hsa_elastica.envs needs gymnasium: pip install 'hsa-elastica[rl]' (or pip install gymnasium)"
    ) from exc

from hsa_elastica.envs.hsa_robot import HSARobotEnv
from hsa_elastica.envs.hsa_push import HSAPushEnv
from hsa_elastica.envs.hsa_stack import HSAStackEnv
from hsa_elastica.envs.vector import ThreadVectorEnv

__all__ = ["HSARobotEnv", "HSAStackEnv", "HSAPushEnv", "ThreadVectorEnv"]
