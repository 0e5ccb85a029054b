"""``snapkv-conformance show ID``: the requests a run sends, byte for byte and with the runner's
ids, the answers the reference adapter gives them, the Catches text and the file, from a
checkout and from an installed wheel alike; an id that names nothing is one line and exit 2;
a long vector's output and memory stay bounded.

Every expectation comes from outside ``show``: the bytes a real run writes to an adapter (read
by ``tee`` on their way in), the reference adapter's answers to them, and the vector files as
the standard library's ``json`` reads them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from conformance.report import show
from conformance.spec import resources
from conformance.suite.vectors import LONG_VECTOR
from tests.support.runner_support import REFERENCE_ARGV
from tests.support.wheel import build_wheel

SUITE = resources.suite_dir()
DOCS = Path(__file__).resolve().parents[2] / "docs" / "show.md"


def kit(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "conformance", *args],
        capture_output=True,
        timeout=300,
        check=False,
        cwd=cwd,
        env={**os.environ, **env},
    )


def shown_text(*args: str) -> str:
    done = kit("show", *args)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr == b""
    return done.stdout.decode()


def arrows(text: str, arrow: str) -> list[str]:
    """The requests (``>``) or answers (``<``) of a view, without their labels and notes."""
    found = re.findall(rf"^(?:call \d+|line \d+)? *{arrow} (.*)$", text, re.M)
    return [re.sub(r"   \((?:blank: )?no answer\)$|   \(no LF at the end\)$", "", f) for f in found]


def teed_run(item_id: str, log: Path) -> bytes:
    """What ``snapkv-conformance run -k ITEM`` writes to the reference adapter, read by tee."""
    adapter = f"sh -c {shlex.quote(f'tee {shlex.quote(str(log))} | {shlex.join(REFERENCE_ARGV)}')}"
    done = kit("run", "-k", item_id, "--adapter", adapter)
    assert done.returncode == 0, done.stdout.decode()[-2000:] + done.stderr.decode()[-2000:]
    assert done.stdout.decode().rstrip().endswith("1 passed, 0 failed"), "one item alone"
    return log.read_bytes()


SENT = [
    "ties/lower-position-first",  # the plain case
    "attention/float32-rounding-midpoint",  # a refused call: its weights sent as written
    "rounding/many-digits-sent-as-written",  # a 41-digit weight no float64 keeps
    "protocol/utf8-invalid-bytes",  # a protocol check: bytes that are not UTF-8
    "protocol/last-line-without-lf",
]


@pytest.mark.slow
@pytest.mark.parametrize("item_id", SENT)
def test_the_requests_shown_are_the_bytes_a_run_of_the_item_alone_writes(
    item_id: str, tmp_path: Path
) -> None:
    sent = teed_run(item_id, tmp_path / "sent.bin")
    done = kit("show", item_id, "--requests")
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == sent
    if not item_id.startswith("protocol/"):  # a vector's lines are ASCII, shown as they are
        view = shown_text(item_id)
        assert arrows(view, ">") == sent.decode().splitlines()


def reference_answers(requests: bytes) -> list[dict[str, Any]]:
    done = subprocess.run(
        REFERENCE_ARGV, input=requests, capture_output=True, timeout=60, check=True
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize(
    "item_id",
    [
        "attention/float32-rounding-midpoint",
        "ties/many-candidates",
        "params/budget-fraction",  # a refused new, the only call
        "protocol/scores-kept-positions",
        "protocol/blank-lines",
    ],
)
def test_the_answers_shown_are_what_the_reference_adapter_answers(item_id: str) -> None:
    """Each answer shown holds fields of the reference adapter's own answer to the request
    above it (the first answer shown per line: the reference announces ``scores``), with the
    same values; ``{...}`` and ``[...]`` stand for the port's own."""
    view = shown_text(item_id)
    requests = kit("show", item_id, "--requests").stdout
    answers = reference_answers(requests)
    shown: list[str] = []  # the first answer under each request; blank lines have none
    answered = True
    for line in view.splitlines():
        if re.match(r"^(?:call \d+|line \d+)? *> ", line):
            answered = False
        elif re.match(r"^ *< ", line) and not answered:
            shown.append(line.split("< ", 1)[1])
            answered = True
    assert len(shown) == len(answers), (shown, answers)
    for text, answer in zip(shown, answers, strict=True):
        wanted = json.loads(text.replace("{...}", "null").replace("[...]", "null"))
        for name, value in wanted.items():
            if value is None and name != "id":
                assert name in answer, (name, answer)
            elif name == "error":
                assert answer["error"]["kind"] == value["kind"], (text, answer)
                assert set(value) == {"kind"}
            else:
                assert answer[name] == value, (text, answer)


