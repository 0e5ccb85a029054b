"""The reference adapter speaks protocol v1 (SPEC.md §3), in-process and over real pipes.

In-process tests drive :func:`conformance.adapter.server.serve` on byte streams; the rest start
``python -m conformance adapter`` and talk to it through its stdin/stdout, with a writer thread
so that a full pipe can never deadlock the test, and a timeout on every wait. Expected victims
and scores come from the reference policy itself, replayed in-process.
"""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapter.server import Session, serve
from conformance.policy.reference import SnapKV
from tests.support.paths import ROOT

TIMEOUT = 60.0  # seconds; generous for a shared machine, but every wait is bounded
PARAMS = {"budget": 3, "recentWindow": 1, "obsWindow": 2, "poolKernel": 3}
NEW = {"op": "new", "params": PARAMS, "seed": 0}


def line(message: dict[str, Any] | str | bytes) -> bytes:
    """One request line: a dict is encoded as JSON, str/bytes are sent as written."""
    if isinstance(message, dict):
        return json.dumps(message).encode() + b"\n"
    raw = message.encode() if isinstance(message, str) else message
    return raw + b"\n"


def numbered(requests: list[dict[str, Any]], first: int = 1) -> list[dict[str, Any]]:
    """The requests with ids ``first``, ``first + 1``, ... added."""
    return [{"id": first + i, **request} for i, request in enumerate(requests)]


def serve_bytes(data: bytes) -> tuple[int, list[bytes]]:
    """Run the adapter loop in-process on ``data``; the exit status and the response lines."""
    out = io.BytesIO()
    status = serve(io.BytesIO(data), out)
    raw = out.getvalue()
    assert raw == b"" or raw.endswith(b"\n")
    return status, raw.splitlines()


def exchange(*messages: dict[str, Any] | str | bytes) -> list[dict[str, Any]]:
    """Send ``messages`` in one in-process session; the decoded responses."""
    status, lines = serve_bytes(b"".join(line(m) for m in messages))
    assert status == 0
    return [json.loads(raw) for raw in lines]


def last_error(*messages: dict[str, Any] | str | bytes) -> tuple[Any, str]:
    """The ``(id, kind)`` of the last response, which must be a refusal."""
    response = exchange(*messages)[-1]
    assert response["ok"] is False, response
    assert set(response) == {"id", "ok", "error"}
    assert set(response["error"]) == {"kind", "message"} and response["error"]["message"]
    return response["id"], response["error"]["kind"]


REFERENCE_ADAPTER = [sys.executable, "-m", "conformance", "adapter"]


def run_adapter(
    data: bytes, timeout: float = TIMEOUT, argv: list[str] = REFERENCE_ADAPTER
) -> tuple[int, bytes, bytes]:
    """Start the adapter, write ``data`` from a thread, read everything; bounded by ``timeout``.

    Returns ``(exit status, stdout, stderr)``. One thread writes the requests while two others
    drain stdout and stderr, so no pipe can fill up and block both sides.
    """
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    output: dict[str, bytes] = {}

    def write() -> None:
        try:
            process.stdin.write(data)
            process.stdin.close()
        except BrokenPipeError:  # the adapter exited first (e.g. after bye): fine
            pass

    def drain(name: str) -> None:
        output[name] = getattr(process, name).read()

    threads = [threading.Thread(target=write, daemon=True)]
    threads += [threading.Thread(target=drain, args=(name,), daemon=True) for name in OUTPUTS]
    for thread in threads:
        thread.start()
    try:
        status = process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout)
        pytest.fail(f"the adapter did not finish within {timeout} s")
    for thread in threads:
        thread.join(timeout)
        assert not thread.is_alive(), "a pipe stayed open after the adapter exited"
    return status, output["stdout"], output["stderr"]


OUTPUTS = ("stdout", "stderr")


