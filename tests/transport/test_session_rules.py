"""The transport's rules (:mod:`conformance.transport.session`, SPEC.md §3), each pinned on its own:
how a batch is written and handed over, and what each way an adapter can misbehave is called,
with a scripted adapter that commits one fault at a time.

Each test names the SPEC.md rule it pins; the expected values come from SPEC.md, never from the
code under test.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.cli.commands._options import add_timeout
from conformance.runner.client import Client
from conformance.spec.text import json_text
from conformance.transport import framing
from conformance.transport.failures import AdapterFailure, AdapterStartError
from conformance.transport.in_process import InProcessAdapter
from conformance.transport.session import ANSWER_TIMEOUT, HAND_OVER, AdapterProcess
from tests.support.runner_support import (
    REFERENCE_ARGV,
    broken,
    params,
)

#: Parameters the reference accepts (odd poolKernel, SPEC.md §2.1).
ACCEPTED_PARAMS = params(2, 1, 2, 1)


def found(problems: list[Any]) -> list[tuple[str, str]]:
    return [(problem.pointer, problem.reason) for problem in problems]


IMPLEMENTATION = {"name": "in-process port", "language": "python", "version": "9"}


NEW = {"op": "new", "params": ACCEPTED_PARAMS, "seed": 0}


def assert_batches_received_in_order(adapter: Any, first: Any, second: Any, first_id: int) -> None:
    """Two batches sent one after the other are received in that order only (SPEC.md §3.1):
    the second first is refused, each answers with its own id, and one received is gone."""
    first_batch = adapter.send([first])
    second_batch = adapter.send([second])
    with pytest.raises(RuntimeError, match=r"^receive batches in the order they were sent$"):
        adapter.receive(second_batch)
    assert [answer["id"] for answer in adapter.receive(first_batch)] == [first_id]
    assert [answer["id"] for answer in adapter.receive(second_batch)] == [first_id + 1]
    with pytest.raises(RuntimeError, match=r"^receive batches in the order they were sent$"):
        adapter.receive(second_batch)


# -- the transport's rules, each pinned on its own (transport/, SPEC.md §3) -----------------------


def test_spec_3_1_an_in_process_adapter_numbers_requests_from_hello_on():
    """SPEC.md §3.1, §3.2: every request gets the next id of one counter, hello's being 1, and
    each answer echoes its request's id, batch after batch; batches are received in the order
    they were sent; a closed adapter answers nothing."""
    adapter = Client(InProcessAdapter(implementation=IMPLEMENTATION))
    assert not adapter.running
    assert adapter.handshake is None  # what tells a runner to start it (runner.run)
    assert adapter.stderr_tail() == ""  # no process, no stderr to show
    with pytest.raises(RuntimeError, match=r"^the adapter is not running; call start\(\) first$"):
        adapter.send([{"op": "bye"}])
    handshake = adapter.start()
    assert (handshake.name, handshake.language, handshake.version) == tuple(IMPLEMENTATION.values())
    assert adapter.running
    steps = [NEW, {"op": "step", "pos": 0, "attn": []}, {"op": "evict"}]
    assert [answer["id"] for answer in adapter.exchange(steps)] == [2, 3, 4]
    assert [answer["id"] for answer in adapter.exchange(steps[1:])] == [5, 6]
    assert_batches_received_in_order(adapter, {"op": "evict"}, {"op": "evict"}, 7)
    adapter.close()
    assert not adapter.running
    with pytest.raises(RuntimeError, match="not running"):
        adapter.send([{"op": "bye"}])
    adapter.restart()
    assert [answer["id"] for answer in adapter.exchange([NEW])] == [2]


def test_a_cancelled_adapter_process_never_starts():
    """An interrupted run cancels its adapters: a start after that fails, killing what it
    started."""
    adapter = AdapterProcess(REFERENCE_ARGV)
    adapter.cancel()
    with pytest.raises(AdapterStartError, match=r"^the run was interrupted$"):
        adapter.start()
    assert not adapter.running


def validated_evict_failure(field: str, text: str) -> tuple[AdapterFailure, dict[str, Any]]:
    """Run new, a step and an evict with ``validate_protocol`` against an adapter that sets
    the evict answer's ``field`` to the JSON ``text``; the failure and the answer it judged."""
    adapter = Client.process(
        [*broken("rewritten_field"), "evict", field, text], validate_protocol=True
    )
    adapter.start()
    try:
        with pytest.raises(AdapterFailure) as caught:
            adapter.exchange([NEW, {"op": "step", "pos": 0, "attn": []}, {"op": "evict"}])
    finally:
        adapter.close()
    answer = {"id": 4, "ok": True, "victims": [], field: json.loads(text)}
    return caught.value, answer


