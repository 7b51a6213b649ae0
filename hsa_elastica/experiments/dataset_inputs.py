"""Checks of a steady-state dataset's inputs (sample count, motor-angle range, workers, Dask
scheduler address), shared by :func:`hsa_elastica.experiments.datasets.build_dataset` and the
``dataset`` command (which passes its flag names as ``field``): one line naming the field and
the allowed range."""

from __future__ import annotations

import math
import os
import re
from typing import Any

import numpy as np

from hsa_elastica.params import MAX_MOTOR_ANGLE, ParameterError, RobotParams, check_motor_angles
from hsa_elastica.params import warn_mass_without_gravity

__all__ = ["MAX_SAMPLES", "SCHEDULER_TIMEOUT_S", "max_workers", "check_workers",
           "check_n_samples", "check_phi_max", "check_scheduler_address", "connect_scheduler",
           "check_dataset_inputs"]

#: most samples in one dataset: the angles, their Z-order keys and the chunk plan are held in
#: memory (about 100 bytes a sample, 1 GB at the limit) and generated before the first solve
#: (about 20 us a random sample: 3 min at the limit)
MAX_SAMPLES = 10**7
#: seconds to wait for an external Dask scheduler (``scheduler=``) before giving up
SCHEDULER_TIMEOUT_S = 10.0


# --------------------------------------------------------------------------------------------
# input checks (also used by the command line, with its flag names as ``field``)
# --------------------------------------------------------------------------------------------
def max_workers() -> int:
    """The most local worker processes accepted: 4 per core (each is a Python process of about
    200 MB solving one chunk at a time; more only competes for the cores)."""
    return 4 * (os.cpu_count() or 1)


def check_workers(workers: int | None, field: str = "workers") -> None:
    """``workers`` is None or an integer in ``1 .. max_workers()``."""
    if workers is None:
        return
    top = max_workers()
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or not 1 <= workers <= top:
        raise ParameterError(f"{field} = {workers!r} is invalid: must be an integer from 1 to "
                             f"{top} (4 per core)")


def check_n_samples(n: int, field: str = "n") -> None:
    """At most :data:`MAX_SAMPLES` samples."""
    if not 1 <= n <= MAX_SAMPLES:
        raise ParameterError(f"{field} = {n!r} is invalid: must be 1 to {MAX_SAMPLES:.0e} samples "
                             "(the angles and chunk plan of a dataset are held in memory)")


def check_phi_max(phi_max: float, field: str = "phi_max") -> None:
    """``0 < phi_max <= MAX_MOTOR_ANGLE`` [rad]."""
    if not (math.isfinite(phi_max) and 0.0 < phi_max <= MAX_MOTOR_ANGLE):
        raise ParameterError(f"{field} = {phi_max!r} is invalid: must be > 0 and <= "
                             f"{MAX_MOTOR_ANGLE:.6g} rad (the motor-angle limit)")


_ADDRESS = re.compile(
    r"^(?:(?P<scheme>[a-z0-9+]+)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)"
    r"(?::(?P<port>[0-9]{1,5}))?/?$"
)
_SCHEMES = ("tcp", "tls", "ucx", "ws", "wss")


def check_scheduler_address(address: str | None, field: str = "scheduler") -> None:
    """A Dask scheduler address ``[SCHEME://]HOST[:PORT]`` (scheme tcp, tls, ucx, ws or wss;
    port 1..65535)."""
    if address is None:
        return
    m = _ADDRESS.match(address)
    ok = m is not None and (m["scheme"] or "tcp") in _SCHEMES and (
        m["port"] is None or 1 <= int(m["port"]) <= 65535)
    if not ok:
        raise ParameterError(f"{field} = {address!r} is invalid: must be a Dask scheduler address "
                             "[tcp|tls|ucx|ws|wss://]HOST[:PORT], port 1..65535 "
                             "(e.g. tcp://head:8786)")


def connect_scheduler(address: str, field: str = "scheduler") -> Any:
    """A ``dask.distributed.Client`` of the scheduler at ``address`` (checked by
    :func:`check_scheduler_address`), or ``ParameterError`` naming ``field`` if none answers
    within :data:`SCHEDULER_TIMEOUT_S`."""
    check_scheduler_address(address, field)
    from dask.distributed import Client

    try:
        return Client(address, timeout=SCHEDULER_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ParameterError(
            f"{field} = {address!r} is invalid: no Dask scheduler answered there within "
            f"{SCHEDULER_TIMEOUT_S:g} s ({' '.join(str(exc).split())[:100]})"
        ) from None


def check_dataset_inputs(params: RobotParams, angles: Any, workers: int | None, scheduler: Any,
                         solver: str) -> tuple[Any, str]:
    """The inputs of :func:`~hsa_elastica.experiments.datasets.build_dataset` but its chunk
    size and output directory, checked in this order (``ParameterError`` naming the first bad
    one): ``angles`` (n > 0, n_rods) [rad] at most :data:`MAX_SAMPLES` within the motor-angle
    limit, ``simulation.dt`` within the stability limit (both solvers may relax dynamically),
    ``workers``, a ``scheduler`` address, the ``solver`` and, for the static solver, a model
    it can solve.  Warns once about a mass without gravity.  Returns the angles as a
    contiguous float array and the solver's method."""
    from hsa_elastica.engines.timeloop import check_time_step
    from hsa_elastica.experiments.dataset_chunks import resolve_solver

    angles = np.ascontiguousarray(angles, dtype=np.float64)
    if angles.ndim != 2 or len(angles) == 0:
        raise ParameterError(f"angles has shape {angles.shape}: must be (n > 0, n_rods = "
                             f"{params.n_rods})")
    check_n_samples(len(angles), "len(angles)")
    check_motor_angles(angles, params.n_rods, field="angles")
    check_time_step(params.simulation.dt, params)
    warn_mass_without_gravity(params)  # here, once: the workers do not repeat it
    check_workers(workers)
    if isinstance(scheduler, str):
        check_scheduler_address(scheduler)
    method = resolve_solver(solver)
    if method == "static":
        from hsa_elastica.robots.static_cache import check_static_model

        check_static_model(params)
    return angles, method
