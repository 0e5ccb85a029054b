"""Long vectors (more than ``LONG_VECTOR`` calls, a recorded trace, say) are held as their
file's lines and judged as their answers come, never all held: the same requests, the same
verdicts, the same problems as a short vector read whole.

The expectations come from outside the code under test: the file's calls as the standard
library's ``json`` reads them, the reference's own answers, and the same file read the way a
short vector is (``LONG_VECTOR`` raised above its length).
"""

from __future__ import annotations

import json
import random
import shlex
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.adapter.server import Session
from conformance.cli import main as cli_main
from conformance.explain import diagnosis
from conformance.judge import verdicts
from conformance.judge.outcomes import answer_outcomes
from conformance.policy.reference import float32_literal
from conformance.runner import run as runner
from conformance.runner.client import Client
from conformance.spec import resources
from conformance.suite import stream, validation
from conformance.suite import vectors as vectors_module
from conformance.suite.stream import SuiteEntry, read_for_run
from conformance.suite.vectors import LONG_VECTOR, load_vector
from conformance.transport.in_process import InProcessAdapter
from conformance.transport.session import HAND_OVER
from tests.support.runner_support import REFERENCE_ARGV

PARAMS = {"budget": 4, "recentWindow": 1, "obsWindow": 2, "poolKernel": 3}
WEIGHTS = [float32_literal(x / 97) for x in range(1, 97)]
CALLS = LONG_VECTOR + 1_001


def long_calls(count: int = CALLS) -> list[dict[str, Any]]:
    """A ``new``, then steps and evicts, each evict's expectation the reference's answer."""
    session = Session()
    calls: list[dict[str, Any]] = [{"op": "new", "params": PARAMS, "seed": 0}]
    session.handle({"id": 0, **calls[0]})
    kept = pos = 0
    while len(calls) < count:
        attn = [WEIGHTS[(pos * 7 + i) % len(WEIGHTS)] for i in range(kept)] if pos else None
        step = {"op": "step", "pos": pos, "attn": attn}
        assert session.handle({"id": 0, **step})["ok"]
        calls.append(step)
        kept += 1
        if len(calls) < count:
            victims = session.handle({"id": 0, "op": "evict"})["victims"]
            calls.append({"op": "evict", "expect": {"victims": victims}})
            kept -= len(victims)
        pos += 1
    return calls


def write(path: Path, calls: Sequence[dict[str, Any]], vector_id: str = "memory/long") -> Path:
    """``calls`` as a vector file in the canonical layout, written here by hand."""
    path.parent.mkdir(parents=True, exist_ok=True)
    head = {
        "format": "snapkv-vector/1",
        "id": vector_id,
        "description": "A long stream. Catches: nothing in particular.",
        "tags": ["ring"],
        "params": PARAMS,
        "seed": 0,
    }
    lines = [f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}," for k, v in head.items()]
    body = ",\n".join("    " + json.dumps(c, separators=(",", ":")) for c in calls)
    path.write_text("{\n" + "\n".join(lines) + '\n  "calls": [\n' + body + "\n  ]\n}\n")
    return path


@pytest.fixture(scope="module")
def long_file(tmp_path_factory) -> Path:
    return write(tmp_path_factory.mktemp("long") / "memory" / "long.json", long_calls())


def test_a_long_vector_is_held_as_its_lines_and_reads_as_json_reads_it(long_file):
    read = read_for_run(SuiteEntry("memory/long", long_file))
    written = json.loads(long_file.read_text())["calls"]
    assert len(written) == CALLS
    assert not isinstance(read.vector.calls, tuple)  # lines, not parsed calls
    assert len(read.vector.calls) == len(read.prepared) == CALLS
    for index in (0, 1, 2, LONG_VECTOR, CALLS - 2, CALLS - 1, -1):
        call, raw = read.vector.calls[index], written[index]
        assert call.op == raw["op"] and call.expect == raw.get("expect")
        assert call.request.get("pos") == raw.get("pos")
        sent = json.loads(b"{" + read.prepared.bodies[index])
        assert sent == {key: value for key, value in raw.items() if key != "expect"}
    with pytest.raises(IndexError):
        read.vector.calls[CALLS]
    assert [call.op for call in read.vector.calls[5:9]] == [c["op"] for c in written[5:9]]


def test_a_long_vector_read_as_lines_reads_as_a_short_one_would(tmp_path, monkeypatch):
    """Every call and request body, the common steps and the rest (a weight spelled so that
    only the JSON decoder reads it, a refused step), equal to the file read whole."""
    calls = long_calls()
    steps = [i for i, c in enumerate(calls) if c["op"] == "step" and c["attn"]]
    calls[steps[-1]] = {**calls[steps[-1]], "expect": {"error": "invalid-attention"}}
    path = write(tmp_path / "memory" / "long.json", calls)
    text = path.read_text()
    odd = json.dumps(calls[steps[-2]], separators=(",", ":"))
    path.write_text(text.replace(odd, odd.replace('"attn":[', '"attn":[0.5e1,', 1)))
    lines = read_for_run(SuiteEntry("memory/long", path))
    monkeypatch.setattr(stream, "LONG_VECTOR", 10**9)
    whole = read_for_run(SuiteEntry("memory/long", path))
    assert isinstance(whole.vector.calls, tuple) and not isinstance(lines.vector.calls, tuple)
    assert list(lines.vector.calls) == list(whole.vector.calls)
    assert list(lines.prepared.bodies) == list(whole.prepared.bodies)
    assert b"0.5e1" in lines.prepared.bodies[steps[-2]]


