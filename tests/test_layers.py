"""The package's layering, read from the source with ``ast`` (no import is executed).

Layers, low to high (``docs/architecture.md``): params, compat < physics < spcs < io < engines
< robots < experiments, envs < cli < the package ``__init__`` (public API) and its Gymnasium registration.
A module may import only from its own or lower layers; imports under ``if TYPE_CHECKING:`` are
type hints only and are skipped, function-level imports count.  There must be no import cycle
between modules.  PyElastica's private names (underscored modules, functions and attributes,
the ``_feature_group*`` lists) may be touched in ``hsa_elastica/compat.py`` only.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hsa_elastica"

#: first dotted component under ``hsa_elastica`` -> layer
LAYERS = {
    "params": 0,
    "compat": 0,
    "kernel_cache": 0,
    "data": 0,
    "presets": 0,
    "physics": 1,
    "spcs": 2,
    "io": 3,
    "engines": 4,
    "robots": 5,
    "experiments": 6,
    "envs": 6,
    "validation": 6,
    "cli": 7,
}
TOP = 8  # hsa_elastica/__init__.py and hsa_elastica/_gym.py
COMPAT = "hsa_elastica.compat"
#: underscored attributes of Python's own NamedTuple API (not PyElastica internals)
NAMEDTUPLE_API = {"_fields", "_asdict", "_replace", "_make", "_field_defaults"}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(mod: str) -> int:
    parts = mod.split(".")
    if len(parts) == 1 or parts[1] == "_gym":
        return TOP
    if parts[1] not in LAYERS:
        raise AssertionError(f"module {mod} is in no layer: add it to LAYERS and docs/architecture.md")
    return LAYERS[parts[1]]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """All nodes except those under ``if TYPE_CHECKING:`` (the ``else`` branch is kept)."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            stack.append(node.test)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return out


