"""The suite as ``run`` reads it: ids first, then one vector at a time, weights left as text.

:func:`plan_suite` finds the vector and protocol check files and reads only each file's id (from
the first lines of a file in the canonical layout, :func:`conformance.suite.vectors.dumps_vector`),
so that ``-k``, shards and suite order are decided before anything is parsed, in memory
proportional to the number of files. :func:`read_for_run` then reads one file when its turn
comes: the calls' fields that judging needs are parsed, and each request line is kept as the
exact bytes to send (a refused call's line less its ``expect``).
A step's attention weights, most of a suite's bytes, are checked to be one JSON array of
numbers (by a regular expression over the text) and never turned into floats; only a scores
diagnosis needs them, and it reads the file again (:meth:`SuiteEntry.load`). A long vector
(more than :data:`~conformance.suite.vectors.LONG_VECTOR` calls) is held as its file's bytes
and where each call's line is; each call and request body is read from its line again when it
is used, so that holding it costs about its file's size (the runner then sends it a piece at
a time and judges its answers as they come: :class:`conformance.judge.checker.Judging`).

The loader's schema check (:func:`conformance.spec.schemas.schema_problems`, the same as
``validate``'s) is applied to every file, a step's weights aside: they are checked to be a JSON
array of numbers, and their values are ``validate``'s to judge. A file in another layout is
read by the loader itself (:func:`conformance.suite.vectors.load_vector`) and its requests encoded:
the same result, only slower. Any fault is a :class:`conformance.spec.errors.VectorError` naming
the file, the JSON pointer and the reason.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.spec.errors import VectorError
from conformance.spec.inputs import InputError, read_suite_file
from conformance.spec.protocol import decode, encode_body
from conformance.spec.schemas import INT31_MAX
from conformance.suite import layout
from conformance.suite.protocol_checks import CheckError, ProtocolCheck, load_check
from conformance.suite.vectors import (
    LONG_VECTOR,
    VECTOR_OPS,
    Call,
    Lines,
    Vector,
    is_protocol_check_head,
    iter_vector_files,
    load_vector,
    read_lazily,
)
from conformance.suite.wire import Prepared

#: How much of a file's head is read for its id.
HEAD = 4096
#: A weight the schema certainly accepts, read from its text alone: not negative, and either
#: below 10^38 without a positive exponent, or one digit before the point with an exponent of
#: at most 37 (below the float32 maximum, 3.4e38, either way). Any other spelling (a sign,
#: a longer integer, a larger exponent: ``rounding/`` vectors) is read whole and judged by the
#: schema, so that ``run`` refuses exactly what ``validate``'s loader refuses.
_NUMBER = (
    rb"(?:(?:0|[1-9][0-9]{0,37})(?:\.[0-9]+)?(?:[eE]-[0-9]+)?"
    rb"|[1-9](?:\.[0-9]+)?[eE]\+?(?:[0-2]?[0-9]|3[0-7]))"
)
_ATTN = re.compile(rb"null|\[(?:" + _NUMBER + rb"(?:," + _NUMBER + rb")*)?\]")
_STEP = re.compile(rb'\{"op":"step","pos":(0|[1-9][0-9]{0,18}),"attn":')
_EVICT = b'"op":"evict"}\n'
#: An evict expecting victims, as the canonical layout writes it: read without the JSON codec.
_EVICT_EXPECTING = re.compile(
    rb'\{"op":"evict","expect":\{"victims":\[((?:0|[1-9][0-9]{0,18})(?:,(?:0|[1-9][0-9]{0,18}))*)?\]\}\}'
)
_STEP_SHOWN = {"op": "step", "pos": 0, "attn": None}


@dataclass(frozen=True)
class SuiteEntry:
    """A vector file known by its id; read with :func:`read_for_run` or :meth:`load`."""

    id: str
    path: Path

    def load(self) -> Vector:
        """The whole vector, weights included (for a diagnosis)."""
        return load_vector(self.path)

    def reload(self) -> Vector:
        """The whole vector of a file the run has already read and validated, parsed again
        without the schema and strictness checks it passed then (the triage's replays); as
        :meth:`load` when it cannot be, and for a long vector, which :meth:`load` holds as its
        lines (:data:`~conformance.suite.vectors.LONG_VECTOR`)."""
        try:
            data = read_suite_file(self.path)
            if _is_long(data):
                return self.load()
            return Vector.from_json(json.loads(data), self.path)
        except (OSError, ValueError):
            return self.load()

    def is_long(self) -> bool:
        """Whether the file holds more than :data:`~conformance.suite.vectors.LONG_VECTOR`
        calls (:func:`_is_long`; False when it cannot be read)."""
        try:
            if self.path.stat().st_size <= LONG_VECTOR:  # fewer bytes than that many lines
                return False
            return _is_long(read_suite_file(self.path))
        except OSError:
            return False

    def file_digest(self) -> str:
        """The SHA-256 of the file's bytes (the kill matrix's key for a canonical file)."""
        return hashlib.sha256(read_suite_file(self.path)).hexdigest()


def _is_long(data: bytes) -> bool:
    """Whether a vector file's bytes hold more than
    :data:`~conformance.suite.vectors.LONG_VECTOR` calls, counted as the canonical layout
    writes them (each call on a line of its own, opening with four spaces and a brace; a
    JSON string cannot hold a newline, and every other line opens otherwise). A file of
    another layout counts as short."""
    return layout.count_calls(data) > LONG_VECTOR


@dataclass(frozen=True)
class RunnableVector:
    """A vector ready to send: ``vector`` holds what judging needs (a step's ``attn`` may be
    absent from its request), ``prepared`` the exact request bytes."""

    vector: Vector
    prepared: Prepared


@dataclass(frozen=True)
class SuitePlan:
    """What a suite holds, known by id before anything is parsed: its vectors and its
    protocol checks (:mod:`conformance.suite.protocol_checks`), each list sorted by id."""

    vectors: list[SuiteEntry]
    checks: list[SuiteEntry]


def plan_suite(paths: Sequence[str | Path]) -> SuitePlan:
    """Every vector and protocol check file under ``paths`` (``*.json`` files named, or found
    in the named directories, :func:`conformance.suite.vectors.iter_vector_files`) by id, reading
    each file's head; raise :class:`VectorError` on a path that cannot be read, a file whose
    id cannot be read, or an id found twice. A file reached twice counts once."""
    entries: dict[str, SuiteEntry] = {}
    checks: set[str] = set()
    for path in iter_vector_files(paths):
        vector_id, is_check = _read_id(path)
        if vector_id in entries:
            raise VectorError(
                path, "/id", f"duplicate id {vector_id!r} (also in {entries[vector_id].path})"
            )
        entries[vector_id] = SuiteEntry(vector_id, path)
        if is_check:
            checks.add(vector_id)
    ordered = sorted(entries.values(), key=lambda entry: entry.id)
    return SuitePlan(
        vectors=[entry for entry in ordered if entry.id not in checks],
        checks=[entry for entry in ordered if entry.id in checks],
    )


def _read_id(path: Path) -> tuple[str, bool]:
    """The file's id, and whether it is a protocol check."""
    try:
        head = read_suite_file(path, head=HEAD)
    except InputError as error:
        raise VectorError(path, "", error.reason) from None
    is_check = is_protocol_check_head(head)
    match = layout.ID_LINE.match(head)
    if match is not None:
        raw = match.group(1)
        if b"\\" not in raw:  # the usual id: no escapes to decode
            try:
                return raw[1:-1].decode("utf-8"), is_check
            except UnicodeDecodeError:
                pass
        else:
            try:
                value = json.loads(raw)
            except ValueError:
                value = None
            if isinstance(value, str):
                return value, is_check
    opening = head.lstrip(b" \t\r\n")[:1]
    if opening not in (b"{", b""):  # judged by its first byte, before the rest is read
        where = len(head) - len(head.lstrip(b" \t\r\n"))
        raise VectorError(path, "", f"not valid JSON: expected '{{' at byte {where}")
    if is_check:  # another layout: parse it once for its id
        try:
            return load_check(path).id, True
        except CheckError as error:
            raise VectorError(path, "", str(error).removeprefix(f"{path}: ")) from None
    return load_vector(path).id, False


