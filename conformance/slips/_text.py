"""A line's JSON text split into strings and what lies between them, for the slips that read
JSON the way a lax or hand-written reader does (a number grammar, whitespace, escapes in names).

Nothing here judges JSON: the pieces are handed back unchanged unless a slip rewrites them, and
the result goes to the strict codec as usual.
"""

from __future__ import annotations

import re
from collections.abc import Callable


def pieces(text: str) -> list[tuple[bool, str]]:
    """``text`` as ``(is_string, piece)`` in order: each JSON string with its quotes (an
    unterminated one runs to the end) and the text between strings."""
    out: list[tuple[bool, str]] = []
    start = 0
    index = 0
    length = len(text)
    while index < length:
        if text[index] != '"':
            index += 1
            continue
        if index > start:
            out.append((False, text[start:index]))
        end = index + 1
        while end < length and text[end] != '"':
            end += 2 if text[end] == "\\" else 1
        end = min(end + 1, length)
        out.append((True, text[index:end]))
        start = index = end
    if start < length:
        out.append((False, text[start:]))
    return out


def between_strings(text: str, rewrite: Callable[[str], str]) -> str:
    """``text`` with ``rewrite`` applied to every piece outside its strings."""
    return "".join(piece if inside else rewrite(piece) for inside, piece in pieces(text))


def names(text: str, rewrite: Callable[[str], str]) -> str:
    """``text`` with ``rewrite`` applied to every member name (a string followed by ``:``)."""
    parts = pieces(text)
    out = []
    for index, (inside, piece) in enumerate(parts):
        after = parts[index + 1][1] if index + 1 < len(parts) else ""
        is_name = inside and after.lstrip(" \t\r").startswith(":")
        out.append(rewrite(piece) if is_name else piece)
    return "".join(out)


#: A number token as a lenient reader takes it: an optional sign, digits and points in any
#: arrangement, an exponent that may lack digits.
_LAX_NUMBER = re.compile(r"(?<![\w.])([+-]?)(\d*)(\.?)(\d*)(?:([eE])([+-]?)(\d*))?(?![\w.])")


def lax_numbers(piece: str) -> str:
    """``piece`` (text outside strings) with every number a lenient reader accepts rewritten
    as JSON writes it: ``+3`` as 3, ``03`` as 3, ``.5`` as 0.5, ``3.`` as 3, ``1e`` as 1."""

    def fix(match: re.Match[str]) -> str:
        sign, whole, point, fraction, exponent, exp_sign, exp_digits = match.groups()
        if not whole and not fraction:
            return match.group(0)
        text = ("-" if sign == "-" else "") + (whole.lstrip("0") or "0")
        if point and fraction:
            text += "." + fraction
        if exponent and exp_digits:
            text += "e" + ("-" if exp_sign == "-" else "") + exp_digits
        return text

    return _LAX_NUMBER.sub(fix, piece)
