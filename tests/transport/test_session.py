"""The protocol driver: handshakes, pipelined exchanges, and every way an adapter can misbehave.

Each misbehaving adapter must produce its own failure kind within a bound: no test waits for
more than the per-call timeout it sets (1 s) plus process start-up.
"""

from __future__ import annotations

import sys
import textwrap
import time
from typing import Any

import pytest

from conformance.policy.reference import SnapKV
from conformance.runner.client import Client
from conformance.spec.protocol import encode_body
from conformance.suite.wire import Prepared
from conformance.transport.failures import AdapterFailure, AdapterStartError
from conformance.transport.in_process import InProcessAdapter
from conformance.transport.process import STDERR_KEEP
from tests.support.runner_support import (
    REFERENCE_ARGV,
    broken,
    params,
    plain_vector,
    trigger_vector,
)

#: Start-up of a Python adapter (numpy import) plus slack for a loaded 2-core machine.
BOUND = 8.0


def requests_of(vector) -> list[dict[str, Any]]:
    return [dict(call.request) for call in vector.calls]


def inline(code: str) -> list[str]:
    """An adapter written inline, run by this Python."""
    return [sys.executable, "-c", textwrap.dedent(code)]


@pytest.fixture
def reference():
    adapter = Client.process(REFERENCE_ARGV, timeout=5.0)
    adapter.start()
    yield adapter
    adapter.close()


def test_handshake_reports_identity_and_capabilities(reference):
    handshake = reference.handshake
    assert (handshake.name, handshake.language) == ("snapkv-conformance reference", "python")
    assert handshake.protocol == 1 and "scores" in handshake.capabilities
    assert handshake.describe().startswith("snapkv-conformance reference (python) ")


def test_exchange_assigns_ids_and_answers_in_order(reference):
    vector = trigger_vector()
    answers = reference.exchange(requests_of(vector))
    assert len(answers) == len(vector.calls)
    ids = [answer["id"] for answer in answers]
    assert ids == list(range(ids[0], ids[0] + len(ids)))
    victims = [a["victims"] for a in answers if "victims" in a]
    assert victims == [c.expected_victims for c in vector.calls if c.op == "evict"]
    again = reference.exchange(requests_of(vector))
    assert again[0]["id"] == ids[-1] + 1


def test_a_large_pipelined_exchange_cannot_deadlock(reference):
    # About 3 MB of requests written before any answer is read, and about 2 MB of answers:
    # both far beyond a pipe's buffer.
    steps = 1000
    requests: list[dict[str, Any]] = [{"op": "new", "params": params(steps, 0, 4, 1), "seed": 0}]
    requests += [{"op": "step", "pos": p, "attn": [0.125] * p} for p in range(steps)]
    requests += [{"op": "scores"}] * 100 + [{"op": "evict"}]
    assert sum(len(body) for body in Prepared(requests).bodies) > 2_000_000
    answers = reference.exchange(requests)
    assert len(answers) == len(requests)
    assert all(answer["ok"] for answer in answers)
    assert len(answers[-2]["positions"]) == steps


def test_encode_body_splices_into_an_id():
    body = encode_body({"op": "step", "pos": 3, "attn": [0.5, 1e-45], "id": 99})
    assert body == b'"op":"step","pos":3,"attn":[0.5,1e-45]}\n'
    assert encode_body({}) == b"}\n"
    prepared = Prepared([{"op": "evict"}])
    assert prepared.bodies is prepared.bodies  # encoded once


def failure_of(argv: list[str], vector, timeout: float = 1.0, **kw: Any) -> AdapterFailure:
    with Client.process(argv, timeout=timeout, **kw) as adapter:
        began = time.monotonic()
        with pytest.raises(AdapterFailure) as caught:
            adapter.exchange(requests_of(vector))
        assert time.monotonic() - began < timeout + 3
        adapter.kill()
    return caught.value


