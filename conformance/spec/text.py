"""Text for people: JSON values in JSON's words, capped text, and escaped control characters.

Everything the kit shows of a wire value or of adapter text goes through here, so that a
porter reads ``null``, ``true`` and ``[]`` (never Python's ``None``, ``True``), a 2 MiB message
arrives as its head and a note of what was cut, and an adapter cannot move the cursor, clear
the screen or crash the kit's output with a raw ESC, NUL or lone surrogate.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

#: Where a vector description turns from what it pins to the mistakes it catches.
CATCHES = "Catches:"

# C0 controls but tab and newline, DEL, C1 controls, lone surrogates (legal in JSON text, not
# encodable as UTF-8), and the bidirectional overrides that make a terminal reorder a line.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
_UNSAFE_ONE_LINE = re.compile(
    "[\x00-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069\u2028\u2029]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e"}

# What surrogateescape decoding makes of a byte that is not UTF-8.
_RAW_BYTE = re.compile("[\udc80-\udcff]")

#: Nesting shown by :func:`json_text` before the rest of a value is elided.
DISPLAY_DEPTH = 32


def escape(text: str, *, one_line: bool = False) -> str:
    """``text`` safe to print on a terminal or write as UTF-8: control characters, lone
    surrogates and bidirectional overrides become visible escapes (``\\e``, ``\\x00``,
    ``\\udc80``); everything else is kept as it is.

    ``one_line``: newlines and tabs are escaped too, for a value that must stay on its line
    (a vector id in a ``FAIL`` line, a message in a summary).
    """
    pattern = _UNSAFE_ONE_LINE if one_line else _UNSAFE
    return pattern.sub(_escape_char, text)


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


#: What is kept of an adapter's text and of its lists once read (a refusal's message, an
#: answer's values in a result): enough to read, bounded whatever the adapter sends.
KEEP_TEXT = 1000
KEEP_ITEMS = 1000
#: What is kept of the names an adapter gives itself in its answer to ``hello`` (its
#: implementation's name, language and version, each capability) and how many capabilities:
#: a report shows them in its header, which must stay a header whatever the adapter says.
KEEP_NAME = 200
KEEP_NAMES = 32


def capped(text: str, limit: int) -> str:
    """``text`` cut to its first ``limit`` characters, with a note of how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit:,} more characters)"


def capped_list(items: list[Any], limit: int) -> list[Any]:
    """The first ``limit`` items of ``items``, then a string noting how many were cut."""
    if len(items) <= limit:
        return items
    return [*items[:limit], f"... ({len(items) - limit:,} more items)"]


def json_text(value: Any, limit: int | None = 160) -> str:
    """A wire value as compact JSON for a message: ``null``, ``true``, ``[1, 2]``,
    ``"text"``, escaped for a terminal (:func:`escape`, one line) and capped at ``limit``
    characters (None: not capped).

    Numbers JSON cannot hold are shown as the JSON a parser reads back as them (``1e999``
    for an infinity, which is what ``1e400`` on the wire becomes); values nested deeper than
    :data:`DISPLAY_DEPTH` show their depth rather than their content. The work is bounded by
    ``limit``, not by the size of ``value``.
    """
    if limit is None:
        return escape("".join(_display(value, DISPLAY_DEPTH, [-1])), one_line=True)
    # Walk a good deal past the limit so that most notes can say exactly what was cut.
    budget = [4 * limit + 1000]
    text = escape("".join(_display(value, DISPLAY_DEPTH, budget)), one_line=True)
    if budget[0] > 0:
        return capped(text, limit)
    return f"{text[:limit]}... (cut; more than {len(text) - limit:,} further characters)"


def _display(value: Any, depth: int, budget: list[int]) -> list[str]:
    """Pieces of the display; stops adding pieces once ``budget[0]`` characters are spent
    (a negative budget never runs out). Hand-written rather than json.dumps: it must survive
    any nesting, non-finite floats and huge lists."""
    parts: list[str] = []

    def put(piece: str) -> bool:
        parts.append(piece)
        if budget[0] >= 0:
            budget[0] = max(budget[0] - len(piece), 0)
            return budget[0] > 0
        return True

    def walk(item: Any, level: int) -> bool:
        if item is None or item is True or item is False:
            return put(json.dumps(item))
        if isinstance(item, float):
            return put(_number(item))
        if isinstance(item, int | str):
            return put(json.dumps(item, ensure_ascii=False))
        if isinstance(item, dict | list | tuple):
            opening, closing = ("{", "}") if isinstance(item, dict) else ("[", "]")
            if not item:
                return put(opening + closing)
            if level <= 0:
                return put(opening + "..." + closing)
            if not put(opening):
                return False
            for index, element in enumerate(item.items() if isinstance(item, dict) else item):
                if index and not put(", "):
                    return False
                if isinstance(item, dict):
                    key, element = element
                    if not put(json.dumps(str(key), ensure_ascii=False) + ": "):
                        return False
                if not walk(element, level - 1):
                    return False
            return put(closing)
        if isinstance(item, bytes):  # a raw line from an adapter: bytes not UTF-8 as \xNN
            quoted = json.dumps(item.decode("utf-8", "surrogateescape"), ensure_ascii=False)
            return put(_RAW_BYTE.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", quoted))
        return put(json.dumps(str(item), ensure_ascii=False))

    walk(value, depth)
    return parts


def _number(value: float) -> str:
    if math.isnan(value):
        return "null"
    if math.isinf(value):
        return "1e999" if value > 0 else "-1e999"
    return json.dumps(value)


def json_document(value: Any, *, indent: int | None = 2) -> str:
    """``value`` as strict JSON text for a file another program reads (a report).

    Strict whatever the adapter sent: an infinity is written ``1e999`` (a number every JSON
    parser accepts; ``Infinity`` is not JSON), a NaN ``null``, and a lone surrogate as its
    ``\\uXXXX`` escape, so the text encodes as UTF-8. Other characters are kept as they are.
    """
    try:
        text = json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)
    except ValueError:  # a non-finite float somewhere: mark each one, then write the marks
        token = f"snapkv-{os.urandom(16).hex()}"
        marked = _mark_non_finite(value, token)
        text = json.dumps(marked, indent=indent, ensure_ascii=False, allow_nan=False)
        for mark, number in (("+", "1e999"), ("-", "-1e999"), ("?", "null")):
            text = text.replace(f'"{token}{mark}"', number)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _mark_non_finite(value: Any, token: str) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return token + ("?" if math.isnan(value) else "+" if value > 0 else "-")
    if isinstance(value, dict):
        return {key: _mark_non_finite(item, token) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_mark_non_finite(item, token) for item in value]
    return value


def split_description(description: str) -> tuple[str, str | None]:
    """A vector or protocol-check description split at :data:`CATCHES`: what it pins, and the
    mistakes it catches (None when it does not say), each stripped.

    The marker is the *last* one: the "Catches:" text is the kit's and comes last, while what
    it pins may quote a port (a name, an answer) that holds the word itself."""
    pins, marker, catches = description.rpartition(CATCHES)
    if not marker:
        return description.strip(), None
    return pins.strip(), catches.strip()


def catches_of(description: str) -> str:
    """The mistakes a vector description says it catches, or ``""`` (SPEC.md §4.2)."""
    return split_description(description)[1] or ""
