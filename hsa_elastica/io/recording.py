"""Diagnostics callbacks -> ``pandas.DataFrame`` (see docs/architecture.md, "Diagnostics format").

Two PyElastica 1.0 callbacks (``CallBackBaseClass`` subclasses) sample a system every ``every``
time steps into a preallocated, geometrically growing 2-D float buffer (one row per sample):

* :class:`RodRecorder` (Cosserat rod) - columns ``time``, ``position_{x|y|z}_{node}``,
  ``velocity_{x|y|z}_{node}``, ``director_{r}{c}_{elem}``, ``sigma_{x|y|z}_{elem}``,
  ``kappa_{x|y|z}_{vor}``, ``rest_length_{elem}``, ``base_twist_angle``;
* :class:`RigidBodyRecorder` (e.g. the platform ``Cylinder``) - ``time``, ``position_{x|y|z}``,
  ``quaternion_{x|y|z|w}``, ``velocity_{x|y|z}``, ``omega_{x|y|z}`` (body frame).

Units: SI (m, m/s, rad, rad/s); strains are dimensionless (sigma) or 1/m (kappa).

PyElastica instantiates callbacks itself when it finalizes, so to keep a handle on the recorder
create it yourself and attach it::

    rec = RodRecorder(every=25).attach(sim, rod)      # before sim.finalize()
    ...
    df = rec.to_dataframe()

(``sim.collect_diagnostics(rod).using(RodRecorder, every=25)`` also works, but then PyElastica
owns the only reference to the instance.) ``combine`` joins several recorders' frames on
``time`` with column prefixes ``rod{i}/`` and ``platform/``; ``node_positions`` and
``directors`` reshape the flat columns back to arrays.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd
from elastica.callback_functions import CallBackBaseClass
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.actuation import twist_about_axis
from hsa_elastica.physics.joints import rotation_matrix_to_quaternion, rotation_vector_from_matrix
from hsa_elastica.params import ParameterError

__all__ = [
    "MAX_RECORDING_BYTES",
    "RecordingTooLarge",
    "check_recording_size",
    "recording_bytes",
    "RigidBodyRecorder",
    "RodRecorder",
    "combine",
    "directors",
    "node_positions",
    "rod_strains",
    "sample_reads",
]

_XYZ = ("x", "y", "z")


# --------------------------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------------------------
@njit(cache=True)  # type: ignore[misc]
def rod_strains(
    position: NDArray[np.float64],
    director: NDArray[np.float64],
    rest_lengths: NDArray[np.float64],
    rest_voronoi_lengths: NDArray[np.float64],
    sigma_out: NDArray[np.float64],
    kappa_out: NDArray[np.float64],
) -> None:
    """Shear/stretch ``sigma`` (3, n) and bend/twist ``kappa`` (3, n-1) of the current state.

    Same definitions as PyElastica 1.0 (``CosseratRod.sigma`` / ``.kappa``), evaluated at the
    sample's configuration (the rod's own arrays hold the values of the last internal-force
    evaluation, half a step earlier):
    ``sigma_k = (l_k / rest_l_k) Q_k t_k - e_3`` and
    ``kappa_k = log(Q_k Q_{k+1}^T) / rest_voronoi_k`` (rotation vector, 1/m).
    """
    n = director.shape[2]
    for k in range(n):
        d0 = position[0, k + 1] - position[0, k]
        d1 = position[1, k + 1] - position[1, k]
        d2 = position[2, k + 1] - position[2, k]
        # dilatation * tangent = (x_{k+1} - x_k) / rest_length
        inv = 1.0 / rest_lengths[k]
        for i in range(3):
            sigma_out[i, k] = (
                director[i, 0, k] * d0 + director[i, 1, k] * d1 + director[i, 2, k] * d2
            ) * inv
        sigma_out[2, k] -= 1.0
    R = np.empty((3, 3))
    for k in range(n - 1):
        for i in range(3):
            for j in range(3):
                R[i, j] = (
                    director[i, 0, k] * director[j, 0, k + 1]
                    + director[i, 1, k] * director[j, 1, k + 1]
                    + director[i, 2, k] * director[j, 2, k + 1]
                )
        v0, v1, v2 = rotation_vector_from_matrix(R)
        inv = 1.0 / rest_voronoi_lengths[k]
        kappa_out[0, k] = v0 * inv
        kappa_out[1, k] = v1 * inv
        kappa_out[2, k] = v2 * inv


@njit(cache=True)  # type: ignore[misc]
def rod_sample(
    position: NDArray[np.float64],
    velocity: NDArray[np.float64],
    director: NDArray[np.float64],
    rest_lengths: NDArray[np.float64],
    rest_voronoi_lengths: NDArray[np.float64],
    director0: NDArray[np.float64],
    row: NDArray[np.float64],
) -> float:
    """One :class:`RodRecorder` sample into ``row`` (columns after ``time``, up to the last):
    positions, velocities, directors, :func:`rod_strains`, rest lengths; returns the twist
    [rad] of element 0 about its axis relative to ``director0`` (3, 3), principal value
    (``actuation.base_twist_angle``: the same kernel)."""
    n_nodes = position.shape[1]
    n = director.shape[2]
    o = 1
    for i in range(3):
        for k in range(n_nodes):
            row[o + i * n_nodes + k] = position[i, k]
    o += 3 * n_nodes
    for i in range(3):
        for k in range(n_nodes):
            row[o + i * n_nodes + k] = velocity[i, k]
    o += 3 * n_nodes
    for r in range(3):
        for c in range(3):
            for k in range(n):
                row[o + (3 * r + c) * n + k] = director[r, c, k]
    o += 9 * n
    sigma = row[o : o + 3 * n].reshape((3, n))
    o += 3 * n
    kappa = row[o : o + 3 * (n - 1)].reshape((3, n - 1))
    o += 3 * (n - 1)
    rod_strains(position, director, rest_lengths, rest_voronoi_lengths, sigma, kappa)
    for k in range(n):
        row[o + k] = rest_lengths[k]
    current = np.empty((3, 3))
    for r in range(3):
        for c in range(3):
            current[r, c] = director[r, c, 0]
    return twist_about_axis(director0, current)  # type: ignore[no-any-return]


# --------------------------------------------------------------------------------------------
# buffer and recorder base
# --------------------------------------------------------------------------------------------
class _RowBuffer:
    """Preallocated 2-D float64 buffer whose capacity doubles when full."""

    def __init__(self, n_columns: int, capacity: int = 64) -> None:
        self.data: NDArray[np.float64] = np.empty((capacity, n_columns), dtype=np.float64)
        self.n = 0

    def next_row(self) -> NDArray[np.float64]:
        return self.extend_empty(1)[0]

    def extend_empty(self, count: int) -> NDArray[np.float64]:
        """The next ``count`` rows (uninitialised), appended (the capacity at least doubled
        when they do not fit)."""
        need = self.n + count
        if need > self.data.shape[0]:
            grown = np.empty((max(need, 2 * self.data.shape[0]), self.data.shape[1]))
            grown[: self.n] = self.data[: self.n]
            self.data = grown
        rows = self.data[self.n:need]
        self.n = need
        return rows

    def rows(self) -> NDArray[np.float64]:
        return self.data[: self.n]


def _resolve_every(every: int | None, fps: float | None, dt: float | None, owner: str) -> int:
    if every is not None:
        if fps is not None or dt is not None:
            raise ParameterError(f"{owner}: give either every=... or fps=... and dt=..., not both")
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise ParameterError(f"{owner}.every = {every!r} is invalid: must be an integer >= 1 (steps)")
        return int(every)
    if fps is None or dt is None:
        raise ParameterError(f"{owner}: give every=... (steps) or both fps=... (Hz) and dt=... (s)")
    for name, value, unit in (("fps", fps, "Hz"), ("dt", dt, "s")):
        if not isinstance(value, (int, float, np.floating, np.integer)) or not (
            math.isfinite(float(value)) and float(value) > 0.0
        ):
            raise ParameterError(f"{owner}.{name} = {value!r} is invalid: must be a finite number > 0 ({unit})")
    return max(1, int(round(1.0 / (float(fps) * float(dt)))))


class _Forward(CallBackBaseClass):
    """Thin PyElastica callback that forwards to a recorder created by the user."""

    def __init__(self, target: CallBackBaseClass) -> None:
        super().__init__()
        self.target = target

    def make_callback(self, system: Any, time: np.float64, current_step: int) -> None:
        self.target.make_callback(system, time, current_step)

    def on_close(self) -> None:
        self.target.on_close()


class _Recorder(CallBackBaseClass):
    """Shared sampling logic; subclasses define the columns and fill one row per sample.

    :attr:`reads` names the arrays of a compiled model a sample reads (``"rod.position"``,
    ``"body.director"``, ...; see ``CompiledModel.instant_arrays``): a compiled settling run
    copies only those at its recording steps for the recorders to read after the engine call.
    None (a subclass that does not say): every array of the instant."""

    reads: tuple[str, ...] | None = None

    def __init__(
        self, *, every: int | None = None, fps: float | None = None, dt: float | None = None
    ) -> None:
        super().__init__()
        #: steps between samples (rounded; with ``fps`` the samples follow :attr:`steps_per_sample`)
        self.every: int = _resolve_every(every, fps, dt, type(self).__name__)
        #: exact sampling period in steps: ``every``, or ``1 / (fps dt)`` (at least 1).  Sample
        #: ``k`` is taken at step ``round(k * steps_per_sample)``, so with ``fps`` the sample
        #: times are ``k / fps`` to within ``dt / 2`` and do not drift.
        self.steps_per_sample: float = (
            float(self.every) if every is not None else max(1.0, 1.0 / (float(fps) * float(dt)))  # type: ignore[arg-type]
        )
        self._buffer: _RowBuffer | None = None
        self._columns: list[str] = []
        self._system: Any = None  # the system attach() registered this recorder on

    # -- PyElastica interface -------------------------------------------------------------
    def make_callback(self, system: Any, time: np.float64, current_step: int) -> None:
        if self.is_sample_step(int(current_step)):
            self.record(system, float(time))

    def is_sample_step(self, step: int) -> bool:
        """True if step number ``step`` is a sampling step (``round(k * steps_per_sample)``)."""
        p = self.steps_per_sample
        return int(round(round(step / p) * p)) == step

    def next_sample_step(self, step: int) -> int:
        """The first sampling step ``>= step``."""
        p = self.steps_per_sample
        k = max(0, math.floor(step / p))
        while int(round(k * p)) < step:
            k += 1
        return int(round(k * p))

    def sample_steps(self, first: int, last: int) -> NDArray[np.int64]:
        """The sampling steps in ``[first, last]``, ascending (those of :meth:`is_sample_step`)."""
        p = self.steps_per_sample
        k = np.arange(max(0, math.floor(first / p)), math.floor(last / p) + 2, dtype=np.float64)
        steps = np.rint(k * p).astype(np.int64)  # round(k p): both round half to even
        return steps[(steps >= first) & (steps <= last)]

    def attach(self, simulator: Any, system: Any) -> _Recorder:
        """Register this instance as a callback of ``system`` in ``simulator``; returns self."""
        simulator.collect_diagnostics(system).using(_Forward, target=self)
        self._system = system
        return self

    def load_kernels(self) -> None:
        """Load the kernels a sample calls from numba's cache (or compile them) now, on a
        scratch row of the system :meth:`attach` registered: nothing is recorded (a compiled
        run calls it before its clock starts).  Nothing to do for a recorder not attached so."""
        if self._system is not None:
            self._warm(self._system, np.zeros(len(self._make_columns(self._system))))

    def _warm(self, system: Any, row: NDArray[np.float64]) -> None:
        """A sample of ``system`` into the scratch ``row`` that leaves the recorder's own
        state as it was (:meth:`load_kernels`)."""
        self._fill(system, row)

    # -- sampling -------------------------------------------------------------------------
    def record(self, system: Any, time: float) -> None:
        """Append one sample of ``system`` at ``time`` [s] (called by ``make_callback``)."""
        if self._buffer is None:
            self._columns = self._make_columns(system)
            self._buffer = _RowBuffer(len(self._columns))
        row = self._buffer.next_row()
        row[0] = time
        self._fill(system, row)

    def _make_columns(self, system: Any) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _fill(self, system: Any, row: NDArray[np.float64]) -> None:  # pragma: no cover
        raise NotImplementedError

    # -- output ---------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        return 0 if self._buffer is None else self._buffer.n

    @property
    def columns(self) -> list[str]:
        return list(self._columns)

    def to_array(self) -> NDArray[np.float64]:
        """Copy of the samples, shape (n_samples, n_columns), columns as :attr:`columns`."""
        if self._buffer is None:
            return np.empty((0, 0))
        return self._buffer.rows().copy()

    def to_dataframe(self) -> pd.DataFrame:
        """One row per sample, a ``time`` column and flat float columns (contract format)."""
        if self._buffer is None:
            return pd.DataFrame({"time": np.empty(0)})
        return pd.DataFrame(self._buffer.rows().copy(), columns=self._columns)


def sample_reads(callback: Any) -> tuple[str, ...] | None:
    """The arrays a sample of ``callback`` reads (its class's :attr:`_Recorder.reads`), or None
    where that is not known: a callback without ``reads``, or a subclass that overrides how a
    sample is taken (``make_callback``, ``record``, ``_fill``) below the class that declared
    them."""
    cls = type(callback)
    owner = next((c for c in cls.__mro__ if "reads" in vars(c)), None)
    if owner is None or getattr(callback, "reads", None) is None:
        return None
    for name in ("make_callback", "record", "_fill"):
        definer = next((c for c in cls.__mro__ if name in vars(c)), None)
        if definer is not None and not issubclass(owner, definer):
            return None
    return tuple(callback.reads)


def _vector_columns(name: str, n: int | None) -> list[str]:
    if n is None:
        return [f"{name}_{c}" for c in _XYZ]
    return [f"{name}_{c}_{i}" for c in _XYZ for i in range(n)]


class RodRecorder(_Recorder):
    """Samples a Cosserat rod every ``every`` steps (or at ``fps`` for a step ``dt``).

    Columns (n nodes, n-1 elements): ``time`` [s], ``position_{x|y|z}_{node}`` [m],
    ``velocity_{x|y|z}_{node}`` [m/s], ``director_{r}{c}_{elem}`` (``Q[r, c]``, lab -> local),
    ``sigma_{x|y|z}_{elem}`` [-], ``kappa_{x|y|z}_{vor}`` [1/m] (both evaluated at the sample,
    see :func:`rod_strains`), ``rest_length_{elem}`` [m] (read from ``rod.rest_lengths``, so it
    shows the auxetic coupling), ``base_twist_angle`` [rad]: the signed rotation of element 0
    about its axis (right-hand rule about the base->tip tangent) relative to its directors at
    the FIRST sample, from ``actuation.base_twist_angle`` (swing-twist decomposition: a tilt of
    the element does not count); unwrapped between samples, so it keeps counting past +-pi as
    long as it changes by less than pi between samples.
    """

    reads = ("rod.position", "rod.velocity", "rod.director", "rod.rest_lengths",
             "rod.rest_voronoi_lengths")

    def __init__(
        self, *, every: int | None = None, fps: float | None = None, dt: float | None = None
    ) -> None:
        super().__init__(every=every, fps=fps, dt=dt)
        self._director0: NDArray[np.float64] | None = None
        self._last_twist = 0.0

    def _make_columns(self, rod: Any) -> list[str]:
        n_nodes = rod.position_collection.shape[1]
        n_elems = rod.director_collection.shape[2]
        n_vor = n_elems - 1
        cols = ["time"]
        cols += _vector_columns("position", n_nodes)
        cols += _vector_columns("velocity", n_nodes)
        cols += [f"director_{r}{c}_{k}" for r in range(3) for c in range(3) for k in range(n_elems)]
        cols += _vector_columns("sigma", n_elems)
        cols += _vector_columns("kappa", n_vor)
        cols += [f"rest_length_{k}" for k in range(n_elems)]
        cols += ["base_twist_angle"]
        return cols

    def _warm(self, rod: Any, row: NDArray[np.float64]) -> None:
        rod_sample(rod.position_collection, rod.velocity_collection, rod.director_collection,
                   rod.rest_lengths, rod.rest_voronoi_lengths, np.eye(3), row)

    def _fill(self, rod: Any, row: NDArray[np.float64]) -> None:
        if self._director0 is None:
            self._director0 = np.array(rod.director_collection[:, :, 0], dtype=np.float64)
        angle = float(rod_sample(
            rod.position_collection, rod.velocity_collection, rod.director_collection,
            rod.rest_lengths, rod.rest_voronoi_lengths, self._director0, row,
        ))
        # unwrap: choose the 2 pi branch nearest to the previous sample
        angle += 2.0 * math.pi * round((self._last_twist - angle) / (2.0 * math.pi))
        self._last_twist = angle
        row[-1] = angle


# --------------------------------------------------------------------------------------------
# size of a recording, checked before a run
# --------------------------------------------------------------------------------------------
#: bytes; a robot recording larger than this is refused before the run (the buffer is copied
#: again into the DataFrame and the parquet file, so the peak memory is a few times this)
MAX_RECORDING_BYTES = 1024**3

RIGID_BODY_COLUMNS = 14  # time, position 3, quaternion 4, velocity 3, omega 3


def sensor_column_count(n_rods: int) -> int:
    """Number of ``io.sensors.RobotSensorRecorder`` columns: time, per rod the commanded and
    measured motor angle, motor torque, joint force (3) and torque (3), platform twist (6), per
    rod the imposed motor angle."""
    return 1 + 10 * int(n_rods) + 6


def rod_columns(n_elements: int) -> int:
    """Number of :class:`RodRecorder` columns for a rod of ``n_elements`` elements."""
    n_nodes, n_vor = n_elements + 1, n_elements - 1
    return 1 + 6 * n_nodes + 9 * n_elements + 3 * n_elements + 3 * n_vor + n_elements + 1


def recording_bytes(params: Any, duration: float) -> int:
    """Bytes of float64 samples that recording a robot (``RobotParams``) for ``duration`` [s]
    at ``params.simulation.record_fps`` holds: samples ``floor(duration / (every dt)) + 2``
    (the first, one every ``record_every()`` steps, the final state) times the columns of
    every rod recorder, the platform recorder and the sensor recorder."""
    sp = params.simulation
    samples = math.floor(float(duration) / (sp.record_every() * sp.dt)) + 2
    columns = (
        params.n_rods * rod_columns(params.rod.n_elements)
        + RIGID_BODY_COLUMNS
        + sensor_column_count(params.n_rods)
    )
    return int(samples * columns * 8)


class RecordingTooLarge(ParameterError):
    """The recording asked for would not fit in memory (raised before the run)."""


def check_recording_size(
    params: Any, duration: float, *, limit: int = MAX_RECORDING_BYTES
) -> int:
    """Raise :class:`RecordingTooLarge` naming ``simulation.record_fps`` and the duration when
    :func:`recording_bytes` exceeds ``limit`` [bytes]; returns the estimate.  ``params``: a
    robot's ``RobotParams``, or a list of them (the segments of a stack: all recordings
    together)."""
    stack = isinstance(params, (list, tuple))
    group = list(params) if stack else [params]
    size = sum(recording_bytes(p, duration) for p in group)
    if size > limit:
        rates = ", ".join(f"{r:g}" for r in sorted({p.simulation.record_fps for p in group}))
        raise RecordingTooLarge(
            f"simulation.record_fps = {rates} Hz over {float(duration):g} s would record "
            f"{size / 1024**2:.0f} MiB{f' for {len(group)} segments' if stack else ''} (limit "
            f"{limit / 1024**2:.0f} MiB): lower record_fps or the duration"
        )
    return size


class RigidBodyRecorder(_Recorder):
    """Samples a rigid body (e.g. the platform ``Cylinder``) every ``every`` steps.

    Columns: ``time`` [s], ``position_{x|y|z}`` (centre of mass) [m],
    ``quaternion_{x|y|z|w}`` of the body->robot_base rotation ``director.T`` (scalar last, ``w >= 0``),
    ``velocity_{x|y|z}`` [m/s], ``omega_{x|y|z}`` [rad/s] in the BODY frame (PyElastica's
    ``omega_collection``).
    """

    reads = ("body.position", "body.velocity", "body.omega", "body.director")

    def _make_columns(self, body: Any) -> list[str]:
        return (
            ["time"]
            + _vector_columns("position", None)
            + [f"quaternion_{c}" for c in ("x", "y", "z", "w")]
            + _vector_columns("velocity", None)
            + _vector_columns("omega", None)
        )

    def _fill(self, body: Any, row: NDArray[np.float64]) -> None:
        row[1:4] = body.position_collection[:, 0]
        # (a C-contiguous copy: the transpose would compile a second, Fortran-order specialisation)
        row[4:8] = rotation_matrix_to_quaternion(np.ascontiguousarray(body.director_collection[:, :, 0].T))
        row[8:11] = body.velocity_collection[:, 0]
        row[11:14] = body.omega_collection[:, 0]


# --------------------------------------------------------------------------------------------
# DataFrame helpers
# --------------------------------------------------------------------------------------------
def _count_indexed(df: pd.DataFrame, stem: str) -> int:
    pattern = re.compile(re.escape(stem) + r"(\d+)$")
    idx = [int(m.group(1)) for c in df.columns if (m := pattern.match(str(c)))]
    if not idx:
        raise KeyError(f"no columns '{stem}<i>' in the DataFrame")
    n = max(idx) + 1
    if len(idx) != n:
        raise KeyError(f"columns '{stem}<i>' are not numbered 0..{n - 1}")
    return n


def node_positions(df: pd.DataFrame, prefix: str = "") -> NDArray[np.float64]:
    """Node positions [m] from ``{prefix}position_{x|y|z}_{node}``: shape (n_t, 3, n_nodes)."""
    n = _count_indexed(df, f"{prefix}position_x_")
    cols = [f"{prefix}position_{c}_{i}" for c in _XYZ for i in range(n)]
    return df[cols].to_numpy(dtype=np.float64).reshape(len(df), 3, n)


def directors(df: pd.DataFrame, prefix: str = "") -> NDArray[np.float64]:
    """Directors from ``{prefix}director_{r}{c}_{elem}``: shape (n_t, 3, 3, n_elem), lab->local."""
    n = _count_indexed(df, f"{prefix}director_00_")
    cols = [f"{prefix}director_{r}{c}_{k}" for r in range(3) for c in range(3) for k in range(n)]
    return df[cols].to_numpy(dtype=np.float64).reshape(len(df), 3, 3, n)


def combine(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Join recorder frames on ``time``; columns of ``frames[key]`` get the prefix ``key/``.

    Keys are e.g. ``"rod0"``, ``"rod1"``, ``"platform"``. Recorders attached to the same
    simulator and sampling at the same steps produce bit-identical times, so the join is exact;
    samples present in only some frames get NaN in the others (outer join, sorted by time).
    """
    if not frames:
        raise ParameterError("combine() needs at least one DataFrame")
    out: pd.DataFrame | None = None
    for key, df in frames.items():
        if "time" not in df.columns:
            raise KeyError(f"frame {key!r} has no 'time' column")
        p = key if key.endswith("/") else key + "/"
        renamed = df.rename(columns={c: f"{p}{c}" for c in df.columns if c != "time"})
        out = renamed if out is None else out.merge(renamed, on="time", how="outer", sort=True)
    assert out is not None
    return out.reset_index(drop=True)
