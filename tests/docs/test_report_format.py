"""The report's fields are read from its schema: every property of every object is a row."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.docs import report_format

ROOT = Path(__file__).resolve().parents[2]


def _paths(schema: dict, prefix: str = "") -> set[str]:
    found = set()
    for name, field in schema.get("properties", {}).items():
        found.add(prefix + name)
        found |= _paths(field, f"{prefix}{name}.")
        for option in field.get("oneOf", []):
            found |= _paths(option, f"{prefix}{name}.")
        items = field.get("items")
        if isinstance(items, dict):
            found |= _paths(items, f"{prefix}{name}[].")
    return found


def test_every_field_of_the_report_and_its_definitions_has_a_row() -> None:
    schema = json.loads((ROOT / report_format.SCHEMA).read_text())
    text = report_format.fields(ROOT)
    objects = [schema, *(d for d in schema["$defs"].values() if d.get("type") == "object")]
    for definition in objects:
        for path in _paths(definition):
            assert f"| `{path}` |" in text, path


def test_types_are_named_in_words() -> None:
    reader = report_format._Reader({"$defs": {"count": {"type": "integer", "minimum": 0}}})
    assert reader.kind({"$ref": "#/$defs/count"}) == "integer >= 0"
    assert reader.kind({"type": ["string", "null"]}) == "string or null"
    assert reader.kind({"enum": ["a", None]}) == 'one of `"a"`, `null`'
    assert reader.kind(
        {"oneOf": [{"type": "null"}, {"type": "number", "exclusiveMinimum": 0}]}
    ) == ("null or number > 0")
    assert reader.kind({"type": "array", "items": {"type": "string"}}) == "array of string"
    assert reader.kind({}) == "any JSON value"
