"""What ``snapkv-conformance show ID`` prints: a vector's or a protocol check's requests as the
adapter receives them, under each the answer it must get, with the item's "Catches:" text and
the file it came from.

A vector's request lines are the runner's own bytes: each call's body as
:func:`conformance.suite.stream.read_for_run` reads it from the file (weights as written, never
parsed and encoded again), with its id spliced in as :mod:`conformance.transport.framing` does,
numbered as a run of the vector alone on a fresh adapter numbers them
(``snapkv-conformance run -k ID``): ``hello`` is :data:`FIRST_ID`, call ``i`` (the number a
``FAIL`` line gives) is ``FIRST_ID + 1 + i``, and ``bye`` follows the last call. In a longer run
the ids go on from the vectors before, on the same adapter. A protocol check's lines are its
own bytes, ids included, written to an adapter of their own.

Each answer shows the fields the runner judges: ``{...}`` and ``[...]`` stand for values the
port chooses, a refusal's message is free, and so are an answer's spacing and field order.

Bounded whatever the file holds: the lines are made one at a time (a long vector's calls from
their lines, as ``run`` reads them: the file's bytes are held and nothing per call), a vector of
more than :data:`~conformance.suite.vectors.LONG_VECTOR` calls shows its first
:data:`HEAD_CALLS` unless a window is asked for (``--calls A:B``), and a line longer than
:data:`LINE_LIMIT` characters is cut in the view (:func:`request_bytes` writes every byte).
"""

from __future__ import annotations

import json
import re
import shlex
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.spec import resources
from conformance.spec.protocol import PROTOCOL_VERSION, encode_body
from conformance.spec.text import escape, split_description
from conformance.suite.discovery import pick_one
from conformance.suite.protocol_checks import ProtocolCheck, load_check
from conformance.suite.stream import RunnableVector, SuiteEntry, plan_suite, read_for_run
from conformance.suite.vectors import LONG_VECTOR
from conformance.transport.framing import REQUEST_LINE
from conformance.transport.session import FIRST_ID

#: Calls of a long vector (more than :data:`~conformance.suite.vectors.LONG_VECTOR`) shown when
#: no window is asked for.
HEAD_CALLS = 1_000
#: Bytes of one request (characters of one answer) shown; the committed suite's longest
#: vector line has about 12,000 (a step of 2,049 weights), its protocol checks one of 200,000
#: (deep nesting).
LINE_LIMIT = 20_000

#: The legend's line width.
LEGEND_WIDTH = 96

#: The session's own requests, as :class:`conformance.runner.client.Client` sends them.
_HELLO = {"op": "hello", "protocol": PROTOCOL_VERSION}
_BYE = {"op": "bye"}


@dataclass(frozen=True)
class Exchange:
    """One request line and what must answer it."""

    #: ``call 12`` or ``line 3``; empty for a vector session's ``hello`` and ``bye``.
    label: str
    #: The bytes written, its LF included (a protocol check's last line may have none).
    request: bytes
    #: The answers allowed, as text; the first is the one due, the others say when they hold.
    answers: tuple[str, ...] = ()
    #: What the view adds after the request (``blank: no answer``).
    note: str = ""


@dataclass(frozen=True)
class Window:
    """The calls (a protocol check's lines) ``start`` to ``stop - 1``; ``stop`` None: to the
    end. Python's slice rules clamp it to what the item holds."""

    start: int = 0
    stop: int | None = None

    def bounds(self, count: int) -> tuple[int, int]:
        start, stop, _ = slice(self.start, self.stop).indices(count)
        return start, max(start, stop)