@pytest.mark.parametrize(
    ("field", "text", "first", "more"),
    [
        ("note", '"extra"', "/: Additional properties are not allowed ('note' was unexpected)", ""),
        (
            "victims",
            '[-1,"x"]',
            "/victims/0: -1 is less than the minimum of 0",
            " (and 1 more)",
        ),
    ],
)
def test_spec_3_2_with_validate_protocol_an_answer_must_validate_against_its_op_s_schema(
    field, text, first, more
):
    """SPEC.md §3.2 and the shipped schema/protocol/response.schema.json (closed): with
    ``validate_protocol`` an evict answer with a field v1 does not define, or victims that are
    not positions, is a protocol failure of that call, naming the schema's first problem, how
    many more there are, and the answer."""
    failure, answer = validated_evict_failure(field, text)
    assert (failure.kind, failure.call_index) == ("protocol", 2)
    assert [a["id"] for a in failure.answers] == [2, 3]
    assert failure.detail == (
        "the answer to evict does not validate against schema/protocol/response.schema.json: "
        f"{first}{more}: {json.dumps(answer)}"
    )


def test_spec_3_2_a_second_answer_to_hello_fails_the_start_showing_the_adapter_s_stderr():
    """SPEC.md §3.2: hello is answered once, when asked. An adapter that answered before it
    was asked has its real answer arrive with id 1 after the handshake: a failed start, which
    shows what the adapter wrote to stderr (where a porter looks first)."""
    script = f"echo early-bird-on-stderr >&2; exec {shlex.join(broken('hello_before_asked'))}"
    adapter = Client.process(["sh", "-c", script])
    adapter.start()
    try:
        with pytest.raises(AdapterStartError) as caught:
            adapter.exchange([NEW])
    finally:
        adapter.close()
    assert caught.value.message.startswith("the adapter answered hello twice")
    assert "early-bird-on-stderr" in caught.value.stderr_tail


#: An adapter that answers every request with ok (hello as protocol v1 asks), and faults named
#: on its command line: ``twice:N`` answers request N twice at once, ``late:N:M`` writes request
#: N's answer again after answering M, ``null:N`` answers N as unreadable (id null), ``text:N``,
#: ``array:N`` and ``latin:N`` answer N with a long line that is not JSON, a JSON array, and
#: 200 bytes that are not UTF-8; ``slow:N`` answers N after 0.6 s, ``long:N`` with a line of 2,000
#: characters, ``partial:N`` with 300 characters and no newline and then exits with status 3,
#: ``shut:N`` closes its stdout instead of answering and keeps running; ``protocol2`` answers hello
#: with protocol 2 after writing to stderr.
SCRIPTED = """
import json, os, sys, time

faults = sys.argv[1:]
written = {}
for raw in sys.stdin:
    request = json.loads(raw)
    rid = request["id"]
    answer = {"id": rid, "ok": True}
    if request["op"] == "hello":
        answer.update(protocol=1, implementation={"name": "s", "language": "py", "version": "0"})
        answer["capabilities"] = []
        if "protocol2" in faults:
            print("only protocol 2 here", file=sys.stderr, flush=True)
            answer["protocol"] = 2
    if f"slow:{rid}" in faults:
        time.sleep(0.6)
    if f"long:{rid}" in faults:
        print("0123456789" * 200, flush=True)
        continue
    if f"partial:{rid}" in faults:
        sys.stdout.write("abcdefghij" * 30)
        sys.stdout.flush()
        sys.exit(3)
    if f"shut:{rid}" in faults:
        os.close(1)
        time.sleep(60)
    if f"text:{rid}" in faults:
        print("not json " + "x" * 200, flush=True)
        continue
    if f"array:{rid}" in faults:
        print("[1, 2]", flush=True)
        continue
    if f"latin:{rid}" in faults:
        sys.stdout.buffer.write(b"\\xff" * 200 + b"\\n")
        sys.stdout.flush()
        continue
    if f"null:{rid}" in faults:
        answer = {"id": None, "ok": False, "error": {"kind": "bad-request", "message": "what?"}}
    written[rid] = json.dumps(answer, separators=(",", ":"))
    print(written[rid], flush=True)
    if f"twice:{rid}" in faults:
        print(written[rid], flush=True)
    for fault in faults:
        if fault.startswith("late:") and fault.endswith(f":{rid}"):
            print(written[int(fault.split(":")[1])], flush=True)
    if request["op"] == "bye":
        break
"""


