"""The one strict reader of the CSV files the package takes as input (``steady-state
--angles-csv``, the calibration's motion-capture runs).

pandas' ``read_csv`` is lenient where an input must not be: a row with more fields than the
header silently becomes the index (shifting every value one column), a repeated column name is
renamed ``name.1`` (and the second column ignored), a file with only a header is an empty table.
:func:`read_csv_columns` refuses each of these with one line naming the file and the line, plus
missing columns, values that are not numbers, non-finite values, and an empty file.
"""

from __future__ import annotations

import csv
import io
import math
import re
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.params import ParameterError, check_motor_angles

__all__ = ["CsvColumns", "read_csv_columns", "check_angle_rows"]


@dataclass(frozen=True)
class CsvColumns:
    """The requested columns of a CSV file as one float64 array ``values`` (rows x columns, in
    the order asked for) and the file line of each row (``lines``, the header is line 1)."""

    path: Path
    columns: tuple[str, ...]
    values: NDArray[np.float64]
    lines: NDArray[np.int64]

    def column(self, name: str) -> NDArray[np.float64]:
        return self.values[:, self.columns.index(name)]


def _text(path: Path, what: str) -> str:
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise ParameterError(f"{what} {str(path)!r} is a directory, expected a CSV file") from None
    except OSError as exc:
        raise ParameterError(f"cannot read {what} {str(path)!r}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParameterError(
            f"cannot read {what} {str(path)!r}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None


def read_csv_columns(path: str | Path, columns: Sequence[str], *, what: str = "CSV file") -> CsvColumns:
    """Read ``columns`` of the CSV file ``path`` as finite numbers.

    ``what`` names the file in messages (e.g. ``"--angles-csv"``, ``"data file"``).  Raises
    :class:`ParameterError` (one line naming the file and, where it applies, the line and the
    column) for: an unreadable or non-UTF-8 file, an empty file, a repeated column name, a
    missing column, a row with more or fewer fields than the header, no data rows, a value
    that is not a number or not finite.  Blank lines are skipped; other columns are ignored.
    """
    p = Path(path)
    name = f"{what} {str(p)!r}"
    reader = csv.reader(io.StringIO(_text(p, what), newline=""))
    try:
        header = next(reader, None)
        while header is not None and not any(f.strip() for f in header):
            header = next(reader, None)
        if header is None:
            raise ParameterError(f"{name} is empty: expected a header line with the columns "
                                 f"{', '.join(columns)}")
        header = [h.strip() for h in header]
        seen: set[str] = set()
        for h in header:
            if h in seen:
                raise ParameterError(f"{name}: column {h!r} appears twice in the header "
                                     "(each column may appear once)")
            seen.add(h)
        missing = [c for c in columns if c not in seen]
        if missing:
            raise ParameterError(f"{name}: missing column(s) {', '.join(missing)} "
                                 f"(needs {', '.join(columns)})")
        index = [header.index(c) for c in columns]
        rows: list[list[float]] = []
        lines: list[int] = []
        for fields in reader:
            if not any(f.strip() for f in fields):
                continue
            line = reader.line_num
            if len(fields) != len(header):
                raise ParameterError(
                    f"{name}: line {line} has {len(fields)} fields, the header has "
                    f"{len(header)} (a separator too many or too few)"
                )
            row = []
            for i, c in zip(index, columns):
                text = fields[i].strip()
                try:
                    v = float(text) if text else math.nan
                except ValueError:
                    raise ParameterError(
                        f"{name}: line {line}, column {c}: {text[:30]!r} is not a number"
                    ) from None
                if not math.isfinite(v):
                    raise ParameterError(
                        f"{name}: line {line}, column {c}: missing or non-finite value "
                        f"{text[:30]!r}: must be a finite number"
                    )
                row.append(v)
            rows.append(row)
            lines.append(line)
    except csv.Error as exc:
        raise ParameterError(f"{name}: line {reader.line_num}: not valid CSV ({exc})") from None
    if not rows:
        raise ParameterError(f"{name} has no rows (a header only): expected one row per pose")
    return CsvColumns(p, tuple(columns), np.asarray(rows, dtype=np.float64),
                      np.asarray(lines, dtype=np.int64))


def check_angle_rows(table: CsvColumns, names: Sequence[str], *, what: str) -> NDArray[np.float64]:
    """The motor angles in the columns ``names`` of ``table`` (rows x len(names)), checked by
    :func:`hsa_elastica.params.check_motor_angles`; the message of a bad row names its line."""
    angles = np.ascontiguousarray(table.values[:, [table.columns.index(n) for n in names]])
    try:
        return check_motor_angles(angles, len(names), field=what)  # type: ignore[no-any-return]
    except ParameterError:
        from hsa_elastica.params import MAX_MOTOR_ANGLE

        bad = ~np.all(np.isfinite(angles) & (np.abs(angles) <= MAX_MOTOR_ANGLE), axis=1)
        i = int(np.argmax(bad))
        check_motor_angles(angles[i], len(names), field=f"{what} line {int(table.lines[i])}")
        raise  # pragma: no cover - the row check above raises


def csv_header(path: str | Path) -> set[str]:
    """The column names of the first non-blank line of a CSV file (empty if it cannot be
    read: :func:`read_csv_columns` then reports the problem)."""
    with suppress(OSError, UnicodeDecodeError, csv.Error), open(path, encoding="utf-8", newline="") as f:
        for header in csv.reader(f):
            if any(h.strip() for h in header):
                return {h.strip() for h in header}
    return set()


def angle_columns(path: str | Path, n_rods: int) -> list[str]:
    """The motor-angle columns of a poses CSV: ``motor_angles_rad_0 ..`` (the output schema's
    names, so a batch result file can be read back) when its header has them all, else
    ``angle_0 ..`` (the short input form; a missing column is then reported by
    :func:`read_csv_columns` under that name).  A header with columns of both sets is refused
    (``ParameterError`` naming both): one of them would be ignored silently."""
    header = csv_header(path)
    sets = {stem: sorted(h for h in header if re.fullmatch(rf"{stem}\d+", h))
            for stem in ("angle_", "motor_angles_rad_")}
    if sets["angle_"] and sets["motor_angles_rad_"]:  # which one is meant cannot be told
        raise ParameterError(
            f"{path}: has both angle_* columns ({', '.join(sets['angle_'][:4])}) and "
            f"motor_angles_rad_* columns ({', '.join(sets['motor_angles_rad_'][:4])}): keep one "
            "set of motor angles (rad)"
        )
    new = [f"motor_angles_rad_{i}" for i in range(n_rods)]
    return new if set(new) <= header else [f"angle_{i}" for i in range(n_rods)]
