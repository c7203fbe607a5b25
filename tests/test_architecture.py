"""Import layering of the ``lcrag`` package, checked on its source with ``ast``.

The graph has one node per module of ``lcrag/`` (``lcrag/x/__init__.py`` is the module ``lcrag.x``) and one edge per
import statement anywhere in a module: top-level and inside functions (a lazy import is still a dependency),
``import a.b``, ``from a import b`` (absolute and relative; ``b`` is a module edge when ``a.b`` is a module, else an
edge to ``a``) and ``importlib.import_module("lcrag.x")`` / ``__import__("lcrag.x")`` with a literal name.
Imports under ``if TYPE_CHECKING:`` count as well: the layering is about what a module may know of, not only about
what executes. Importing ``a.b.c`` also runs the ``__init__`` of ``a`` and ``a.b``; those implicit parent edges are
not counted (a package's ``__init__`` importing its own submodules is not a cycle). A module named only at run time
(a name held in data: the public API's name map in ``lcrag/__init__.py``, ``pkgutil`` discovery of measure modules,
a study's ``plugins:`` list) is not an edge: that is how a lower layer finds what registers with it.

A *unit* is one level below ``lcrag``: a sub-package (``lcrag.llm``, ``lcrag.experiment``, ...) or a top-level
module (``lcrag.runner`` is its own unit); ``lcrag/__init__.py`` is the unit ``lcrag``.

Three rules:

(a) no cycle between modules;
(b) no cycle between units (edges inside one unit are ignored);
(c) no import of an underscore name (a module or an attribute whose name starts with ``_`` and is not a dunder)
    from another unit, and no ``m._x`` through a module ``m`` bound by an import: a package's private modules and
    helpers are used only inside that package.

The layer order the code follows today (each layer imports only layers above it in this list; computed from the
graph as the longest import chain below each unit):

    errors, types, registry, stats, suggest, version     records and small helpers; the registry is a plain table
                                                         (imports nothing of lcrag)
    config, files, studyfolders                          paths, file helpers (atomic writes, text/YAML reading,
                                                         SQLite WAL, key scrubbing), where the study folders are
      ↓ used by
    data, formats, provenance, resources, runtime        loaders' shared machinery, shared file formats (TREC-RAG,
                                                         TREC runs), package data, interrupts / run lock / resume
      ↓
    llm, scoring                                         readers and the one cached reader call; reply parsing and
                                                         scores of responses (scoring never imports llm)
      ↓
    embeddings, measures, runner                         encoders, the measure registry, the task runner (cache,
                                                         resume, budget, window guard)
      ↓
    chunking, executors, results, contexts, retrieval    chunkers, run executors, result tables, what a reader is
                                                         shown (haystacks, controls, layouts, rendering), retrievers
      ↓
    experiment                                           the engine (spec -> items -> tasks -> one cached run -> rows)
      ↓
    outputs                                              reports, exports, views, plots, scoreboard, figures index,
                                                         output checks (read run directories; the engine never
                                                         imports them)
      ↓
    reproduction                                         ``lcrag reproduce``: plans, notebook kernels and workers
      ↓
    studies, lcrag (lcrag/__init__.py), commands, cli    the study folders (registered with the engine; the own
                                                         study's ``lc-rag`` builder is one of them), the public API
                                                         (resolved lazily by name, and the loader that fills the
                                                         registry with the built-ins), the CLI

``studies`` sit above ``experiment``: paper studies register their pieces with the engine, and the engine
finds them by walking the study folders ``lcrag/studies/*/`` (``lcrag.experiment.discover``; a name held in data,
like entry points, not an import edge). The rules, not the picture, are what the tests enforce: beyond (a)-(c),
:data:`FORBIDDEN` and :data:`ROLES` name units that must not import others.
"""
from __future__ import annotations

import ast
import importlib
import itertools
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "lcrag"