def reference_session(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the reference policy answers to ``requests`` (ops new/step/evict/scores only)."""
    policy: SnapKV | None = None
    answers: list[dict[str, Any]] = []
    for request in requests:
        answer: dict[str, Any] = {"id": request["id"], "ok": True}
        if request["op"] == "new":
            policy = SnapKV(request["params"], request["seed"])
        elif request["op"] == "step":
            policy.step(request["pos"], request["attn"])
        elif request["op"] == "evict":
            answer["victims"] = policy.evict()
        elif request["op"] == "scores":
            scores = policy.scores()
            answer |= {"positions": scores.positions, "sums": scores.sums}
            answer["pooled"] = scores.pooled
        answers.append(answer)
    return answers


def workload(steps: int) -> list[dict[str, Any]]:
    """new, then ``steps`` steps with float32 weights (some null), evict and scores after each."""
    requests: list[dict[str, Any]] = [NEW]
    kept = 0
    for pos in range(steps):
        attn = None if pos % 7 == 3 else [((pos * 7 + i * 3) % 11) / 8 for i in range(kept)]
        requests += [{"op": "step", "pos": 2 * pos, "attn": attn}, {"op": "evict"}]
        kept = min(kept + 1, PARAMS["budget"])
        if pos % 5 == 0:
            requests.append({"op": "scores"})
    return requests


# -- the ops -----------------------------------------------------------------------------------


def test_hello() -> None:
    (response,) = exchange({"id": 7, "op": "hello", "protocol": 1})
    assert response["id"] == 7 and response["ok"] is True and response["protocol"] == 1
    implementation = response["implementation"]
    assert set(implementation) == {"name", "language", "version"}
    assert all(isinstance(value, str) and value for value in implementation.values())
    assert implementation["language"] == "python"
    assert "scores" in response["capabilities"]


@pytest.mark.parametrize("protocol", [0, 2, "1", 1.0, True, None, [1]], ids=repr)
def test_hello_with_another_protocol_is_unsupported(protocol: Any) -> None:
    assert last_error({"id": 1, "op": "hello", "protocol": protocol}) == (1, "unsupported")


def test_session_matches_the_reference_in_process() -> None:
    requests = numbered(workload(60))
    assert exchange(*requests) == reference_session(requests)


def test_new_step_evict_scores_bye_over_real_pipes() -> None:
    requests = numbered(workload(60), first=2)
    hello = {"id": 1, "op": "hello", "protocol": 1}
    bye = {"id": len(requests) + 2, "op": "bye"}
    data = b"".join(line(m) for m in [hello, *requests, bye])
    status, stdout, stderr = run_adapter(data)
    assert status == 0, stderr
    answers = [json.loads(raw) for raw in stdout.splitlines()]
    assert answers[0]["ok"] and answers[0]["protocol"] == 1
    assert answers[1:-1] == reference_session(requests)
    assert answers[-1] == {"id": bye["id"], "ok": True}


def test_the_python_template_is_the_reference_adapter() -> None:
    """adapters/python/snapkv-adapter, the file a Python port copies, runs the same program as
    ``snapkv-conformance adapter``: the same answers, byte for byte, to the same session."""
    template = ROOT / "adapters" / "python" / "snapkv-adapter"
    requests = numbered(workload(20), first=2)
    hello = {"id": 1, "op": "hello", "protocol": 1}
    data = b"".join(line(m) for m in [hello, *requests, {"id": len(requests) + 2, "op": "bye"}])
    status, stdout, stderr = run_adapter(data, argv=[sys.executable, str(template)])
    assert status == 0, stderr
    assert stdout == run_adapter(data)[1]
    assert len(stdout.splitlines()) == len(requests) + 2


def test_scores_are_float64_that_round_trip() -> None:
    step = {"op": "step", "pos": 1, "attn": [0.1]}  # narrowed to float32 0.10000000149011612
    requests = numbered([NEW, {"op": "step", "pos": 0, "attn": None}, step, {"op": "scores"}])
    scores = exchange(*requests)[-1]
    assert scores["positions"] == [0, 1]
    assert scores["sums"] == [0.10000000149011612, 0.0]
    assert scores["pooled"] == [0.10000000149011612, 0.10000000149011612]


def test_response_lines_are_compact_json_one_per_request() -> None:
    status, lines = serve_bytes(
        line({"id": 1, "op": "hello", "protocol": 1}) + line(NEW | {"id": 2})
    )
    assert status == 0
    assert lines[1] == b'{"id":2,"ok":true}'


def test_new_replaces_the_policy() -> None:
    other = {"budget": 1, "recentWindow": 0, "obsWindow": 1, "poolKernel": 1}
    responses = exchange(
        *numbered(
            [
                NEW,
                {"op": "step", "pos": 5, "attn": None},
                {"op": "new", "params": other, "seed": 1},
                {"op": "step", "pos": 0, "attn": None},  # 0 is fine again: a fresh policy
                {"op": "step", "pos": 1, "attn": [1.0]},
                {"op": "evict"},
            ]
        )
    )
    assert [r["ok"] for r in responses] == [True] * 6
    assert responses[-1]["victims"] == [1]


def test_refused_new_keeps_the_earlier_policy() -> None:
    bad = {"op": "new", "params": {**PARAMS, "poolKernel": 2}, "seed": 0}
    responses = exchange(
        *numbered([NEW, {"op": "step", "pos": 5, "attn": None}, bad, {"op": "scores"}])
    )
    assert responses[2]["error"]["kind"] == "invalid-params"
    assert responses[3]["positions"] == [5]


def test_unknown_request_fields_are_ignored() -> None:
    (response,) = exchange({"id": 1, "op": "hello", "protocol": 1, "extra": {"x": [1]}})
    assert response["ok"] is True


def test_blank_lines_get_no_answer() -> None:
    status, lines = serve_bytes(b"\n  \n" + line({"id": 1, "op": "hello", "protocol": 1}))
    assert status == 0 and len(lines) == 1


# -- every error kind --------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["step", "evict", "scores"])
def test_no_policy_before_new(op: str) -> None:
    request = {"id": 1, "op": op, "pos": 0, "attn": None}
    assert last_error(request) == (1, "no-policy")


def test_no_policy_after_a_refused_first_new() -> None:
    bad = {"id": 1, "op": "new", "params": {}, "seed": 0}
    assert last_error(bad, {"id": 2, "op": "evict"}) == (2, "no-policy")


@pytest.mark.parametrize(
    "params",
    [{**PARAMS, "poolKernel": 4}, {**PARAMS, "budget": 0}, {**PARAMS, "x": 1}, [], None, "p"],
    ids=repr,
)
def test_invalid_params(params: Any) -> None:
    assert last_error({"id": 3, "op": "new", "params": params, "seed": 0}) == (3, "invalid-params")


@pytest.mark.parametrize("seed", [1.5, 0.0, "0", True, None, [0]], ids=repr)
def test_non_integer_seed_is_invalid_params(seed: Any) -> None:
    assert last_error({"id": 3, "op": "new", "params": PARAMS, "seed": seed}) == (
        3,
        "invalid-params",
    )


@pytest.mark.parametrize("seed", [-1, 2**64, 0])
def test_any_integer_seed_accepted(seed: int) -> None:
    (response,) = exchange({"id": 3, "op": "new", "params": PARAMS, "seed": seed})
    assert response == {"id": 3, "ok": True}


@pytest.mark.parametrize(
    ("pos", "attn", "kind"),
    [
        (0, None, "invalid-position"),
        (-1, None, "invalid-position"),
        (2**31, None, "invalid-position"),
        (1.5, None, "invalid-position"),
        (0, [-1.0], "invalid-position"),  # judged before the attention
        (2, [0.5, 0.5], "invalid-attention"),
        (2, [-0.5], "invalid-attention"),
        (2, [3.5e38], "invalid-attention"),
        (2, [3.4028235677973366e38], "invalid-attention"),  # FLT_MAX + half an ulp: to inf
        (2, [10**400], "invalid-attention"),
        (2, ["0.5"], "invalid-attention"),
        (2, 0.5, "invalid-attention"),
    ],
    ids=repr,
)
def test_step_refusals(pos: Any, attn: Any, kind: str) -> None:
    requests = numbered([NEW, {"op": "step", "pos": 0, "attn": None}])
    assert last_error(*requests, {"id": 9, "op": "step", "pos": pos, "attn": attn}) == (9, kind)


@pytest.mark.parametrize(
    "weight", ["-0.0", "-1e-46", "1e-45", "3.4028235677973362e38", "1", "0"], ids=str
)
def test_edge_weights_accepted(weight: str) -> None:
    setup = numbered([NEW, {"op": "step", "pos": 0, "attn": None}])
    text = f'{{"id":9,"op":"step","pos":1,"attn":[{weight}]}}'
    assert exchange(*setup, text)[-1] == {"id": 9, "ok": True}


@pytest.mark.parametrize(
    "text",
    ["hello", "{", '{"id":1,"op":"hello","protocol":1', "'single'", "{id:1}", "\x00"],
    ids=repr,
)
def test_non_json_is_bad_request_with_null_id(text: str) -> None:
    assert last_error(text) == (None, "bad-request")


@pytest.mark.parametrize("text", ["[1]", "1", '"x"', "null", "true", "[]"])
def test_non_object_is_bad_request_with_null_id(text: str) -> None:
    assert last_error(text) == (None, "bad-request")


@pytest.mark.parametrize("request_id", [None, 1.5, "1", True, [1], {}], ids=repr)
def test_missing_or_non_integer_id_is_bad_request(request_id: Any) -> None:
    request = {"op": "hello", "protocol": 1}
    if request_id is not None:
        request["id"] = request_id
    _, kind = last_error(request)
    assert kind == "bad-request"


@pytest.mark.parametrize("op", ["dance", "Hello", "", None, 5, ["hello"]], ids=repr)
def test_unknown_op_is_bad_request(op: Any) -> None:
    assert last_error({"id": 4, "op": op}) == (4, "bad-request")


def test_missing_op_is_bad_request() -> None:
    assert last_error({"id": 4}) == (4, "bad-request")


@pytest.mark.parametrize(
    "fields",
    [
        {"op": "hello"},
        {"op": "new", "seed": 0},
        {"op": "new", "params": PARAMS},
        {"op": "step", "attn": None},
        {"op": "step", "pos": 0},
    ],
    ids=lambda r: f"{r['op']}-{'-'.join(sorted(r))}",
)
def test_missing_field_is_bad_request(fields: dict[str, Any]) -> None:
    # Before any new, too: bad-request is judged before no-policy.
    assert last_error({"id": 5, **fields}) == (5, "bad-request")
    assert last_error(NEW | {"id": 1}, {"id": 5, **fields}) == (5, "bad-request")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_literals_are_bad_request(constant: str) -> None:
    text = f'{{"id":6,"op":"step","pos":1,"attn":[{constant}]}}'
    assert last_error(NEW | {"id": 1}, {"id": 2, "op": "step", "pos": 0, "attn": None}, text) == (
        None,
        "bad-request",
    )


@pytest.mark.parametrize(
    "raw",
    [
        b"\xff\xfe\x00",
        b'{"id":1,"op":"hello","protocol":1,"x":"\xc3"}',
        '{"id":1,"op":"hello","protocol":1}'.encode("utf-16"),
        b"\xef\xbb\xbf" + b'{"id":1,"op":"hello","protocol":1}',  # a UTF-8 byte order mark
    ],
    ids=["garbage", "truncated-utf8", "utf16", "bom"],
)
def test_non_utf8_bytes_are_bad_request(raw: bytes) -> None:
    assert last_error(raw) == (None, "bad-request")


@pytest.mark.parametrize("depth", [990, 100_000])
def test_deeply_nested_json_is_bad_request_not_a_crash(depth: int) -> None:
    nested = "[" * depth + "]" * depth
    text = f'{{"id":1,"op":"step","pos":{nested},"attn":null}}'
    _, kind = last_error(NEW | {"id": 0}, text)
    assert kind in ("bad-request", "invalid-position")


# -- the process ---------------------------------------------------------------------------------


def test_pipelined_requests_all_answered_in_order() -> None:
    requests = numbered(workload(2_500))[:5_000]  # written before any answer is read
    assert len(requests) == 5_000
    status, stdout, stderr = run_adapter(b"".join(line(m) for m in requests))
    assert status == 0, stderr
    answers = [json.loads(raw) for raw in stdout.splitlines()]
    assert [a["id"] for a in answers] == list(range(1, 5_001))
    assert answers == reference_session(requests)


def test_end_of_input_exits_zero() -> None:
    status, stdout, stderr = run_adapter(line({"id": 1, "op": "hello", "protocol": 1}))
    assert status == 0, stderr
    assert json.loads(stdout)["ok"] is True


def test_empty_input_exits_zero() -> None:
    status, stdout, _ = run_adapter(b"")
    assert (status, stdout) == (0, b"")


def test_bye_answers_then_exits_zero_ignoring_the_rest() -> None:
    data = line({"id": 1, "op": "bye"}) + line({"id": 2, "op": "hello", "protocol": 1})
    status, stdout, stderr = run_adapter(data)
    assert status == 0, stderr
    assert stdout == b'{"id":1,"ok":true}\n'


def test_garbage_over_pipes_gets_bad_request_and_the_session_goes_on() -> None:
    data = (
        b"\xff\xfe\xfd\n" + b"[" * 100_000 + b"\n" + line({"id": 1, "op": "hello", "protocol": 1})
    )
    status, stdout, stderr = run_adapter(data)
    assert status == 0, stderr
    answers = [json.loads(raw) for raw in stdout.splitlines()]
    assert [a["error"]["kind"] for a in answers[:2]] == ["bad-request", "bad-request"]
    assert [a["id"] for a in answers] == [None, None, 1] and answers[2]["ok"] is True


def adapter_threads(argv: list[str], blas_threads: str | None) -> int:
    """How many threads an adapter process runs once ``new`` is answered (numpy imported)."""
    env = {name: value for name, value in os.environ.items() if name != "OPENBLAS_NUM_THREADS"}
    if blas_threads is not None:
        env["OPENBLAS_NUM_THREADS"] = blas_threads
    process = subprocess.Popen(
        [sys.executable, "-m", "conformance", "adapter", *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    try:
        process.stdin.write(line({"id": 1, "op": "hello", "protocol": 1}))
        process.stdin.write(line({"id": 2, **NEW}))
        process.stdin.flush()
        received = b""
        while received.count(b"\n") < 2:
            ready, _, _ = select.select([process.stdout], [], [], TIMEOUT)
            assert ready, f"no answer to hello and new within {TIMEOUT} s"
            chunk = os.read(process.stdout.fileno(), 1 << 16)
            assert chunk, "the adapter exited before answering hello and new"
            received += chunk
        answers = [json.loads(raw) for raw in received.splitlines()]
        assert [answer["ok"] for answer in answers] == [True, True], answers
        return len(os.listdir(f"/proc/{process.pid}/task"))
    finally:
        process.kill()
        process.wait(TIMEOUT)


def numpy_blas() -> str:
    """The name of the BLAS numpy was built with (numpy's wheels ship OpenBLAS)."""
    import numpy

    try:
        return str(numpy.__config__.CONFIG["Build Dependencies"]["blas"]["name"])
    except (AttributeError, KeyError, TypeError):
        return "unknown"


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
@pytest.mark.skipif("openblas" not in numpy_blas(), reason="numpy is not built with OpenBLAS")
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS starts no pool on one CPU")
@pytest.mark.parametrize(
    "argv", [[], ["--mutant", "ties-to-higher-position"]], ids=["reference", "mutant"]
)
def test_the_adapter_starts_no_blas_thread_pool_unless_asked(argv: list[str]) -> None:
    # The control shows the count sees OpenBLAS's pool when it is asked for.
    assert adapter_threads(argv, blas_threads="2") > 1
    assert adapter_threads(argv, blas_threads=None) == 1


# -- the fast decoding path ------------------------------------------------------------------------

HOSTILE_LINES = [
    b'{"id":1,"op":"step","pos":1,"attn":[NaN]}',
    b'{"id":1,"op":"step","pos":1,"attn":[Infinity]}',
    b'{"id":1,"op":"step","pos":1,"attn":[1e5000]}',
    b'{"id":1,"op":"step","pos":1,"attn":[-1e400, 0.5]}',
    b'{"id":1,"op":"step","pos":1,"attn":[1000000000000000000000000000000000000000]}',
    b'{"id":1,"op":"step","pos":1,"attn":[18446744073709551616]}',
    b'{"id":1,"op":"step","pos":1,"attn":[-9223372036854775809]}',
    b'{"id":1,"op":"step","pos":1,"attn":[9223372036854775807, 0.5]}',
    b'{"id":1,"op":"step","pos":123456789012345678901234567890,"attn":null}',
    b'{"id":123456789012345678901234567890,"op":"evict"}',
    b'{"id":1,"op":"new","params":{"budget":99999999999999999999,"recentWindow":1,'
    b'"obsWindow":1,"poolKernel":1},"seed":0}',
    b'{"id":1,"op":"new","params":{"budget":4,"recentWindow":1,"obsWindow":1,"poolKernel":1},'
    b'"seed":18446744073709551617}',
    b'{"id":1,"op":"new","params":[99999999999999999999],"seed":0}',
    b'{"id":1,"op":"hello","protocol":18446744073709551617}',
    b'{"id":1,"op":"step","pos":1,"attn":["\\ud800"]}',
    b'{"id":1,"op":"step","pos":1,"attn":[[99999999999999999999]]}',
    b'{"id":1,"op":"step","pos":1,"attn":[0.5],"x":' + b"[" * 70 + b"]" * 70 + b"}",
    # an unread field at the strict codec's limit (64 levels with the request) and one past it
    b'{"id":1,"op":"evict","x":' + b"[" * 63 + b"]" * 63 + b"}",
    b'{"id":1,"op":"evict","x":' + b"[" * 64 + b"]" * 64 + b"}",
    b'{"id":1,"op":"evict","x":{"y":' + b"[" * 62 + b"]" * 62 + b"}}",
    b'{"id":1,"op":"evict","x":{"y":' + b"[" * 63 + b"]" * 63 + b"}}",
    b'{"id":1,"op":"new","params":{"budget":' + b"[" * 70 + b"]" * 70 + b"}}",
    # a step's weights are read without the check for the reference: what orjson reads
    # differently must still get the strict codec's answers
    b'{"id":1,"op":"step","pos":0,"attn":[' + b"[" * 70 + b"]" * 70 + b"]}",
    b'{"id":1,"op":"step","pos":-1,"attn":[' + b"[" * 70 + b"]" * 70 + b"]}",
    b'{"id":1,"op":"step","pos":1,"attn":[-18446744073709551617]}',
    b'{"id":1,"op":"step","pos":1,"attn":[340282366920938463463374607431768211456000]}',
    b'{"id":1,"op":"evict","attn":[' + b"[" * 70 + b"]" * 70 + b"]}",
    b'{"id":1,"op":"step","pos":1,"attn":[0.5],"x":' + b"[" * 2000 + b"]" * 2000 + b"}",
    b'{"id":1,"op":"step","pos":1,"attn":[0.5],"pos":2}',
    b'{"id":1,"op":"step","pos":1,"attn":[true, 0.5]}',
    b'{"id":1,"op":"step","pos":1.0,"attn":[4.0, 4]}',
    b'{"id":1,"op":"step","pos":-0,"attn":[-0.0]}',
    b'\xef\xbb\xbf{"id":1,"op":"evict"}',
    b'{"id":1,"op":"evict","x":"\xed\xa0\x80"}',
    b'{"id":1,"op":"evict"}\x0c',
    b'{"id":1,"op":"evict",}',
    b'{"id":1,"op":"ev\\u0069ct"}',
    b"[1]",
    b'"x"',
]


def _strict_answers(lines: list[bytes]) -> list[bytes]:
    from conformance.adapter import server

    session = Session()
    answers = []
    for line in lines:
        try:
            request = server.decode(line)
        except ValueError as error:
            answer = server.refusal(
                None, "bad-request", f"request is not a JSON object line: {error}"
            )
        else:
            answer = session.handle(request)
        answers.append(server.encode(answer))
    return answers


def _fast_answers(lines: list[bytes]) -> list[bytes]:
    from conformance.adapter import server

    session = Session()
    return [server.encode(session.handle_line(line)) for line in lines]


NEW_LINE = (
    b'{"id":0,"op":"new","params":{"budget":3,"recentWindow":1,"obsWindow":2,"poolKernel":3},'
    b'"seed":0}'
)


@pytest.mark.parametrize("line", HOSTILE_LINES)
def test_the_fast_path_answers_every_hostile_line_as_the_strict_codec(line: bytes) -> None:
    from conformance.adapter import server

    assert server._orjson is not None, "orjson is installed with the kit"
    lines = [NEW_LINE, b'{"id":5,"op":"step","pos":0,"attn":[]}', line]
    assert _fast_answers(lines) == _strict_answers(lines)


numbers = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=0),
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(numbers, max_size=6),
    st.one_of(numbers, st.none()),
    st.one_of(numbers, st.text(max_size=3)),
)
def test_the_fast_path_answers_random_numbers_as_the_strict_codec(attn, pos, extra) -> None:
    lines = [
        NEW_LINE,
        json.dumps({"id": 2, "op": "step", "pos": pos, "attn": attn, "x": extra}).encode(),
        json.dumps({"id": 3, "op": "step", "pos": 0, "attn": attn}).encode(),
        json.dumps({"id": 4, "op": "new", "params": {"budget": pos}, "seed": pos}).encode(),
    ]
    assert _fast_answers(lines) == _strict_answers(lines)


