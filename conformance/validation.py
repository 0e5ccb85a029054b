"""Validate vector files: the schema, the rules beyond it (SPEC.md §4.3), then a replay.

A file is judged in three layers, and every problem of every layer is reported, each as
``file: JSON pointer: reason`` (:class:`~conformance.vectors.VectorError`):

1. JSON: strict (no ``NaN``/``Infinity``), no duplicate keys.
2. The schema ``schema/vector.schema.json``, with integers strict (``4.0`` is not one).
3. Only when the schema passes: the id matches the file path (``<dir>/<id>.json``), every tag
   is in ``vectors/TAGS.md``, the first call's ``params``/``seed`` equal the top-level ones, a
   refused ``new`` is the only call, no integer field holds an integral float (``4.0``),
   every weight of a call that must succeed is an exact float32 written in shortest
   round-trip form, and the reference reproduces every expectation.

Across files: ids are unique.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from conformance.policy import FLOAT32_MAX, check_weight_literal, float32_literal, new_policy
from conformance.protocol import decode_strict_file
from conformance.vectors import Vector, VectorError, iter_vector_files

PolicyFactory = Callable[[Mapping[str, Any], int], Any]

VECTOR_SCHEMA = "vector.schema.json"
REQUEST_SCHEMA = "protocol/request.schema.json"
RESPONSE_SCHEMA = "protocol/response.schema.json"


# -- JSON reading ---------------------------------------------------------------------------


class FloatLiteral(float):
    """A JSON float that remembers the text it was written as (for the shortest-form rule)."""

    text: str

    def __new__(cls, text: str) -> FloatLiteral:
        value = super().__new__(cls, text)
        value.text = text
        return value


def parse_json(text: str, *, keep_literals: bool = False) -> Any:
    """A vector file's strict JSON (:func:`conformance.protocol.decode_strict_file`).

    With ``keep_literals`` every float is a :class:`FloatLiteral` carrying its source text.
    """
    return decode_strict_file(text, parse_float=FloatLiteral if keep_literals else None)


# -- schemas --------------------------------------------------------------------------------


@cache
def _validator_class() -> Any:
    from jsonschema import Draft202012Validator, validators

    # JSON Schema counts 4.0 as an integer; SPEC.md §4.3 does not (ports may read it either way).
    checker = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, instance: type(instance) is int
    )
    return validators.extend(Draft202012Validator, type_checker=checker)


def load_schemas(directory: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Every ``*.json`` schema under ``schema/``, keyed by its path relative to the directory."""
    from conformance.resources import schema_dir

    root = Path(directory) if directory is not None else schema_dir()
    return {
        path.relative_to(root).as_posix(): json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(root.rglob("*.json"))
    }


@cache
def schema_validator(name: str = VECTOR_SCHEMA) -> Any:
    """A draft 2020-12 validator (strict integers) for ``schema/<name>``, refs resolved.

    ``<file>#<def>`` selects one definition: for a request schema ``#/$defs/<def>``; for the
    response schema the answer to op ``<def>``, that is its success shape or a refusal.
    """
    from referencing import Registry, Resource

    schemas = load_schemas()
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema))
        for schema in schemas.values()
        if isinstance(schema, dict) and "$id" in schema
    )
    file, _, definition = name.partition("#")
    schema = schemas[file]
    if definition:
        ref: dict[str, Any] = {"$ref": f"{schema['$id']}#/$defs/{definition}"}
        if file == RESPONSE_SCHEMA:
            ref = {
                "if": {"required": ["ok"], "properties": {"ok": {"const": False}}},
                "then": {"$ref": f"{schema['$id']}#/$defs/refusal"},
                "else": ref,
            }
        schema = {"$schema": schema["$schema"], **ref}
    return _validator_class()(schema, registry=registry)