def read_for_run(entry: SuiteEntry) -> RunnableVector:
    """Read one vector file for sending (see the module docstring)."""
    try:
        data = read_suite_file(entry.path)
    except InputError as error:
        raise VectorError(entry.path, "", error.reason) from None
    light = _read_canonical(entry.path, data)
    if light is not None:
        return light
    # Here: only a file in another layout needs it.
    from conformance.suite.wire import prepare_vector

    vector = load_vector(entry.path)
    return RunnableVector(vector, prepare_vector(vector))


def _read_canonical(path: Path, data: bytes) -> RunnableVector | None:
    """The vector from a file in the canonical layout, or None for any other layout."""
    region = layout.calls_region(data)
    if region is None:
        return None
    head, begin, end, count = region
    try:
        header = decode(head, duplicates="refuse")
    except ValueError:
        return None
    if not isinstance(header, dict) or "calls" in header:
        return None
    held = Lines(data) if count > LONG_VECTOR else None
    steps = bytearray()  # of a long vector: whether each call is a step read by _STEP alone
    calls: list[Call] = []
    bodies: list[bytes] = []
    broken = False

    def shown() -> Iterator[Any]:
        """What the schema is shown of each call, read as the calls are."""
        nonlocal broken
        for first, last in layout.call_spans(data, begin, end, count):
            read = _read_call(data[first:last]) if first >= 0 else None
            if read is None:
                broken = True
                return
            if held is None:
                calls.append(read[0])
                bodies.append(read[1])
            else:
                held.add(first, last)
                steps.append(read[2] is _STEP_SHOWN)
            yield read[2]

    # The loader's schema check, the weights aside: a step's is checked by _ATTN to be a JSON
    # array of numbers (their values are validate's to judge), so it stands in as null here.
    from conformance.spec.schemas import vector_schema_problems

    problems = vector_schema_problems(header, shown(), path)
    if broken:
        return None
    if problems:
        raise problems[0]
    vector = Vector.from_json({**header, "calls": []}, path)
    if held is not None:  # each call and body read from its line when asked for
        lazily = _Again(steps)
        vector = dataclasses.replace(vector, calls=read_lazily(held, lazily.call))
        return RunnableVector(vector, Prepared(None, read_lazily(held, lazily.body)))
    vector = dataclasses.replace(vector, calls=tuple(calls))
    return RunnableVector(vector, Prepared(None, bodies))


