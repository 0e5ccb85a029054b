"""Validate vector files: the schema, the rules beyond it (SPEC.md §4.3), then a replay.

A file is judged in three layers, and every problem of every layer is reported, each as
``file: JSON pointer: reason`` (:class:`~conformance.spec.errors.VectorError`):

1. JSON: strict (no ``NaN``/``Infinity``), no duplicate keys.
2. The schema ``schema/vector.schema.json``, with integers strict (``4.0`` is not one).
3. Only when the schema passes: the id matches the file path (``<dir>/<id>.json``), every tag
   is in ``vectors/TAGS.md``, the first call's ``params``/``seed`` equal the top-level ones, a
   refused ``new`` is the only call, no integer field holds an integral float (``4.0``),
   every weight of a call that must succeed is an exact float32 written in shortest
   round-trip form (unless the vector is tagged ``double-rounding``: then any number the
   reference accepts), and the reference reproduces every expectation. The replay runs on the
   reference's numpy fast path (``conformance.policy.fast``, the one the reference adapter
   serves), which answers as ``conformance.policy.reference.SnapKV`` does, bit for bit and message
   for message, and is quicker on long vectors; the generator makes expectations with ``SnapKV``,
   so a generated vector is checked by the other implementation.

Across files: ids are unique.
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from conformance.adapter.server import serve
from conformance.policy.fast import fast_policy
from conformance.policy.reference import FLOAT32_MAX, check_weight_literal, float32_literal
from conformance.spec.errors import GenerationError, VectorError
from conformance.spec.protocol import decode_strict_file
from conformance.spec.schemas import (  # noqa: F401  # re-exported: validation's public names
    REQUEST_SCHEMA,
    RESPONSE_SCHEMA,
    VECTOR_SCHEMA,
    json_pointer,
    load_schemas,
    schema_problems,
    schema_validator,
)
from conformance.suite.protocol_checks import (
    CHECK_SCHEMA,
    SCORES,
    THEME,
    ProtocolCheck,
    answered_lines,
    is_check_document,
    line_of,
    op_of,
    payload,
    structure_problems,
)
from conformance.suite.vectors import (
    DOUBLE_ROUNDING,
    Document,
    IdRegistry,
    Vector,
    iter_vector_files,
    parse_document,
    read_document,
)

PolicyFactory = Callable[[Mapping[str, Any], int], Any]
#: How many calls a replay holds at once, requests and answers (a long vector's weights, read
#: as floats, take several times their text).
REPLAY_BATCH = 1024


# -- JSON reading ---------------------------------------------------------------------------


class FloatLiteral(float):
    """A JSON float that remembers the text it was written as (for the shortest-form rule)."""

    text: str

    def __new__(cls, text: str) -> FloatLiteral:
        value = super().__new__(cls, text)
        value.text = text
        return value


def parse_json(text: str, *, keep_literals: bool = False) -> Any:
    """A vector file's strict JSON (:func:`conformance.spec.protocol.decode_strict_file`).

    With ``keep_literals`` every float is a :class:`FloatLiteral` carrying its source text.
    """
    return decode_strict_file(text, parse_float=FloatLiteral if keep_literals else None)


# -- rules beyond the schema ------------------------------------------------------------------


def weight_problem(weight: Any) -> str | None:
    """Why ``weight`` may not stand in a call that must succeed, or None when it may.

    It must be exactly a float32 (SPEC.md §2.6) and, when its source text is known (a
    :class:`FloatLiteral`), written as the shortest decimal that round-trips it: numerically the
    same decimal as Python's ``repr``, whatever the exponent style. (A vector tagged
    ``double-rounding`` is exempt: SPEC.md §4.3.)
    """
    plain = float(weight) if isinstance(weight, FloatLiteral) else weight
    if not check_weight_literal(plain):
        if type(weight) is int or isinstance(weight, float):
            if abs(weight) > FLOAT32_MAX:
                return f"{_text(weight)} is not exactly a float32 (it is beyond the float32 range)"
            nearest = float32_literal(float(weight))
            return (
                f"{_text(weight)} is not exactly a float32 (the nearest float32 is {nearest!r}); "
                f"a vector whose weights are chosen for how they round carries the tag "
                f"{DOUBLE_ROUNDING}"
            )
        return f"{_text(weight)} is not a number"
    if isinstance(weight, FloatLiteral):
        shortest = repr(float(weight))
        if Decimal(weight.text) != Decimal(shortest):
            return (
                f"{weight.text} is the float32 {shortest} but not in shortest round-trip form; "
                f"write {shortest}"
            )
    return None


def _text(value: Any) -> str:
    return value.text if isinstance(value, FloatLiteral) else json.dumps(value)


def _integral_floats(value: Any, pointer: str) -> Iterator[str]:
    """Pointers to floats with an integral value (``4.0``, ``4e0``) inside ``value``."""
    if isinstance(value, float) and value == value and value not in (float("inf"), float("-inf")):
        if value.is_integer():
            yield pointer
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _integral_floats(item, f"{pointer}/{json_pointer([key])[1:]}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _integral_floats(item, f"{pointer}/{index}")


def _same_json(left: Any, right: Any) -> bool:
    """Equal as JSON texts: ``1`` and ``1.0`` and ``true`` all differ."""
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


def path_matches_id(path: str | Path, vector_id: str) -> bool:
    """True when ``path`` ends with ``<id>.json``, component by component."""
    text = Path(path).as_posix()
    wanted = f"{vector_id}.json"
    return text == wanted or text.endswith("/" + wanted)


def rule_problems(
    data: dict[str, Any],
    path: str | Path | None,
    tags: Mapping[str, Any],
    *,
    lines: Sequence[bytes] | None = None,
    literal: Callable[[], Any] | None = None,
) -> list:
    """The rules of SPEC.md §4.3 beyond the schema (``data`` must be schema-valid).

    The weights' text is judged from the calls' ``lines`` when known: a call whose weights are
    float32 values written exactly as ``repr`` writes them passes in bulk. Any other call's
    weights are judged one by one from their literals: the call's line read again keeping
    them, else ``literal()`` (the whole file read so), else ``data`` itself (read with
    ``keep_literals``).
    """
    problems = []

    def problem(pointer: str, reason: str) -> None:
        problems.append(VectorError(path, pointer, reason))

    if path is not None and not path_matches_id(path, data["id"]):
        problem(
            "/id",
            f"id {data['id']!r} does not match the file path; expected <dir>/{data['id']}.json",
        )
    for index, tag in enumerate(data["tags"]):
        if tag not in tags:
            problem(f"/tags/{index}", f"unknown tag {tag!r}; the vocabulary is vectors/TAGS.md")
    calls = data["calls"]
    first = calls[0]
    for name in ("params", "seed"):
        if not _same_json(first[name], data[name]):
            problem(f"/calls/0/{name}", f"differs from the top-level {name}")
    if "expect" in first and len(calls) > 1:
        problem(
            "/calls/1",
            "a vector whose new is refused must have no other call: after a refused new, "
            "the adapter still holds the previous vector's policy",
        )
    integral = [
        where
        for pointer in ("params", "seed")
        for where in _integral_floats(data[pointer], f"/{pointer}")
    ]
    weights: list[tuple[str, str]] = []
    literal_data: list[Any] = []
    # A double-rounding vector's weights are chosen for how their decimals round: any number
    # goes, and the replay checks that the reference accepts it.
    weighed = DOUBLE_ROUNDING not in data["tags"]
    # One pass over the calls (a long vector's are read from its lines on each pass).
    for index, call in enumerate(calls):
        for name in ("params", "seed", "pos"):
            if name in call:
                integral.extend(_integral_floats(call[name], f"/calls/{index}/{name}"))
        if not weighed or call["op"] != "step" or "expect" in call:
            continue
        if not isinstance(call["attn"], list):
            continue
        line = lines[index] if lines is not None else None
        if _exact_in_bulk(call["attn"], line):
            continue
        if line is not None:
            written = decode_strict_file(line, parse_float=FloatLiteral)["attn"]
        elif literal is not None:
            if not literal_data:
                literal_data.append(literal())
            written = literal_data[0]["calls"][index]["attn"]
        else:
            written = call["attn"]
        for position, weight in enumerate(written):
            reason = weight_problem(weight)
            if reason:
                weights.append((f"/calls/{index}/attn/{position}", reason))
    for where in integral:
        problem(
            where,
            "an integral value written with a fraction or exponent; write it as an integer "
            "(ports may read 4.0 either way, SPEC.md §2.1)",
        )
    for where, reason in weights:
        problem(where, reason)
    return problems


def _exact_in_bulk(weights: list[Any], line: bytes | None) -> bool:
    """True when every weight is a float that is exactly a float32 and ``line`` writes the list
    as ``repr`` writes each (the shortest round-trip form): the weights need no closer look.

    The list's text is the tail of the line (``"attn":[...]}``); equal to the ``repr`` join, it
    holds only numbers and commas, so it is this call's top-level ``attn``."""
    if line is None or not weights or not line.endswith(b"]}"):
        return False
    if set(map(type, weights)) != {float}:
        return False
    start = line.rfind(b'"attn":[')
    if start < 0 or line[start + 8 : -2] != ",".join(map(repr, weights)).encode():
        return False
    # Here: numpy only once a long row's text has matched; most calls never get this far.
    import numpy as np

    values = np.array(weights, dtype=np.float64)
    with np.errstate(over="ignore"):
        narrowed = values.astype(np.float32).astype(np.float64)
    return bool(np.array_equal(narrowed, values))


