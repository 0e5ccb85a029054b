"""The kit's own mutation score: mutmut over the judge, the codec, the reference and validation.

A conformance kit is trusted for its judge. A judge rule that no test pins can be lost in a
refactor without a test noticing, and then wrong ports pass. This script runs mutmut (3.x) over
the kit's core, one module at a time, each with the test files that exercise it, and prints per
module how many mutants the kit's own tests kill, how many survive, and how many are listed in
``benchmarks/mutation_equivalent.toml`` (with the reason each cannot change a verdict). It exits
1 when a mutant survives that the list does not explain, 2 when mutmut cannot run.

    pip install -e '.[mutation]'
    python3 benchmarks/mutation_score.py              # every module (see docs/mutation.md)
    python3 benchmarks/mutation_score.py --quick      # the judge only, its fastest tests
    python3 benchmarks/mutation_score.py --module judge.checks --survivors

How it drives mutmut. mutmut reads its settings from ``[tool.mutmut]`` in the ``pyproject.toml``
of the directory it runs in, copies the sources and tests into ``mutants/`` there, records which
tests call each function (one instrumented run of the selected tests), and then runs, for each
mutant, only the tests that called its function, stopping at the first failure. One setting per
checkout cannot give each module its own test files, so each module gets a work directory
``mutants/<module>/`` (git ignores ``mutants/``) holding links to the checkout's files and a
``pyproject.toml`` that is the checkout's plus a generated ``[tool.mutmut]``: the module to
mutate (``only_mutate``) and its test files (``pytest_add_cli_args_test_selection``). mutmut's
own cache lives inside it; every run here starts afresh unless ``--keep`` is given.

What mutmut cannot see: a test that calls a function only in a child process (the reference
adapter started as ``python -m conformance adapter``) does not count as calling it, so such a
function's mutants are run only against the tests that also call it in-process, and a function
called by none is reported as untested.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "mutants"
EQUIVALENT_FILE = ROOT / "benchmarks" / "mutation_equivalent.toml"

#: What mutmut's fork server imports before forking a worker per mutant (see _mutmut_table).
PRELOAD = "preload.txt"
PRELOADED = ("pytest", "numpy", "jsonschema", "hypothesis", "orjson")

#: Test files every module's run includes when they exist: those that hold the tests written to
#: kill mutants (each beside the module whose rule it pins) and the tests on each judge rule.
SHARED_TESTS = (
    "tests/judge/test_answers.py",
    "tests/judge/test_check_answers.py",
    "tests/judge/test_checker.py",
    "tests/policy/test_fast_edges.py",
    "tests/policy/test_reference.py",
    "tests/runner/test_client.py",
    "tests/runner/test_results.py",
    "tests/spec/test_protocol.py",
    "tests/suite/test_validation_rules.py",
    "tests/transport/test_in_process.py",
    "tests/transport/test_session_rules.py",
)


@dataclass(frozen=True)
class Target:
    """One module under mutation and the test files that exercise it in-process."""

    name: str
    path: str
    tests: tuple[str, ...]
    #: The fastest of those that still kill the module's mutants; None: not in the quick run.
    quick: tuple[str, ...] | None = None
    #: What mutmut's fork server does before forking a worker per mutant: ``collect`` the tests
    #: once (each mutant then starts in a fraction of a second), or only ``import`` the heavy
    #: modules. Collecting breaks pytest's lookup of some parametrised ids in the files that
    #: send raw bytes (adapter/test_server.py: "not found", counted in the error column), so
    #: only the judge's files, checked to give no error, collect.
    warmup: str = "import"


# The test files were chosen by what imports each module and calls it in-process (mutmut only
# sees in-process calls), leaving out the slow end-to-end files (tests/explain/test_triage.py:
# three minutes; tests/mutants/test_mutants.py; the ports' toolchain tests) whose rules faster
# files pin too.
TARGETS = (
    Target(
        "judge.checker",
        "conformance/judge/checker.py",
        (
            "tests/judge/test_checker.py",
            "tests/runner/test_window.py",
            "tests/report/test_terminal.py",
        ),
        quick=("tests/judge/test_checker.py", "tests/runner/test_window.py"),
        warmup="collect",
    ),
    Target(
        "judge.verdicts",
        "conformance/judge/verdicts.py",
        (
            "tests/judge/test_checker.py",
            "tests/runner/test_run.py",
            "tests/report/test_terminal.py",
        ),
    ),
    Target(
        "judge.check_answers",
        "conformance/judge/check_answers.py",
        ("tests/suite/test_protocol_checks.py", "tests/system/test_slips.py"),
        quick=("tests/suite/test_protocol_checks.py",),
        warmup="collect",
    ),
    Target(
        "judge.outcomes",
        "conformance/judge/outcomes.py",
        ("tests/mutants/test_model.py", "tests/judge/test_checker.py"),
        quick=("tests/mutants/test_model.py", "tests/judge/test_checker.py"),
        warmup="collect",
    ),
    Target(
        "spec.protocol",
        "conformance/spec/protocol.py",
        (
            "tests/spec/test_protocol.py",
            "tests/adapter/test_server.py",
            "tests/transport/test_session.py",
            "tests/suite/test_vectors.py",
            "tests/policy/test_reference_rounding.py",
            "tests/suite/test_protocol_checks.py",
        ),
    ),
    Target(
        "policy.reference",
        "conformance/policy/reference.py",
        (
            "tests/policy/test_reference.py",
            "tests/policy/test_fast.py",
            "tests/system/test_committed_suite.py",
            "tests/policy/test_reference_rounding.py",
            "tests/policy/test_reference_summation_order.py",
            "tests/policy/test_reference_reductions.py",
            "tests/adapter/test_server.py",
        ),
    ),
    Target(
        "policy.fast",
        "conformance/policy/fast.py",
        ("tests/policy/test_fast.py", "tests/policy/test_reference_suite_replay.py"),
    ),
    Target(
        "suite.validation",
        "conformance/suite/validation.py",
        (
            "tests/suite/test_validation.py",
            "tests/suite/test_vectors.py",
            "tests/tools/test_generator.py",
            "tests/suite/test_protocol_checks.py",
            "tests/policy/test_reference_rounding.py",
        ),
    ),
    Target(
        "transport.session",
        "conformance/transport/session.py",
        (
            "tests/transport/test_session.py",
            "tests/spec/test_errors.py",
            "tests/runner/test_window.py",
            "tests/runner/test_run.py",
        ),
    ),
    Target(
        "transport.in_process",
        "conformance/transport/in_process.py",
        (
            "tests/transport/test_session.py",
            "tests/runner/test_window.py",
            "tests/runner/test_run.py",
        ),
    ),
    Target(
        "judge.answers",
        "conformance/judge/answers.py",
        (
            "tests/transport/test_session.py",
            "tests/suite/test_protocol_checks.py",
            "tests/judge/test_answers.py",
        ),
    ),
    Target(
        "runner.results",
        "conformance/runner/results.py",
        (
            "tests/report/test_terminal.py",
            "tests/runner/test_run.py",
            "tests/runner/test_window.py",
        ),
    ),
    Target(
        "runner.client",
        "conformance/runner/client.py",
        (
            "tests/transport/test_session.py",
            "tests/spec/test_errors.py",
            "tests/runner/test_window.py",
            "tests/runner/test_run.py",
        ),
    ),
)

#: What each of mutmut's statuses counts as here. A mutant stopped by mutmut's CPU limit
#: (``timeout``, or ``segfault`` for the SIGKILL that follows it) made the tests hang: the
#: tests noticed it, so it is not a survivor.
_COLUMN = {
    "killed": "killed",
    "caught by type check": "killed",
    "timeout": "timeout",
    "segfault": "timeout",
    "survived": "survived",
    "no tests": "untested",
    "suspicious": "survived",
    "skipped": "untested",
    "not checked": "untested",
}
COLUMNS = ("killed", "timeout", "error", "survived", "untested", "equivalent", "message", "total")
#: mutmut's record of a worker whose pytest run raised (exit -1): pytest refused the run, in
#: practice because a test module could not even be imported with the mutant in place (module
#: level code that reads the suite through the mutated codec), so its tests were "not found".
#: mutmut files it under timeout; here it is its own column, counted as caught.
_ERRORED = 255

# mutmut's names: the module's dotted name, then ``.x__judge_victims__mutmut_3`` for a
# function, ``.xǁTrackerǁstep__mutmut_1`` for a method.
_NAME = re.compile(r"\.x(?:ǁ(?P<cls>[^ǁ]+)ǁ|_)(?P<fn>.+)__mutmut_\d+$")


def function_of(mutant: str) -> str:
    """``Class.method`` or ``function`` for a mutmut mutant name."""
    match = _NAME.search(mutant)
    if match is None:
        return mutant.rpartition(".")[2]
    return f"{match['cls']}.{match['fn']}" if match["cls"] else match["fn"]


# -- the list of explained survivors ----------------------------------------------------------


@dataclass(frozen=True)
class Listed:
    """A survivor explained in the list: ``kind`` is ``equivalent`` (no behaviour changes) or
    ``message`` (only the words of a message change, never a verdict or its evidence)."""

    module: str
    function: str
    before: str
    after: str
    kind: str
    reason: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.module, self.function, self.before, self.after)


def load_listed(path: Path = EQUIVALENT_FILE) -> dict[tuple[str, str, str, str], Listed]:
    """The explained survivors, keyed by module, function and the mutated text (what it was
    and what the mutant made it, each line stripped): a key that survives line shifts."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    listed: dict[tuple[str, str, str, str], Listed] = {}
    for entry in data.get("mutant", []):
        item = Listed(
            entry["module"],
            entry["function"],
            entry["from"],
            entry["to"],
            entry["kind"],
            entry["reason"],
        )
        if item.kind not in ("equivalent", "message"):
            raise SystemExit(f"{path}: kind must be equivalent or message: {entry}")
        if not item.reason.strip():
            raise SystemExit(f"{path}: every listed mutant needs its reason: {entry}")
        listed[item.key] = item
    return listed


