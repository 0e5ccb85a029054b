"""The triage names what inference engines do: ports written the way engines write eviction
(tests/heldout/engine_ports.py, and the kit's C template with a C++ selection linked in, built
with g++ against this machine's libstdc++), each run through the whole suite, vectors and
protocol checks, as adapter processes; the first triage line must name exactly the mechanism,
and the triage's figures must be the run's own."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.runner.run import Run, RunResult
from conformance.spec import resources
from conformance.suite.stream import plan_suite
from tests.heldout.engine_ports import PORTS

HERE = Path(__file__).resolve().parents[1]


def _run(argv: list[str]) -> RunResult:
    plan = plan_suite([str(resources.suite_dir())])
    return Run(plan.vectors, plan.checks, argv, jobs=2, triage=True).execute()


def _named_exactly(run: RunResult, expected: tuple[str, ...]) -> str:
    """The first triage line, checked: a likely cause made of exactly ``expected``, with
    figures that count the run's vectors and checks as its summary does."""
    found: Any = run.triage
    assert not run.ok and found is not None
    line = found.lines()[0]
    assert line.startswith("triage: likely cause: "), line
    assert not found.alike, line
    assert set(found.likely[0].choices) == set(expected), line
    counts = run.counts
    top = found.likely[0]
    assert (top.of, top.passing) == (counts["failed"], counts["passed"]), line
    return line


@pytest.mark.slow
@pytest.mark.parametrize("port", sorted(PORTS))
def test_an_engine_port_gets_its_mechanism_named_in_the_first_line(port: str) -> None:
    argv = [sys.executable, str(HERE / "heldout" / "engine_ports.py"), port]
    line = _named_exactly(_run(argv), PORTS[port][1])
    for choice in PORTS[port][1]:
        assert choice in line


#: The C++ selections of tests/heldout/cxx_selection.cpp and what the triage must name.
CXX = {
    "TOPK": ("torch-topk-smallest",),
    "SORT": ("std-sort-by-score",),
    "NTH": ("std-nth-element-by-score",),
}


def _cxx_port(tmp_path: Path, mode: str) -> Path:
    """The kit's C template with its victim selection replaced by the C++ one of ``mode``."""
    from tests.support.toolchains import require_tools

    tools = require_tools("gcc", "g++")
    sources = resources.checkout_root() / "adapters" / "c"  # type: ignore[operator]
    build = tmp_path / mode
    build.mkdir()
    for name in ("adapter.c", "json.c", "decimal.c", "snapkv.c", "json.h", "decimal.h"):
        shutil.copy(sources / name, build / name)
    for name in ("pow5.h", "snapkv.h"):
        shutil.copy(sources / name, build / name)
    library = (build / "snapkv.c").read_text()
    call = "select_victims(s, s->count - recent, k);"
    assert library.count(call) == 1
    library = library.replace(call, "cxx_select_victims(s->pooled, s->count - recent, k, s->work);")
    declared = "void cxx_select_victims(const double *, size_t, size_t, uint32_t *);\n"
    library = library.replace("size_t snapkv_evict(", declared + "size_t snapkv_evict(", 1)
    (build / "snapkv.c").write_text(library)
    objects = []
    for name in ("adapter.c", "json.c", "decimal.c", "snapkv.c"):
        target = build / (name + ".o")
        subprocess.run(
            [tools["gcc"], "-std=c99", "-O2", "-ffp-contract=off", "-c", str(build / name),
             "-o", str(target)],
            check=True,
        )  # fmt: skip
        objects.append(str(target))
    selection = build / "selection.o"
    subprocess.run(
        [tools["g++"], "-O2", f"-DMODE_{mode}", "-c", str(HERE / "heldout" / "cxx_selection.cpp"),
         "-o", str(selection)],
        check=True,
    )  # fmt: skip
    binary = build / "snapkv-adapter"
    subprocess.run([tools["g++"], "-o", str(binary), *objects, str(selection), "-lm"], check=True)
    return binary


@pytest.mark.slow
@pytest.mark.parametrize("mode", sorted(CXX))
def test_a_cxx_port_selecting_by_score_alone_gets_the_librarys_algorithm_named(
    tmp_path: Path, mode: str
) -> None:
    line = _named_exactly(_run([str(_cxx_port(tmp_path, mode))]), CXX[mode])
    assert CXX[mode][0] in line


@pytest.mark.slow
def test_a_run_failing_only_protocol_checks_prints_a_triage_whose_counts_are_the_summarys(
    tmp_path: Path,
) -> None:
    """`snapkv-conformance run` against a port whose only mistake is in its line reader (the
    first of repeated names kept): every vector passes, two checks fail, and the output still
    has a triage section naming the mistake, its figures those of the last line."""
    port = f"{sys.executable} {HERE / 'heldout' / 'engine_ports.py'} first-wins"
    report = tmp_path / "report.json"
    command = str(Path(sys.executable).with_name("snapkv-conformance"))
    done = subprocess.run(
        [command, "run", "--adapter", port, "--report", str(report)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    passed, failed = (int(word) for word in lines[-1].replace(",", "").split()[::2])
    triage = next(line for line in lines if line.startswith("triage: "))
    assert triage.startswith("triage: likely cause: first-name-wins ("), triage
    assert f"all {failed} failing vectors and checks" in triage
    assert f"the {passed} passing ones" in triage
    data = json.loads(report.read_text())
    schema = json.loads((resources.schema_dir() / "report.schema.json").read_text())
    jsonschema.validate(data, schema)
    groups = data["triage"]["groups"]
    assert [group["kind"] for group in groups] == ["protocol"]
    assert len(groups[0]["vectors"]) == failed