# -- replay on the reference ------------------------------------------------------------------


def replay_problems(
    vector: Vector, path: str | Path | None = None, factory: PolicyFactory = fast_policy
) -> list:
    """Replay ``vector`` in one fresh in-process session; every expectation it fails.

    The session keeps going after a mismatch: the policy's state does not depend on what the
    vector expected, so later calls are still judged fairly.
    """
    # Here: the reference adapter (and orjson) is loaded only when a vector is replayed.
    from conformance.adapter.replay import replay
    from conformance.adapter.server import Session

    problems = []
    session = Session(factory)
    # A batch at a time: a long vector's requests and answers are never all held.
    for start in range(0, len(vector.calls), REPLAY_BATCH):
        calls = vector.calls[start : start + REPLAY_BATCH]
        responses = replay([call.request for call in calls], session=session)
        for index, (call, response) in enumerate(zip(calls, responses, strict=True), start):
            reason = _mismatch(call.op, call.expect, response)
            if reason:
                pointer = f"/calls/{index}" + ("/expect" if call.expect is not None else "")
                problems.append(VectorError(path, pointer, reason))
    return problems


def _mismatch(op: str, expect: Mapping[str, Any] | None, response: Mapping[str, Any]) -> str | None:
    error = response.get("error") or {}
    refused = f"the reference refuses it with {error.get('kind')} ({error.get('message')})"
    wanted = None if expect is None else expect.get("error")
    if response["ok"]:
        if wanted is not None:
            return f"expected the refusal {wanted}, but the reference accepts the call"
        victims = None if expect is None else expect.get("victims")
        if op == "evict" and list(response["victims"]) != list(victims or ()):
            return f"expected victims {victims}, the reference returns {response['victims']}"
        return None
    if wanted is None and expect is not None:
        return f"expected victims {expect.get('victims')}, but {refused}"
    if wanted is None:
        return f"the call has no expect, so it must succeed, but {refused}"
    if error["kind"] != wanted:
        return f"expected the refusal {wanted}, but {refused}"
    return None


