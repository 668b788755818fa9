"""The import graph of ``src/dpquery``, read from the source as a reader follows it.

Every ``import`` counts wherever it stands: at the top of a module, inside a function, or
under ``if TYPE_CHECKING:`` (an annotation is a dependency too, and a cycle hidden behind any
of them is still a cycle a reader has to untangle). The graph must have no cycle, and
``dpquery.algorithms`` must keep its shape (``docs/architecture.md``): the protocol modules
at its top level import no family (its subpackages); only the registry, ``auto`` (which
chooses among the families) and the package's ``__init__`` import them, and no family imports
those three.

No module of dpquery is imported inside a function: an import of our own code stands at the
top of the module, where the graph is plain to see. Only third-party packages that are
optional or heavy (dask's ``distributed``, ``matplotlib``, ``pyarrow.parquet``, OR-Tools'
``cp_model``) are imported where they are needed, each with a comment saying so.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ALGORITHMS = "dpquery.algorithms"
# The modules of dpquery.algorithms allowed to import a family: the registry (the one place
# that lists every algorithm), auto (its policy reads the families' public limits) and the
# package itself (it re-exports the public estimators).
COMPOSITION = {ALGORITHMS, f"{ALGORITHMS}.registry", f"{ALGORITHMS}.auto"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    if not (SRC / "dpquery").is_dir():
        pytest.skip(f"{SRC / 'dpquery'} not found (tests run outside the source tree)")
    return {module_name(p): p for p in sorted((SRC / "dpquery").rglob("*.py"))}


def imported(name: str, path: Path, known: set[str]) -> set[str]:
    """The dpquery modules ``name`` imports, anywhere in its source. ``from P import x`` is
    an import of the module ``P.x`` when there is one, else of ``P``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.update(
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            )
    return {m for m in found if m in known and m != name}