def scripted(tmp_path: Path, *faults: str, **settings: Any) -> Client:
    script = tmp_path / "scripted_adapter.py"
    script.write_text(SCRIPTED)
    adapter = Client.process([sys.executable, str(script), *faults], **{"timeout": 20, **settings})
    adapter.start()
    return adapter


STEP = {"op": "step", "pos": 0, "attn": []}


def failure_in_batches(adapter: Client, *batches: list[dict[str, Any]]) -> AdapterFailure:
    """The failure of the last of ``batches`` (the ones before it must pass)."""
    try:
        for batch in batches[:-1]:
            adapter.exchange(batch)
        with pytest.raises(AdapterFailure) as caught:
            adapter.exchange(batches[-1])
    finally:
        adapter.kill()
    return caught.value


# -- a scripted adapter's faults, one at a time (SPEC.md §3.1-§3.3) -------------------------------


def test_spec_3_1_a_request_answered_twice_in_its_exchange_is_blamed(tmp_path):
    """SPEC.md §3.1: one answer per request, in order. Request 0 of an exchange answered twice
    is blamed (not the request after it), with both ids."""
    failure = failure_in_batches(scripted(tmp_path, "twice:2"), [NEW, STEP])
    assert (failure.kind, failure.call_index, failure.earlier) == ("protocol", 0, False)
    assert failure.detail == (
        "request 0 of this exchange was answered twice (a second answer with id 2 came where "
        "the answer with id 3 was due)"
    )


@pytest.mark.parametrize(
    ("faults", "batches", "blamed"),
    [
        # the first request of the previous exchange, answered again
        (("twice:2",), [[NEW], [STEP]], 0),
        # request 2 answered again three exchanges later: older than the previous exchange
        (("late:2:4",), [[NEW], [STEP], [STEP], [STEP]], -1),
    ],
    ids=["previous-exchange", "older-exchange"],
)
def test_spec_3_1_an_extra_answer_to_an_earlier_exchange_is_placed_there(
    tmp_path, faults, batches, blamed
):
    """SPEC.md §3.1: an extra answer that arrives after its exchange belongs to that exchange
    (``earlier``): placed at its request's index in the previous exchange, -1 when older."""
    failure = failure_in_batches(scripted(tmp_path, *faults), *batches)
    assert (failure.kind, failure.call_index, failure.earlier) == ("protocol", blamed, True)
    assert failure.detail == (
        "an extra answer with id 2 arrived after all answers to its exchange: "
        "the adapter answered that request twice"
    )


def test_spec_3_3_an_answer_with_id_null_says_the_request_was_not_read(tmp_path):
    """SPEC.md §3.3: a request an adapter cannot read is refused with id null; the failure
    is that request's, and shows the adapter's error."""
    failure = failure_in_batches(scripted(tmp_path, "null:3"), [NEW, STEP])
    assert (failure.kind, failure.call_index) == ("protocol", 1)
    error = {"kind": "bad-request", "message": "what?"}
    assert failure.detail == (
        f"the adapter could not read the request (it answered with id null: {json_text(error)})"
    )