def index_of_armed_evict(vector) -> int:
    """The first evict after position 5 is admitted (where the broken adapters misbehave)."""
    admitted = next(i for i, c in enumerate(vector.calls) if c.request.get("pos") == 5)
    return next(i for i, c in enumerate(vector.calls) if i > admitted and c.op == "evict")


def index_of_trigger_step(vector) -> int:
    return next(i for i, c in enumerate(vector.calls) if c.request.get("pos") == 5)


def test_crash_mid_vector_gives_the_signal_and_stderr():
    vector = trigger_vector()
    failure = failure_of(broken("crash_mid_vector"), vector)
    assert failure.kind == "crash"
    assert failure.call_index == index_of_trigger_step(vector)
    assert failure.exit_status == -11
    assert "killed by signal SIGSEGV" in failure.detail
    assert "dangling pointer at pos 5" in failure.stderr_tail
    assert len(failure.answers) == failure.call_index


def test_hang_is_a_timeout_within_the_bound():
    vector = trigger_vector()
    began = time.monotonic()
    failure = failure_of(broken("hang"), vector, timeout=1.0)
    assert failure.kind == "timeout"
    assert failure.call_index == index_of_trigger_step(vector)
    assert "no answer within 1 s" in failure.detail
    assert time.monotonic() - began < BOUND


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("non_json", "the answer is not JSON"),
        ("wrong_id", "the answer has id"),
        ("non_utf8", "the answer is not UTF-8 (invalid continuation byte"),
        ("huge_line", "longer than 16777216 bytes"),
    ],
)
def test_bad_answer_lines_are_protocol_failures(name, words):
    vector = trigger_vector()
    # A 20 MiB line takes a loaded machine more than a second to write and read.
    failure = failure_of(broken(name), vector, timeout=10.0 if name == "huge_line" else 1.0)
    assert failure.kind == "protocol"
    assert failure.call_index == index_of_armed_evict(vector)
    assert words in failure.detail


def test_two_answers_to_one_request_blame_that_request():
    vector = trigger_vector()
    failure = failure_of(broken("two_answers"), vector)
    assert failure.kind == "protocol" and not failure.earlier
    assert failure.call_index == index_of_armed_evict(vector)
    assert "was answered twice" in failure.detail


def test_an_extra_answer_after_the_exchange_is_placed_in_the_previous_one():
    vector = trigger_vector()
    cut = index_of_armed_evict(vector) + 1
    with Client.process(broken("two_answers"), timeout=1.0) as adapter:
        adapter.exchange(requests_of(vector)[:cut])
        with pytest.raises(AdapterFailure) as caught:
            adapter.exchange(requests_of(plain_vector("driver/next")))
        adapter.kill()
    assert caught.value.earlier
    assert caught.value.call_index == cut - 1
    assert "answered that request twice" in caught.value.detail


def test_a_partial_line_then_exit_is_a_crash_showing_the_fragment():
    vector = trigger_vector()
    failure = failure_of(broken("partial_line"), vector)
    assert failure.kind == "crash" and failure.exit_status == 0
    assert "stopped in the middle of its answer" in failure.detail
    assert 'the unfinished line: "{\\"id\\":' in failure.detail
    assert "giving up" in failure.stderr_tail


def test_line_cap_is_configurable():
    requests = [{"op": "new", "params": params(500, 0, 4, 1), "seed": 0}]
    requests += [{"op": "step", "pos": p, "attn": None} for p in range(100)]
    requests += [{"op": "scores"}]  # positions, sums and pooled: well over 1000 bytes
    with Client.process(REFERENCE_ARGV, timeout=2.0, max_line=1000) as adapter:
        with pytest.raises(AdapterFailure) as caught:
            adapter.exchange(requests)
        adapter.kill()
    assert caught.value.kind == "protocol" and caught.value.call_index == 101
    assert "longer than 1000 bytes" in caught.value.detail