# -- one module's run -------------------------------------------------------------------------


def _existing(paths: Iterable[str]) -> list[str]:
    return [p for p in paths if (ROOT / p).exists()]


def _tests_run(work: Path) -> list[str]:
    """The test files a module's last run used (``--quick``'s or all), from its settings."""
    with (work / "pyproject.toml").open("rb") as file:
        settings = tomllib.load(file)["tool"]["mutmut"]
    return list(settings["pytest_add_cli_args_test_selection"])


def _mutmut_table(target: Target, tests: Sequence[str]) -> str:
    # what the tests read besides the sources (the Python template is run as an adapter)
    copied = [
        "vectors",
        "schema",
        "SPEC.md",
        "README.md",
        "setup.py",
        "benchmarks",
        "adapters/python",
    ]
    settings = {
        "source_paths": ["conformance"],
        "only_mutate": [target.path],
        "pytest_add_cli_args_test_selection": list(tests),
        # the same examples every run: a score that moves with hypothesis's draw is no score
        "pytest_add_cli_args": ["--hypothesis-seed=0"],
        "also_copy": copied,
        # mutmut's default forks each mutant's worker from its main process, which waits for
        # "any child" and then meets an adapter process a test left to the garbage collector
        # (KeyError in wait_for_result); a fork server keeps the main process free of tests.
        "process_isolation": "forkserver",
        "forkserver_warmup": target.warmup,
        "preload_modules_file": PRELOAD,
    }
    lines = ["", "[tool.mutmut]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    return "\n".join(lines) + "\n"


def prepare(target: Target, tests: Sequence[str], *, keep: bool) -> Path:
    """The module's work directory: links to the checkout, a pyproject.toml with the module's
    ``[tool.mutmut]``, and the package's data links mutmut's copy would lose."""
    work = WORK / target.name
    if work.exists() and not keep:
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    for entry in ROOT.iterdir():
        if entry.name in ("mutants", "pyproject.toml") or entry.name.startswith("."):
            continue
        link = work / entry.name
        if not link.is_symlink():
            link.symlink_to(entry)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    if "[tool.mutmut]" in pyproject:
        raise SystemExit("pyproject.toml has a [tool.mutmut] table: this script writes its own")
    (work / "pyproject.toml").write_text(pyproject + _mutmut_table(target, tests), "utf-8")
    (work / PRELOAD).write_text("\n".join(PRELOADED) + "\n", "utf-8")
    # mutmut copies files, not the links conformance/data/{vectors,schema} that tell the
    # package where the suite is; in its copy they point at its copies of vectors/ and schema/.
    data = work / "mutants" / "conformance" / "data"
    data.mkdir(parents=True, exist_ok=True)
    for name in ("vectors", "schema"):
        if not (data / name).is_symlink():
            (data / name).symlink_to(Path("..", "..", name))
    return work


def mutmut_command() -> list[str]:
    script = Path(sys.executable).with_name("mutmut")
    if not script.exists():
        found = shutil.which("mutmut")
        if found is None:
            raise SystemExit(2)
        script = Path(found)
    return [str(script)]


def run_mutmut(work: Path, jobs: int) -> float:
    """``mutmut run`` in ``work``; its spinner goes to ``work/mutmut.log``. The wall time."""
    log = work / "mutmut.log"
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(
            [*mutmut_command(), "run", "--max-children", str(jobs)],
            cwd=work,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            check=False,
        )
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        print(f"mutmut failed in {work} (exit {done.returncode}); the end of its log:\n{tail}")
        raise SystemExit(2)
    return time.monotonic() - started


def collect(work: Path) -> list[dict[str, Any]]:
    """Every mutant of ``work``'s run: name, status, function and the mutated lines, read by
    mutmut's own code in a child process (mutmut reads its settings from the directory)."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--collect-here"],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        print(f"reading mutmut's results in {work} failed:\n{done.stderr[-3000:]}")
        raise SystemExit(2)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def collect_here() -> None:
    """``--collect-here``: print this directory's mutants as JSON (run inside a work dir)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant  # type: ignore[import-not-found]
    from mutmut.stats import status_by_exit_code  # type: ignore[import-not-found]

    settings = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]
    out = []
    for module in settings["only_mutate"]:
        meta = json.loads(Path("mutants", module + ".meta").read_text(encoding="utf-8"))
        for name, code in meta["exit_code_by_key"].items():
            status = status_by_exit_code[code]
            before: list[str] = []
            after: list[str] = []
            if status != "killed":
                for line in get_diff_for_mutant(name, path=Path(module)).splitlines():
                    if line.startswith(("---", "+++")):
                        continue
                    if line.startswith("-"):
                        before.append(line[1:].strip())
                    elif line.startswith("+"):
                        after.append(line[1:].strip())
            out.append(
                {
                    "name": name,
                    "module": module,
                    "status": status,
                    "exit_code": code,
                    "function": function_of(name),
                    "from": "\n".join(before),
                    "to": "\n".join(after),
                }
            )
    json.dump(out, sys.stdout)