def test_spec_3_2_a_wrong_answer_to_bye_is_a_problem_of_closing_named_in_words(tmp_path):
    """SPEC.md §3.2: bye is answered like any request. A wrong answer to it, or a second
    answer to hello found while waiting for it, is a problem of closing, in words a report can
    show."""
    unreadable = scripted(tmp_path, "null:2")  # bye is request 2
    unreadable.close()
    assert unreadable.close_problems[0].startswith(
        "the answer to bye was wrong: the adapter could not read the request"
    )
    hello_twice = scripted(tmp_path, "twice:1")
    hello_twice.close()
    assert hello_twice.close_problems[0].startswith("the adapter answered hello twice")


def test_an_adapter_process_not_started_has_no_stderr_to_show_and_answers_nothing():
    adapter = AdapterProcess(REFERENCE_ARGV)
    assert adapter.stderr_tail() == ""
    with pytest.raises(RuntimeError, match=r"^the adapter is not running; call start\(\) first$"):
        adapter.send([NEW])


def test_a_failure_of_an_unknown_kind_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"^unknown failure kind 'hang'$"):
        AdapterFailure("hang", 0, "detail")
    assert AdapterFailure("crash", 0, "detail").stderr_tail == ""


@pytest.mark.parametrize(
    ("fault", "starts", "shown"),
    [
        ("text:3", "the answer is not JSON (", json_text(("not json " + "x" * 200)[:120])),
        ("array:3", "the answer is not a JSON object: ", json_text([1, 2])),
        ("latin:3", "the answer is not UTF-8 (", json_text(b"\xff" * 120)),
    ],
    ids=["not-json", "not-an-object", "not-utf-8"],
)
def test_spec_3_1_an_answer_line_that_is_not_a_json_object_is_that_call_s_protocol_error(
    tmp_path, fault, starts, shown
):
    """SPEC.md §3.1: each answer is one line of UTF-8 JSON, an object. A line that is not is a
    protocol failure of the call it answers, showing the line's first 120 characters."""
    failure = failure_in_batches(scripted(tmp_path, fault), [NEW, STEP])
    assert (failure.kind, failure.call_index) == ("protocol", 1)
    assert [answer["id"] for answer in failure.answers] == [2]
    assert failure.detail.startswith(starts)
    assert failure.detail.endswith(shown)


def test_spec_3_1_an_extra_answer_read_where_a_later_one_is_due_is_never_taken_for_it(tmp_path):
    """SPEC.md §3.1: an answer is matched to its request by id, even when it is written as
    the plain ``{"id":N,"ok":true}`` the driver reads without a decoder: request 2's answer
    written again where request 4's is due is an extra answer to the previous exchange."""
    failure = failure_in_batches(scripted(tmp_path, "late:2:3"), [NEW], [STEP, STEP])
    assert (failure.kind, failure.call_index, failure.earlier) == ("protocol", 0, True)


def test_spec_3_2_with_validate_protocol_even_a_plain_ok_answer_is_checked(tmp_path):
    """With ``validate_protocol`` every answer meets its op's schema, the plain ``ok`` too: an
    evict answered ``{"id":N,"ok":true}`` lacks its victims."""
    script = tmp_path / "scripted_adapter.py"
    script.write_text(SCRIPTED)
    adapter = Client.process([sys.executable, str(script)], validate_protocol=True)
    adapter.start()
    failure = failure_in_batches(adapter, [NEW, STEP, {"op": "evict"}])
    assert (failure.kind, failure.call_index) == ("protocol", 2)
    assert failure.detail.startswith(
        "the answer to evict does not validate against schema/protocol/response.schema.json"
    )


def test_an_adapter_process_receives_batches_in_the_order_they_were_sent():
    adapter = Client.process(REFERENCE_ARGV)
    adapter.start()
    try:
        assert_batches_received_in_order(adapter, NEW, STEP, 2)
    finally:
        adapter.kill()