@dataclass(frozen=True)
class Edge:
    """One import: ``source`` module imports ``target`` module (with ``names`` taken from it) at ``file:line``."""

    source: str
    target: str
    file: str
    line: int
    names: tuple[str, ...] = ()

    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Graph:
    """Modules of one package and the import edges between them."""

    package: str
    root: Path
    modules: dict[str, Path] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)

    def unit(self, module: str) -> str:
        """The unit of a module: ``pkg.x`` for every module in ``pkg/x/`` or the file ``pkg/x.py``."""
        parts = module.split(".")
        return ".".join(parts[:2])

    def is_package(self, module: str) -> bool:
        return self.modules[module].name == "__init__.py"


def _module_name(package: str, pkg_dir: Path, path: Path) -> str:
    rel = path.relative_to(pkg_dir).with_suffix("")
    parts = [package, *rel.parts]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve_relative(current: str, is_pkg: bool, level: int, module: str | None) -> str:
    base = current.split(".") if is_pkg else current.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([module] if module else [])])


def _literal_import(call: ast.Call, current: str, is_pkg: bool) -> str | None:
    """The module named by ``importlib.import_module("x")`` / ``import_module(".x", package=...)`` /
    ``__import__("x")`` with a literal string, else None."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name not in {"import_module", "__import__"} or not call.args:
        return None
    arg = call.args[0]
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return None
    target = arg.value
    if target.startswith("."):
        level = len(target) - len(target.lstrip("."))
        package_arg = call.args[1] if len(call.args) > 1 else next(
            (kw.value for kw in call.keywords if kw.arg == "package"), None)
        if isinstance(package_arg, ast.Constant) and isinstance(package_arg.value, str):
            return _resolve_relative(package_arg.value, True, level, target.lstrip(".") or None)
        return _resolve_relative(current, is_pkg, level, target.lstrip(".") or None)
    return target


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def build_graph(pkg_dir: Path, package: str | None = None) -> Graph:
    """Parse every ``.py`` file under ``pkg_dir`` and return its import graph (edges to modules of the package
    only; third-party and standard-library imports are left out)."""
    package = package or pkg_dir.name
    graph = Graph(package=package, root=pkg_dir.parent)
    for path in sorted(pkg_dir.rglob("*.py")):
        graph.modules[_module_name(package, pkg_dir, path)] = path

    def own(name: str) -> bool:
        return name == package or name.startswith(package + ".")

    def nearest_module(name: str) -> str | None:
        parts = name.split(".")
        while parts:
            candidate = ".".join(parts)
            if candidate in graph.modules:
                return candidate
            parts.pop()
        return None

    for current, path in graph.modules.items():
        is_pkg = path.name == "__init__.py"
        rel = str(path.relative_to(graph.root))
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        module_alias: dict[str, str] = {}  # local name bound to a module of the package (``import a.b as m``)
        for node in ast.walk(tree):
            found: list[tuple[str, tuple[str, ...]]] = []
            if isinstance(node, ast.Import):
                found = [(alias.name, ()) for alias in node.names]
                module_alias.update({a.asname: a.name for a in node.names if a.asname and a.name in graph.modules})
            elif isinstance(node, ast.ImportFrom):
                base = (_resolve_relative(current, is_pkg, node.level, node.module) if node.level
                        else node.module or "")
                attrs = []
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    if sub in graph.modules:
                        found.append((sub, ()))
                        module_alias[alias.asname or alias.name] = sub
                    else:
                        attrs.append(alias.name)
                if attrs:
                    found.append((base, tuple(attrs)))
            elif isinstance(node, ast.Call):
                target = _literal_import(node, current, is_pkg)
                if target:
                    found = [(target, ())]
            for target, names in found:
                if not own(target):
                    continue
                module = nearest_module(target)
                if module is not None:
                    graph.edges.append(Edge(current, module, rel, node.lineno, names))
        # ``m._x`` through a module bound by an import uses the private name as ``from m import _x`` would
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in module_alias and _private(node.attr)):
                graph.edges.append(Edge(current, module_alias[node.value.id], rel, node.lineno, (node.attr,)))
    return graph


def _sccs(nodes: list[str], succ: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node or a self-loop (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(succ.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(succ.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1 or node in succ.get(node, ()):
                    out.append(sorted(comp))
    return out


def _cycle_in(comp: list[str], succ: dict[str, set[str]]) -> list[str]:
    """One concrete cycle through the first node of a strongly connected component (breadth-first)."""
    members = set(comp)
    start = comp[0]
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for nxt in sorted(succ.get(node, ())):
                if nxt not in members:
                    continue
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [*reversed(path), start]
                if nxt not in prev:
                    prev[nxt] = node
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return [start, start]


def _describe(cycle: list[str], edge_of) -> str:
    lines = [" -> ".join(cycle)]
    for a, b in itertools.pairwise(cycle):
        e = edge_of(a, b)
        lines.append(f"    {a} -> {b}   ({e.where()}: {_statement(e)})")
    return "\n".join(lines)


def _statement(e: Edge) -> str:
    return f"from {e.target} import {', '.join(e.names)}" if e.names else f"import {e.target}"


def module_cycles(graph: Graph) -> list[str]:
    """Every module-level import cycle, each as ``a -> b -> ... -> a`` with the file:line of each edge."""
    succ: dict[str, set[str]] = {}
    first: dict[tuple[str, str], Edge] = {}
    for e in graph.edges:
        if e.source == e.target:
            continue
        succ.setdefault(e.source, set()).add(e.target)
        first.setdefault((e.source, e.target), e)
    return [_describe(_cycle_in(c, succ), lambda a, b: first[(a, b)])
            for c in _sccs(sorted(graph.modules), succ)]


def unit_cycles(graph: Graph) -> list[str]:
    """Every cycle between units (sub-packages and top-level modules), with one witnessing import per edge."""
    succ: dict[str, set[str]] = {}
    first: dict[tuple[str, str], Edge] = {}
    for e in graph.edges:
        a, b = graph.unit(e.source), graph.unit(e.target)
        if a == b:
            continue
        succ.setdefault(a, set()).add(b)
        first.setdefault((a, b), e)
    units = sorted({graph.unit(m) for m in graph.modules})
    return [_describe(_cycle_in(c, succ), lambda a, b: first[(a, b)]) for c in _sccs(units, succ)]


def underscore_imports(graph: Graph) -> list[str]:
    """Every import, from another unit, of a private module (a path component below the unit starting with
    ``_``) or of a private attribute."""
    bad = []
    for e in graph.edges:
        if graph.unit(e.source) == graph.unit(e.target):
            continue
        below_unit = e.target.split(".")[2:]
        private = [p for p in below_unit if _private(p)] + [n for n in e.names if _private(n)]
        if private:
            bad.append(f"{e.where()}: {e.source} imports {', '.join(private)} "
                       f"from another package ({_statement(e)})")
    return bad


@pytest.fixture(scope="module")
def graph() -> Graph:
    return build_graph(ROOT / PACKAGE)


def test_graph_sees_every_kind_of_import(graph):
    """The checker parses the real package: it finds modules, top-level, lazy and relative imports."""
    assert len(graph.modules) > 100
    assert any(e.source == "lcrag.cli" for e in graph.edges)
    # relative imports resolve (lcrag/llm/__init__.py or its modules use ``from .x import``)
    assert any(graph.unit(e.source) == "lcrag.llm" and graph.unit(e.target) == "lcrag.llm" for e in graph.edges)


def test_no_module_cycles(graph):
    cycles = module_cycles(graph)
    assert not cycles, "import cycles between modules:\n" + "\n".join(cycles)


def test_no_package_cycles(graph):
    cycles = unit_cycles(graph)
    assert not cycles, "import cycles between packages:\n" + "\n".join(cycles)


def test_no_underscore_imports_across_packages(graph):
    bad = underscore_imports(graph)
    assert not bad, "private names imported from another package:\n" + "\n".join(bad)


# units that must not import another unit at all (source unit -> forbidden target units), beyond the no-cycle rules:
# the scoring layer reads replies and scores them; it knows nothing of readers, clients or the reader call
FORBIDDEN = {"scoring": ("llm",)}


def forbidden_imports(graph: Graph, package: str = PACKAGE, rules: dict | None = None) -> list[str]:
    """``file:line: SOURCE imports TARGET`` for each edge from a unit of ``rules`` (default :data:`FORBIDDEN`) to a
    unit it must not import."""
    rules = FORBIDDEN if rules is None else rules
    bad = []
    for e in graph.edges:
        src, dst = graph.unit(e.source), graph.unit(e.target)
        for a, targets in rules.items():
            if src == f"{package}.{a}" and any(dst == f"{package}.{t}" for t in targets):
                bad.append(f"{e.where()}: {e.source} imports {e.target} ({a} must not import {', '.join(targets)})")
    return bad


# the split of roles: the engine runs studies and records rows; it reads no report, exports nothing and drives no
# reproduction. Outputs read run directories; they do not run notebooks. Shared file helpers and the context
# renderers know nothing of the engine.
ROLES = {
    "experiment": ("outputs", "reproduction", "commands", "cli"),
    "outputs": ("reproduction", "commands", "cli"),
    "files": ("experiment", "outputs", "reproduction", "runner", "llm"),
    "contexts": ("experiment", "outputs", "reproduction", "retrieval"),
}


def test_each_package_keeps_to_its_role(graph):
    """``lcrag.experiment`` (the engine) imports no output or reproduction module, ``lcrag.outputs`` no reproduction
    module, and the file helpers and context renderers nothing of the engine (:data:`ROLES`)."""
    bad = forbidden_imports(graph, rules=ROLES)
    assert not bad, "imports across roles:\n" + "\n".join(bad)


def test_scoring_imports_nothing_of_the_reader_layer(graph):
    """Reply parsing (``lcrag.scoring.parse``), reply filters and prompt-template look-ups
    (``lcrag.resources.templates``) sit at or below the scoring layer: ``scoring`` never imports ``llm``."""
    bad = forbidden_imports(graph)
    assert not bad, "forbidden imports:\n" + "\n".join(bad)


def study_folder_imports(graph: Graph, package: str = PACKAGE) -> list[str]:
    """``file:line: SOURCE imports TARGET`` for each import of a study folder (``<package>.studies.<folder>``, a
    directory of ``<package>/studies/``) from a module outside ``<package>.studies``: shared layers find the
    folders by walking them (``lcrag.studyfolders``), never through an import."""
    studies = graph.root / package / "studies"
    folders = {p.name for p in studies.iterdir() if p.is_dir()} if studies.is_dir() else set()
    bad = []
    for e in graph.edges:
        parts = e.target.split(".")
        if (len(parts) > 2 and parts[:2] == [package, "studies"] and parts[2] in folders
                and not (e.source + ".").startswith(f"{package}.studies.")):
            bad.append(f"{e.where()}: {e.source} imports {e.target} (a shared layer imports a study folder)")
    return bad


def test_shared_layers_import_no_study_folder(graph):
    """A benchmark's code is in its folder and only there: no module outside ``lcrag.studies`` imports a study
    folder (the engine, the scoreboard, the figures index, the CLI and the measure registry walk the folders)."""
    bad = study_folder_imports(graph)
    assert not bad, "shared layers importing study folders:\n" + "\n".join(bad)


def test_no_study_folder_imports_another(graph):
    """A benchmark's folder is the whole benchmark: it uses the shared layers, never another study's folder
    (two studies that need the same piece get it from a shared layer)."""
    studies = graph.root / PACKAGE / "studies"
    folders = {p.name for p in studies.iterdir() if p.is_dir() and not p.name.startswith("_")}
    bad = []
    for e in graph.edges:
        s, t = e.source.split("."), e.target.split(".")
        if (len(s) > 2 and len(t) > 2 and s[:2] == t[:2] == [PACKAGE, "studies"] and s[2] in folders
                and t[2] in folders and s[2] != t[2]):
            bad.append(f"{e.where()}: {e.source} imports {e.target}")
    assert not bad, "study folders importing other study folders:\n" + "\n".join(bad)


# ---- the checker catches what it should (a synthetic package in tmp_path) ----

def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


@pytest.fixture()
def synthetic(tmp_path) -> Graph:
    pkg = _write(tmp_path / "pkg", {
        "__init__.py": "",
        "base.py": "import os\n",
        "a/__init__.py": "from .one import f\n",
        "a/one.py": "from ..b.two import g\n\ndef f():\n    return g()\n",
        "a/_hidden.py": "def h():\n    return 1\n",
        "b/__init__.py": "",
        # lazy import inside a function closes the package cycle a -> b -> a
        "b/two.py": "def g():\n    from pkg.a import one\n    return one\n",
        "b/three.py": "from pkg.a._hidden import h\nfrom pkg.c import _secret, __version__\nimport pkg.d as dd\n"
                      "def f():\n    return dd._private_helper()\n",
        "c.py": "__version__ = '1'\n_secret = 2\nimport importlib\n"
                "def load():\n    return importlib.import_module('pkg.d')\n",
        "d.py": "from . import c\n",
    })
    return build_graph(pkg)


def test_checker_finds_module_and_package_cycles(synthetic):
    mods = module_cycles(synthetic)
    # pkg.a.one -> pkg.b.two (relative ..b.two) -> pkg.a.one (lazy, inside g)
    assert any("pkg.a.one -> pkg.b.two -> pkg.a.one" in c for c in mods), mods
    # pkg.c -> pkg.d through importlib with a literal name, pkg.d -> pkg.c through ``from . import c``
    assert any("pkg.c -> pkg.d -> pkg.c" in c for c in mods), mods
    assert any("pkg/b/two.py:2" in c for c in mods), mods          # file and line of the lazy import
    units = unit_cycles(synthetic)
    assert any("pkg.a -> pkg.b -> pkg.a" in c for c in units), units
    assert any("pkg.c -> pkg.d -> pkg.c" in c for c in units), units   # top-level modules are units


def test_checker_finds_underscore_imports(synthetic):
    bad = underscore_imports(synthetic)
    assert any("pkg/b/three.py:1" in b and "_hidden" in b for b in bad), bad
    assert any("pkg/b/three.py:2" in b and "_secret" in b for b in bad), bad
    assert any("pkg/b/three.py:5" in b and "_private_helper" in b for b in bad), bad   # m._x through an alias
    assert any("imports _secret from another package" in b for b in bad), bad   # dunders are public
    assert len(bad) == 3, bad


def test_checker_finds_a_forbidden_import(tmp_path):
    pkg = _write(tmp_path / "pkg", {
        "__init__.py": "",
        "scoring/__init__.py": "",
        "scoring/f.py": "import os\n\ndef g():\n    from ..llm.parse import p\n    return p\n",
        "llm/__init__.py": "",
        "llm/parse.py": "def p():\n    return 1\n",
    })
    bad = forbidden_imports(build_graph(pkg), "pkg")
    assert len(bad) == 1 and "pkg/scoring/f.py:4" in bad[0] and "pkg.llm.parse" in bad[0], bad


def test_checker_finds_a_study_folder_import(tmp_path):
    root = _write(tmp_path / "pkg", {
        "__init__.py": "",
        "studies/__init__.py": "",
        "studies/frontdoor.py": "",
        "studies/bench/__init__.py": "",
        "studies/bench/reply.py": "from ...scoring.f import g\n",
        "scoring/__init__.py": "",
        "scoring/f.py": "from ..studies import frontdoor\n\ndef g():\n    from ..studies.bench.reply import x\n",
    })
    bad = study_folder_imports(build_graph(root, "pkg"), "pkg")
    assert len(bad) == 1 and "pkg/scoring/f.py:4" in bad[0] and "pkg.studies.bench.reply" in bad[0], bad


def test_checker_allows_private_names_inside_one_package(tmp_path):
    pkg = _write(tmp_path / "pkg", {
        "__init__.py": "",
        "a/__init__.py": "from ._impl import run\n",
        "a/_impl.py": "from .helpers import _util\n\ndef run():\n    return _util()\n",
        "a/helpers.py": "def _util():\n    return 1\n",
        "b.py": "from pkg.a import run\n",
    })
    g = build_graph(pkg)
    assert module_cycles(g) == [] and unit_cycles(g) == [] and underscore_imports(g) == []


# ---- the public API (lcrag/__init__.py) and its users outside the package ----

def test_public_api_names_resolve():
    """Every name in ``lcrag.__all__`` resolves to an object of the module it is documented in, and ``dir``
    lists it."""
    import lcrag

    assert lcrag.__all__, "lcrag.__all__ is empty"
    assert sorted(lcrag.__all__) == sorted(lcrag._API), "__all__ and the name map differ"
    for name in lcrag.__all__:
        module, _, attr = lcrag._API[name].partition(":")
        obj = getattr(lcrag, name)
        assert obj is (getattr(importlib.import_module(module), attr) if attr else importlib.import_module(module)), name
    assert set(lcrag.__all__) <= set(dir(lcrag))
    with pytest.raises(AttributeError, match="no_such_name"):
        lcrag.no_such_name  # noqa: B018


def test_import_lcrag_is_cheap():
    """``import lcrag`` loads the registry table and the version only; names load on first use."""
    code = ("import sys, lcrag; mods = sorted(m for m in sys.modules if m.startswith('lcrag')); print(mods); "
            "lcrag.Chunk; print('lcrag.types' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    mods, types_loaded = out.stdout.splitlines()
    assert mods == "['lcrag', 'lcrag.registry', 'lcrag.version']", mods
    assert types_loaded == "True"


def test_registry_imports_no_lcrag_module(graph):
    """The registry is a plain table every layer may use: it imports nothing of lcrag (built-ins come from the
    loader ``lcrag/__init__.py`` installs)."""
    assert [e.where() for e in graph.edges if e.source == "lcrag.registry"] == []


def _code_of(path: Path) -> list[tuple[str, int]]:
    """(source, first line) of each piece of Python in a file: the whole ``.py`` file, each code cell of a
    notebook (IPython magics blanked), each ```python block of a Markdown file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return [(text, 1)]
    if path.suffix == ".ipynb":
        cells = json.loads(text)["cells"]
        out = []
        for i, c in enumerate(cells):
            if c.get("cell_type") == "code":
                src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                src = "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in src.splitlines())
                out.append((src, i))
        return out
    return [(m.group(1), text[: m.start()].count("\n") + 2)
            for m in re.finditer(r"```python\n(.*?)```", text, flags=re.DOTALL)]


def _private_lcrag_imports(path: Path) -> list[str]:
    """``file:line: imports NAME from MODULE`` for each import of an underscore module or name of lcrag."""
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    bad = []
    for src, first in _code_of(path):
        tree = ast.parse(src)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                mods = [(a.name, ()) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods = [(node.module, tuple(a.name for a in node.names))]
            else:
                continue
            for mod, names in mods:
                if mod != PACKAGE and not mod.startswith(PACKAGE + "."):
                    continue
                private = [p for p in mod.split(".") if _private(p)] + [n for n in names if _private(n)]
                if private:
                    bad.append(f"{where}:{first + node.lineno - 1}: imports {', '.join(private)} "
                               f"from {mod}")
    return bad


def test_examples_use_the_public_api():
    """The plug-in examples import only from ``lcrag`` itself or public (non-underscore) lcrag modules, and at
    least one name from the top-level API."""
    files = sorted((ROOT / "examples" / "plugins").glob("*.py"))
    assert files
    bad = [b for f in files for b in _private_lcrag_imports(f)]
    assert not bad, "plug-in examples import private lcrag names:\n" + "\n".join(bad)
    for f in files:
        tree = ast.parse(f.read_text(encoding="utf-8"))
        assert any(isinstance(n, ast.ImportFrom) and n.module == PACKAGE for n in ast.walk(tree)), \
            f"{f.relative_to(ROOT)} does not use `from lcrag import ...`"


def test_notebooks_docs_and_benchmarks_import_no_private_names():
    """Code outside the package (notebooks, docs' Python blocks, benchmarks, examples) imports no underscore
    module or name of lcrag. (Unit tests may: they test internals.)"""
    files = [*sorted((ROOT / "notebooks").glob("*.ipynb")), *sorted((ROOT / "docs").glob("*.md")),
             ROOT / "README.md", *sorted((ROOT / "benchmarks").rglob("*.py")),
             *sorted((ROOT / "examples").rglob("*.py"))]
    bad = [b for f in files for b in _private_lcrag_imports(f)]
    assert not bad, "private lcrag names imported outside the package:\n" + "\n".join(bad)


def _outside_public_api(path: Path) -> list[str]:
    """``file:cell:line: imports NAME from MODULE`` for each lcrag name a notebook imports that is not in
    ``lcrag.__all__`` (or is there under that name for another object). A notebook shows one study: the modules of
    the study folders (``lcrag.studies.<name>...``) are their public surface and may be imported directly, and a
    study folder's front door (``from lcrag.studies import nolima``) may be imported, every ``nolima.NAME`` the
    notebook uses being in that folder's ``__all__``."""
    import lcrag

    public = set(lcrag.__all__)
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    bad = []
    doors: dict[str, object] = {}  # alias -> the study folder's package, bound by ``from lcrag.studies import x``
    for src, cell in _code_of(path):
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == PACKAGE + ".studies":
                for a in node.names:
                    try:
                        doors[a.asname or a.name] = importlib.import_module(f"{PACKAGE}.studies.{a.name}")
                    except ImportError:
                        bad.append(f"{where}:cell {cell}:{node.lineno}: lcrag.studies has no study folder {a.name}")
                continue
            if isinstance(node, ast.Import):
                found = [(a.name, None) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found = [(node.module, a.name) for a in node.names]
            else:
                continue
            for mod, name in found:
                if mod != PACKAGE and not mod.startswith(PACKAGE + "."):
                    continue
                if mod.startswith(PACKAGE + ".studies."):
                    continue
                if name is None:
                    if mod != PACKAGE:
                        bad.append(f"{where}:cell {cell}:{node.lineno}: imports the module {mod}")
                    continue
                if name not in public:
                    bad.append(f"{where}:cell {cell}:{node.lineno}: imports {name} from {mod} (not in lcrag.__all__)")
                elif mod != PACKAGE and getattr(lcrag, name) is not getattr(importlib.import_module(mod), name, None):
                    bad.append(f"{where}:cell {cell}:{node.lineno}: {mod}.{name} is not lcrag.{name}")
    for src, cell in _code_of(path):
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in doors:
                door = doors[node.value.id]
                if node.attr not in getattr(door, "__all__", ()):
                    bad.append(f"{where}:cell {cell}:{node.lineno}: {node.value.id}.{node.attr} is not in "
                               f"{door.__name__}.__all__")
    return bad


def test_notebooks_import_only_the_public_api():
    """Notebooks import lcrag names that are in ``lcrag.__all__`` (from ``lcrag`` or the module documented for
    them) or modules of a study folder (``lcrag.studies.<name>``); nothing else of the package."""
    bad = [b for f in sorted((ROOT / "notebooks").glob("*.ipynb")) for b in _outside_public_api(f)]
    assert not bad, "notebooks import names outside lcrag.__all__:\n" + "\n".join(bad)


def test_public_api_scan_catches_one(tmp_path):
    nb = tmp_path / "99_x.ipynb"
    cells = ["from lcrag import save_table, run\nfrom lcrag.outputs.save import save_figure",
             "from lcrag.studies.nolima import report\nfrom lcrag.llm.call import cached_read\nimport lcrag.runner"]
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "source": c, "metadata": {}} for c in cells]}),
                  encoding="utf-8")
    bad = _outside_public_api(nb)
    assert len(bad) == 2, bad
    assert "imports cached_read from lcrag.llm.call" in bad[0] and "imports the module lcrag.runner" in bad[1], bad


def test_public_api_scan_accepts_a_study_front_door_and_checks_its_names(tmp_path):
    nb = tmp_path / "98_x.ipynb"
    cells = ["from lcrag.studies import nolima, synthetic\nfrom lcrag.studies import no_such_study",
             "t = nolima.fig11_table(rows)\nf = synthetic.rank_figure(d, 'bm25')\nnolima.fig99_table()"]
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "source": c, "metadata": {}} for c in cells]}),
                  encoding="utf-8")
    bad = _outside_public_api(nb)
    assert len(bad) == 2, bad
    assert "no study folder no_such_study" in bad[0] and "nolima.fig99_table is not in lcrag.studies.nolima" in bad[1], bad


def test_the_public_api_is_the_general_api():
    """``lcrag.__all__`` holds at most 50 names and no study's own helpers (``nolima_*``, ``synthetic_*``): those are
    in their study folder's front door (``from lcrag.studies import nolima``)."""
    import lcrag

    assert len(lcrag.__all__) <= 50, len(lcrag.__all__)
    assert sorted(lcrag.__all__) == sorted(lcrag._API) and len(set(lcrag.__all__)) == len(lcrag.__all__)
    assert not [n for n in lcrag.__all__ if n.startswith(("nolima_", "synthetic_", "multihop_", "qasper_", "longeval_"))]


@pytest.mark.parametrize("study", ["nolima", "synthetic"])
def test_every_study_front_door_name_resolves(study):
    """Each name of a study folder's front door resolves to a function of the module the table names, and no name
    is one of the folder's submodules (an imported submodule would shadow the view)."""
    pkg = importlib.import_module(f"lcrag.studies.{study}")
    submodules = {p.stem for p in Path(pkg.__file__).parent.glob("*.py")} | {
        p.name for p in Path(pkg.__file__).parent.iterdir() if (p / "__init__.py").is_file()}
    assert pkg.__all__ and not set(pkg.__all__) & submodules, set(pkg.__all__) & submodules
    for name in pkg.__all__:
        module, _, attr = pkg.VIEWS[name].partition(":")
        target = importlib.import_module(module if module.startswith("lcrag.") else f"{pkg.__name__}.{module}")
        assert getattr(pkg, name) is getattr(target, attr) and callable(getattr(pkg, name)), name
        assert name in dir(pkg)
    with pytest.raises(AttributeError, match="its views: "):
        getattr(pkg, "no_such_view")


def test_private_import_scan_catches_one(tmp_path):
    md = tmp_path / "guide.md"
    md.write_text("text\n\n```python\nimport lcrag\nfrom lcrag.chunking._spans import chunks_from_spans\n"
                  "from lcrag.registry import _TABLES, register\n```\n", encoding="utf-8")
    bad = _private_lcrag_imports(md)
    assert len(bad) == 2, bad
    assert bad[0].endswith("guide.md:5: imports _spans from lcrag.chunking._spans"), bad
    assert bad[1].endswith("guide.md:6: imports _TABLES from lcrag.registry"), bad


def test_registry_finds_builtins_in_a_fresh_process():
    """Without the registry importing the engine, a fresh process that imports only ``lcrag.registry`` sees the
    built-ins (the loader installed by ``lcrag/__init__.py``), and a plug-in reader kind reaches ``make_reader``."""
    code = """
import lcrag.registry as reg
print(sorted(reg.names("reader")), "sentences" in reg.names("chunker"), "bm25" in reg.names("retriever"),
      "ans_contains" in reg.names("measure"))
from lcrag.llm.readers import ExtractiveReader, make_reader
class Mine(ExtractiveReader):
    pass
reg.register_reader("mine", Mine)
print(type(make_reader({"name": "m", "kind": "mine"})).__name__)
"""
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["['extractive', 'extractive-single', 'openai'] True True True", "Mine"]