def test_the_view_names_the_file_the_catches_text_and_the_calls(tmp_path: Path) -> None:
    item_id = "ties/lower-position-first"
    path = SUITE / f"{item_id}.json"
    data = json.loads(path.read_text())
    view = shown_text(item_id)
    pins, _, catches = data["description"].rpartition("Catches:")
    assert view.startswith(f"{item_id} (vector)\n")
    assert f"\n  file:    {path}\n" in view
    assert f"\n  catches: {catches.strip()}\n" in view
    assert f"\n  pins:    {pins.strip()}\n" in view
    # Each call of the file, in order, its id the runner's: hello 1, call i at i + 2.
    requests = [json.loads(line) for line in arrows(view, ">")]
    assert requests[0] == {"id": 1, "op": "hello", "protocol": 1}
    assert requests[-1] == {"id": len(data["calls"]) + 2, "op": "bye"}
    for index, (call, request) in enumerate(zip(data["calls"], requests[1:-1], strict=True)):
        call.pop("expect", None)
        assert request == {"id": index + 2, **call}
        assert re.search(rf"^call {index} +> .*\"id\":{index + 2},", view, re.M)


@pytest.mark.parametrize(
    "command",
    [
        "show ties/lower-position-first",
        "show attention/float32-rounding-midpoint --calls 3:5",
        "show protocol/utf8-invalid-bytes",
    ],
)
def test_the_docs_examples_are_what_show_prints(command: str) -> None:
    """docs/show.md pastes output from a run (from a wheel, so its file line is that
    machine's); each example, or its tail after "...", is what show prints now."""
    pasted = re.search(
        rf"^\$ snapkv-conformance {re.escape(command)}\n(.*?)^```$", DOCS.read_text(), re.M | re.S
    )
    assert pasted is not None, command
    view = shown_text(*command.split()[1:])
    file_line = re.compile(r"^  file: .*$", re.M)
    example = file_line.sub("  file: F", pasted[1])
    if example.startswith("...\n"):
        assert view.endswith(example.removeprefix("...\n")), view
    else:
        assert example == file_line.sub("  file: F", view)


def _code_blocks(text: str) -> list[str]:
    return re.findall(r"^```\n(.*?)^```$", text, re.M | re.S)


def _as_pasted(pasted: str, printed: str) -> None:
    """``printed`` begins with the lines of ``pasted``; a pasted line that ends in ``...`` is
    the start of the printed one."""
    want, got = pasted.splitlines(), printed.splitlines()
    assert len(got) >= len(want), (pasted, printed)
    for line, actual in zip(want, got, strict=False):
        if line.endswith(" ..."):
            assert actual.startswith(line.removesuffix("...")), (line, actual)
        else:
            assert actual == line


MUTANT = [*REFERENCE_ARGV, "--mutant", "ties-to-higher-position"]


def test_the_docs_fail_line_replay_and_errors_are_what_the_kit_prints() -> None:
    """docs/show.md's other examples: the FAIL block that names show (a run of the planted
    mistake), the requests piped into that adapter, and the two refusals."""
    text = DOCS.read_text()
    item_id = "ties/lower-position-first"
    fail_block = next(block for block in _code_blocks(text) if block.startswith("FAIL "))
    failed = kit("run", "-k", item_id, "--adapter", shlex.join(MUTANT))
    assert failed.returncode == 1, failed.stderr.decode()[-2000:]
    _as_pasted(fail_block, failed.stdout.decode())

    replay = f"$ snapkv-conformance show {item_id} --requests | ./my-adapter\n"
    pasted = text.split(replay, 1)[1].split("```", 1)[0]
    requests = kit("show", item_id, "--requests").stdout
    answers = subprocess.run(MUTANT, input=requests, capture_output=True, timeout=60, check=True)
    assert answers.stdout.decode() == pasted

    refusals = re.findall(
        r"^\$ snapkv-conformance show (\S+)\n(snapkv-conformance show: .*)$", text, re.M
    )
    assert len(refusals) == 2, refusals
    for wanted, message in refusals:
        done = kit("show", wanted)
        assert done.returncode == 2
        assert done.stdout == b"" and done.stderr.decode() == message + "\n"