def test_spec_3_1_a_long_batch_is_answered_whole_and_handed_over_in_bounded_lists(tmp_path):
    """SPEC.md §3.1: one answer per request, in order, ids counted from hello on, however many
    requests a batch holds. A batch of more than HAND_OVER requests (a long vector) is written a
    piece at a time; with ``into`` its answers come HAND_OVER at a time, then the rest."""
    count = HAND_OVER + 904
    adapter = scripted(tmp_path)
    try:
        whole = adapter.exchange([STEP] * count)
        handed: list[list[dict[str, Any]]] = []
        ticket = adapter.send([STEP] * count)
        assert adapter.receive(ticket, into=handed.append) == []
    finally:
        adapter.kill()
    assert whole == [{"id": 2 + index, "ok": True} for index in range(count)]
    assert [len(answers) for answers in handed] == [HAND_OVER, 904]
    first = 2 + count
    assert [answer["id"] for answers in handed for answer in answers] == list(
        range(first, first + count)
    )


def test_a_long_batch_s_pieces_are_its_request_lines_cut_after_the_line_reaching_the_size(
    monkeypatch,
):
    """A long batch is written in pieces that join to exactly the short path's bytes (ids
    spliced in from the first), each piece ending with the line that brings it to PIECE bytes
    or more, the last holding the rest. Line lengths here are chosen so that a piece reaching
    exactly PIECE bytes, and one a byte short of it, both occur at a first piece and a later
    one."""
    monkeypatch.setattr(framing, "PIECE", 99)
    # each line is b'{"id":N,' (9 bytes for ids 10-99) + a body padded to the length wanted
    lengths = [32, 33, 33, 40, 33, 33, 33, 32, 33, 33, 40, 30]
    bodies = [b'"op":"bye","x":"' + b"x" * (length - 9 - 19) + b'"}\n' for length in lengths]
    assert [len(b'{"id":%d,' % (10 + i) + body) for i, body in enumerate(bodies)] == lengths
    pieces = list(framing.pieces(10, bodies))
    assert b"".join(pieces) == framing.with_ids(10, bodies)
    expected_sizes = [32 + 33 + 33 + 40, 33 + 33 + 33, 32 + 33 + 33 + 40, 30]
    assert [len(piece) for piece in pieces] == expected_sizes
    assert list(framing.pieces(10, [])) == []


def test_an_adapter_runs_with_the_environment_and_directory_it_is_given(tmp_path):
    """An adapter runs with exactly the environment and in the directory it is given (a port
    that needs a library path or a model file next to it)."""
    script = tmp_path / "where.py"
    script.write_text(
        "import json, os, sys\n"
        "request = json.loads(sys.stdin.readline())\n"
        "name = os.environ.get('PORT_NAME', 'no PORT_NAME')\n"
        "print(json.dumps({'id': request['id'], 'ok': True, 'protocol': 1, 'implementation':"
        " {'name': name, 'language': os.getcwd(), 'version': '0'}}), flush=True)\n"
    )
    home = tmp_path / "home"
    home.mkdir()
    adapter = Client.process([sys.executable, str(script)], env={"PORT_NAME": "from-env"}, cwd=home)
    try:
        handshake = adapter.start()
    finally:
        adapter.kill()
    assert (handshake.name, handshake.language) == ("from-env", str(home))


def test_an_adapter_process_refuses_an_empty_command_and_a_second_start():
    with pytest.raises(ValueError, match=r"^the adapter command is empty$"):
        AdapterProcess([])
    adapter = AdapterProcess(REFERENCE_ARGV)
    adapter.start()
    try:
        with pytest.raises(
            RuntimeError, match=r"^the adapter is already running; use restart\(\)$"
        ):
            adapter.start()
    finally:
        adapter.kill()


def test_each_answer_is_allowed_the_same_default_time_by_every_front_end(pytestconfig):
    """README: ``--timeout`` defaults to 10 s, for the CLI, the pytest plugin and the library
    alike (the plugin keeps its own literal: it imports nothing of the kit until used). The
    plugin's default is read from this very pytest run, which loads it as an installed plugin."""
    parser = argparse.ArgumentParser()
    add_timeout(parser)
    assert parser.parse_args([]).timeout == ANSWER_TIMEOUT == 10.0
    assert AdapterProcess(REFERENCE_ARGV).timeout == ANSWER_TIMEOUT
    assert pytestconfig.getoption("snapkv_timeout") == ANSWER_TIMEOUT