def import_graph() -> dict[str, set[str]]:
    paths = modules()
    known = set(paths)
    return {name: imported(name, path, known) for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def families(graph: dict[str, set[str]]) -> set[str]:
    """The subpackages of dpquery.algorithms: one per family of algorithms."""
    return {m for m in graph if m.count(".") == 2 and m.startswith(ALGORITHMS + ".")} & {
        m.rpartition(".")[0] for m in graph if m.count(".") == 3 and m.startswith(ALGORITHMS)
    }


def family_of(module: str, names: set[str]) -> str | None:
    return next((f for f in names if module == f or module.startswith(f + ".")), None)


def test_the_graph_counts_every_import(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import registry\n"
        "if TYPE_CHECKING:\n"
        "    from dpquery.privacy import Ledger\n"
        "def f():\n"
        "    from dpquery.algorithms.game import fem\n"
        "    import dpquery.data.domain\n"
    )
    known = {
        "dpquery.privacy", "dpquery.algorithms.game", "dpquery.algorithms.game.fem",
        "dpquery.data.domain", "dpquery.algorithms.registry", "dpquery.algorithms.m",
    }  # fmt: skip
    assert imported("dpquery.algorithms.m", source, known) == {
        "dpquery.algorithms.registry", "dpquery.privacy", "dpquery.algorithms.game.fem",
        "dpquery.data.domain",
    }  # fmt: skip
    assert f"{ALGORITHMS}.registry" in import_graph()


def test_no_import_cycle():
    found = cycles(import_graph())
    assert found == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_function_level_import_of_dpquery():
    found = []
    for name, path in modules().items():
        for fn in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                targets = (
                    [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                    else [a.name for a in node.names] if isinstance(node, ast.Import)
                    else ["." * node.level] if isinstance(node, ast.ImportFrom)
                    else []
                )  # fmt: skip
                if any(t.startswith(("dpquery", ".")) for t in targets):
                    found.append(f"{name}:{node.lineno} {ast.unparse(node)}")
    assert found == []


def test_algorithms_has_its_families():
    assert families(import_graph()) >= {f"{ALGORITHMS}.game", f"{ALGORITHMS}.marginal"}


def test_protocol_imports_no_family():
    graph = import_graph()
    names = families(graph)
    protocol = [
        m
        for m in graph
        if m.startswith(ALGORITHMS + ".") and m.count(".") == 2
        and m not in names and m not in COMPOSITION
    ]  # fmt: skip
    assert protocol, "no protocol module found"
    wrong = {
        m: sorted(w for w in graph[m] if family_of(w, names)) for m in protocol
    }  # fmt: skip
    assert {m: w for m, w in wrong.items() if w} == {}


def test_families_never_import_the_registry_or_auto():
    graph = import_graph()
    names = families(graph)
    wrong = {
        m: sorted(w for w in targets if w in COMPOSITION)
        for m, targets in graph.items()
        if family_of(m, names)
    }
    assert {m: w for m, w in wrong.items() if w} == {}


def test_lower_layers_never_import_algorithms():
    """Imports point up the layers of docs/architecture.md: the data, queries, privacy and
    oracles layers never reach into the algorithms."""
    graph = import_graph()
    lower = ("dpquery.data", "dpquery.queries", "dpquery.privacy", "dpquery.oracles")
    wrong = {
        m: sorted(w for w in targets if w == ALGORITHMS or w.startswith(ALGORITHMS + "."))
        for m, targets in graph.items()
        if m.startswith(lower)
    }
    assert {m: w for m, w in wrong.items() if w} == {}


# Words that tell the history of the work rather than what the code does: an issue's number,
# a working session or stop, the machine a number was measured on. They belong in commit
# messages. "this session" is the domain's word in the online sessions, so those files may
# say it.
HISTORY = re.compile(
    r"\bissues?\b|\bthis machine\b|\b(?:this|first|second|previous|last) stop\b"
    r"|\b(?:first|second|previous|last) session\b",
    re.IGNORECASE,
)
SESSION = re.compile(r"\bthis session\b", re.IGNORECASE)
ROOT = SRC.parent


def history_lines(path: Path) -> list[int]:
    """The numbers of the lines of ``path`` that tell the work's history."""
    online = "online" in path.name or "online" in path.parent.name
    return [
        i
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if HISTORY.search(line) or (not online and SESSION.search(line))
    ]


def test_history_words_are_found(tmp_path):
    old = tmp_path / "one_way.py"
    old.write_text(
        "# The 1-way target in total variation (issue: every column within 0.05 of the data's).\n"
        "DEFAULT_COLUMN_TV = 0.05\n"
        "# measured on this machine\n"
        "# this session's default\n"
        "# the issues of a release\n"
    )
    assert history_lines(old) == [1, 3, 4, 5]
    online = tmp_path / "online.py"
    online.write_text("# this session answers queries\n# the second session\n")
    assert history_lines(online) == [2]


def test_code_and_docs_describe_the_code_not_its_history():
    files = [
        *(ROOT / "src").rglob("*.py"),
        *(ROOT / "benchmarks").glob("*.py"),
        *(ROOT / "docs").glob("*.md"),
        ROOT / "README.md",
    ]
    assert len(files) > 100
    found = [f"{path.relative_to(ROOT)}:{i}" for path in sorted(files) for i in history_lines(path)]
    assert found == [], "lines that tell the work's history: " + ", ".join(found)


# The release pipeline's steps on the data layer: the front doors leave them to
# dpquery.pipeline (docs/architecture.md, "The release pipeline").
PIPELINE_STEPS = {"encode", "default_workload", "dense_records", "output_table", "sample_items"}


def front_door(module: str) -> bool:
    """The command line and the pandas API: thin over dpquery.pipeline."""
    return module in ("dpquery.api", "dpquery.cli") or module.startswith("dpquery.cli.")


def test_the_front_doors_run_no_step_of_the_pipeline():
    found = []
    for name, path in modules().items():
        if not front_door(name):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            used = (
                [a.name for a in node.names] if isinstance(node, ast.ImportFrom)
                else [node.id] if isinstance(node, ast.Name)
                else [node.attr] if isinstance(node, ast.Attribute)
                else []
            )  # fmt: skip
            found += [f"{name}:{node.lineno} {u}" for u in used if u in PIPELINE_STEPS]
    assert found == []


def test_argparse_stays_in_the_command_line():
    """Only dpquery.cli imports argparse, and no function outside it takes a Namespace."""
    found = []
    for name, path in modules().items():
        if name == "dpquery.cli" or name.startswith("dpquery.cli."):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names):
                found.append(f"{name}:{node.lineno} imports argparse")
            if isinstance(node, ast.ImportFrom) and node.module == "argparse":
                found.append(f"{name}:{node.lineno} imports from argparse")
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                found += [
                    f"{name}:{node.lineno} {node.name}({a.arg})"
                    for a in arguments
                    if a.annotation is not None and "Namespace" in ast.unparse(a.annotation)
                ]
    assert found == []