@pytest.mark.parametrize("adapter", ["process", "in-process"])
def test_a_long_vector_passes_a_correct_adapter(long_file, adapter):
    entry = stream.plan_suite([long_file.parent.parent]).vectors
    if adapter == "process":
        result = runner.run_suite(entry, REFERENCE_ARGV, timeout=60.0)
    else:
        result = runner.run_suite(entry, adapter_factory=InProcessAdapter)
    (outcome,) = result.results
    assert outcome.passed, outcome.describe()


@pytest.mark.slow
def test_a_long_vector_fails_at_its_late_wrong_call_with_its_outcomes(tmp_path):
    """A wrong expectation late in a long vector: the reference "fails" exactly there, and the
    outcomes triage compares are the reference's own answers, one per call."""
    calls = long_calls()
    late = max(i for i, c in enumerate(calls) if c["op"] == "evict" and c["expect"]["victims"])
    right = calls[late]["expect"]["victims"]
    calls[late] = {"op": "evict", "expect": {"victims": [right[0] + 1]}}
    path = write(tmp_path / "suite" / "memory" / "long.json", calls)
    entries = stream.plan_suite([tmp_path / "suite"]).vectors
    (outcome,) = runner.run_suite(entries, REFERENCE_ARGV, timeout=60.0).results
    assert (outcome.verdict, outcome.call_index) == (verdicts.WRONG_VICTIMS, late)
    assert outcome.actual == right
    assert "equal the reference's at every kept position" in (outcome.diagnosis or "")
    whole = load_vector(path)
    session = Session()
    replies = [session.handle({"id": i, **c.request}) for i, c in enumerate(whole.calls)]
    assert outcome.answers == answer_outcomes(whole, replies)


def test_answers_are_handed_over_in_bounded_batches(long_file):
    read = read_for_run(SuiteEntry("memory/long", long_file))
    sizes: list[int] = []
    with Client.process(REFERENCE_ARGV, timeout=60.0) as adapter:
        ticket = adapter.send(read.prepared)
        assert adapter.receive(ticket, into=lambda got: sizes.append(len(got))) == []
    assert sum(sizes) == CALLS
    assert max(sizes) == HAND_OVER and all(0 < size <= HAND_OVER for size in sizes)


@pytest.mark.slow
def test_a_longer_vector_costs_the_runner_about_its_extra_bytes(long_file, tmp_path):
    """What running a long vector holds grows with its file's bytes, not with its calls and
    answers parsed: from 11,001 to 27,001 calls the runner's peak (traced, in this process)
    grows by less than three times the file's growth. Held parsed, it grew twelvefold."""

    def peak(path: Path) -> int:
        entries = stream.plan_suite([path.parent.parent]).vectors
        tracemalloc.start()
        try:
            (outcome,) = runner.run_suite(entries, REFERENCE_ARGV, timeout=60.0).results
            _, traced = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert outcome.passed
        return traced

    longer = write(tmp_path / "suite" / "memory" / "long.json", long_calls(27_001))
    peak(long_file)  # the first run loads what any run loads
    grown = peak(longer) - peak(long_file)
    extra = longer.stat().st_size - long_file.stat().st_size
    assert grown < 3 * extra, (grown, extra)


@pytest.mark.parametrize(
    ("where", "mangle"),
    [
        ("schema", lambda c: {**c, "pos": -1} if c["op"] == "step" else c),
        (
            "replay",
            lambda c: {"op": "evict", "expect": {"victims": []}} if c["op"] == "evict" else c,
        ),
        ("rules", lambda c: {**c, "attn": [0.1]} if c["op"] == "step" and c["attn"] else c),
    ],
)
def test_a_long_vector_validates_as_a_short_one_would(tmp_path, monkeypatch, where, mangle):
    """validate reports the same problems, pointer for pointer, whether the vector is held as
    its lines (long) or parsed whole (as a short vector is)."""
    calls = long_calls()
    late = CALLS - 3
    while mangle(calls[late]) == calls[late]:
        late -= 1
    calls[late] = mangle(calls[late])
    path = write(tmp_path / "memory" / "long.json", calls)
    lazily = validation.check_file(path)[1]
    monkeypatch.setattr(vectors_module, "LONG_VECTOR", 10**9)
    whole = validation.check_file(path)[1]
    assert [str(p) for p in lazily] == [str(p) for p in whole]
    assert lazily and all(f"/calls/{late}" in str(p) for p in lazily[:1]), lazily