def test_spec_3_2_a_hello_answer_the_kit_refuses_shows_the_adapter_s_stderr(tmp_path):
    """SPEC.md §3.2: hello is answered with protocol 1. A start refused for its answer shows
    what the adapter wrote to stderr, as every failed start does."""
    with pytest.raises(AdapterStartError) as caught:
        scripted(tmp_path, "protocol2")
    assert "only protocol 2 here" in caught.value.stderr_tail


def test_spec_3_1_an_answer_later_than_the_timeout_is_a_timeout(tmp_path):
    """SPEC.md §3.1 and README: each answer gets ``--timeout`` seconds; one that comes later
    is a timeout even though it comes (here 0.6 s late for a timeout of 0.2 s)."""
    adapter = scripted(tmp_path, "slow:3")
    adapter.exchange([NEW])  # in the usual time, however loaded the machine
    adapter.transport.timeout = 0.2
    failure = failure_in_batches(adapter, [STEP])
    assert (failure.kind, failure.call_index) == ("timeout", 0)
    assert failure.detail == "no answer within 0.2 s"


def test_spec_3_1_an_overlong_answer_shows_its_first_80_characters(tmp_path):
    """SPEC.md §3.1: each answer is one line. The runner reads at most ``max_line`` bytes of it
    (README: 16 MiB by default) and then stops, naming the limit and showing how the line
    starts, exactly its first 80 characters."""
    failure = failure_in_batches(scripted(tmp_path, "long:3", max_line=1000), [NEW, STEP])
    assert (failure.kind, failure.call_index) == ("protocol", 1)
    assert failure.detail == (
        "the answer line is longer than 1000 bytes (not read further); "
        f"it starts {json_text(('0123456789' * 8).encode())}"
    )


def test_spec_3_1_an_answer_cut_short_by_an_exit_shows_the_status_and_200_characters(tmp_path):
    """SPEC.md §3.1: an answer is a whole line. An adapter that exits in the middle of one has
    crashed: the failure names its exit status and shows the unfinished line, exactly its first
    200 characters."""
    failure = failure_in_batches(scripted(tmp_path, "partial:3"), [NEW, STEP])
    assert (failure.kind, failure.call_index, failure.exit_status) == ("crash", 1, 3)
    assert failure.detail == (
        "the adapter stopped in the middle of its answer and exited (exit status 3); "
        f"the unfinished line: {json_text(('abcdefghij' * 20).encode())}"
    )


def test_spec_3_1_an_adapter_that_closes_its_stdout_and_runs_on_is_a_crash(tmp_path):
    """SPEC.md §3.1: stdout carries the answers. An adapter that closes it cannot answer: a
    crash of the call it owed, even while the process runs on (no exit status to show)."""
    failure = failure_in_batches(scripted(tmp_path, "shut:3", grace=0.2), [NEW, STEP])
    assert (failure.kind, failure.call_index, failure.exit_status) == ("crash", 1, None)
    assert failure.detail == "the adapter closed its stdout without answering"


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads descriptors in /proc")
def test_a_killed_adapter_leaves_no_descriptor_open():
    """Nothing of an adapter outlives it: after kill (and after close), every descriptor that
    starting it opened is closed, however many adapters a long run starts. Descriptors are
    told apart by what they point to (a pipe's inode), so one that an earlier test's garbage
    frees meanwhile, or a number used again, cannot hide a leak. Stderr's pipe is closed by
    its drain thread when it reads the end, a moment after the kill: each stop gets up to ten
    seconds for that, which a descriptor held for good never meets."""

    def open_descriptors() -> set[tuple[str, str]]:
        found = set()
        for entry in Path("/proc/self/fd").iterdir():
            with contextlib.suppress(OSError):  # the listing's own descriptor, gone by now
                found.add((entry.name, os.readlink(entry)))
        return found

    adapter = AdapterProcess(REFERENCE_ARGV)
    for stop in (adapter.kill, adapter.close):
        before = open_descriptors()
        adapter.start()
        opened = open_descriptors() - before
        assert len(opened) >= 3  # its stdin, stdout and stderr at least
        stop()
        deadline = time.monotonic() + 10.0
        while opened & open_descriptors() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not opened & open_descriptors()
