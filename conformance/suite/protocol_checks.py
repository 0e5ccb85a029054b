"""Protocol checks as files (SPEC.md §4.4): the model and the one reader and writer of their
layout.

A vector records policy calls; the runner encodes them, so it never sends a line a careful
encoder would not write. A protocol check is the other half: exact bytes (invalid UTF-8, a
byte-order mark, CRLF, blank lines, ``NaN``, ids beyond 2^53 ...) written to a new adapter
process, whose answers are judged line by line (:mod:`conformance.judge.check_answers`). Each
check is one file ``vectors/protocol/<name>.json`` (format ``snapkv-protocol-check/1``, schema
``schema/protocol-check.schema.json``) naming the SPEC rule it tests and the porting bug it
catches.

- :func:`load_check` reads a file as ``run`` does: the strict codec, the schema, and the rules
  without which a check cannot be run (each ``expect`` names a line that was sent and calls for
  an answer); :func:`conformance.suite.validation.check_problems` adds ``validate``'s: the id
  matches the path, and the expectations are what the reference adapter answers
  (:func:`conformance.suite.validation.realize`).
- :func:`dumps_check` writes the canonical layout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.spec.errors import KitError
from conformance.spec.inputs import InputError, read_suite_file
from conformance.spec.protocol import DecodeError, decode, decode_strict_file
from conformance.spec.schemas import schema_problems
from conformance.suite import layout

CHECK_FORMAT = "snapkv-protocol-check/1"


THEME = "protocol"


#: The optional op whose answers depend on the adapter's announced capabilities.
SCORES = "scores"


CHECK_SCHEMA = "protocol-check.schema.json"


class CheckError(KitError):
    """A protocol-check file that cannot be used: names the file and the reason."""


@dataclass(frozen=True)
class ProtocolCheck:
    """One check: the bytes to send and the answers they must get, in order.

    ``send`` holds text chunks (sent UTF-8 encoded) and ``{"hex": ...}`` chunks (sent as
    those bytes). ``expect`` has one entry per line that calls for an answer: ``line`` (its
    index among the payload's LF-separated lines), the ``id`` the answer must carry, ``ok``,
    and ``error`` (a refusal's kind), ``victims``, ``protocol`` or a scores answer's kept
    ``positions``, ``sums`` and ``pooled`` where they are judged. ``spec`` lists the ids of the
    SPEC.md sentences the check pins (:mod:`conformance.spec.sentences`).
    ``without`` is the answer due instead when the adapter did not announce ``scores``;
    ``latitude`` lists other answers SPEC lets a port give (its implementation limits).
    """

    id: str
    description: str
    rule: str
    send: tuple[Any, ...]
    expect: tuple[Mapping[str, Any], ...]
    path: Path | None = field(default=None, compare=False)
    #: The ids of the numbered SPEC.md sentences the check pins (its ``spec`` field).
    spec: tuple[str, ...] = ()

    @property
    def payload(self) -> bytes:
        return payload(self.send)

    @property
    def capabilities(self) -> frozenset[str]:
        """The optional ops whose announcement changes an answer due (the ``without`` of an
        ``expect`` entry names one): empty for a check every adapter answers alike."""
        return frozenset(item["without"]["capability"] for item in self.expect if "without" in item)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": CHECK_FORMAT,
            "id": self.id,
            "description": self.description,
            "rule": self.rule,
        }
        if self.spec:
            data["spec"] = list(self.spec)
        data["send"] = list(self.send)
        data["expect"] = [dict(item) for item in self.expect]
        return data

    @classmethod
    def from_json(cls, data: Any, path: str | Path | None = None) -> ProtocolCheck:
        if not isinstance(data, dict) or data.get("format") != CHECK_FORMAT:
            raise CheckError(f"{path}: not a {CHECK_FORMAT} document")
        try:
            return cls(
                id=data["id"],
                description=data["description"],
                rule=data["rule"],
                send=tuple(data["send"]),
                expect=tuple(data["expect"]),
                path=Path(path) if path is not None else None,
                spec=tuple(data.get("spec", ())),
            )
        except (KeyError, TypeError) as error:
            raise CheckError(f"{path}: missing or malformed field {error}") from None


def payload(send: Sequence[Any]) -> bytes:
    out = bytearray()
    for chunk in send:
        out += bytes.fromhex(chunk["hex"]) if isinstance(chunk, dict) else chunk.encode("utf-8")
    return bytes(out)


def answered_lines(data: bytes) -> list[int]:
    """Indices of the LF-separated lines of ``data`` that call for an answer (SPEC §3.1):
    every line but blank ones; a last line without LF counts."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [i for i, line in enumerate(lines) if line.strip(b" \t\r")]


def line_of(data: bytes, index: int) -> bytes:
    return data.split(b"\n")[index]


def is_check_document(data: Any) -> bool:
    return isinstance(data, dict) and data.get("format") == CHECK_FORMAT


def dumps_check(check: ProtocolCheck) -> str:
    """The canonical text of a check file (:mod:`conformance.suite.layout`): one chunk and one
    expected answer per line."""
    data = check.to_json()
    head = [
        (key, layout.compact(data[key]))
        for key in ("format", "id", "description", "rule", "spec")
        if key in data
    ]
    arrays = [(key, [layout.compact(member) for member in data[key]]) for key in ("send", "expect")]
    return layout.text(head, arrays)


def check_files(checks: Sequence[ProtocolCheck]) -> dict[str, str]:
    """``{relative path: text}`` for the suite directory."""
    return {f"{check.id}.json": dumps_check(check) for check in checks}


def load_check(path: str | Path) -> ProtocolCheck:
    """Read one check file as ``run`` reads it; raise :class:`CheckError` naming the file and,
    for a file that is not strict JSON within the codec's limits, that the schema refuses, or
    whose expectations cannot be judged, the JSON pointer and the reason, as ``validate``
    would say it."""
    path = Path(path)
    try:
        data = decode_strict_file(read_suite_file(path))
    except InputError as error:
        raise CheckError(f"{path}: {error.reason}") from None
    except DecodeError as error:
        raise CheckError(f"{path}: not a valid JSON file: {error}") from None
    for problem in schema_problems(data, path, CHECK_SCHEMA):
        raise CheckError(f"{path}: {problem.pointer or '/'}: {problem.reason}")
    check = ProtocolCheck.from_json(data, path)
    for problem in structure_problems(check):
        raise CheckError(f"{path}: {problem}")
    return check


def structure_problems(check: ProtocolCheck) -> list[str]:
    """What makes ``check`` impossible to judge, beyond the schema: every expectation names a
    line that was sent and calls for an answer (SPEC.md §3.1), in the order they are sent."""
    answered = set(answered_lines(check.payload))
    problems = []
    previous = -1
    for index, item in enumerate(check.expect):
        line = item["line"]
        if line not in answered:
            problems.append(
                f"/expect/{index}/line: {line} is not a line of the sent bytes that calls for "
                f"an answer (those are {sorted(answered)})"
            )
        elif line <= previous:
            problems.append(f"/expect/{index}/line: {line} comes after line {previous}")
        previous = max(previous, line)
    return problems


def op_of(line: bytes) -> str | None:
    try:
        request = decode(line)
    except DecodeError:
        return None
    op = request.get("op") if isinstance(request, dict) else None
    return op if isinstance(op, str) else None
