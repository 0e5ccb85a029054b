"""The shipped JSON Schemas (``schema/``) and applying them, fast on big vectors.

JSON Schema's own integer type takes ``4.0``; SPEC.md does not, so every validator here counts
only JSON integers as integers. :func:`schema_problems` applies the vector schema call by call,
and a call's big arrays (weights, victims, positions) that provably satisfy their item rules
are checked in bulk rather than item by item; whenever a call has a problem, the call itself is
validated, so the messages are jsonschema's own, exactly as a plain validation gives them.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from conformance.spec.errors import VectorError

VECTOR_SCHEMA = "vector.schema.json"
REQUEST_SCHEMA = "protocol/request.schema.json"
RESPONSE_SCHEMA = "protocol/response.schema.json"

INT31_MAX = 2**31 - 1
#: The schema's bound on a weight (the largest float32), as the schema writes it.
WEIGHT_MAX = 3.4028234663852886e38
#: How many distinct call shapes :func:`schema_problems` remembers the verdict of.
_MEMO_LIMIT = 4096
_memo: dict[tuple[int, str], bool] = {}


@cache
def _validator_class() -> Any:
    # Here: jsonschema costs a tenth of a second to import, and most commands never validate.
    from jsonschema import Draft202012Validator, validators  # type: ignore[import-untyped]

    # JSON Schema counts 4.0 as an integer; SPEC.md §4.3 does not (ports may read it either way).
    checker = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, instance: type(instance) is int
    )
    return validators.extend(Draft202012Validator, type_checker=checker)


def load_schemas(directory: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Every ``*.json`` schema under ``schema/``, keyed by its path relative to the directory."""
    # Here: resources finds package data, which only loading the schemas needs.
    from conformance.spec.resources import schema_dir

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
    # Here: with jsonschema, only when validating.
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
    """Every schema violation, as :class:`VectorError`, ordered by pointer.

    For the vector schema, the document is validated with only its first call, and each later
    call on its own against ``#/$defs/call`` (``items`` applies to each element alone, so this
    is the same verdict). A call is first reduced to its shape (:func:`_shape`); shapes seen
    valid before are not validated again.
    """
    calls = data.get("calls") if isinstance(data, dict) else None
    listed = isinstance(calls, Sequence) and not isinstance(calls, (str, bytes))
    if name != VECTOR_SCHEMA or not listed or not calls:
        validator = schema_validator(name)
        found = [(list(e.absolute_path), e.message) for e in validator.iter_errors(data)]
        return _ordered(found, path)
    return vector_schema_problems(data, iter(calls), path)


def vector_schema_problems(
    header: dict[str, Any], calls: Iterator[Any], path: str | Path | None
) -> list:
    """:func:`schema_problems` of the vector ``{**header, "calls": [...calls]}``, its calls
    taken one at a time from ``calls`` (``header``'s own ``calls``, if any, is ignored), so
    that a long vector's calls need never be held together."""
    first = list(itertools.islice(calls, 1))  # [] or the first call, whatever its value
    head = {**header, "calls": first}
    found = []
    if not _head_is_valid(head):
        found = [(list(e.absolute_path), e.message) for e in schema_validator().iter_errors(head)]
    call_validator = schema_validator(f"{VECTOR_SCHEMA}#call")
    # A reader may show one shared object for many calls (the run's reader does, for every
    # step whose values it has checked itself): an object found valid once is skipped after.
    valid: Any = None
    for index, call in enumerate(calls, 1):
        if call is valid:
            continue
        if _shape_is_valid(call, call_validator):
            valid = call
            continue
        found.extend(
            (["calls", index, *e.absolute_path], e.message)
            for e in call_validator.iter_errors(call)
        )
    return _ordered(found, path)


def _ordered(found: list[tuple[list[Any], str]], path: str | Path | None) -> list:
    found.sort(key=lambda item: [str(part) for part in item[0]])
    return [VectorError(path, json_pointer(parts), message) for parts, message in found]


def _shape_is_valid(call: Any, validator: Any) -> bool:
    """True when ``call`` is valid, judged on its shape (remembered); False when it may not be."""
    shape = _shape(call)
    return shape is not None and _remembered(shape, validator)


def _remembered(shape: dict[str, Any], validator: Any) -> bool:
    """Whether ``validator`` finds ``shape`` valid, remembered by the validator and the shape's
    ``repr``: the repr of a JSON value tells apart every two values that differ, ``1``,
    ``1.0`` and ``True`` included (the same value with its names in another order is only
    looked up twice). The validators are made once each (:func:`schema_validator`)."""
    key = (id(validator), repr(shape))
    valid = _memo.get(key)
    if valid is None:
        valid = validator.is_valid(shape)
        if len(_memo) >= _MEMO_LIMIT:
            _memo.clear()
        _memo[key] = valid
    return valid


def _head_is_valid(head: dict[str, Any]) -> bool:
    """True when a vector's head (its fields with its first call alone) is valid, judged on its
    shape: an ``id`` and a ``description`` that meet their own rules (read from the schema:
    ``pattern`` as jsonschema applies it, with ``re.search``, and the lengths) are replaced by
    fixed ones that do, so that the suite's thousands of heads share a few verdicts. False
    when it may not be valid."""
    rules = schema_validator().schema["properties"]
    shape = dict(head)
    for name, stand_in in (("id", "a/b"), ("description", "x" * 20)):
        if _meets(shape.get(name), rules[name]):
            shape[name] = stand_in
    return _remembered(shape, schema_validator())


def _meets(value: Any, rule: dict[str, Any]) -> bool:
    """Whether the string ``value`` meets a string rule of ``type``, ``pattern``, ``minLength``
    and ``maxLength`` only (False for any other rule, so nothing is assumed)."""
    if type(value) is not str or set(rule) - {
        "description",
        "type",
        "pattern",
        "minLength",
        "maxLength",
    }:
        return False
    if "pattern" in rule and not re.search(rule["pattern"], value):
        return False
    return rule.get("minLength", 0) <= len(value) <= rule.get("maxLength", len(value))


def _shape(call: Any) -> dict[str, Any] | None:
    """``call`` with each value the schema accepts wherever it stands replaced by a fixed one:
    a weights list of numbers in [0, float32 max] by ``[]``, a position in [0, 2^31 - 1] by
    0, a victims list of distinct such positions by ``[]``. Valid exactly when ``call`` is."""
    if not isinstance(call, dict):
        return None
    shape = dict(call)
    attn = shape.get("attn")
    if type(attn) is list and attn and _weights_in_range(attn):
        shape["attn"] = []
    pos = shape.get("pos")
    if type(pos) is int and 0 <= pos <= INT31_MAX:
        shape["pos"] = 0
    expect = shape.get("expect")
    if type(expect) is dict:
        victims = expect.get("victims")
        if type(victims) is list and victims and _positions_distinct(victims):
            shape["expect"] = {**expect, "victims": []}
    return shape


def _weights_in_range(values: list[Any]) -> bool:
    """Every item a JSON number (not a boolean) in [0, WEIGHT_MAX], checked at C speed."""
    if not set(map(type, values)) <= {int, float}:
        return False
    return min(values) >= 0 and max(values) <= WEIGHT_MAX


def _positions_distinct(values: list[Any]) -> bool:
    """Every item a JSON integer in [0, 2^31 - 1], none repeated."""
    if set(map(type, values)) != {int}:
        return False
    return min(values) >= 0 and max(values) <= INT31_MAX and len(set(values)) == len(values)
