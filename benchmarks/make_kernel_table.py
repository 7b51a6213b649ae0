"""Write ``hsa_elastica/engines/kernel_table.py``: the kernels each command compiles.

Every workload below runs in a subprocess (one per core at a time) with a new, empty ``NUMBA_CACHE_DIR`` and the
parallel precompilation off (``HSA_ELASTICA_PRECOMPILE=0``), so that it compiles every kernel
it calls in-process; then :func:`hsa_elastica.engines.precompile.compiled_here` lists each
cached kernel specialisation with the cached kernels linked into it.  The table is their union,
callees before callers, each row tagged with the workloads that compiled it.

Run it after changing a kernel's signature or adding a kernel (``tests/test_precompile.py``
fails when a run compiles a kernel the table lacks)::

    python benchmarks/make_kernel_table.py            # a few minutes of CPU per workload
    python benchmarks/make_kernel_table.py --only primitive-implicit envs

``--only`` records the named workloads again and keeps the table's rows of the others;
``--rows COMMAND=FILE`` takes a workload's rows from a cold run recorded elsewhere (the
``rows.json`` of ``benchmarks/compile_cost.py --keep DIR``) instead of running it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
TABLE = HERE / "hsa_elastica" / "engines" / "kernel_table.py"

#: the Gymnasium environments' first steps: the reaching env (implicit integrator) and the
#: push env (implicit, with contact)
ENVS = """
import gymnasium as gym
import hsa_elastica
for name in ("HSARobot-v1", "HSAPush-v0"):
    env = gym.make(name)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    env.close()
"""

#: table command -> CLI arguments of the run that records it ({tmp}: a scratch directory), or
#: Python code (a str); ``primitive-implicit``: the kernels a run on the implicit integrator
#: adds (``SimulationParams.integrator``'s record names it, ``Integrator.kernel_table``)
WORKLOADS: dict[str, list[str] | str] = {
    "primitive": ["primitive", "bend_north", "--still", "{tmp}/x.png"],
    "primitive-implicit": ["primitive", "bend_north", "--integrator", "implicit", "--still",
                           "{tmp}/x.png"],
    "steady-state": ["steady-state", "--angles", "0.5", "-0.5", "0.5", "-0.5"],
    "envs": ENVS,
}

RECORD = """
import json, sys
if sys.argv[2] == "-c":
    exec(compile(sys.argv[3], "workload", "exec"))
    code = 0
else:
    from hsa_elastica.cli import main
    code = main(sys.argv[2:])
from hsa_elastica.engines.precompile import compiled_here
with open(sys.argv[1], "w") as f:
    json.dump(compiled_here(), f)
sys.exit(code)
"""


def _freeze(x: object) -> object:
    return tuple(_freeze(v) for v in x) if isinstance(x, list) else x


def record(args: list[str] | str) -> list[tuple]:
    """(name, signature, callees) rows of one cold run of ``hsa-elastica ARGS`` (or of the
    Python code ``args``)."""
    with tempfile.TemporaryDirectory(prefix="kernel-table-") as tmp:
        out = Path(tmp) / "rows.json"
        env = {**os.environ, "NUMBA_CACHE_DIR": str(Path(tmp) / "cache"),
               "HSA_ELASTICA_PRECOMPILE": "0", "PYTHONPATH": str(HERE)}
        workload = ["-c", args] if isinstance(args, str) else [a.format(tmp=tmp) for a in args]
        cmd = [sys.executable, "-c", RECORD, str(out), *workload]
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, cwd=tmp)
        return [_freeze(row) for row in json.loads(out.read_text())]  # type: ignore[misc]


def read_rows(path: str) -> list[tuple]:
    """The (name, signature, callees) rows a cold run wrote to ``path``."""
    return [_freeze(row) for row in json.loads(Path(path).read_text())]  # type: ignore[misc]


def kept_rows(redo: set[str]) -> list[tuple]:
    """The present table's rows as (name, signature, callees, commands), without the
    commands in ``redo`` (rows of those alone dropped)."""
    sys.path.insert(0, str(HERE))
    from hsa_elastica.engines.kernel_table import KERNELS

    keys = [(row[0], row[1]) for row in KERNELS]
    out = []
    for name, sig, called, commands in KERNELS:
        left = set(commands) - redo
        if left:
            out.append((name, sig, tuple(keys[i] for i in called), left))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(WORKLOADS), metavar="COMMAND",
                        help="record these workloads again, keep the others' rows: "
                        + ", ".join(WORKLOADS))
    parser.add_argument("--rows", nargs="+", default=[], metavar="COMMAND=FILE",
                        help="a workload's rows from a file (compile_cost.py --keep)")
    args = parser.parse_args()
    chosen = args.only or list(WORKLOADS)
    given = dict(item.split("=", 1) for item in args.rows)
    tags: dict[tuple, set[str]] = {}
    callees: dict[tuple, set[tuple]] = {}
    if len(chosen) < len(WORKLOADS):
        for name, sig, called, commands in kept_rows(set(chosen)):
            tags.setdefault((name, sig), set()).update(commands)
            callees.setdefault((name, sig), set()).update(called)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # one cold run per core
        runs = {command: pool.submit(record, WORKLOADS[command]) for command in chosen
                if command not in given}
        recorded = {command: run.result() for command, run in runs.items()}
    for command in chosen:
        rows = recorded[command] if command not in given else read_rows(given[command])
        print(f"{command}: {len(rows)} kernel specialisations", file=sys.stderr)
        for name, sig, called in rows:
            tags.setdefault((name, sig), set()).add(command)
            callees.setdefault((name, sig), set()).update(called)
    order: list[tuple] = []
    placed: set[tuple] = set()

    def place(key: tuple) -> None:  # callees first (depth-first; the call graph is acyclic)
        if key in placed:
            return
        placed.add(key)
        for c in sorted(callees[key]):
            if c in callees:
                place(c)
        order.append(key)

    for key in sorted(callees):
        place(key)
    index = {key: i for i, key in enumerate(order)}
    lines = [
        '"""The cached numba kernels each command compiles (generated by',
        "``python benchmarks/make_kernel_table.py``; do not edit by hand).",
        "",
        "One row per kernel specialisation, callees before callers: ``(module:name, signature",
        "(numba types encoded by precompile.encode_type), indices of the cached kernels it calls,",
        'commands that compile it)``; read by :mod:`hsa_elastica.engines.precompile`."""',
        "",
        "from typing import Any",
        "",
        "KERNELS: tuple[tuple[str, tuple[Any, ...], tuple[int, ...], tuple[str, ...]], ...] = (",
    ]
    for key in order:
        called = tuple(sorted(index[c] for c in callees[key] if c in index))
        lines.append(f"    ({key[0]!r}, {key[1]!r}, {called!r}, {tuple(sorted(tags[key]))!r}),")
    lines.append(")")
    TABLE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{TABLE.relative_to(HERE)}: {len(order)} rows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
