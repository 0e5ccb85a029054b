"""The suite as ``run`` streams it: ids first, then each file's exact request bytes.

Every expectation is the ordinary loader's (:func:`conformance.suite.vectors.load_vector`) reading
of the same file: the streamed reading must send the same requests and judge by the same calls.
"""

from __future__ import annotations

import json
import shutil

import pytest

from conformance.spec import resources
from conformance.spec.errors import VectorError
from conformance.spec.protocol import decode
from conformance.suite.protocol_checks import load_check
from conformance.suite.stream import (
    _EVICT_EXPECTING,
    SuiteEntry,
    _read_call,
    plan_suite,
    read_for_run,
)
from conformance.suite.vectors import is_protocol_check_file, iter_vector_files, load_vector


def committed() -> list:
    """The committed vector files (protocol checks share the directory, and are not vectors)."""
    files = iter_vector_files([resources.suite_dir()])
    return sorted(path for path in files if not is_protocol_check_file(path))


def test_every_committed_vector_streams_as_the_loader_reads_it():
    paths = committed()
    assert len(paths) > 100
    for path in paths:
        whole = load_vector(path)
        streamed = read_for_run(SuiteEntry(whole.id, path))
        requests = [json.loads(b"{" + body) for body in streamed.prepared.bodies]
        assert requests == [dict(call.request) for call in whole.calls], path
        light = streamed.vector
        assert (light.id, light.description, light.tags, light.params, light.seed) == (
            whole.id,
            whole.description,
            whole.tags,
            whole.params,
            whole.seed,
        )
        for ours, theirs in zip(light.calls, whole.calls, strict=True):
            assert ours.op == theirs.op and ours.expect == theirs.expect
            assert ours.request.get("pos") == theirs.request.get("pos")
            assert ours.request.get("params") == theirs.request.get("params")


def test_the_plan_has_every_id_sorted_without_parsing_calls():
    plan = plan_suite([resources.suite_dir()])
    assert [entry.id for entry in plan.vectors] == sorted(load_vector(p).id for p in committed())
    checks = sorted(resources.suite_dir().glob("protocol/*.json"))
    assert [entry.id for entry in plan.checks] == sorted(f"protocol/{p.stem}" for p in checks)


def copy_of(tmp_path, name: str = "ties/lower-position-first"):
    source = resources.suite_dir() / f"{name}.json"
    target = tmp_path / "suite" / f"{name}.json"
    target.parent.mkdir(parents=True)
    shutil.copy(source, target)
    return target


def test_another_layout_is_read_whole_with_the_same_requests(tmp_path):
    path = copy_of(tmp_path)
    whole = load_vector(path)
    path.write_text(json.dumps(whole.to_json(), indent=1))  # not the canonical layout
    (entry,) = plan_suite([tmp_path / "suite"]).vectors
    streamed = read_for_run(entry)
    requests = [json.loads(b"{" + body) for body in streamed.prepared.bodies]
    assert entry.id == whole.id
    assert requests == [dict(call.request) for call in whole.calls]


def test_a_weight_that_is_not_a_json_number_is_refused(tmp_path):
    path = copy_of(tmp_path)
    text = path.read_text()
    broken = text.replace('"attn":[', '"attn":[1.0,,', 1)
    assert broken != text
    path.write_text(broken)
    (entry,) = plan_suite([tmp_path / "suite"]).vectors
    with pytest.raises(VectorError, match="not valid JSON"):
        read_for_run(entry)


def test_a_duplicate_id_is_refused_in_the_plan(tmp_path):
    path = copy_of(tmp_path)
    shutil.copy(path, path.with_name("again.json"))
    with pytest.raises(VectorError, match="duplicate id 'ties/lower-position-first'"):
        plan_suite([tmp_path / "suite"])


def test_the_plan_finds_protocol_checks_in_the_same_walk_in_any_layout(tmp_path):

    source = resources.suite_dir() / "protocol" / "crlf.json"
    target = tmp_path / "suite" / "protocol" / "crlf.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(json.loads(source.read_text()), indent=1))  # not canonical
    copy_of(tmp_path)
    plan = plan_suite([tmp_path / "suite"])
    assert [entry.id for entry in plan.checks] == ["protocol/crlf"]
    assert [entry.id for entry in plan.vectors] == ["ties/lower-position-first"]
    assert load_check(plan.checks[0].path).id == "protocol/crlf"


def test_a_check_and_a_vector_with_one_id_are_a_duplicate(tmp_path):
    path = copy_of(tmp_path)
    text = (resources.suite_dir() / "protocol" / "crlf.json").read_text()
    path.with_name("check.json").write_text(
        text.replace('"protocol/crlf"', '"ties/lower-position-first"')
    )
    with pytest.raises(VectorError, match="duplicate id 'ties/lower-position-first'"):
        plan_suite([tmp_path / "suite"])


def test_a_check_that_cannot_be_read_is_named_in_the_plan(tmp_path):
    path = tmp_path / "suite" / "protocol" / "bad.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"format": "snapkv-protocol-check/1", "id": ')
    with pytest.raises(VectorError, match=r"bad\.json"):
        plan_suite([tmp_path / "suite"])


@pytest.mark.parametrize(
    "line",
    [
        b'{"op":"evict","expect":{"victims":[]}}',
        b'{"op":"evict","expect":{"victims":[0]}}',
        b'{"op":"evict","expect":{"victims":[3,7,2147483647]}}',
        b'{"op":"evict","expect":{"victims":[2147483648,9999999999999999999]}}',
        b'{"op":"evict","expect":{"victims":[1,1]}}',
    ],
)
def test_an_evict_expecting_victims_is_read_as_the_codec_reads_it(line):
    assert _EVICT_EXPECTING.fullmatch(line)
    call, body, shown = _read_call(line)
    raw = decode(line, duplicates="refuse")
    assert repr(shown) == repr(raw)
    assert (call.request, call.expect) == ({"op": "evict"}, raw["expect"])
    assert body == b'"op":"evict"}\n'


@pytest.mark.parametrize(
    "line",
    [
        b'{"op":"evict","expect":{"victims":[01]}}',
        b'{"op":"evict","expect":{"victims":[1.0]}}',
        b'{"op":"evict","expect":{"victims":[-1]}}',
        b'{"op":"evict","expect":{"victims":[1], "x":0}}',
        b'{"op":"evict","expect":{"victims":[1]},"expect":{"victims":[2]}}',
        b'{"op":"evict","expect":{"error":"no-policy"}}',
    ],
)
def test_any_other_evict_line_is_left_to_the_codec(line):
    assert _EVICT_EXPECTING.fullmatch(line) is None