# -- files and suites -------------------------------------------------------------------------


def check_document(
    text: str | bytes,
    path: str | Path | None = None,
    *,
    tags: Mapping[str, Any] | None = None,
    factory: PolicyFactory = fast_policy,
) -> tuple[Vector | None, list[VectorError]]:
    """Judge one vector file's text; return the vector (None if unusable) and every problem."""
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    return judge_document(parse_document(raw, path), tags=tags, factory=factory)


def check_file(
    path: str | Path,
    *,
    tags: Mapping[str, Any] | None = None,
    factory: PolicyFactory = fast_policy,
) -> tuple[Vector | None, list[VectorError]]:
    """Judge one vector file (see :func:`check_document`)."""
    return judge_document(read_document(path), tags=tags, factory=factory)


def judge_document(
    document: Document,
    *,
    tags: Mapping[str, Any] | None = None,
    factory: PolicyFactory = fast_policy,
) -> tuple[Vector | None, list[VectorError]]:
    """Judge a document the loader read: its JSON and schema problems, else the rules beyond
    the schema and the replay on the reference."""
    # Here: the tag vocabulary is read only when a document is judged.
    from conformance.suite.tags import load_vocabulary

    if is_check_document(document.data):
        found = check_problems(document.data, document.path)
        return None, [VectorError(document.path, "", problem) for problem in found]
    if document.problems:
        return None, document.problems
    path = document.path
    raw = document.raw

    def literal() -> Any:
        return decode_strict_file(raw if raw is not None else b"", parse_float=FloatLiteral)

    problems = rule_problems(
        document.data,
        path,
        load_vocabulary() if tags is None else tags,
        lines=document.lines,
        literal=literal if raw is not None else None,
    )
    vector = document.vector()
    replayed = vector
    if vector.calls[0].expected_error is not None:
        # Calls after a refused new are already a problem; replaying them would only add a
        # no-policy complaint for each.
        replayed = dataclasses.replace(vector, calls=vector.calls[:1])
    return vector, problems + replay_problems(replayed, path, factory)