weights = st.one_of(
    st.integers(0, 10**40),  # beyond 64 bits orjson reads a float; beyond float32, refused
    st.integers(-(10**40), -1),
    st.floats(min_value=0, allow_nan=False, allow_infinity=False),
    st.floats(width=32, min_value=0, allow_infinity=False),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(weights, min_size=3, max_size=3), st.integers(0, 2))
def test_weights_read_without_the_check_narrow_as_the_strict_codec_reads_them(values, deep) -> None:
    """The reference's own policies take a step's weights from orjson unchecked: accepted
    weights must sum to the same bits (the scores answer shows them), and a refused step must
    get the strict codec's answer, message and all."""
    nested = "[" * 70 * deep + "]" * 70 * deep
    lines = [
        NEW_LINE,
        b'{"id":1,"op":"step","pos":0,"attn":[]}',
        json.dumps({"id": 2, "op": "step", "pos": 1, "attn": values[:1]}).encode(),
        json.dumps({"id": 3, "op": "step", "pos": 2, "attn": values[1:]}).encode(),
        f'{{"id":4,"op":"step","pos":-1,"attn":[{nested}]}}'.encode(),
        b'{"id":5,"op":"scores"}',
    ]
    assert _fast_answers(lines) == _strict_answers(lines)


json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=4)
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.integers(-(2**70), 2**70), json_scalars),
    st.one_of(st.just(True), json_scalars),
    st.one_of(
        st.none(),
        st.lists(st.integers(-(2**70), 2**70), max_size=5),
        st.lists(json_scalars, max_size=3),
    ),
    st.booleans(),
)
def test_the_server_writes_a_decode_loop_s_answers_as_the_encoder_does(
    request_id, ok, victims, ok_first
) -> None:
    from conformance.adapter.server import _encode_answer
    from conformance.spec.protocol import encode

    answer = {"ok": ok, "id": request_id} if ok_first else {"id": request_id, "ok": ok}
    if victims is not None:
        answer["victims"] = victims
    try:
        expected = encode(answer)
    except ValueError:  # NaN or infinity: the encoder refuses, and so must the shortcut
        with pytest.raises(ValueError):
            _encode_answer(answer)
        return
    assert _encode_answer(answer) == expected
