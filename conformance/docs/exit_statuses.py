"""The exit statuses, read from ``conformance/spec/errors.py``: each ``EXIT_*`` constant, its
value and the comment written beside it, so the table changes when the source does."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

from conformance.docs.tables import cell, code
from conformance.spec import errors

PREFIX = "EXIT_"


def statuses(source: str) -> list[tuple[int, str, str]]:
    """``(value, name, comment)`` for each top-level ``EXIT_... = <integer>  # comment`` line of
    ``source``, in source order; the comment is empty when the line has none."""
    found = []
    line: list[tokenize.TokenInfo] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER):
            found += _status(line)
            line = []
        else:
            line.append(token)
    return found


def _status(tokens: list[tokenize.TokenInfo]) -> list[tuple[int, str, str]]:
    kinds = [token.type for token in tokens]
    if kinds[:3] != [tokenize.NAME, tokenize.OP, tokenize.NUMBER] or tokens[0].start[1] != 0:
        return []
    name, equals, number = tokens[:3]
    if not name.string.startswith(PREFIX) or equals.string != "=":
        return []
    rest = tokens[3:]
    if rest and rest[0].type != tokenize.COMMENT:
        return []  # an expression, not a plain constant
    comment = rest[0].string.lstrip("#").strip() if rest else ""
    return [(int(number.string), name.string, comment)]


def table(root: Path) -> str:
    """The statuses, lowest first; a constant without a comment is described by its name."""
    source = Path(errors.__file__).read_text(encoding="utf-8")
    lines = ["| status | constant | meaning |", "|---:|---|---|"]
    for value, name, comment in sorted(statuses(source)):
        meaning = comment or name.removeprefix(PREFIX).replace("_", " ").lower()
        lines.append(f"| {value} | {code(name)} | {cell(meaning)} |")
    return "\n".join(lines)
