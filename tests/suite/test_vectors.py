"""The one vector loader: what run and validate read, the bytes sent, and what is refused."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.spec.errors import VectorError
from conformance.spec.protocol import decode, encode_body
from conformance.spec.schemas import schema_problems, schema_validator
from conformance.suite import wire
from conformance.suite.validation import check_file
from conformance.suite.vectors import (
    Vector,
    dumps_vector,
    iter_vectors,
    load_suite,
    load_vector,
    read_document,
)
from tests.support.paths import TESTS
from tests.support.runner_support import params, workload, write_suite


def written(tmp_path: Path, vector: Vector, text: str | None = None) -> Path:
    path = tmp_path / f"{vector.id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps_vector(vector) if text is None else text, encoding="utf-8")
    return path


def sample(vector_id: str = "wire/w", steps: int = 30) -> Vector:
    return workload(vector_id, params(4, 1, 3, 3), range(steps), seed=2)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


# -- reading ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["canonical", "indented", "one-line"])
def test_every_layout_reads_as_the_whole_text_parses(tmp_path, layout):
    vector = sample()
    data = vector.to_json()
    text = {
        "canonical": dumps_vector(vector),
        "indented": json.dumps(data, indent=2),
        "one-line": json.dumps(data),
    }[layout]
    loaded = load_vector(written(tmp_path, vector, text))
    assert loaded.to_json() == json.loads(text)
    for call in loaded.calls:  # in any layout, the call on one line, numbers as written
        assert call.line is not None and decode(call.line) == call.to_json()


def test_each_canonical_line_is_its_call_and_is_sent_verbatim(tmp_path):
    vector = sample()
    path = written(tmp_path, vector)
    loaded = load_vector(path)
    file_lines = path.read_bytes().splitlines()
    for call in loaded.calls:
        assert call.line is not None and decode(call.line) == call.to_json()
        assert any(row.strip().rstrip(b",") == call.line for row in file_lines)
        body = call.body()
        assert decode(b"{" + body) == decode(b"{" + encode_body(call.request))
        if call.expect is None:
            assert body == call.line[1:] + b"\n"  # the file's own text: weights not re-encoded
    steps = [call for call in loaded.calls if call.op == "step" and call.request["attn"]]
    assert steps, "the sample must hold weights"


def test_the_loaded_lines_are_sent_not_the_file_as_it_is_now(tmp_path):
    vector = sample()
    path = written(tmp_path, vector)
    loaded = load_vector(path)
    before = wire.prepare_vector(loaded).bodies
    path.write_text(path.read_text().replace('"pos":3,', '"pos":4,'))
    assert wire.prepare_vector(loaded).bodies == before


def test_vectors_built_in_memory_are_encoded():
    vector = sample()
    prepared = wire.prepare_vector(vector)
    assert prepared.bodies == tuple(encode_body(call.request) for call in vector.calls)


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda t: t.replace("},\n    {", "}, {", 1), "two calls on one line"),
        (lambda t: t.replace("  ]\n}\n", '  ],\n  "x": 1\n}\n'), "a member after the calls"),
        (lambda t: t.replace("},\n", "}\n", 1), "a missing comma"),
    ],
)
def test_a_layout_that_only_looks_canonical_is_read_whole(tmp_path, edit, why):
    vector = sample()
    text = edit(dumps_vector(vector))
    document = read_document(written(tmp_path, vector, text))
    try:
        whole = json.loads(text)
    except ValueError:
        assert document.problems and "not valid JSON" in document.problems[0].reason, why
        return
    assert document.lines is None, why
    assert document.data == whole


def test_calls_as_a_repeated_member_before_the_canonical_ones_is_a_duplicate(tmp_path):
    vector = sample()
    text = dumps_vector(vector).replace('  "params"', '  "calls": [],\n  "params"', 1)
    document = read_document(written(tmp_path, vector, text))
    assert [p.reason for p in document.problems] == ["not valid JSON: duplicate key 'calls'"]


@pytest.mark.parametrize("depth", [61, 62, 63, 5000])
def test_nesting_in_a_call_line_counts_from_the_document(tmp_path, depth):
    vector = sample(steps=3)
    nested = "[" * depth + "]" * depth
    text = dumps_vector(vector).replace('{"op":"evict"', '{"op":"evict","x":' + nested, 1)
    document = read_document(written(tmp_path, vector, text))
    too_deep = depth + 3 > 64  # the document, its calls and the call hold the arrays
    reasons = [p.reason for p in document.problems]
    if too_deep:
        assert reasons == ["not valid JSON: nested more than 64 levels deep"]
    else:
        assert reasons and "not valid JSON" not in reasons[0]  # a schema problem: x is extra


# -- the schema, call by call ----------------------------------------------------------------------


def test_schema_problems_are_the_plain_validators_for_every_malformed_file():
    malformed = TESTS / "malformed"
    plain = schema_validator()
    for path in sorted(malformed.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except ValueError:
            continue
        expected = sorted(
            ((list(e.absolute_path), e.message) for e in plain.iter_errors(data)),
            key=lambda item: [str(p) for p in item[0]],
        )
        got = [(p.pointer, p.reason) for p in schema_problems(data, path)]
        assert got == [(_pointer(parts), message) for parts, message in expected], path.name


def _pointer(parts) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


@pytest.mark.parametrize(
    "bad",
    [
        {"op": "step", "pos": 5, "attn": [0.5, -0.25, 0.5]},
        {"op": "step", "pos": 5, "attn": [0.5, 1e39]},
        {"op": "step", "pos": 5, "attn": [0.5, True]},
        {"op": "step", "pos": 5, "attn": [0.5, "0.5"]},
        {"op": "step", "pos": 2**31, "attn": None},
        {"op": "step", "pos": 5.0, "attn": None},
        {"op": "evict", "expect": {"victims": [1, 1]}},
        {"op": "evict", "expect": {"victims": [1, -1]}},
        {"op": "evict", "expect": {"victims": [1, 2], "x": 0}},
        {"op": "scores"},
        {"op": "hello", "protocol": 1},
        {"op": "bye"},
    ],
)
def test_a_bad_later_call_gets_the_plain_validators_messages(bad):
    data = sample(steps=4).to_json()
    data["calls"] = [*data["calls"], data["calls"][-1], bad]
    plain = [(_pointer(e.absolute_path), e.message) for e in schema_validator().iter_errors(data)]
    got = [(p.pointer, p.reason) for p in schema_problems(data, None)]
    assert got and sorted(got) == sorted(plain)


# -- streaming and duplicates ----------------------------------------------------------------------


def test_iter_vectors_reads_one_file_at_a_time(tmp_path):
    suite = write_suite(tmp_path / "s", [sample("a/one"), sample("b/two")])
    (suite / "c").mkdir()
    (suite / "c" / "three.json").write_text("{")
    vectors = iter_vectors([suite])
    assert next(vectors).id == "a/one"
    assert next(vectors).id == "b/two"
    with pytest.raises(VectorError, match=r"three\.json: /: not valid JSON"):
        next(vectors)


def test_a_repeated_id_is_refused_and_a_file_named_twice_is_one(tmp_path):
    suite = write_suite(tmp_path / "s", [sample("a/one")])
    one = suite / "a" / "one.json"
    assert [v.id for v in load_suite([suite, one])] == ["a/one"]
    copy = tmp_path / "other" / "a" / "one.json"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(one.read_bytes())
    with pytest.raises(VectorError, match=r"/id: duplicate id 'a/one', also in"):
        load_suite([suite, copy])


# -- run refuses what validate refuses ------------------------------------------------------------


def _broken_vectors() -> dict[str, tuple[object, str]]:
    base = sample("broken/x", steps=4).to_json()
    missing_recent = dataclasses.replace(sample("broken/x", steps=4)).to_json()
    del missing_recent["calls"][0]["params"]["recentWindow"]
    missing_pos = json.loads(json.dumps(base))
    del missing_pos["calls"][3]["pos"]
    with_scores = json.loads(json.dumps(base))
    with_scores["calls"].insert(2, {"op": "scores"})
    deep = json.loads(json.dumps(base))
    deep["calls"][1]["attn"] = json.loads("[" * 100 + "]" * 100)
    return {
        "missing-recent": (
            missing_recent,
            "/calls/0/params: 'recentWindow' is a required property",
        ),
        "missing-pos": (missing_pos, "/calls/3: 'pos' is a required property"),
        "scores-call": (
            with_scores,
            "/calls/2/op: 'scores' is not one of ['new', 'step', 'evict']",
        ),
        "deep": ("deep", "/: not valid JSON: nested more than 64 levels deep"),
    }


@pytest.mark.parametrize("case", ["missing-recent", "missing-pos", "scores-call", "deep"])
def test_run_refuses_a_schema_invalid_vector_in_one_line_before_sending_anything(tmp_path, case):
    data, expected = _broken_vectors()[case]
    path = tmp_path / "broken" / "x.json"
    path.parent.mkdir()
    if data == "deep":
        text = dumps_vector(sample("broken/x", steps=4))
        text = text.replace('"attn":[]', '"attn":' + "[" * 100 + "]" * 100, 1)
        path.write_text(text)
    else:
        path.write_text(json.dumps(data))
    # An adapter that shakes hands and logs every other request: run reads a file when its
    # turn comes (after the handshake), and must refuse it before sending any of it.
    log = tmp_path / "requests.log"
    script = tmp_path / "logging_adapter.py"
    script.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    request = json.loads(line)\n"
        "    answer = {'id': request['id'], 'ok': True}\n"
        "    if request['op'] == 'hello':\n"
        "        answer.update(protocol=1, implementation={'name': 'log', 'language': 'python',"
        " 'version': '0'})\n"
        "    else:\n"
        f"        open({str(log)!r}, 'a').write(line)\n"
        "    print(json.dumps(answer), flush=True)\n"
    )
    result = cli("run", "--adapter", f"{sys.executable} {script}", str(path))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert str(path) in lines[0] and expected in lines[0]
    assert '"op":"new"' not in (log.read_text() if log.exists() else "")  # nothing of it sent
    _, problems = check_file(path)
    assert expected in [f"{p.pointer or '/'}: {p.reason}" for p in problems]


def test_validate_counts_a_file_named_twice_once_and_flags_a_copy(tmp_path):
    from conformance.suite.validation import validate_paths

    suite = write_suite(tmp_path / "s", [sample("a/one")])
    one = suite / "a" / "one.json"
    assert [p.reason for p in validate_paths([suite, one]).problems if p.pointer == "/id"] == []
    copy = tmp_path / "other" / "a" / "one.json"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(one.read_bytes())
    reasons = [p.reason for p in validate_paths([suite, copy]).problems if p.pointer == "/id"]
    assert reasons == [f"duplicate id 'a/one', also in {one}"]