def json_pointer(parts: Iterable[Any]) -> str:
    """The RFC 6901 pointer for a path of keys and indices."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def schema_problems(data: Any, path: str | Path | None, name: str = VECTOR_SCHEMA) -> list:
    """Every schema violation, as :class:`VectorError`, ordered by pointer."""
    errors = sorted(
        schema_validator(name).iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]
    )
    return [VectorError(path, json_pointer(e.absolute_path), e.message) for e in errors]


# -- rules beyond the schema ------------------------------------------------------------------


def weight_problem(weight: Any) -> str | None:
    """Why ``weight`` may not stand in a call that must succeed, or None when it may.

    It must be exactly a float32 (SPEC.md §2.6) and, when its source text is known (a
    :class:`FloatLiteral`), written as the shortest decimal that round-trips it: numerically the
    same decimal as Python's ``repr``, whatever the exponent style.
    """
    plain = float(weight) if isinstance(weight, FloatLiteral) else weight
    if not check_weight_literal(plain):
        if type(weight) is int or isinstance(weight, float):
            if abs(weight) > FLOAT32_MAX:
                return f"{_text(weight)} is not exactly a float32 (it is beyond the float32 range)"
            nearest = float32_literal(float(weight))
            return f"{_text(weight)} is not exactly a float32 (the nearest float32 is {nearest!r})"
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


def rule_problems(data: dict[str, Any], path: str | Path | None, tags: Mapping[str, Any]) -> list:
    """The rules of SPEC.md §4.3 beyond the schema (``data`` must be schema-valid).

    ``data`` should be read with ``keep_literals`` so that the weights' text can be judged.
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
    integer_fields = [("/params", data["params"]), ("/seed", data["seed"])]
    for index, call in enumerate(calls):
        for name in ("params", "seed", "pos"):
            if name in call:
                integer_fields.append((f"/calls/{index}/{name}", call[name]))
    for pointer, value in integer_fields:
        for where in _integral_floats(value, pointer):
            problem(
                where,
                "an integral value written with a fraction or exponent; write it as an integer "
                "(ports may read 4.0 either way, SPEC.md §2.1)",
            )
    for index, call in enumerate(calls):
        if call["op"] == "step" and "expect" not in call and isinstance(call["attn"], list):
            for position, weight in enumerate(call["attn"]):
                reason = weight_problem(weight)
                if reason:
                    problem(f"/calls/{index}/attn/{position}", reason)
    return problems


# -- replay on the reference ------------------------------------------------------------------


def replay_problems(
    vector: Vector, path: str | Path | None = None, factory: PolicyFactory = new_policy
) -> list:
    """Replay ``vector`` in one fresh in-process session; every expectation it fails.

    The session keeps going after a mismatch: the policy's state does not depend on what the
    vector expected, so later calls are still judged fairly.
    """
    from conformance.adapter import Session

    session = Session(factory)
    problems = []
    for index, call in enumerate(vector.calls):
        response = session.handle({**call.request, "id": index})
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
    text: str,
    path: str | Path | None = None,
    *,
    tags: Mapping[str, Any] | None = None,
    factory: PolicyFactory = new_policy,
) -> tuple[Vector | None, list[VectorError]]:
    """Judge one vector file's text; return the vector (None if unusable) and every problem."""
    from conformance.tags import load_vocabulary

    try:
        literal = parse_json(text, keep_literals=True)
        plain = parse_json(text)
    except ValueError as error:
        return None, [VectorError(path, "", f"not valid JSON: {error}")]
    from conformance import protocol_checks

    if protocol_checks.is_check_document(plain):
        found = protocol_checks.check_problems(plain, path)
        return None, [VectorError(path, "", problem) for problem in found]
    problems = schema_problems(plain, path)
    if problems:
        return None, problems
    problems = rule_problems(literal, path, load_vocabulary() if tags is None else tags)
    vector = Vector.from_json(plain, path)
    replayed = vector
    if vector.calls[0].expected_error is not None:
        # Calls after a refused new are already a problem; replaying them would only add a
        # no-policy complaint for each.
        replayed = dataclasses.replace(vector, calls=vector.calls[:1])
    return vector, problems + replay_problems(replayed, path, factory)


def check_file(
    path: str | Path,
    *,
    tags: Mapping[str, Any] | None = None,
    factory: PolicyFactory = new_policy,
) -> tuple[Vector | None, list[VectorError]]:
    """Judge one vector file (see :func:`check_document`)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return None, [VectorError(path, "", f"cannot read: {error}")]
    return check_document(text, path, tags=tags, factory=factory)


@dataclass
class Report:
    """The outcome of validating some files: how many, the usable vectors, every problem."""

    files: int = 0
    vectors: list[Vector] = field(default_factory=list)
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
    paths: Sequence[str | Path] | None = None, *, factory: PolicyFactory = new_policy
) -> Report:
    """Validate every vector file named or found under ``paths`` (default: the committed suite)."""
    from conformance.resources import suite_dir
    from conformance.tags import load_vocabulary

    tags = load_vocabulary()
    report = Report()
    first_seen: dict[str, str] = {}
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
            if vector is None:
                continue
            report.vectors.append(vector)
            if vector.id in first_seen and first_seen[vector.id] != str(file):
                report.problems.append(
                    VectorError(
                        file, "/id", f"duplicate id {vector.id!r}, also in {first_seen[vector.id]}"
                    )
                )
            first_seen.setdefault(vector.id, str(file))
    return report
