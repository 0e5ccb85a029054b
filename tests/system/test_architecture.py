"""The architecture ARCHITECTURE.md describes holds: the import contracts of pyproject.toml
(layers, the numpy-free run path, the pure judge, one module that starts adapters), no import
cycle among the package's modules, no process started outside the transport, every module
and file the documentation and the code's docstrings name exists, and the tests mirror the
package."""

from __future__ import annotations

import ast
import itertools
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest

from tests.support.paths import ROOT

PACKAGE = ROOT / "conformance"


def lint_imports(config: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with ``config``, run by this interpreter, without a cache (a cache
    can hold a graph from before an edit)."""
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(sys.argv[1], no_cache=True, no_logo=True))"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_import_contracts_hold() -> None:
    done = lint_imports(ROOT / "pyproject.toml")
    report = done.stdout + done.stderr
    assert done.returncode == 0, f"a [tool.importlinter] contract is broken:\n{report}"
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    # every contract was read and checked, none skipped
    assert f"Contracts: {len(contracts['contracts'])} kept, 0 broken." in report, report


def import_cycles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """One shortest cycle through each group of modules that import each other, as the
    module path that closes it (``a -> b -> a``)."""
    modules = {m for m in graph.modules if m == package or m.startswith(package + ".")}
    seen: set[frozenset[str]] = set()
    cycles = []
    for importer in sorted(modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & modules):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is None:
                continue
            cycle = [importer, *back]
            members = frozenset(cycle)
            if members not in seen:
                seen.add(members)
                cycles.append(cycle)
    return cycles


def describe(graph: grimp.ImportGraph, cycle: list[str]) -> str:
    hops = []
    for importer, imported in itertools.pairwise(cycle):
        lines = [
            d["line_number"] for d in graph.get_import_details(importer=importer, imported=imported)
        ]
        hops.append(f"  {importer} -> {imported} (line {', '.join(map(str, lines))})")
    return "\n".join(hops)


def test_no_module_of_the_package_imports_itself_through_others() -> None:
    """Every import counts, at the top of a module, inside a function or under TYPE_CHECKING:
    a cycle hidden in a function is still two modules that cannot be read one before the
    other."""
    graph = grimp.build_graph("conformance", cache_dir=None)
    cycles = import_cycles(graph, "conformance")
    assert cycles == [], "import cycles:\n" + "\n\n".join(describe(graph, c) for c in cycles)


def test_a_cycle_is_found_whatever_its_length() -> None:
    """The cycle finder itself, on a made-up graph: a two-module cycle, a three-module one
    and a chain that is not a cycle."""
    graph = grimp.ImportGraph()
    for importer, imported in [
        ("p.a", "p.b"),
        ("p.b", "p.a"),
        ("p.c", "p.d"),
        ("p.d", "p.e"),
        ("p.e", "p.c"),
        ("p.f", "p.a"),
    ]:
        graph.add_import(importer=importer, imported=imported)
    found = sorted(sorted(set(cycle)) for cycle in import_cycles(graph, "p"))
    assert found == [["p.a", "p.b"], ["p.c", "p.d", "p.e"]]


#: Calls that start a process. Only the transport may make them.
_OS_STARTS = re.compile(r"fork|forkpty|exec\w*|spawn\w*|posix_spawnp?|system|popen")
_STARTERS = {"ProcessPoolExecutor", "create_subprocess_exec", "create_subprocess_shell", "Popen"}
#: Where a process may start: the transport starts every adapter; the kills.json regeneration
#: runs worker processes of this interpreter (not adapters).
_ALLOWED = {
    "conformance/transport/process.py": None,
    "conformance/tools/generate/kills.py": {"ProcessPoolExecutor"},
}


def process_starts(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """``(line, what)`` for each use of a name that starts a process."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            base = node.value.id if isinstance(node.value, ast.Name) else None
            if base == "os" and _OS_STARTS.fullmatch(node.attr):
                yield node.lineno, f"os.{node.attr}"
            elif node.attr in _STARTERS:
                yield node.lineno, node.attr
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (node.module == "os" and _OS_STARTS.fullmatch(alias.name)) or (
                    alias.name in _STARTERS
                ):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in {"subprocess", "multiprocessing", "pty"}:
                    yield node.lineno, alias.name


def test_only_the_transport_starts_processes() -> None:
    """What the import contract cannot see: os.fork, os.exec*, os.posix_spawn and process
    pools are names, not modules."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        allowed = _ALLOWED.get(where, set())
        if allowed is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), where)
        starts = [(line, what) for line, what in process_starts(tree) if what not in allowed]
        found += [f"{where}:{line}: {what}" for line, what in starts]
    where = "conformance/transport/process.py"
    assert found == [], f"processes started outside {where}:\n" + "\n".join(found)


def test_the_process_finder_sees_each_way_to_start_one() -> None:
    source = (
        "import os, subprocess\n"
        "from os import posix_spawn\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "os.execvp('x', ['x'])\n"
        "subprocess.Popen(['x'])\n"
        "os.getpid()\n"
    )
    found = sorted(what for _, what in process_starts(ast.parse(source)))
    assert found == ["Popen", "ProcessPoolExecutor", "os.execvp", "posix_spawn", "subprocess"]


# -- the documentation names what exists ------------------------------------------------------

#: What a newcomer reads to find their way: each names files and modules of the package.
DOCS = ["README.md", "ARCHITECTURE.md", "SPEC.md", "docs/**/*.md", "vectors/**/*.md"]
_PATH = re.compile(r"(?<![\w/.-])conformance/[\w/.-]*\w")
_DOTTED = re.compile(r"(?<![\w/.-])conformance(?:\.\w+)+")
#: A dotted name ending so is a file name (``--junit conformance.xml``), not a module.
_FILE_SUFFIXES = {"xml", "json", "yml", "yaml", "md", "txt", "html", "ts"}


def doc_files() -> list[Path]:
    return sorted({path for pattern in DOCS for path in ROOT.glob(pattern)})


def test_the_documents_checked_include_the_architecture_and_the_readme() -> None:
    checked = {path.relative_to(ROOT).as_posix() for path in doc_files()}
    assert {"README.md", "ARCHITECTURE.md", "SPEC.md", "docs/ci/README.md"} <= checked


def missing_paths(text: str) -> list[str]:
    """The ``conformance/...`` paths in ``text`` that are neither a file nor a directory of
    the checkout (a path given without ``.py`` may name a module)."""
    return sorted(
        {
            path
            for path in _PATH.findall(text)
            if not (ROOT / path).exists() and not (ROOT / f"{path}.py").exists()
        }
    )


def _module_source(name: str) -> Path | None:
    """The source file of module ``name`` in the checkout (None if there is no such module),
    found on disk so that nothing is imported."""
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _top_level_names(source: Path) -> set[str]:
    """The names a module's source defines or imports at its top level."""
    names: set[str] = set()
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def missing_names(text: str) -> list[str]:
    """The dotted ``conformance.…`` names in ``text`` that name no module of the package, or no
    top-level name of the module they start with."""
    missing = set()
    for name in set(_DOTTED.findall(text)):
        parts = name.split(".")
        if parts[-1] in _FILE_SUFFIXES or parts[-1].startswith("__"):
            continue
        modules = [i for i in range(2, len(parts) + 1) if _module_source(".".join(parts[:i]))]
        if not modules:
            missing.add(name)
            continue
        length = max(modules)
        source, rest = _module_source(".".join(parts[:length])), parts[length:]
        if rest and source is not None and rest[0] not in _top_level_names(source):
            missing.add(name)
    return sorted(missing)


#: A file then a name it defines, as the trip of one vector cites them:
#: `` `runner/run.py` `Run` ``, `` `runner/window.py` `Window._send` ``.
_CITED = re.compile(r"`((?:conformance/)?[\w/]+\.py)`\s+`([A-Za-z_]\w*(?:\.\w+)?)`")
#: A path written from the package's folder, as ARCHITECTURE.md writes them (`runner/run.py`).
_RELATIVE = re.compile(r"`((?:[a-z_]+/)+(?:\w+\.(?:py|json))?)`")
#: A row of ARCHITECTURE.md's table of layers: its folder, then file names in that folder.
_LAYER_ROW = re.compile(r"^\| `([a-z_]+)/`")
_BARE_FILE = re.compile(r"`(\w+\.py)`")


def _resolve(path: str) -> Path | None:
    """``path`` in the checkout, from its root or from the package's folder."""
    for base in (ROOT, PACKAGE):
        if (base / path).exists():
            return base / path
    return None


def _class_names(source: Path, class_name: str) -> set[str]:
    """The names class ``class_name`` of ``source`` defines in its body."""
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return {_name for item in node.body for _name in _defined(item)}
    return set()


def _defined(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    if isinstance(node, ast.Assign):
        return {target.id for target in node.targets if isinstance(target, ast.Name)}
    return set()


def missing_definitions(text: str) -> list[str]:
    """Each `` `file.py` `name` `` in ``text`` whose file does not define that name at its top
    level (or, for ``Class.name``, in that class)."""
    missing = set()
    for path, name in _CITED.findall(text):
        source = _resolve(path)
        head, _, attribute = name.partition(".")
        if (
            source is None
            or head not in _top_level_names(source)
            or (attribute and attribute not in _class_names(source, head))
        ):
            missing.add(f"{path} {name}")
    return sorted(missing)


def missing_layer_files(text: str) -> list[str]:
    """The paths ARCHITECTURE.md writes from the package's folder that do not exist, and the
    files a row of its table of layers names that are not in that layer's folder (a row's
    paths are from the layer's folder too)."""
    missing = set()
    for line in text.splitlines():
        row = _LAYER_ROW.match(line)
        bases = [ROOT, PACKAGE] + ([PACKAGE / row.group(1)] if row else [])
        names = _RELATIVE.findall(line) + (_BARE_FILE.findall(line) if row else [])
        prefix = f"{row.group(1)}/" if row else ""
        missing |= {
            prefix + name for name in names if not any((base / name).exists() for base in bases)
        }
    return sorted(missing)


@pytest.mark.parametrize("doc", doc_files(), ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_file_and_module_the_documentation_names_exists(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    where = doc.relative_to(ROOT).as_posix()
    assert missing_paths(text) == [], f"{where} names files that do not exist"
    assert missing_names(text) == [], f"{where} names modules or names that do not exist"
    assert missing_definitions(text) == [], f"{where} cites names their files do not define"


def test_every_module_and_path_the_code_names_exists() -> None:
    """Docstrings and comments name modules too (``:mod:`conformance.explain.play```,
    ``conformance/policy/reference.py``): after a move, each must follow."""
    sources = [
        *PACKAGE.rglob("*.py"),
        *(ROOT / "tests").rglob("*.py"),
        *ROOT.glob("benchmarks/*.py"),
    ]
    stale = {}
    for path in sorted(sources):
        if path == Path(__file__).resolve():  # its own examples name what does not exist
            continue
        text = path.read_text(encoding="utf-8")
        found = missing_paths(text) + missing_names(text)
        if found:
            stale[path.relative_to(ROOT).as_posix()] = found
    assert stale == {}


def test_the_architecture_names_the_files_of_each_layer() -> None:
    """ARCHITECTURE.md writes paths from the package's folder (`runner/run.py`) and lists
    each layer's files by name in its table: each must exist where it says."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert missing_layer_files(text) == []
    layers = {match.group(1) for match in map(_LAYER_ROW.match, text.splitlines()) if match}
    folders = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert layers == folders, "ARCHITECTURE.md's table of layers and conformance/'s folders"


def test_a_stale_path_or_module_name_is_found() -> None:
    text = (
        "`conformance/runner/run.py` runs, `conformance/runner/nowhere.py` does not; "
        "`conformance.runner.run.Run` is, `conformance.runner.run.Nothing` and "
        "`conformance.server` are not; `--junit conformance.xml` is a file. "
        "`runner/run.py` `Run` and `runner/window.py` `Window.run` are defined, "
        "`runner/run.py` `Walk` and `runner/window.py` `Window.walk` are not."
    )
    assert missing_paths(text) == ["conformance/runner/nowhere.py"]
    assert missing_names(text) == ["conformance.runner.run.Nothing", "conformance.server"]
    assert missing_definitions(text) == ["runner/run.py Walk", "runner/window.py Window.walk"]


def test_a_layer_file_that_is_not_there_is_found() -> None:
    text = (
        "| `judge/` | `checker.py` and `rulings.py` | pure |\n"
        "See `runner/run.py`, `runner/gone.py` and `cli/commands/`."
    )
    assert missing_layer_files(text) == ["judge/rulings.py", "runner/gone.py"]


# -- one name per module, one root for the kit's errors ---------------------------------------

#: Module names that two modules may share, and why. A command's module
#: (``cli/commands/<command>.py``) shares its name with the one module it is the front of; the
#: generator's builders are named after the catalogue family whose mistakes they trap; the two
#: ``model.py`` are named by path in README.md (renamed when it no longer names them).
_SHARED_NAMES = {
    "run": {"conformance/cli/commands/run.py", "conformance/runner/run.py"},
    "bench": {"conformance/cli/commands/bench.py", "conformance/tools/bench.py"},
    "fuzz": {"conformance/cli/commands/fuzz.py", "conformance/tools/fuzz.py"},
    "matrix": {"conformance/cli/commands/matrix.py", "conformance/tools/matrix.py"},
    "show": {"conformance/cli/commands/show.py", "conformance/report/show.py"},
    **{
        family: {
            f"conformance/mutants/{family}.py",
            f"conformance/tools/generate/builders/{family}.py",
        }
        for family in ("pooling", "ring", "selection", "summation")
    },
    "model": {"conformance/mutants/model.py", "conformance/tools/record/model.py"},
}


def shared_module_names(root: Path) -> dict[str, set[str]]:
    """The module names (``__init__`` aside) that more than one module under ``root`` has."""
    places: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        if path.name != "__init__.py":
            where = path.relative_to(root.parent).as_posix()
            places.setdefault(path.stem, set()).add(where)
    return {name: where for name, where in places.items() if len(where) > 1}


def test_no_two_modules_share_a_name() -> None:
    """One concept, one module, one name: a newcomer who reads ``checks`` in a traceback knows
    which file it is. The few names shared on purpose are listed, each with its reason."""
    assert shared_module_names(PACKAGE) == _SHARED_NAMES


#: Exceptions that are not errors of the kit, and why: refusals the reference's server answers
#: with (the protocol's, not the kit's), the pytest plugin's item outcomes (it imports nothing
#: but pytest until used), hypothesis's escape hatches (BaseException on purpose), and the
#: builders' design check (the generator's own, reported as a GenerationError).
_NOT_KIT_ERRORS = {
    "conformance/spec/protocol.py BadRequest",
    "conformance/policy/reference.py PolicyError",
    "conformance/pytest_plugin.py AdapterNotStarted",
    "conformance/pytest_plugin.py KitFault",
    "conformance/pytest_plugin.py VectorFailed",
    "conformance/tools/fuzz.py AdapterLost",
    "conformance/tools/generate/builders/_draft.py DesignError",
}


def exception_classes(tree: ast.AST) -> list[tuple[str, list[str]]]:
    """Each top-level class of ``tree`` derived directly from ``Exception`` or
    ``BaseException``, with its bases' names, and every class whose name says it is an error."""
    found = []
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.ClassDef):
            bases = [ast.unparse(base) for base in node.bases]
            raw = {"Exception", "BaseException"} & set(bases)
            if raw or node.name.endswith("Error"):
                found.append((node.name, bases))
    return found


def test_every_error_of_the_kit_is_a_kit_error() -> None:
    """A command stops on a :class:`conformance.spec.errors.KitError` with one line; an error
    class outside it is one a front end can miss. Private control flow (``_Name``) and the
    listed exceptions aside."""
    outside = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        for name, bases in exception_classes(ast.parse(path.read_text(encoding="utf-8"))):
            if name.startswith("_") or f"{where} {name}" in _NOT_KIT_ERRORS:
                continue
            if {"Exception", "BaseException"} & set(bases):
                outside.append(f"{where} {name}")
    assert outside == ["conformance/spec/errors.py KitError"]


def test_the_name_and_error_finders_see_what_they_look_for(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    for name in ("a/checks.py", "b/checks.py", "a/one.py", "a/__init__.py", "b/__init__.py"):
        (root / name).write_text("")
    assert shared_module_names(root) == {"checks": {"pkg/a/checks.py", "pkg/b/checks.py"}}
    source = "class A(Exception): ...\nclass BError(KitError): ...\nclass C: ...\n"
    assert exception_classes(ast.parse(source)) == [("A", ["Exception"]), ("BError", ["KitError"])]


# -- the tests mirror the package ---------------------------------------------------------------

#: Where tests that run the kit as a whole live (ports, wheels, CI recipes, the committed suite).
SYSTEM_TESTS = "system"
#: Modules of a layer that sit outside its folder (the layer "cli | pytest_plugin").
_OUTSIDE_THEIR_FOLDER = {"cli": {"pytest_plugin"}}


def misplaced_tests(tests: Path, package: Path) -> list[str]:
    """The test modules under ``tests`` that do not mirror ``package``: each sits in
    ``tests/<layer>/`` and is named ``test_<module>.py`` (or ``test_<module>_<aspect>.py``) after
    a module or subpackage of that layer (the layer's own ``__init__`` by the layer's name), or
    in ``tests/system/``; none sits at the top of ``tests``."""
    misplaced = [path.name for path in sorted(tests.glob("test_*.py"))]
    for path in sorted(tests.glob("*/test_*.py")):
        layer = path.parent.name
        if layer == SYSTEM_TESTS:
            continue
        where = package / layer
        names = {layer, *_OUTSIDE_THEIR_FOLDER.get(layer, ())}
        if (where / "__init__.py").is_file():
            names |= {p.stem.lstrip("_") for p in where.rglob("*.py") if p.stem != "__init__"}
            names |= {p.parent.name for p in where.rglob("*/__init__.py")}
        stem = path.stem.removeprefix("test_")
        if not (where / "__init__.py").is_file() or not any(
            stem == name or stem.startswith(f"{name}_") for name in names
        ):
            misplaced.append(path.relative_to(tests).as_posix())
    return misplaced


def test_every_test_module_sits_beside_the_module_it_tests() -> None:
    """No ``tests/test_*.py`` at the top level: a test goes in ``tests/<layer>/test_<module>.py``,
    a run of the whole kit in ``tests/system/``."""
    assert misplaced_tests(ROOT / "tests", PACKAGE) == []


def test_a_test_module_out_of_place_is_found(tmp_path: Path) -> None:
    package, tests = tmp_path / "pkg", tmp_path / "tests"
    layer = ["judge/__init__.py", "judge/checker.py", "judge/_base.py", "judge/deep/__init__.py"]
    for name in layer:
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text("")
    fine = ["judge/test_checker.py", "judge/test_checker_edges.py", "judge/test_base.py"]
    fine += ["judge/test_judge.py", "judge/test_deep.py", "system/test_anything.py"]
    wrong = ["test_flat.py", "judge/test_nowhere.py", "judge/test_checkers.py", "nolayer/test_x.py"]
    for name in fine + wrong:
        (tests / name).parent.mkdir(parents=True, exist_ok=True)
        (tests / name).write_text("")
    assert misplaced_tests(tests, package) == [
        "test_flat.py",
        "judge/test_checkers.py",
        "judge/test_nowhere.py",
        "nolayer/test_x.py",
    ]