@dataclass
class Report:
    """The outcome of validating some files: how many, the usable vectors, every problem."""

    files: int = 0
    problems: list[VectorError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and self.files > 0

    def summary(self) -> str:
        """One line: how many files, and how many of them are invalid."""
        if self.ok:
            return f"{self.files} vector file(s) checked: all valid"
        bad = len({problem.path for problem in self.problems})
        return (
            f"{self.files} vector file(s) checked: {bad} invalid, {len(self.problems)} problem(s)"
        )


def validate_paths(
    paths: Sequence[str | Path] | None = None, *, factory: PolicyFactory = fast_policy
) -> Report:
    """Validate every vector file named or found under ``paths`` (default: the committed suite),
    a file at a time: memory is one vector's, whatever the size of the suite."""
    # Here: the committed suite's place and its tag vocabulary, only when validating.
    from conformance.spec.resources import suite_dir
    from conformance.suite.tags import load_vocabulary

    tags = load_vocabulary()
    report = Report()
    ids = IdRegistry()
    for root in paths or [suite_dir()]:
        try:
            files = list(iter_vector_files([root]))
        except VectorError as error:
            report.problems.append(error)
            continue
        if not files:
            report.problems.append(VectorError(root, "", "no vector files (*.json) found"))
        for file in files:
            report.files += 1
            vector, problems = check_file(file, tags=tags, factory=factory)
            report.problems.extend(problems)
            if vector is not None:
                duplicate = ids.problem(vector.id, file)
                if duplicate is not None:
                    report.problems.append(duplicate)
    return report


# -- protocol checks: their expectations are the reference adapter's answers ---------------


@dataclass(frozen=True)
class CheckDraft:
    """A check as written: bytes to send and the intended outcome of each answered line
    (``"ok"`` or an error kind); the generator fills in the reference's answers."""

    name: str
    rule: str
    pins: str
    catches: str
    send: tuple[Any, ...]
    outcomes: tuple[str, ...]
    latitude: Mapping[int, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{THEME}/{self.name}"


def reference_answers(data: bytes) -> list[bytes]:
    """What the reference adapter answers to ``data``, line by line."""
    out = io.BytesIO()
    serve(io.BytesIO(data), out)
    return out.getvalue().splitlines()


def realize(draft: CheckDraft) -> ProtocolCheck:
    """Replay ``draft`` on the reference and record its answers as the expectations."""
    data = payload(draft.send)
    answers = [json.loads(line) for line in reference_answers(data)]
    lines = answered_lines(data)
    ended = _bye_index(data, lines)
    lines = lines[: ended + 1] if ended is not None else lines
    if len(answers) != len(lines) or len(answers) != len(draft.outcomes):
        raise GenerationError(
            f"{draft.id}: {len(lines)} answered lines, {len(draft.outcomes)} outcomes, "
            f"{len(answers)} answers from the reference"
        )
    expect: list[dict[str, Any]] = []
    for line, answer, outcome in zip(lines, answers, draft.outcomes, strict=True):
        got = "ok" if answer["ok"] else answer["error"]["kind"]
        if got != outcome:
            raise GenerationError(
                f"{draft.id}: line {line} meant {outcome}, the reference says {got}"
            )
        item: dict[str, Any] = {"line": line, "id": answer["id"], "ok": answer["ok"]}
        if not answer["ok"]:
            item["error"] = got
        if "victims" in answer:
            item["victims"] = answer["victims"]
        if "protocol" in answer:
            item["protocol"] = answer["protocol"]
        if "positions" in answer:
            # A scores answer is judged by its kept positions (and the lengths of its three
            # lists); its values are the scores diagnosis's to compare (SPEC.md §2.5, §5).
            item["positions"] = answer["positions"]
        if op_of(line_of(data, line)) == SCORES:
            # The reference announces scores; an adapter that does not must refuse it.
            item["without"] = {"capability": SCORES, "ok": False, "error": "unsupported"}
        index = len(expect)
        if index in draft.latitude:
            item["latitude"] = [dict(other) for other in draft.latitude[index]]
        expect.append(item)
    return ProtocolCheck(
        id=draft.id,
        description=f"{draft.pins} Catches: {draft.catches.removesuffix('.')}.",
        rule=draft.rule,
        send=draft.send,
        expect=tuple(expect),
    )


def _bye_index(data: bytes, lines: Sequence[int]) -> int | None:
    for position, line in enumerate(lines):
        if op_of(line_of(data, line)) == "bye":
            return position
    return None


def check_problems(data: Any, path: str | Path | None) -> list[str]:
    """Schema problems, then the rules the schema cannot state: the id matches the path, the
    expectations are the reference's answers."""
    problems = [
        f"{error.pointer or '/'}: {error.reason}"
        for error in schema_problems(data, path, CHECK_SCHEMA)
    ]
    if problems:
        return problems
    check = ProtocolCheck.from_json(data, path)
    problems.extend(structure_problems(check))
    if problems:
        return problems
    if path is not None and not Path(path).as_posix().endswith(f"{check.id}.json"):
        problems.append(f"/id: {check.id!r} does not match the file's path")
    try:
        reference = realize(
            CheckDraft(
                check.id.removeprefix(f"{THEME}/"),
                check.rule,
                check.description,
                "",
                check.send,
                tuple("ok" if item["ok"] else item["error"] for item in check.expect),
                {
                    i: tuple(item["latitude"])
                    for i, item in enumerate(check.expect)
                    if "latitude" in item
                },
            )
        )
    except (GenerationError, ValueError) as error:
        problems.append(f"/expect: not what the reference answers: {error}")
        return problems
    if reference.expect != check.expect:
        problems.append("/expect: not what the reference answers")
    return problems
