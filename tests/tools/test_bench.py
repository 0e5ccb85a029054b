"""``bench`` streams its workload, honours ``--timeout`` and holds hello to protocol v1 as
``run`` does; it names a differing answer by the id of the request it answers, the one
numbering a porter sees in the request stream and in both answers."""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.adapter.server import Session
from conformance.spec.protocol import decode
from conformance.tools import bench
from tests.support.hostile import adapter

REFERENCE = shlex.join(bench.REFERENCE_ARGV)


def test_the_workload_is_made_a_piece_at_a_time() -> None:
    """A billion steps' stream is never built: pieces come one at a time, each bounded, and
    they add up to the same bytes as the whole stream."""
    small = dataclasses.replace(bench.WORKLOADS[0], steps=300)
    assert b"".join(small.pieces(size=4096)) == small.stream()
    assert small.stream().count(b"\n") == small.requests
    huge = dataclasses.replace(bench.WORKLOADS[0], steps=10**9)
    pieces = huge.pieces()
    first, second = next(pieces), next(pieces)
    assert len(first) < 2 * bench.PIECE and len(second) < 2 * bench.PIECE
    assert huge.requests == 2 * 10**9 + 3


@pytest.mark.slow
def test_a_billion_steps_stop_at_the_timeout_in_bounded_memory(tmp_path: Path) -> None:
    """Case 14: ``--steps 1000000000`` used to build the whole stream first (823 MB after
    two minutes) and never apply ``--timeout``; now the run stops at the timeout, exit 2,
    its memory a small multiple of one piece."""
    script = (
        "import resource, sys\n"
        "from conformance.cli import main\n"
        "status = main(['bench', '--adapter', sys.argv[1], '--workload', 'defaults',\n"
        "               '--repeats', '1', '--steps', '1000000000', '--timeout', '5'])\n"
        "print(status, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script, REFERENCE],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    took = time.monotonic() - started
    status, peak_mb = done.stdout.split()[-2:]
    assert status == "2" and int(peak_mb) < 250, done.stdout + done.stderr
    assert "no answer within the 5 s timeout" in done.stderr and took < 60, (took, done.stderr)


def test_a_hello_nested_100000_deep_is_refused_as_run_refuses_it() -> None:
    """Left-over 2: such a hello passed bench's look for ``"ok":true`` and the port was
    timed; ``run`` refuses it."""
    nested = adapter(
        """
import sys
head = b'{"id":0,"ok":true,"protocol":1,"capabilities":[],"implementation":'
sys.stdout.buffer.write(head + b"[" * 100000 + b"]" * 100000 + b"}\\n")
sys.stdout.buffer.flush()
for line in sys.stdin.buffer:
    pass
"""
    )
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "bench", "--adapter", shlex.join(nested),
         "--repeats", "1", "--steps", "20", "--workload", "defaults"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "no successful hello answer: " in done.stderr
    assert "nested more than 64 levels deep" in done.stderr


def test_a_port_named_with_10_mib_is_shown_capped() -> None:
    """Case 19 in bench: the port's name reaches the terminal capped."""
    hello = (
        b'{"id":0,"ok":true,"protocol":1,"capabilities":[],"implementation":{"name":"'
        + b"n" * (10 << 20)
        + b'","language":"c","version":"1"}}'
    )
    shown = bench.identity(hello)
    assert len(shown) < 500 and shown.endswith("more characters) (c) 1")


def test_a_differing_answer_is_named_by_the_id_of_the_request_it_answers() -> None:
    """The reference's answers to a workload's stream (its own session, in process), one
    evict's victims changed in the port's copy: the message names that evict's request id,
    read from the stream's own request line, and both answers shown carry it."""
    workload = bench.Workload("t", budget=4, recent_window=1, obs_window=2, pool_kernel=3, steps=9)
    requests = [decode(line) for line in workload.stream().splitlines()]
    session = Session()
    answers = [session.handle(request) for request in requests]
    # What time_adapter keeps: every answer after hello's, one per line; bye answered too.
    reference = [json.dumps(answer, separators=(",", ":")) for answer in answers[1:]]
    evicts = [i for i, request in enumerate(requests) if request["op"] == "evict"]
    changed = evicts[-1]  # a late one: an off-by-one in the numbering shows
    wanted_id = requests[changed]["id"]
    assert answers[changed]["victims"], "the workload's last evict must evict something"
    port = list(reference)
    port[changed - 1] = json.dumps({**answers[changed], "victims": [10**6]})

    said = bench.agreement("\n".join(reference).encode() + b"\n", "\n".join(port).encode() + b"\n")

    assert said.startswith(f"the answer to request id {wanted_id} differs: "), said
    shown_ids = re.findall(r'"id": ?(\d+)', said)
    assert shown_ids == [str(wanted_id), str(wanted_id)], said


#: A protocol v1 hello answer spelled with spaces (json.dumps's default), as bench holds hello
#: to protocol v1 as ``run`` does.
HELLO = {
    "id": 0,
    "ok": True,
    "protocol": 1,
    "capabilities": [],
    "implementation": {"name": "t", "language": "python", "version": "1"},
}

_ANSWERS_SOME = """\
import json, sys
for number, line in enumerate(sys.stdin):
    if number < {answered}:
        request = json.loads(line)
        answer = {hello} if request["op"] == "hello" else {{"id": request["id"], "ok": True}}
        for _ in range({each}):
            print(json.dumps(answer), flush=True)
"""


def _adapter(tmp_path: Path, answered: int, each: int = 1) -> list[str]:
    script = tmp_path / "adapter.py"
    script.write_text(_ANSWERS_SOME.format(answered=answered, each=each, hello=repr(HELLO)))
    return [sys.executable, str(script)]


def test_an_adapter_that_stops_answering_is_told_the_first_request_id_left_unanswered(
    tmp_path: Path,
) -> None:
    """It answers hello and the next two requests, then reads on in silence: the error names
    the first request left unanswered by the id the stream gives it, and counts answers as
    requests are counted, hello's included."""
    workload = bench.Workload("t", budget=4, recent_window=1, obs_window=2, pool_kernel=3, steps=5)
    stream = workload.stream()
    due = stream.count(b"\n")
    third = decode(stream.splitlines()[3])["id"]
    with pytest.raises(bench.BenchError) as caught:
        bench.time_adapter(_adapter(tmp_path, answered=3), workload, timeout=60)
    assert str(caught.value).endswith(
        f": 3 answer lines to {due} requests: none to request id {third} or after"
    ), caught.value


def test_an_adapter_that_answers_twice_is_told_the_last_request_s_id(tmp_path: Path) -> None:
    workload = bench.Workload("t", budget=4, recent_window=1, obs_window=2, pool_kernel=3, steps=2)
    stream = workload.stream()
    due = stream.count(b"\n")
    last = decode(stream.splitlines()[-1])["id"]
    with pytest.raises(bench.BenchError) as caught:
        bench.time_adapter(_adapter(tmp_path, answered=due, each=2), workload, timeout=60)
    assert f": {2 * due} answer lines to {due} requests: " in str(caught.value), caught.value
    assert str(caught.value).endswith(f"more after the answer to the last, request id {last}")


def test_answers_that_end_early_or_run_on_name_request_ids_as_a_difference_does() -> None:
    """The answers after hello's, which answered request id 0: answers to ids 1 and 2."""
    reference = b'{"id":1,"ok":true}\n{"id":2,"ok":true,"victims":[]}\n'
    short = bench.agreement(reference, reference.splitlines(keepends=True)[0])
    assert short == "2 answers, the reference gave 3: none to request id 2 or after"
    long = bench.agreement(reference, reference + b'{"id":2,"ok":true}\n')
    assert (
        long == "4 answers, the reference gave 3: more after the answer to the last, request id 2"
    )


def test_a_request_line_without_an_id_is_named_by_its_line_number() -> None:
    stream = b'{"id":0,"op":"hello","protocol":1}\nnot json\n'
    assert bench.request_named(stream, 0) == "request id 0"
    assert bench.request_named(stream, 1) == "request line 2"
    assert bench.request_named(stream, 5) == "request line 6"


def test_a_hello_answer_spelled_with_spaces_is_a_successful_one(tmp_path: Path) -> None:
    """Spacing and member order are the port's to choose: ``{"id": 0, "ok": true, ...}`` shakes
    hands as ``{"ok":true,"id":0,...}`` does."""
    workload = bench.Workload("t", budget=4, recent_window=1, obs_window=2, pool_kernel=3, steps=2)
    stream = workload.stream()
    due = stream.count(b"\n")
    timing = bench.time_adapter(_adapter(tmp_path, answered=due), workload, timeout=60)
    assert timing.hello == json.dumps(HELLO).encode() + b"\n"
    assert timing.answers.count(b"\n") == due - 1
