"""Every vector and protocol check of the committed suite, with what it pins and what it
catches, read from ``vectors/`` through the suite's own readers.

A description has the form "what it pins. Catches: the mistake" (``vectors/README.md``); the
tables split it there, so a porter who suspects a mistake can search the page for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sized
from itertools import groupby
from pathlib import Path

from conformance.docs.tables import cell, code
from conformance.suite.stream import load_checks
from conformance.suite.vectors import load_suite

SUITE = "vectors"
CATCHES = "Catches:"


def split_description(description: str) -> tuple[str, str]:
    """``(what it pins, what it catches)``; the second is empty when the text names nothing."""
    pins, marker, catches = description.partition(CATCHES)
    return pins.strip(), catches.strip() if marker else ""


def _theme(vector_id: str) -> str:
    return vector_id.split("/", 1)[0]


def vectors(root: Path) -> str:
    """A section per theme (the first segment of the ids), a row per vector, by id."""
    suite = load_suite([root / SUITE])
    themes = [(theme, list(group)) for theme, group in groupby(suite, lambda v: _theme(v.id))]
    lines = [f"{len(suite)} vectors in {len(themes)} themes: " + _theme_links(themes) + "."]
    for theme, group in themes:
        lines += ["", f"### {theme}", ""]
        lines += ["| vector | what it pins | catches | tags |", "|---|---|---|---|"]
        for vector in group:
            pins, catches = split_description(vector.description)
            tags = ", ".join(code(tag) for tag in vector.tags)
            lines.append(f"| {code(vector.id)} | {cell(pins)} | {cell(catches)} | {tags} |")
    return "\n".join(lines)


def _theme_links(themes: Iterable[tuple[str, Sized]]) -> str:
    return ", ".join(f"[{theme}](#{theme}) ({len(group)})" for theme, group in themes)


def checks(root: Path) -> str:
    """A row per protocol check, by id: what it pins, what it catches, the rule it judges."""
    found = load_checks([root / SUITE])
    lines = [
        f"{len(found)} protocol checks.",
        "",
        "| check | what it pins | catches | rule |",
        "|---|---|---|---|",
    ]
    for check in found:
        pins, catches = split_description(check.description)
        lines.append(f"| {code(check.id)} | {cell(pins)} | {cell(catches)} | {cell(check.rule)} |")
    return "\n".join(lines)