def test_a_protocol_check_shows_its_rule_and_its_bytes_line_by_line() -> None:
    path = SUITE / "protocol" / "blank-lines.json"
    data = json.loads(path.read_text())
    view = shown_text("protocol/blank-lines")
    assert f"\n  rule:    {data['rule']}\n" in view
    sent = "".join(data["send"]).split("\n")[:-1]
    lines = re.findall(r"^line (\d+) +> (.*)$", view, re.M)
    assert [int(number) for number, _ in lines] == list(range(len(sent)))
    blank = [int(n) for n, text in lines if text.endswith("(blank: no answer)")]
    assert blank == [i for i, line in enumerate(sent) if not line.strip(" \t\r")]
    assert re.search(r"^line 2 +>   \\t\\r   \(blank: no answer\)$", view, re.M)


def test_an_unknown_id_is_one_line_naming_close_ids_and_exit_2() -> None:
    done = kit("show", "ties/lower-positon-first")
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.decode().splitlines() == [
        "snapkv-conformance show: error: no vector or protocol check has the id "
        "'ties/lower-positon-first'; close ids: ties/lower-position-first"
    ]


def test_a_pattern_that_selects_several_ids_names_them_and_exits_2() -> None:
    done = kit("show", "ties/all-equal")
    assert done.returncode == 2
    (line,) = done.stderr.decode().splitlines()
    assert "'ties/all-equal' matches 3 ids: ties/all-equal-1025, ties/all-equal-129" in line


def test_a_pattern_that_selects_one_id_alone_shows_it() -> None:
    assert shown_text("*lower-position-f*").startswith("ties/lower-position-first (vector)\n")


def test_a_window_shows_those_calls_and_says_what_it_left_out() -> None:
    view = shown_text("ties/lower-position-first", "--calls", "2:4")
    assert re.findall(r"^call (\d+) ", view, re.M) == ["2", "3"]
    assert '"op":"hello"' not in view and '"op":"bye"' not in view
    assert view.rstrip().endswith(
        "4 calls of 6 left out: 2 before (calls 0 to 1) and 2 after (calls 4 to 5); "
        "--calls A:B shows calls A to B-1, --requests writes the request bytes alone"
    )


@pytest.mark.parametrize("window", ["3:2", "x", "-1:4", "1:b"])
def test_a_window_that_is_not_one_is_a_usage_error(window: str) -> None:
    done = kit("show", "ties/lower-position-first", f"--calls={window}")
    assert done.returncode == 2
    assert done.stderr.decode().startswith("snapkv-conformance show: error: --calls: ")


# -- long vectors ------------------------------------------------------------------------------

PARAMS = {"budget": 4, "recentWindow": 1, "obsWindow": 2, "poolKernel": 3}


def long_vector(path: Path, count: int) -> list[dict[str, Any]]:
    """A vector of ``count`` calls in the canonical layout: steps of null attention, each but
    the last followed by an evict. Every score is 0, so once five positions are kept the
    lowest goes (ties to the lower position; one recent entry protected)."""
    calls: list[dict[str, Any]] = [{"op": "new", "params": PARAMS, "seed": 0}]
    pos = 0
    while len(calls) < count:
        calls.append({"op": "step", "pos": pos, "attn": None})
        if len(calls) < count:
            calls.append({"op": "evict", "expect": {"victims": [pos - 4] if pos >= 4 else []}})
        pos += 1
    head = {
        "format": "snapkv-vector/1",
        "id": "memory/long",
        "description": "A long stream of null steps. Catches: nothing in particular.",
        "tags": ["null"],
        "params": PARAMS,
        "seed": 0,
    }
    top = [f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}," for k, v in head.items()]
    body = ",\n".join("    " + json.dumps(c, separators=(",", ":")) for c in calls)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{\n" + "\n".join(top) + '\n  "calls": [\n' + body + "\n  ]\n}\n")
    return calls