class _Again:
    """A long vector's call or body read again from its line, as :func:`_read_call` read it
    the first time; a step it read by :data:`_STEP` alone (nearly every call) is known not to
    need its weights checked again."""

    def __init__(self, steps: bytearray) -> None:
        self.steps = steps

    def call(self, index: int, line: bytes) -> Call:
        if self.steps[index]:
            step = _STEP.match(line)
            assert step is not None
            return Call({"op": "step", "pos": int(step.group(1))})
        read = _read_call(line)
        assert read is not None  # read once already, when the file was
        return read[0]

    def body(self, index: int, line: bytes) -> bytes:
        if self.steps[index]:
            return line[1:] + b"\n"
        read = _read_call(line)
        assert read is not None
        return read[1]


def _read_call(line: bytes) -> tuple[Call, bytes, Any] | None:
    """A call line as (call, body to send, what the schema is shown), or None if it is not a
    compact JSON object."""
    step = _STEP.match(line)
    end = len(line) - 1
    if step is not None and line.endswith(b"}") and _ATTN.fullmatch(line, step.end(), end):
        pos = int(step.group(1))
        # What the schema sees of a step whose position is in range is the same for every
        # such step: one shared object, not one per call (a long vector holds millions).
        shown = _STEP_SHOWN if pos <= INT31_MAX else {**_STEP_SHOWN, "pos": pos}
        return Call({"op": "step", "pos": pos}), line[1:] + b"\n", shown
    evict = _EVICT_EXPECTING.fullmatch(line)
    if evict is not None:  # what the codec reads of it, without the codec
        listed = evict.group(1)
        expect = {"victims": [int(victim) for victim in listed.split(b",")] if listed else []}
        return Call({"op": "evict"}, expect), _EVICT, {"op": "evict", "expect": expect}
    try:
        raw = decode(line, duplicates="refuse")
    except ValueError:
        return None
    if not isinstance(raw, dict) or raw.get("op") not in VECTOR_OPS:
        return None
    request = {key: value for key, value in raw.items() if key != "expect"}
    if "expect" not in raw:
        return Call(request), line[1:] + b"\n", raw
    if request == {"op": "evict"}:
        return Call(request, raw["expect"]), _EVICT, raw
    sent = layout.without_expect(line)  # a refused call's weights are sent as written too
    if sent is None:
        sent = encode_body(request)
    return Call(request, raw["expect"]), sent, raw


def load_checks(paths: Sequence[str | Path]) -> list[ProtocolCheck]:
    """Every protocol check named or found under ``paths`` (vectors are skipped), by id."""
    return [load_check(entry.path) for entry in plan_suite(paths).checks]
