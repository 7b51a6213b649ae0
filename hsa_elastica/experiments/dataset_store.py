"""The files of a steady-state dataset: directory lock, chunk files, manifest, verification.

Used by :mod:`hsa_elastica.experiments.datasets` (which plans and runs the chunks); this module
knows nothing about the robot, only about bytes on disk.

* **Lock**: :func:`locked` takes an exclusive ``fcntl.flock`` on ``DIR/.dataset.lock`` for the
  whole run (one writer per directory; the kernel drops it when the process ends in any way,
  also ``kill -9``) and writes the holder's pid, host, start time and command into it.  A
  second writer is refused at once with :class:`DatasetLocked`.
* **Chunk files**: :func:`encode_chunk` embeds the dataset fingerprint, the chunk number, the
  row count and the SHA-256 of the chunk's sample ids in the Parquet key-value metadata (key
  :data:`CHUNK_KEY`) and writes page checksums; its SHA-256 is recorded in ``dataset.json``.
* **Verification**: a chunk with a record in ``dataset.json`` must have the recorded SHA-256
  (:func:`sha256_file`); a chunk without one (a run killed before its manifest was flushed, or
  a manifest rebuilt with ``--overwrite``) must pass :func:`check_chunk_bytes` (a readable
  Parquet file whose page checksums, embedded fingerprint, chunk number, rows and sample ids
  match).  A failure is a one-line reason naming the chunk file.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import socket
import sys
import time
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Iterator

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.params import ParameterError

__all__ = [
    "LOCK_NAME",
    "CHUNK_KEY",
    "DatasetLocked",
    "DatasetCorrupt",
    "locked",
    "chunk_path",
    "samples_sha256",
    "encode_chunk",
    "check_chunk_bytes",
    "chunk_record",
    "sha256_file",
    "read_manifest",
    "check_out_dir",
]

#: the lock file inside the dataset directory (removed when the run ends normally)
LOCK_NAME = ".dataset.lock"
#: Parquet key-value metadata key of a chunk's own identity (JSON)
CHUNK_KEY = "hsa_elastica.dataset_chunk"


class DatasetLocked(Exception):
    """Another process is writing the dataset directory (it holds the lock)."""


class DatasetCorrupt(ParameterError):
    """A dataset file fails verification (the message names the file and says what to do)."""


# --------------------------------------------------------------------------------------------
# lock
# --------------------------------------------------------------------------------------------
def _holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 65536, 0).decode("utf-8", "replace") or "{}")
        return (f"pid {info['pid']} on {info['host']}, started {info['started']}: "
                f"{info['command']}")
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not yet written its details"


@contextmanager
def locked(out: Path, command: str) -> Iterator[None]:
    """Hold an exclusive lock on the dataset directory ``out`` (created if missing) for the
    ``with`` block, or raise :class:`DatasetLocked` naming the holder.  ``command`` is written
    into the lock file (with pid, host and start time) for a refused writer to name."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK_NAME
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _holder(fd)
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            raise DatasetLocked(
                f"{out} is being written by another dataset run ({holder}); wait for it to "
                "end or choose another output directory"
            ) from None
        # the holder we waited for may have removed the file after we opened it: lock the
        # file that is at the path now (the usual unlink-on-release protocol)
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        info = {"pid": os.getpid(), "host": socket.gethostname(), "started": started,
                "command": command}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        yield
    finally:
        with suppress(OSError):
            path.unlink()  # while still holding the lock (see the inode check above)
        os.close(fd)  # releases the lock


# --------------------------------------------------------------------------------------------
# output directory
# --------------------------------------------------------------------------------------------
def _short(name: str) -> str:
    return name if len(name) <= 40 else f"{name[:20]}...{name[-12:]} ({len(name)} characters)"


def _exists(path: Path) -> bool:
    try:
        os.stat(path)
        return True
    except OSError:  # also a name too long, a path through a file
        return False


def check_out_dir(out: str | Path, field: str = "out") -> Path:
    """``out`` can be a dataset directory: an existing directory, or a path whose nearest
    existing ancestor is a writable directory; every new name within the filesystem's
    ``NAME_MAX``.  ``ParameterError`` naming ``field`` otherwise (nothing is created)."""
    p = Path(out)
    existing = next(a for a in (p.absolute(), *p.absolute().parents) if _exists(a))
    try:
        name_max = int(os.pathconf(existing, "PC_NAME_MAX"))
    except (OSError, ValueError):
        name_max = 255
    for part in p.parts:
        if len(os.fsencode(part)) > name_max:
            raise ParameterError(
                f"{field} = ... is invalid: the name {_short(part)!r} is "
                f"{len(os.fsencode(part))} bytes; the file system allows at most {name_max} "
                "(NAME_MAX)"
            )
    if existing == p.absolute() and not existing.is_dir():
        raise ParameterError(f"{field} = {str(out)!r} is invalid: it is a file; must be a "
                             "directory (new, or holding a dataset)")
    if not existing.is_dir():
        raise ParameterError(f"{field} = {str(out)!r} is invalid: {str(existing)!r} is a file, "
                             "not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ParameterError(f"{field} = {str(out)!r} is invalid: {str(existing)!r} is not "
                             "writable")
    return p


