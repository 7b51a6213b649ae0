"""Files: the one atomic writer of every output, the check of an output path, and the bounded
YAML/TOML reader of parameter files.

Every file the package writes (``--json``, ``params --dump``, run directories, tables, videos,
stills, fitted parameters) goes through :func:`atomic_output`:

* a regular file (or a new name) is written to a temporary file beside it and renamed onto it,
  so a reader never sees a partial file and an interrupted write leaves the old file intact;
* a symbolic link is followed: its final target is replaced atomically, the link stays;
* a character device or a FIFO (``/dev/stdout``, ``/dev/null``, a named pipe) is written in
  place -- it is never renamed over, truncated into a regular file or deleted, so the device
  node or pipe survives: the writer still gets a temporary regular file (libraries such as
  pyarrow, numpy's ``savez`` and ffmpeg seek in, reopen or remove the path they are given),
  whose bytes are then copied into the device or pipe, in one pass, from its start;
* anything else that is not a regular file (a directory, a block device, a socket) is refused
  with :class:`OutputPathError` before anything is written.

:func:`output_path_problem` says why a path cannot take an output (None if it can) without
creating anything; the command line calls it for every output flag before any work.

:func:`read_mapping_text` parses parameter text (YAML or TOML) with bounds: at most
:data:`MAX_PARAM_FILE_BYTES`, no YAML aliases/anchors (a "billion laughs" file of a few hundred
bytes expands to gigabytes), at most :data:`MAX_NESTING` levels of nesting, no duplicate keys
(YAML would silently keep the last value; TOML refuses them itself).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator

from hsa_elastica.params.base import ParameterError

__all__ = [
    "OutputPathError",
    "atomic_output",
    "write_atomic",
    "write_text_atomic",
    "is_stream",
    "output_path_problem",
    "name_length_problem",
    "read_mapping_text",
    "MAX_PARAM_FILE_BYTES",
    "MAX_NESTING",
]

#: bytes; a parameter file is a few kB (the largest shipped one, a per-key fit, is ~10 kB)
MAX_PARAM_FILE_BYTES = 1024**2
#: nesting levels of a parameter file (RobotParams has 3: robot, section, a vector)
MAX_NESTING = 20
#: longest file name (one path component) when the file system does not say (Linux: 255 bytes)
DEFAULT_NAME_MAX = 255


class OutputPathError(ParameterError):
    """An output path that cannot be written (a directory, a block device, a socket, a name
    too long, a missing directory); one-line message naming the path."""


def _name_max(directory: Path) -> int:
    try:
        return int(os.pathconf(directory if directory.is_dir() else ".", "PC_NAME_MAX"))
    except (OSError, ValueError):
        return DEFAULT_NAME_MAX


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _mode(path: Path) -> int | None:
    """``st_mode`` of what ``path`` leads to (symbolic links followed), None if nothing."""
    try:
        return path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None


def _is_stream(mode: int) -> bool:
    """A character device or a FIFO: written in place, never renamed over."""
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def is_stream(path: str | Path) -> bool:
    """True if ``path`` leads (through symbolic links) to a character device or a FIFO
    (``/dev/null``, ``/dev/stdout``, a named pipe): written in place, whatever its name, so
    a writer that picks the format by the extension takes its default for such a path."""
    try:
        mode = _mode(Path(path))
    except OSError:
        return False
    return mode is not None and _is_stream(mode)


def name_length_problem(path: str | Path) -> str | None:
    """Why ``path`` has a name the file system cannot take (None if it can): a component longer
    than NAME_MAX (255 bytes on Linux) or a path longer than PATH_MAX (4096 bytes)."""
    p = Path(path)
    limit = _name_max(p.parent)
    for part in p.parts:
        n = len(os.fsencode(part))
        if n > limit:
            return (f"the name {part[:20]!r}... is {n} bytes long; a file name may have at "
                    f"most {limit} bytes")
    if len(os.fsencode(str(p))) >= 4096:
        return "the path is longer than 4095 bytes"
    return None


def output_path_problem(path: str | Path, *, create_parents: bool = False) -> str | None:
    """Why ``path`` cannot take an output file (None if it can), without creating anything.

    Refused: an empty name, a file name (any component) longer than the file system's NAME_MAX
    (255 bytes on Linux), a path that is (or, through symbolic links, leads to) a directory, a
    block device or a socket, and a directory that does not exist (unless ``create_parents``:
    then its nearest existing ancestor must be a directory) or where a file cannot be created
    (probed with a temporary file, removed at once: permission bits do not tell for root or a
    read-only mount).  A character device or FIFO is fine (written in place)."""
    text = str(path)
    if text.strip() == "":
        return "the file name is empty"
    p = Path(text)
    problem = name_length_problem(p)
    if problem is not None:
        return problem
    try:
        mode = _mode(p)
    except OSError as exc:  # a symbolic-link loop, no permission to look
        return f"cannot use it ({exc.strerror or exc})"
    if mode is not None and _is_stream(mode):
        return None  # (stat follows links: /dev/stdout -> /proc/self/fd/1 -> a pipe)
    target = Path(os.path.realpath(p))
    if mode is not None:
        if not stat.S_ISREG(mode):
            return f"is {_kind(mode)}, expected a file name"
    directory = target.parent
    if not directory.is_dir():
        if not create_parents:
            if directory.exists():
                return f"{str(directory)!r} is not a directory"
            return f"directory {str(directory)!r} does not exist"
        while not directory.exists() and directory != directory.parent:
            directory = directory.parent
        if not directory.is_dir():
            return f"{str(directory)!r} is not a directory"
    try:
        with tempfile.TemporaryFile(dir=directory, prefix=".hsa-elastica-probe-"):
            pass
    except OSError as exc:
        return f"directory {str(directory)!r} is not writable ({exc.strerror or exc})"
    if mode is not None and not os.access(target, os.W_OK):
        return "the file exists and is not writable"
    return None


@contextlib.contextmanager
def atomic_output(path: str | Path, *, create_parents: bool = False) -> Iterator[Path]:
    """Yield the path a writer should write ``path``'s content to: the one safe write of the
    package (see the module docstring).

    Always a temporary regular file with the target's extension (encoders pick the format by
    it).  For a regular file or a new name it lies beside the (link-resolved) target and is
    renamed onto it on normal exit (staged in the temporary directory if the path is not
    valid UTF-8, which pyarrow and VTK refuse); for a character device or FIFO it lies in
    the temporary directory and its bytes are copied into the device or pipe on normal exit
    (opened without ``O_CREAT``: if the node has gone meanwhile, the copy fails rather than
    create a file).
    The temporary file is removed on any exception (Ctrl-C included).  ``create_parents``:
    create missing parent directories first."""
    mode = _mode(Path(path))
    if mode is not None and _is_stream(mode):
        with _temporary(None, Path(path)) as tmp:
            yield tmp
            _copy_into(tmp, Path(path))
        return
    target = Path(os.path.realpath(path))
    if mode is not None and not stat.S_ISREG(mode):
        raise OutputPathError(f"{_shown(path)} is {_kind(mode)}: refusing to replace it with a file")
    if create_parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    with _temporary(target.parent, target) as tmp:
        if _utf8(tmp):
            yield tmp
        else:  # the libraries (pyarrow, VTK) take UTF-8 paths: stage the file elsewhere
            with _temporary(None, target) as staged:
                yield staged
                shutil.copyfile(staged, tmp)
        # mkstemp creates 0600: give the file the mode a plain open() would (or the old one)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, stat.S_IMODE(mode) if mode is not None else 0o666 & ~umask)
        os.replace(tmp, target)


@contextlib.contextmanager
def _temporary(directory: Path | None, target: Path) -> Iterator[Path]:
    """A new empty temporary file in ``directory`` (None: the system's temporary directory)
    named after ``target`` (its extension kept, within NAME_MAX), removed unless it was
    renamed away."""
    stem, suffix = (re.sub(r"[^A-Za-z0-9_.+-]", "_", part) for part in (target.stem[:60],
                                                                      target.suffix[:20]))
    name: str | None = None
    try:  # (a Ctrl-C right after the file is made must not leave it behind either)
        fd, name = tempfile.mkstemp(dir=directory, prefix=f".{stem}.", suffix=f".partial{suffix}")
        os.close(fd)
        yield Path(name)
    finally:
        if name is not None:
            with contextlib.suppress(OSError):
                os.unlink(name)


def _utf8(path: Path) -> bool:
    """True if ``path`` is valid UTF-8 text: not a name of undecodable bytes (held as
    surrogate escapes) of an ASCII or non-UTF-8 locale, which C libraries cannot take."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _copy_into(source: Path, stream: Path) -> None:
    """The bytes of ``source`` written into the character device or FIFO ``stream`` (a FIFO
    waits for its reader, as a shell redirection does)."""
    try:
        fd = os.open(stream, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
        with open(fd, "wb") as out, open(source, "rb") as src:
            shutil.copyfileobj(src, out, 1 << 20)
    except OSError as exc:  # e.g. ENOSPC of /dev/full, EPIPE of a reader gone: name the path
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, os.fsdecode(stream)) from None


def _shown(path: str | Path) -> str:
    """``path`` quoted for a message, printable in any locale (undecodable bytes escaped)."""
    return repr(os.fsdecode(path))


def write_atomic(path: str | Path, write: Callable[[Path], object], *,
                 create_parents: bool = False) -> Path:
    """``write(tmp)`` through :func:`atomic_output` (a reader never sees a partial file, a
    symbolic link's target is replaced, a device is written in place); returns ``path``."""
    with atomic_output(path, create_parents=create_parents) as tmp:
        write(tmp)
    return Path(path)


def write_text_atomic(path: str | Path, text: str, *, create_parents: bool = False) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through :func:`atomic_output`; returns ``path``."""
    return write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"),
                        create_parents=create_parents)


# --------------------------------------------------------------------------------------------
# bounded parameter text
# --------------------------------------------------------------------------------------------
def _strict_loader() -> type:
    import yaml

    class StrictSafeLoader(yaml.SafeLoader):
        """SafeLoader refusing aliases/anchors, deep nesting and duplicate keys."""

        _depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise ParameterError(
                    f"line {event.start_mark.line + 1}: YAML aliases (*{event.anchor[:20]}) are not "
                    "allowed in parameter files; write each value out"
                )
            event = self.peek_event()
            anchor = getattr(event, "anchor", None)
            if anchor is not None:
                raise ParameterError(
                    f"line {event.start_mark.line + 1}: YAML anchors (&{anchor[:20]}) are not "
                    "allowed in parameter files; write each value out"
                )
            self._depth += 1
            try:
                if self._depth > MAX_NESTING:
                    raise ParameterError(
                        f"line {event.start_mark.line + 1}: nested more than {MAX_NESTING} "
                        "levels deep (a parameter file has at most 3)"
                    )
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:
                    continue  # unhashable: the base class names it
                if duplicate:
                    raise ParameterError(
                        f"line {key_node.start_mark.line + 1}: duplicate key {_short_key(key)} "
                        "(each key may appear once in a mapping)"
                    )
            return super().construct_mapping(node, deep=deep)

    return StrictSafeLoader


def _short_key(key: Any) -> str:
    text = repr(key)
    return text if len(text) <= 40 else text[:30] + "..."


_LOADER: type | None = None


def read_mapping_text(text: str, fmt: str) -> Any:
    """Parse parameter ``text`` (``fmt`` ``"yaml"`` or ``"toml"``) with the bounds of the module
    docstring; :class:`ParameterError` (one line, no position prefix) for anything refused or
    malformed.  Returns the parsed object (the caller checks that it is a mapping)."""
    import tomllib

    import yaml

    global _LOADER
    if len(text) > MAX_PARAM_FILE_BYTES:
        raise ParameterError(f"is {len(text)} characters long; a parameter file may have at "
                             f"most {MAX_PARAM_FILE_BYTES} bytes")
    try:
        if fmt == "yaml":
            if _LOADER is None:
                _LOADER = _strict_loader()
            return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a SafeLoader subclass
        return tomllib.loads(text)
    except ParameterError:
        raise
    except (yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        raise ParameterError(" ".join(str(exc).split())[:300]) from None
    except RecursionError:
        raise ParameterError(f"nested too deeply (more than {MAX_NESTING} levels)") from None
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. a 5000-digit int, a bad date
        raise ParameterError(" ".join(str(exc).split())[:200]) from None


def read_text_bounded(path: Path, limit: int = MAX_PARAM_FILE_BYTES) -> str:
    """The UTF-8 text of ``path``, refusing (``ParameterError``) a file larger than ``limit``
    bytes (read at most ``limit + 1``, so a FIFO or /dev/zero cannot exhaust memory)."""
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise ParameterError(f"cannot read parameter file {str(path)!r}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise ParameterError(
            f"parameter file {str(path)!r} is larger than {limit} bytes (a parameter file has a "
            "few kB)"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParameterError(f"cannot read parameter file {str(path)!r}: not UTF-8 text ({exc.reason} "
                             f"at byte {exc.start})") from None