def test_a_long_vector_with_a_line_that_is_not_strict_json_is_named(tmp_path):
    calls = long_calls()
    path = write(tmp_path / "memory" / "long.json", calls)
    lines = path.read_text().split("\n")
    index = next(i for i in range(len(lines) - 10, 0, -1) if '"op":"step"' in lines[i])
    lines[index] = lines[index].replace('"attn":[', '"attn":[NaN,', 1)
    path.write_text("\n".join(lines))
    _, problems = validation.check_file(path)
    assert len(problems) == 1 and "not valid JSON" in str(problems[0])


def test_random_long_vectors_round_trip_through_the_loader(tmp_path):
    rng = random.Random(7)
    calls = long_calls()
    path = write(tmp_path / "memory" / "long.json", calls)
    vector = load_vector(path)
    assert not isinstance(vector.calls, tuple) and len(vector.calls) == CALLS
    for index in rng.sample(range(CALLS), 50):
        call = vector.calls[index]
        raw = calls[index]
        assert dict(call.request) == {k: v for k, v in raw.items() if k != "expect"}
        assert call.expect == raw.get("expect")


def test_a_long_vector_read_again_for_triage_is_held_as_its_lines(long_file):
    """Triage and diagnosis read a failing vector again (SuiteEntry.reload): a long one as its
    lines, not parsed whole."""
    again = SuiteEntry("memory/long", long_file).reload()
    assert not isinstance(again.calls, tuple) and len(again.calls) == CALLS
    written = json.loads(long_file.read_text())["calls"]
    assert dict(again.calls[-1].request) == {k: v for k, v in written[-1].items() if k != "expect"}


def test_a_failure_beyond_what_a_diagnosis_replays_says_so(tmp_path, monkeypatch):
    """A wrong evict deeper than a diagnosis replays gets a verdict and a diagnosis that says
    why there is no scores comparison, not hours of replay."""
    calls = long_calls(3_001)
    late = max(i for i, c in enumerate(calls) if c["op"] == "evict" and c["expect"]["victims"])
    right = calls[late]["expect"]["victims"]
    calls[late] = {"op": "evict", "expect": {"victims": [right[0] + 1]}}
    write(tmp_path / "suite" / "memory" / "long.json", calls)
    monkeypatch.setattr(diagnosis, "MAX_REPLAY", 1_000)
    entries = stream.plan_suite([tmp_path / "suite"]).vectors
    (outcome,) = runner.run_suite(entries, REFERENCE_ARGV, timeout=60.0).results
    assert (outcome.verdict, outcome.call_index) == (verdicts.WRONG_VICTIMS, late)
    assert outcome.diagnosis == (
        f"no scores diagnosis: the failing evict is call {late:,}, and a diagnosis replays at "
        "most 1,000 calls; to compare the scores, replay the vector up to that call with a "
        "scores request before it (SPEC.md §3.3)"
    )


@pytest.mark.slow
def test_triage_leaves_a_long_vector_out_and_says_so(tmp_path, capsys):
    """A failing run with a long vector among its failures: triage replays the short ones
    only, says which it left out, and the report records them (its schema accepts it); with
    only long failures it says it did not triage, rather than 'no catalogued mistake'."""
    calls = long_calls()
    late = max(i for i, c in enumerate(calls) if c["op"] == "evict" and c["expect"]["victims"])
    right = calls[late]["expect"]["victims"]
    calls[late] = {"op": "evict", "expect": {"victims": [right[0] + 1]}}
    suite = tmp_path / "suite"
    write(suite / "memory" / "long.json", calls)
    report = tmp_path / "report.json"
    argv = ["run", str(suite), "--adapter", shlex.join(REFERENCE_ARGV), "--report", str(report)]
    assert cli_main(argv) == 1
    out = capsys.readouterr().out
    assert "triage: not triaged: the failing vectors are longer than triage replays (more " in out
    triage = json.loads(report.read_text())["triage"]
    assert triage["left_out"] == ["memory/long"] and triage["failing"] == 0
    schema = json.loads((resources.schema_dir() / "report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads(report.read_text()))

    short = long_calls(41)
    wrong = max(i for i, c in enumerate(short) if c["op"] == "evict" and c["expect"]["victims"])
    short[wrong] = {"op": "evict", "expect": {"victims": [10**6]}}
    write(suite / "memory" / "short.json", short, "memory/short")
    assert cli_main(argv) == 1
    out = capsys.readouterr().out
    assert "  not replayed, more than 10,000 calls each: memory/long\n" in out
    triage = json.loads(report.read_text())["triage"]
    assert triage["left_out"] == ["memory/long"] and triage["failing"] == 1


def test_a_vector_counts_as_long_by_its_calls_not_its_file_s_lines(tmp_path):
    """Triage's 'more than 10,000 calls each' is exact: a file of exactly LONG_VECTOR calls
    (more than that many lines, with its header) is not long; one call more is."""
    calls = long_calls(LONG_VECTOR + 1)
    exactly = write(tmp_path / "a" / "memory" / "long.json", calls[:LONG_VECTOR])
    over = write(tmp_path / "b" / "memory" / "long.json", calls)
    assert exactly.read_bytes().count(b"\n") > LONG_VECTOR
    assert not SuiteEntry("memory/long", exactly).is_long()
    assert SuiteEntry("memory/long", over).is_long()