# --------------------------------------------------------------------------------------------
# chunk files
# --------------------------------------------------------------------------------------------
def chunk_path(out: Path, chunk: int) -> Path:
    """``out/chunks/chunk-NNNNNN.parquet``."""
    return out / "chunks" / f"chunk-{chunk:06d}.parquet"


def samples_sha256(samples: Any) -> str:
    """SHA-256 of the sorted sample ids (little-endian int64)."""
    ids = np.sort(np.asarray(samples, dtype=np.int64)).astype("<i8")
    return hashlib.sha256(ids.tobytes()).hexdigest()


def encode_chunk(table: Any, fingerprint: str, chunk: int) -> bytes:
    """The Parquet bytes of a chunk's table with its identity embedded (:data:`CHUNK_KEY`) and
    page checksums."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ident = {"fingerprint": fingerprint, "chunk": int(chunk), "rows": int(table.num_rows),
             "samples_sha256": samples_sha256(table.column("sample").to_numpy())}
    meta = dict(table.schema.metadata or {})
    meta[CHUNK_KEY.encode()] = json.dumps(ident, sort_keys=True).encode()
    sink = pa.BufferOutputStream()
    pq.write_table(table.replace_schema_metadata(meta), sink, write_page_checksum=True)
    return bytes(sink.getvalue().to_pybytes())


def chunk_record(chunk: int, data: bytes, samples: NDArray[np.int64]) -> dict[str, Any]:
    """The manifest record of a chunk file with bytes ``data`` and sample ids ``samples``."""
    return {"chunk": int(chunk), "file": f"chunks/chunk-{int(chunk):06d}.parquet",
            "sha256": hashlib.sha256(data).hexdigest(), "rows": int(len(samples)),
            "sample_min": int(np.min(samples)), "sample_max": int(np.max(samples)),
            "samples_sha256": samples_sha256(samples)}


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_chunk_bytes(data: bytes, fingerprint: str, chunk: int,
                      samples: NDArray[np.int64] | None = None) -> tuple[Any, str | None]:
    """(table, None) if ``data`` is chunk ``chunk`` of the dataset ``fingerprint`` by its own
    embedded metadata (and holds exactly the sample ids ``samples`` if given), else
    (None, reason)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not data:
        return None, "is empty"
    try:
        table = pq.read_table(pa.BufferReader(data), page_checksum_verification=True)
    except Exception as exc:  # noqa: BLE001 - any parse error means "not a valid chunk"
        return None, f"is not a readable Parquet file ({' '.join(str(exc).split())[:120]})"
    try:
        ident = json.loads((table.schema.metadata or {})[CHUNK_KEY.encode()])
    except (KeyError, ValueError):
        return None, "carries no dataset-chunk metadata"
    if ident.get("fingerprint") != fingerprint:
        return None, "belongs to another dataset (its fingerprint differs)"
    if ident.get("chunk") != int(chunk):
        return None, f"is the file of chunk {ident.get('chunk')}"
    ids = table.column("sample").to_numpy() if "sample" in table.column_names else np.zeros(0)
    if ident.get("rows") != table.num_rows or ident.get("samples_sha256") != samples_sha256(ids):
        return None, "has rows that differ from its own metadata"
    if samples is not None and samples_sha256(samples) != ident["samples_sha256"]:
        return None, "holds other samples than the chunk plan"
    return table, None


# --------------------------------------------------------------------------------------------
# manifest
# --------------------------------------------------------------------------------------------
def read_manifest(path: Path) -> dict[str, Any]:
    """``dataset.json`` as a dict, or :class:`DatasetCorrupt` if it does not parse or lacks the
    fingerprint (the message starts with the path and says why)."""
    try:
        text = path.read_text(encoding="utf-8")
        meta = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DatasetCorrupt(f"{path} is corrupt ({' '.join(str(exc).split())[:120]})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("fingerprint"), str):
        raise DatasetCorrupt(f"{path} is corrupt (no dataset fingerprint in it)")
    return meta


def manifest_records(meta: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The per-chunk records of a manifest, by chunk number."""
    recs = meta.get("chunks") or []
    return {int(r["chunk"]): r for r in recs if isinstance(r, dict) and "chunk" in r}


def stderr_line(text: str) -> None:
    """The default report of :func:`hsa_elastica.experiments.datasets.build_dataset`: one line
    on stderr."""
    print(text, file=sys.stderr, flush=True)
