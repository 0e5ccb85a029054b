"""The JSON report's fields, read from ``schema/report.schema.json``: one table for the report
and one for each object it defines under ``$defs`` (a result, the triage), each field with its
type, whether it is always present, and the schema's own description."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from conformance.docs.tables import cell, code

SCHEMA = "schema/report.schema.json"


class _Reader:
    """One schema: how to name a field's type, and the rows of an object's fields."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self.defs: Mapping[str, Any] = schema.get("$defs", {})

    def sections(self) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """The report, then each object defined under ``$defs``, in the schema's order."""
        yield "report", self.schema
        for name, definition in self.defs.items():
            if definition.get("type") == "object":
                yield name, definition

    def kind(self, schema: Mapping[str, Any]) -> str:
        """A field's type in a few words: ``integer >= 1``, ``string or null``, ``array of
        [result](#result)``."""
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            target = self.defs[name]
            return f"[{name}](#{name})" if target.get("type") == "object" else self.kind(target)
        if "const" in schema:
            return code(json.dumps(schema["const"]))
        if "enum" in schema:
            return "one of " + ", ".join(code(json.dumps(value)) for value in schema["enum"])
        for combined in ("oneOf", "anyOf"):
            if combined in schema:
                return " or ".join(self.kind(option) for option in schema[combined])
        types = schema.get("type")
        if isinstance(types, list):
            return " or ".join(self._one_type(name, schema) for name in types)
        if isinstance(types, str):
            return self._one_type(types, schema)
        return "any JSON value"

    def _one_type(self, name: str, schema: Mapping[str, Any]) -> str:
        if name == "array":
            items = schema.get("items")
            return f"array of {self._item_kind(items)}" if items else "array"
        if name in ("integer", "number"):
            if "minimum" in schema:
                return f"{name} >= {schema['minimum']}"
            if "exclusiveMinimum" in schema:
                return f"{name} > {schema['exclusiveMinimum']}"
        return name

    def _item_kind(self, items: Mapping[str, Any]) -> str:
        if items.get("type") == "object":
            return "objects (below)"
        return self.kind(items)

    def rows(self, schema: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
        """A row per field, nested objects' fields after their own row as ``outer.inner``."""
        required = set(schema.get("required", ()))
        for name, field in schema.get("properties", {}).items():
            path = f"{prefix}{name}"
            always = "yes" if name in required else "no"
            description = cell(field.get("description", ""))
            yield f"| {code(path)} | {self.kind(field)} | {always} | {description} |"
            yield from self.rows_inside(field, path)

    def rows_inside(self, field: Mapping[str, Any], path: str) -> Iterator[str]:
        """The fields of an inline object: the field itself, an alternative of it, or the
        items of an array (``path[].name``)."""
        if field.get("type") == "object" or "properties" in field:
            yield from self.rows(field, f"{path}.")
        for combined in ("oneOf", "anyOf"):
            for option in field.get(combined, ()):
                if "properties" in option:
                    yield from self.rows(option, f"{path}.")
        items = field.get("items")
        if isinstance(items, Mapping) and "properties" in items:
            yield from self.rows(items, f"{path}[].")


def fields(root: Path) -> str:
    """The tables, each under a heading named after its object (``#### result``)."""
    schema = json.loads((root / SCHEMA).read_text(encoding="utf-8"))
    reader = _Reader(schema)
    parts = []
    for name, definition in reader.sections():
        lines = [f"#### {name}", ""]
        if definition is not schema and "description" in definition:
            lines += [cell(definition["description"]), ""]
        lines += ["| field | type | always present | meaning |", "|---|---|---|---|"]
        lines += reader.rows(definition)
        parts.append("\n".join(lines))
    return "\n\n".join(parts)