def parse_window(text: str) -> Window:
    """``A:B``, ``A:``, ``:B`` or ``A`` (one call) as a :class:`Window`; raise ValueError naming
    the fault. Numbers are call numbers as ``FAIL`` lines give them (from 0)."""
    head, colon, tail = text.partition(":")
    if not text.strip():
        raise ValueError("expected A:B with call numbers (A:, :B or A alone), got nothing")
    try:
        start = int(head) if head.strip() else 0
        stop = (int(tail) if tail.strip() else None) if colon else start + 1
    except ValueError:
        raise ValueError(
            f"expected A:B with call numbers (A:, :B or A alone), got {text!r}"
        ) from None
    if start < 0 or (stop is not None and stop < 0):
        raise ValueError(f"call numbers count from 0, got {text!r}")
    if stop is not None and stop <= start:
        raise ValueError(f"{text!r} holds no call: B must be greater than A")
    return Window(start, stop)


class VectorView:
    """A vector, read as ``run`` reads it, shown call by call."""

    kind = "vector"
    unit = "call"

    def __init__(self, entry: SuiteEntry, runnable: RunnableVector) -> None:
        self.id = entry.id
        self.path = entry.path
        self.runnable = runnable
        self.count = len(runnable.vector.calls)

    def header(self) -> list[tuple[str, str]]:
        vector = self.runnable.vector
        pins, catches = split_description(vector.description)
        last = f"numbered 0 to {self.count - 1:,}, as FAIL lines number them"
        return [
            ("file", str(self.path)),
            ("catches", catches or "(the description names no mistake)"),
            ("pins", pins),
            ("tags", ", ".join(vector.tags)),
            ("params", f"{_compact(vector.params)}, seed {_compact(vector.seed)}"),
            ("calls", f"{self.count:,} ({last})"),
        ]

    def legend(self) -> str:
        return (
            "What the adapter reads (>) and must answer (<), with the ids of a run of this "
            f"vector alone on a fresh adapter (snapkv-conformance run -k {self.id}); in a "
            "longer run the ids go on from the vectors before it. An answer shows the fields "
            "the runner judges: {...} and [...] are the port's own values, a refusal's "
            "message is free, and so are spacing and field order."
        )

    def default_window(self) -> Window:
        return Window(0, HEAD_CALLS) if self.count > LONG_VECTOR else Window()

    def exchanges(self, window: Window) -> Iterator[Exchange]:
        start, stop = window.bounds(self.count)
        calls = self.runnable.vector.calls
        bodies = self.runnable.prepared.bodies
        if start == 0:
            yield Exchange("", _line(FIRST_ID, encode_body(_HELLO)), (_hello_answer(),))
        for index in range(start, stop):
            request_id = FIRST_ID + 1 + index
            call = calls[index]
            yield Exchange(
                f"call {index}",
                _line(request_id, bodies[index]),
                (_call_answer(request_id, call.expected_error, call.expected_victims),),
            )
        if stop == self.count:
            bye = FIRST_ID + 1 + self.count
            yield Exchange("", _line(bye, encode_body(_BYE)), (_compact({"id": bye, "ok": True}),))


class CheckView:
    """A protocol check, shown line by line of the bytes it sends."""

    kind = "protocol check"
    unit = "line"

    def __init__(self, entry: SuiteEntry, check: ProtocolCheck) -> None:
        self.id = entry.id
        self.path = entry.path
        self.check = check
        payload = check.payload
        self.lines = payload.split(b"\n")
        self.ends_with_lf = self.lines[-1] == b""
        if self.ends_with_lf:
            self.lines.pop()
        self.count = len(self.lines)

    def header(self) -> list[tuple[str, str]]:
        pins, catches = split_description(self.check.description)
        return [
            ("file", str(self.path)),
            ("rule", self.check.rule),
            ("catches", catches or "(the description names no mistake)"),
            ("pins", pins),
            ("lines", f"{self.count:,} (numbered from 0: a FAIL line's call N is line N)"),
        ]

    def legend(self) -> str:
        return (
            "The bytes written to an adapter process of its own, line by line (>), and the "
            "answer each line must get (<); then its input is closed and it must exit with "
            "status 0. A byte that is not UTF-8 is shown as \\xNN, a tab as \\t, a CR as \\r. "
            "An answer shows the fields the runner judges: [...] are the port's own values, a "
            "refusal's message is free, and so are spacing and field order."
        )

    def default_window(self) -> Window:
        return Window()

    def exchanges(self, window: Window) -> Iterator[Exchange]:
        start, stop = window.bounds(self.count)
        expected = {item["line"]: item for item in self.check.expect}
        for index in range(start, stop):
            last = index == self.count - 1 and not self.ends_with_lf
            raw = self.lines[index] + (b"" if last else b"\n")
            note = "no LF at the end" if last else ""
            item = expected.get(index)
            if item is not None:
                yield Exchange(f"line {index}", raw, _check_answers(item), note)
                continue
            blank = not self.lines[index].strip(b" \t\r")
            why = "blank: no answer" if blank else "no answer"
            yield Exchange(f"line {index}", raw, (), f"{note}; {why}" if note else why)