# -- the score --------------------------------------------------------------------------------


@dataclass
class Score:
    target: Target
    counts: Counter[str]
    unexplained: list[dict[str, Any]]
    stale: list[Listed]
    seconds: float


def score(
    target: Target,
    mutants: list[dict[str, Any]],
    listed: dict[tuple[str, str, str, str], Listed],
    seconds: float,
) -> Score:
    counts: Counter[str] = Counter()
    unexplained = []
    matched: set[tuple[str, str, str, str]] = set()
    for mutant in mutants:
        column = _COLUMN.get(mutant["status"], "survived")
        if mutant.get("exit_code") == _ERRORED:
            column = "error"
        if column in ("survived", "untested"):
            key = (mutant["module"], mutant["function"], mutant["from"], mutant["to"])
            entry = listed.get(key)
            if entry is not None:
                column = entry.kind
                matched.add(key)
            else:
                unexplained.append(mutant)
        counts[column] += 1
        counts["total"] += 1
    stale = [e for k, e in listed.items() if e.module == target.path and k not in matched]
    return Score(target, counts, unexplained, stale, seconds)


def table(scores: Sequence[Score]) -> str:
    head = ("module", *COLUMNS, "score", "time")
    rows = []
    total: Counter[str] = Counter()
    for s in scores:
        total.update(s.counts)
        rows.append((s.target.name, *_cells(s.counts), f"{s.seconds:.0f}s"))
    rows.append(("total", *_cells(total), f"{sum(s.seconds for s in scores):.0f}s"))
    widths = [max(len(str(row[i])) for row in (head, *rows)) for i in range(len(head))]

    def line(row: Sequence[Any]) -> str:
        pairs = enumerate(zip(row, widths, strict=True))
        return "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in pairs)

    return "\n".join([line(head), *(line(r) for r in rows)])