def resolve(mod: str, path: Path, node: ast.ImportFrom | ast.Import) -> list[str]:
    """Package modules imported by ``node`` in module ``mod`` (relative imports resolved)."""
    targets: list[str] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name == "hsa_elastica" or alias.name.startswith("hsa_elastica."):
                targets.append(alias.name)
        return targets
    base = node.module or ""
    if node.level:
        pkg = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        pkg = pkg[: len(pkg) - (node.level - 1)]
        base = ".".join(pkg + ([base] if base else []))
    if not (base == "hsa_elastica" or base.startswith("hsa_elastica.")):
        return targets
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        targets.append(sub if sub in MODULES else base)
    return targets


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for mod, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        deps: set[str] = set()
        for node in runtime_nodes(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                deps.update(t for t in resolve(mod, path, node) if t != mod)
        unknown = sorted(d for d in deps if d not in MODULES)
        assert not unknown, f"{mod} imports package modules that do not exist: {unknown}"
        graph[mod] = deps
    return graph


GRAPH = import_graph()


def test_every_module_has_a_layer() -> None:
    assert len(MODULES) > 30  # the walk found the package
    for mod in MODULES:
        layer(mod)


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_no_upward_import(mod: str) -> None:
    upward = sorted(d for d in GRAPH[mod] if layer(d) > layer(mod))
    assert not upward, (
        f"{mod} (layer {layer(mod)}) imports higher layers: "
        + ", ".join(f"{d} (layer {layer(d)})" for d in upward)
    )


def test_engines_never_see_robot_handles() -> None:
    """The engines are functions / small classes of the compiled model and its state: no
    module of ``engines/`` imports ``robots/``, not even for type hints, and none
    proxies attributes through ``__getattr__``."""
    for mod, path in MODULES.items():
        if not mod.startswith("hsa_elastica.engines"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):  # every import, TYPE_CHECKING blocks included
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                robots = [t for t in resolve(mod, path, node) if t.startswith("hsa_elastica.robots")]
                assert not robots, f"{mod} imports {robots} (line {node.lineno})"
            if isinstance(node, ast.FunctionDef):
                assert node.name != "__getattr__", f"{mod} defines __getattr__ (line {node.lineno})"


def test_no_import_cycles() -> None:
    # Tarjan's strongly connected components; any component with > 1 module is a cycle
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in GRAPH:
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def own_private_names() -> set[str]:
    """Underscored names the package defines itself (its own private attributes may be used)."""
    names: set[str] = set(NAMEDTUPLE_API)
    for mod, path in MODULES.items():
        if mod == COMPAT:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "setattr" and len(node.args) >= 2:
                arg = node.args[1]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    names.add(arg.value)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "__setattr__"
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
            ):
                names.add(str(node.args[1].value))
    return {n for n in names if n.startswith("_")}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def other_modules(tree: ast.AST) -> set[str]:
    """Names bound by ``import x`` to modules other than PyElastica's (``sys._getframe`` is fine)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "elastica":
                    names.add(alias.asname or alias.name.split(".")[0])
    return names


GETATTR_FAMILY = {"getattr", "hasattr", "setattr", "delattr"}


def private_uses(path: Path, own: set[str]) -> list[str]:
    """PyElastica private names used by one module, as ``line: what`` strings."""
    found: list[str] = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    stdlib = other_modules(tree)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "elastica":
            names = [a.name for a in node.names]
            if any(_private(c) for c in node.module.split(".")) or any(_private(n) for n in names):
                found.append(f"{line}: from {node.module} import {', '.join(names)}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "elastica" and any(_private(c) for c in alias.name.split(".")):
                    found.append(f"{line}: import {alias.name}")
        elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own:
            if not (isinstance(node.value, ast.Name) and node.value.id in stdlib):
                found.append(f"{line}: .{node.attr}")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") in GETATTR_FAMILY and len(node.args) >= 2:
            arg = node.args[1]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and _private(arg.value):
                if arg.value not in own:
                    found.append(f"{line}: {node.func.id}(..., {arg.value!r})")  # type: ignore[attr-defined]
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "_feature_group" in node.value:
            found.append(f"{line}: string {node.value!r}")
    return found


def test_own_private_names_do_not_shadow_elastica_internals() -> None:
    # the allow-list of the next test must not whitelist the names this rule is about
    own = own_private_names()
    assert not {n for n in own if "feature_group" in n}
    assert {"_inv_rotate", "_update_accelerations", "_zeroed_out_external_forces_and_torques"}.isdisjoint(own)


def test_pyelastica_private_names_only_in_compat() -> None:
    own = own_private_names()
    offenders = {
        mod: uses for mod, path in MODULES.items() if mod != COMPAT and (uses := private_uses(path, own))
    }
    assert not offenders, "PyElastica private names outside hsa_elastica/compat.py: " + "; ".join(
        f"{mod}: {', '.join(u)}" for mod, u in offenders.items()
    )
    # the checker does see them where they are allowed (it is not blind)
    assert private_uses(PACKAGE / "compat.py", own)


# --------------------------------------------------------------------------------------------
# shape of the code: short kernel signatures, short functions
# --------------------------------------------------------------------------------------------
#: a numba kernel names at most this many things (records, not scalars: docs/architecture.md)
MAX_KERNEL_PARAMETERS = 12
#: lines of a function's body, its docstring excluded
MAX_FUNCTION_LINES = 80


def _functions() -> list[tuple[str, ast.FunctionDef]]:
    out = []
    for mod, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        out += [(mod, n) for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    return out


def _is_kernel(fn: ast.FunctionDef) -> bool:
    return any("jit" in ast.unparse(d) for d in fn.decorator_list)


def _body_lines(fn: ast.FunctionDef) -> int:
    body = fn.body
    first = body[0]
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        if len(body) == 1:
            return 0
        first = body[1]
    return int(fn.end_lineno or fn.lineno) - first.lineno + 1


def test_kernels_take_at_most_twelve_parameters() -> None:
    wide = [f"{mod}.{fn.name} ({len(fn.args.args) + len(fn.args.kwonlyargs)})"
            for mod, fn in _functions()
            if _is_kernel(fn) and len(fn.args.args) + len(fn.args.kwonlyargs) > MAX_KERNEL_PARAMETERS]
    assert not wide, f"numba kernels with more than {MAX_KERNEL_PARAMETERS} parameters: {wide}"


def test_no_function_over_eighty_lines() -> None:
    long = [f"{mod}.{fn.name} ({_body_lines(fn)})" for mod, fn in _functions()
            if _body_lines(fn) > MAX_FUNCTION_LINES]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (docstring excluded): {long}"