Shown = VectorView | CheckView


def find(paths: Sequence[str | Path], wanted: str) -> Shown:
    """The vector or protocol check under ``paths`` that ``wanted`` names (its id, or a ``-k``
    pattern selecting it alone: :func:`conformance.suite.discovery.pick_one`), read as ``run``
    reads it. Raises :class:`conformance.suite.discovery.NoSuchItem`,
    :class:`conformance.spec.errors.VectorError` or
    :class:`conformance.suite.protocol_checks.CheckError`, each a one-line message."""
    plan = plan_suite(paths)
    entry = pick_one(sorted([*plan.vectors, *plan.checks], key=lambda item: item.id), wanted)
    if entry in plan.checks:
        return CheckView(entry, load_check(entry.path))
    return VectorView(entry, read_for_run(entry))


def view_lines(shown: Shown, window: Window | None = None) -> Iterator[str]:
    """The text ``show`` prints, a line at a time: the header, the legend, then each request
    (``>``) with the answers it must get (``<``); a window that leaves calls out ends with a
    line saying how many and how to see them."""
    yield f"{escape(shown.id, one_line=True)} ({shown.kind})"
    for name, value in shown.header():
        yield f"  {name + ':':9}{escape(value, one_line=True)}"
    yield ""
    yield from textwrap.wrap(shown.legend(), LEGEND_WIDTH, break_on_hyphens=False)
    yield ""
    asked = window is not None
    window = window or shown.default_window()
    start, stop = window.bounds(shown.count)
    width = len(f"{shown.unit} {max(shown.count - 1, 0)}") + 2
    for exchange in shown.exchanges(window):
        request = _shown(exchange.request.removesuffix(b"\n"))
        if exchange.note:
            request += f"   ({exchange.note})"
        yield f"{exchange.label:{width}}> {request}"
        for answer in exchange.answers:
            yield f"{'':{width}}< {answer}"
    left_before, left_after = start, shown.count - stop
    if left_before or left_after:
        parts = []
        if left_before:
            parts.append(f"{left_before:,} before ({shown.unit}s 0 to {start - 1:,})")
        if left_after:
            parts.append(f"{left_after:,} after ({shown.unit}s {stop:,} to {shown.count - 1:,})")
        again = "" if asked else f"; --calls {stop}:{shown.count} shows the rest"
        yield ""
        yield (
            f"{left_before + left_after:,} {shown.unit}s of {shown.count:,} left out: "
            f"{' and '.join(parts)}{again}; --calls A:B shows {shown.unit}s A to B-1, "
            "--requests writes the request bytes alone"
        )


def request_bytes(shown: Shown, window: Window | None = None) -> Iterator[bytes]:
    """The bytes the adapter reads, exactly (``show --requests``): a vector's session from
    ``hello`` to ``bye``, or a protocol check's bytes; a window keeps its calls or lines (and a
    vector's ``hello`` only when it starts at 0, its ``bye`` only when it reaches the end)."""
    for exchange in shown.exchanges(window or Window()):
        yield exchange.request