def _cells(counts: Counter[str]) -> list[Any]:
    # The score: caught (killed, hung, or a test module that cannot load) over every mutant
    # that could be caught, the listed equivalent ones left out; a message-only survivor
    # counts against it.
    killable = counts["total"] - counts["equivalent"]
    caught = counts["killed"] + counts["timeout"] + counts["error"]
    percent = f"{100 * caught / killable:.1f}%" if killable else "-"
    return [counts[c] for c in COLUMNS] + [percent]


def describe(mutant: dict[str, Any]) -> str:
    before = mutant["from"].replace("\n", " | ") or "(nothing)"
    after = mutant["to"].replace("\n", " | ") or "(removed)"
    return (
        f"  {mutant['name']} [{mutant['status']}] in {mutant['function']}:\n"
        f"      - {before}\n      + {after}"
    )


def draft(mutants: Iterable[dict[str, Any]]) -> str:
    """TOML entries for ``mutants``, to copy into the list once each has its reason."""
    out = []
    for m in mutants:
        out.append(
            "[[mutant]]\n"
            f"module = {json.dumps(m['module'], ensure_ascii=False)}\n"
            f"function = {json.dumps(m['function'], ensure_ascii=False)}\n"
            f"from = {json.dumps(m['from'], ensure_ascii=False)}\n"
            f"to = {json.dumps(m['to'], ensure_ascii=False)}\n"
            'kind = "equivalent"\n'
            'reason = ""\n'
        )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the judge modules, fastest tests")
    parser.add_argument(
        "--module", action="append", default=[], help="only this module (repeatable)"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="mutmut children")
    parser.add_argument("--keep", action="store_true", help="reuse mutmut's cache of a last run")
    parser.add_argument(
        "--report",
        action="store_true",
        help="run nothing: score the last run's results again (against the list as it is now)",
    )
    parser.add_argument(
        "--survivors", action="store_true", help="list every survivor, explained or not"
    )
    parser.add_argument("--draft", type=Path, help="write TOML stubs for unexplained survivors")
    parser.add_argument("--json", type=Path, help="write every module's mutants and counts")
    parser.add_argument("--collect-here", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.collect_here:
        collect_here()
        return 0
    try:
        import mutmut  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        print("mutmut is not installed: pip install -e '.[mutation]'")
        return 2

    names = {t.name for t in TARGETS}
    unknown = sorted(set(args.module) - names)
    if unknown:
        parser.error(f"unknown module(s) {unknown}; known: {sorted(names)}")
    targets = [
        t
        for t in TARGETS
        if (not args.module or t.name in args.module) and (not args.quick or t.quick is not None)
    ]
    listed = load_listed()
    scores = []
    everything: dict[str, Any] = {}
    started = time.monotonic()
    for target in targets:
        files = target.quick if args.quick and target.quick is not None else target.tests
        tests = _existing(dict.fromkeys([*files, *SHARED_TESTS]))
        if args.report:
            work, seconds = WORK / target.name, 0.0
            if not (work / "mutants").is_dir():
                print(f"no run of {target.name} to report on: run without --report first")
                return 2
            ran = " ".join(_tests_run(work))
            print(f"{target.name}: the last run, of {target.path} against {ran}", flush=True)
        else:
            print(f"{target.name}: mutating {target.path} against {' '.join(tests)}", flush=True)
            work = prepare(target, tests, keep=args.keep)
            seconds = run_mutmut(work, args.jobs)
        mutants = collect(work)
        result = score(target, mutants, listed, seconds)
        scores.append(result)
        everything[target.name] = {"counts": dict(result.counts), "mutants": mutants}
        print(
            f"  {result.counts['total']} mutants, {len(result.unexplained)} unexplained "
            f"survivors, {seconds:.0f}s",
            flush=True,
        )

    print()
    print(table(scores))
    print(f"wall time {time.monotonic() - started:.0f}s with {args.jobs} mutmut children")
    unexplained = [m for s in scores for m in s.unexplained]
    stale = [e for s in scores for e in s.stale]
    if args.survivors:
        for s in scores:
            for m in s.unexplained:
                print(describe(m))
    if stale:
        print(f"\n{len(stale)} listed mutant(s) no run produced (killed now, or the code moved):")
        for e in stale:
            print(f"  {e.module} {e.function}: {e.before!r} -> {e.after!r}")
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1), encoding="utf-8")
    if args.draft:
        args.draft.write_text(draft(unexplained), encoding="utf-8")
    if unexplained:
        print(
            f"\n{len(unexplained)} mutant(s) survived that {EQUIVALENT_FILE.relative_to(ROOT)} "
            "does not explain: kill each with a test (beside the module it mutates) or list "
            "it there with the reason it cannot change a verdict"
        )
        if not args.survivors:
            for m in unexplained[:40]:
                print(describe(m))
            if len(unexplained) > 40:
                print(f"  ... and {len(unexplained) - 40} more (--survivors lists them all)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