def test_stderr_flood_passes_and_the_tail_stays_bounded():
    vector = trigger_vector()
    with Client.process(broken("stderr_flood"), timeout=2.0) as adapter:
        answers = adapter.exchange(requests_of(vector) * 5)  # about 6 MB of stderr
        tail = adapter.stderr_tail()
    assert len(answers) == 5 * len(vector.calls)
    assert 0 < len(tail) <= 64 * 1024
    assert tail.splitlines()[-1].startswith("debug: ...")


def test_close_kills_an_adapter_that_ignores_bye():
    adapter = Client.process(broken("ignore_bye"), timeout=1.0, grace=0.5)
    adapter.start()
    began = time.monotonic()
    adapter.close()
    assert time.monotonic() - began < 3
    assert not adapter.running
    assert adapter.close_problems == ["the adapter did not exit within 0.5 s after bye; killed it"]


def test_close_after_bye_exits_cleanly(reference):
    reference.close()
    assert not reference.running and reference.close_problems == []
    reference.close()  # idempotent


def test_restart_gives_a_fresh_process(reference):
    first = reference.transport.pid
    handshake = reference.restart()
    assert reference.transport.pid != first and handshake.name == "snapkv-conformance reference"
    assert reference.exchange([{"op": "evict"}])[0]["error"]["kind"] == "no-policy"


def test_blank_answer_lines_are_ignored():
    code = """
        import json, sys
        for line in sys.stdin:
            request = json.loads(line)
            answer = {"id": request["id"], "ok": True}
            if request["op"] == "hello":
                answer.update(protocol=1, capabilities=[],
                              implementation={"name": "n", "language": "l", "version": "v"})
            sys.stdout.write("\\n  \\n" + json.dumps(answer) + "\\n")
            sys.stdout.flush()
    """
    with Client.process(inline(code), timeout=2.0) as adapter:
        assert adapter.exchange([{"op": "evict"}, {"op": "evict"}])[1]["ok"] is True


def test_nan_in_an_answer_is_not_json():
    code = """
        import json, sys
        for line in sys.stdin:
            request = json.loads(line)
            answer = {"id": request["id"], "ok": True, "protocol": 1, "capabilities": [],
                      "implementation": {"name": "n", "language": "l", "version": "v"}}
            if request["op"] == "evict":
                answer = {"id": request["id"], "ok": True, "victims": [float("nan")]}
            print(json.dumps(answer))
            sys.stdout.flush()
    """
    with Client.process(inline(code), timeout=2.0) as adapter:
        with pytest.raises(AdapterFailure, match=r"the answer is not JSON.*NaN is not valid JSON"):
            adapter.exchange([{"op": "evict"}])
        adapter.kill()


def test_an_answer_with_id_null_says_the_request_was_unreadable():
    code = """
        import json, sys
        hello = json.loads(sys.stdin.readline())
        print(json.dumps({"id": hello["id"], "ok": True, "protocol": 1, "capabilities": [],
                          "implementation": {"name": "n", "language": "l", "version": "v"}}))
        sys.stdout.flush()
        sys.stdin.readline()
        print('{"id":null,"ok":false,"error":{"kind":"bad-request","message":"cannot parse"}}')
        sys.stdout.flush()
        sys.stdin.read()
    """
    failure = failure_of(inline(code), plain_vector("driver/null-id"))
    assert failure.kind == "protocol" and "could not read the request" in failure.detail


# -- start-up ------------------------------------------------------------------------------------


def test_a_missing_program_cannot_start():
    with pytest.raises(AdapterStartError, match="cannot run the adapter"):
        Client.process(["/nonexistent/adapter"]).start()