def show_command(item_id: str, paths: Sequence[str | Path] = ()) -> str:
    """The command that shows ``item_id`` (for a ``FAIL`` line): the suite's paths are named
    unless they are the committed suite's (the default)."""
    command = f"snapkv-conformance show {shlex.quote(item_id)}"
    if not paths:
        return command
    try:
        default = [Path(path).resolve() for path in paths] == [resources.suite_dir()]
    except (OSError, FileNotFoundError):
        default = False
    if default:
        return command
    return command + " " + " ".join(shlex.quote(str(path)) for path in paths)


# -- pieces ------------------------------------------------------------------------------------


def _line(request_id: int, body: bytes) -> bytes:
    """A request line as the transport writes it (:data:`~conformance.transport.framing.
    REQUEST_LINE`)."""
    return REQUEST_LINE % (request_id, body)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _hello_answer() -> str:
    answer = _compact({"id": FIRST_ID, "ok": True, "protocol": PROTOCOL_VERSION})
    return answer[:-1] + ',"implementation":{...},"capabilities":[...]}'


def _call_answer(request_id: int, error: str | None, victims: list[int] | None) -> str:
    if error is not None:
        return _compact({"id": request_id, "ok": False, "error": {"kind": error}})
    if victims is not None:
        return _compact({"id": request_id, "ok": True, "victims": victims})
    return _compact({"id": request_id, "ok": True})


def _check_answers(item: Mapping[str, Any]) -> tuple[str, ...]:
    """A protocol check's expectation for one line: the answer due, then the one due from an
    adapter without the ``scores`` capability, then those an implementation limit allows."""
    answers = [_check_answer(item)]
    without = item.get("without")
    if without is not None:
        capability = without.get("capability", "scores")
        due = {"id": item["id"], **{k: v for k, v in without.items() if k != "capability"}}
        answers.append(f"without the {capability} capability: {_check_answer(due)}")
    answers.extend(
        f"or, within an implementation limit (SPEC.md §3.1): {_check_answer(other)}"
        for other in item.get("latitude", ())
    )
    return tuple(answers)


def _check_answer(item: Mapping[str, Any]) -> str:
    answer: dict[str, Any] = {"id": item["id"], "ok": item["ok"]}
    if not item["ok"]:
        answer["error"] = {"kind": item["error"]}
    for name in ("protocol", "victims", "positions"):
        if name in item:
            answer[name] = item[name]
    text = escape(_compact(answer), one_line=True)
    if "positions" in item:
        text = text[:-1] + ',"sums":[...],"pooled":[...]}'
    return _capped(text)


#: What surrogateescape decoding makes of bytes that are not UTF-8.
_RAW_BYTES = re.compile("([\udc80-\udcff]+)")


def _shown(raw: bytes) -> str:
    """Bytes for a terminal: UTF-8 text escaped (:func:`conformance.spec.text.escape`, one
    line), a byte that is not UTF-8 as ``\\xNN``; only the first :data:`LINE_LIMIT` bytes,
    then how many more there are."""
    pieces = _RAW_BYTES.split(raw[:LINE_LIMIT].decode("utf-8", "surrogateescape"))
    text = "".join(
        escape(piece, one_line=True)
        if number % 2 == 0
        else "".join(f"\\x{ord(char) - 0xDC00:02x}" for char in piece)
        for number, piece in enumerate(pieces)
    )
    if len(raw) > LINE_LIMIT:
        text += f"... ({len(raw) - LINE_LIMIT:,} more bytes; --requests writes every byte)"
    return text


def _capped(text: str) -> str:
    if len(text) <= LINE_LIMIT:
        return text
    cut = len(text) - LINE_LIMIT
    return f"{text[:LINE_LIMIT]}... ({cut:,} more characters)"