def test_a_long_vector_shows_its_first_calls_and_how_to_see_the_rest(tmp_path: Path) -> None:
    count = LONG_VECTOR + 501
    long_vector(tmp_path / "suite" / "memory" / "long.json", count)
    suite = str(tmp_path / "suite")
    view = shown_text("memory/long", suite)
    numbers = re.findall(r"^call (\d+) ", view, re.M)
    assert numbers == [str(i) for i in range(show.HEAD_CALLS)]
    assert len(view.splitlines()) < 2 * show.HEAD_CALLS + 30
    left = count - show.HEAD_CALLS
    assert (
        view.rstrip()
        .splitlines()[-1]
        .startswith(
            f"{left:,} calls of {count:,} left out: {left:,} after (calls {show.HEAD_CALLS:,} to "
            f"{count - 1:,}); --calls {show.HEAD_CALLS}:{count} shows the rest"
        )
    )
    tail = shown_text("memory/long", suite, "--calls", f"{count - 2}:")
    requests = [json.loads(line) for line in arrows(tail, ">")]
    assert [request["id"] for request in requests] == [count, count + 1, count + 2]
    assert requests[-1]["op"] == "bye"


def test_a_long_vector_s_requests_are_its_calls_with_the_runner_s_ids(tmp_path: Path) -> None:
    calls = long_vector(tmp_path / "suite" / "memory" / "long.json", LONG_VECTOR + 1)
    done = kit("show", "memory/long", str(tmp_path / "suite"), "--requests")
    assert done.returncode == 0, done.stderr.decode()
    requests = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(requests) == len(calls) + 2
    for index, call in enumerate(calls):
        call.pop("expect", None)
        assert requests[index + 1] == {"id": index + 2, **call}


@pytest.mark.slow
def test_showing_a_longer_vector_costs_about_its_extra_bytes(tmp_path: Path) -> None:
    """Writing every request of a long vector holds its file's bytes and nothing per call:
    from 11,001 to 31,001 calls the peak (traced, in this process) grows by less than twice
    the file's growth."""

    def peak(path: Path) -> int:
        tracemalloc.start()
        try:
            shown = show.find([path.parent.parent], "memory/long")
            written = sum(len(chunk) for chunk in show.request_bytes(shown))
            lines = sum(1 for _ in show.view_lines(shown, show.Window()))
            _, traced = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert written > path.stat().st_size / 2 and lines > 2 * shown.count
        return traced

    short = tmp_path / "a" / "memory" / "long.json"
    longer = tmp_path / "b" / "memory" / "long.json"
    long_vector(short, LONG_VECTOR + 1_001)
    long_vector(longer, LONG_VECTOR + 21_001)
    peak(short)  # the first pass loads what any pass loads
    grown = peak(longer) - peak(short)
    extra = longer.stat().st_size - short.stat().st_size
    assert grown < 2 * extra, (grown, extra)


# -- from an installed wheel -------------------------------------------------------------------


@pytest.mark.slow
def test_show_works_from_an_installed_wheel_and_names_the_file_in_it(tmp_path: Path) -> None:
    """The wheel unpacked into a directory of its own, run from elsewhere: the file shown is
    the installed copy, and the rest of the view is the checkout's."""
    wheel = build_wheel(tmp_path / "dist")
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", target, wheel],
        check=True,
        capture_output=True,
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    item_id = "ties/lower-position-first"
    done = kit("show", item_id, cwd=work, PYTHONPATH=str(target))
    assert done.returncode == 0, done.stderr.decode()
    installed = target / "conformance" / "data" / "vectors" / f"{item_id}.json"
    view = done.stdout.decode()
    assert f"\n  file:    {installed.resolve()}\n" in view
    assert installed.read_bytes() == (SUITE / f"{item_id}.json").read_bytes()
    here = shown_text(item_id)
    assert view.replace(str(installed.resolve()), "FILE") == here.replace(
        str(SUITE / f"{item_id}.json"), "FILE"
    )
    requests = kit("show", item_id, "--requests", cwd=work, PYTHONPATH=str(target))
    assert requests.stdout == kit("show", item_id, "--requests").stdout