def test_crash_at_start_shows_status_and_stderr():
    began = time.monotonic()
    with pytest.raises(AdapterStartError) as caught:
        Client.process(broken("crash_at_start"), timeout=2.0).start()
    assert time.monotonic() - began < BOUND
    assert "exited (exit status 3)" in caught.value.message
    assert "cannot open model weights" in caught.value.stderr_tail
    assert "cannot open model weights" in str(caught.value)


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (
            '{"id":1,"ok":false,"error":{"kind":"unsupported","message":"v2 only"}}',
            "speaks another protocol version",
        ),
        ('{"id":1,"ok":true,"protocol":2}', "answered hello with protocol 2"),
        ('{"id":1,"ok":true,"protocol":1}', "no implementation object"),
        (
            '{"id":1,"ok":true,"protocol":1,"implementation":{"name":"n","language":"l"}}',
            "no string implementation.version",
        ),
        ("hello there", "did not complete the handshake: the answer is not JSON"),
    ],
)
def test_a_bad_handshake_cannot_start(answer, words):
    code = f"""
        import sys
        sys.stdin.readline()
        print({answer!r})
        sys.stdout.flush()
        sys.stdin.read()
    """
    with pytest.raises(AdapterStartError, match=words):
        Client.process(inline(code), timeout=2.0).start()


@pytest.mark.slow
def test_a_slow_start_gets_more_time_than_an_answer():
    # Shakes hands after 2 s: four times the per-answer timeout, well within the start's 10 s.
    code = """
        import time
        time.sleep(2)
        import runpy, sys
        sys.argv = ["conformance", "adapter"]
        runpy.run_module("conformance", run_name="__main__")
    """
    with Client.process(inline(code), timeout=0.5) as adapter:
        assert adapter.handshake.name == "snapkv-conformance reference"
        assert adapter.exchange([{"op": "bye"}])[0]["ok"] is True


def test_a_silent_adapter_times_out_at_start():
    code = "import time; time.sleep(60)"
    began = time.monotonic()
    with pytest.raises(AdapterStartError, match=r"no answer within 0\.5 s"):
        Client.process(inline(code), timeout=0.1, start_timeout=0.5).start()
    assert time.monotonic() - began < BOUND


# -- in-process ----------------------------------------------------------------------------------


def test_in_process_answers_equal_the_process_answers(reference):
    vector = plain_vector("driver/same")
    adapter = Client(InProcessAdapter())
    assert adapter.start() == reference.handshake
    strip = lambda answers: [{k: v for k, v in a.items() if k != "id"} for a in answers]  # noqa: E731
    assert strip(adapter.exchange(requests_of(vector))) == strip(
        reference.exchange(requests_of(vector))
    )


def test_an_exception_in_process_is_a_crash():
    class Exploding(SnapKV):
        def evict(self) -> list[int]:
            raise IndexError("index 7 is out of bounds")

    adapter = Client(InProcessAdapter(Exploding))
    adapter.start()
    vector = plain_vector("driver/explode")
    with pytest.raises(AdapterFailure) as caught:
        adapter.exchange(requests_of(vector))
    assert caught.value.kind == "crash" and caught.value.call_index == 2
    assert "IndexError: index 7 is out of bounds" in caught.value.detail
    adapter.restart()
    assert adapter.exchange([{"op": "evict"}])[0]["ok"] is False


def test_the_stderr_tail_kept_is_bounded_whatever_the_lines():
    from conformance.transport.pipes import StderrTail

    tail = StderrTail(STDERR_KEEP)
    for _ in range(50):
        tail.add(b"w" * 60_000 + b"\n")
    text = tail.text(20)
    lines = text.splitlines()
    assert 1 <= len(lines) <= 20 and all(line.endswith("more characters)") for line in lines)
    assert len(text) < 20 * 400


def test_a_stderr_tail_taken_after_an_answer_holds_what_was_written_before_it() -> None:
    """The drain thread may not have run when a wrong answer is judged: settling waits until
    every byte already in the pipe is in the tail (the adapter is still running)."""
    import os
    import threading

    from conformance.transport import pipes

    for _ in range(50):
        read_end, write_end = os.pipe()
        stderr = os.fdopen(read_end, "rb")
        tail, done = pipes.StderrTail(4096), threading.Event()
        threading.Thread(target=pipes.drain_loop, args=(stderr, tail, done), daemon=True).start()
        os.write(write_end, b"written just before the answer\n")
        pipes.settle(stderr, tail, done, timeout=10)
        assert tail.text(5) == "written just before the answer"
        os.close(write_end)
        assert done.wait(10)
