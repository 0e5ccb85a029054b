"""Slips in reading a line's JSON (SPEC.md §3.1): its bytes, its grammar, its escapes, where it
ends, and which lines get an answer.

Each reads the line the way a lax or hand-written reader does and then answers the request as
the reference does; on every line that is strict JSON it answers exactly as the reference.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from conformance.slips._text import between_strings, lax_numbers, names, pieces
from conformance.slips.slip_adapter import Answer, SlipAdapter, slip
from conformance.spec.protocol import DecodeError, decode, refusal, refuse_constant


@slip(
    "lax-number-grammar",
    sentence="S3.1-numbers",
    origin="a hand-written tokenizer that hands each number token to strtod or strtol, which "
    "take +3, 03, .5 and 3. (as do JavaScript's Number() and JSON5)",
)
class LaxNumberGrammar(SlipAdapter):
    """Numbers with a leading + or zero, a bare point or an exponent without digits are read
    as the number they look like."""

    def read(self, line: bytes) -> Any:
        return decode(between_strings(_text(line), lax_numbers))


@slip(
    "nan-and-infinity-read",
    sentence="S3.1-numbers",
    origin="Python's json.loads with its defaults, or a reader built on strtod, which parse "
    "NaN and Infinity",
)
class NanAndInfinityRead(SlipAdapter):
    """``NaN``, ``Infinity`` and ``-Infinity`` are read as numbers."""

    def read(self, line: bytes) -> Any:
        return json.loads(_text(line))


@slip(
    "raw-control-characters",
    sentence="S3.1-strings",
    origin="Python's json.loads(strict=False), or a hand-written string scanner that copies "
    "bytes until the closing quote",
)
class RawControlCharacters(SlipAdapter):
    """Raw control characters (a tab, U+0001) inside strings are taken as they are."""

    def read(self, line: bytes) -> Any:
        return json.JSONDecoder(strict=False, parse_constant=refuse_constant).decode(_text(line))


@slip(
    "unknown-escapes-kept",
    sentence="S3.1-strings",
    origin="a hand-written string scanner that keeps a backslash it does not know (\\x41, "
    "\\a) as text instead of refusing the line",
)
class UnknownEscapesKept(SlipAdapter):
    """Escapes JSON does not have (``\\x41``, ``\\a``, a short ``\\u12``) are kept as text."""

    def read(self, line: bytes) -> Any:
        parts = pieces(_text(line))
        return decode("".join(_kept(piece) if inside else piece for inside, piece in parts))


_ESCAPE = re.compile(r'\\(?:[\\/"bfnrt]|u[0-9a-fA-F]{4})|\\')


def _kept(string: str) -> str:
    """A JSON string (quotes included) with every escape JSON does not have written as an
    escaped backslash and the text after it."""
    return _ESCAPE.sub(lambda m: m.group(0) if len(m.group(0)) > 1 else "\\\\", string)


_NOT_JSON_SPACE = re.compile(r"[^\S \t\r\n]")


@slip(
    "unicode-whitespace",
    sentence="S3.1-whitespace",
    origin="a tokenizer that skips whitespace with isspace(), Character.isWhitespace or "
    "JavaScript's \\s, which take a no-break space, U+2028, a form feed or a vertical tab",
)
class UnicodeWhitespace(SlipAdapter):
    """Any Unicode whitespace between tokens (a no-break space, U+2028, a form feed) is read
    as a space, and a line of nothing else is blank."""

    def is_blank(self, line: bytes) -> bool:
        try:
            return not line.decode("utf-8").strip()
        except UnicodeDecodeError:
            return False

    def read(self, line: bytes) -> Any:
        text = between_strings(_text(line), lambda piece: _NOT_JSON_SPACE.sub(" ", piece))
        return decode(text.replace("\ufeff", " "))


@slip(
    "nul-ends-line",
    sentence="S3.1-one-value",
    origin="a C port that hands the line to its parser as a NUL-terminated string, so the "
    "parser stops at the first NUL byte",
)
class NulEndsLine(SlipAdapter):
    """A line is read up to its first NUL byte; the rest is never seen."""

    def read(self, line: bytes) -> Any:
        return decode(line.split(b"\0", 1)[0])


@slip(
    "first-value-read",
    sentence="S3.1-one-value",
    origin="a streaming reader of JSON values rather than lines (Go's json.Decoder, "
    "serde_json's StreamDeserializer) that stops after the first value",
)
class FirstValueRead(SlipAdapter):
    """Only the first JSON value of a line is read; anything after it is ignored."""

    def read(self, line: bytes) -> Any:
        text = _text(line)
        try:
            value, _ = json.JSONDecoder(parse_constant=refuse_constant).raw_decode(text.lstrip())
        except ValueError as error:
            raise DecodeError(str(error)) from None
        return value


@slip(
    "trailing-commas",
    sentence="S3.1-syntax",
    origin="JSON5 or a lenient reader (Python's ast.literal_eval, YAML) that allows a comma "
    "before a closing bracket",
)
class TrailingCommas(SlipAdapter):
    """A comma before a closing brace or bracket is ignored."""

    def read(self, line: bytes) -> Any:
        return decode(between_strings(_text(line), lambda p: re.sub(r",(\s*[}\]])", r"\1", p)))


#: Overlong encodings of ASCII characters: two bytes C0/C1 and three bytes E0 80-9F.
_OVERLONG = re.compile(rb"[\xc0\xc1][\x80-\xbf]|\xe0[\x80-\x9f][\x80-\xbf]")


def _ascii_of(match: re.Match[bytes]) -> bytes:
    data = match.group(0)
    value = (data[0] & 0x1F) << 6 | data[1] & 0x3F
    if len(data) == 3:
        value = (data[0] & 0x0F) << 12 | (data[1] & 0x3F) << 6 | data[2] & 0x3F
    return chr(value).encode("utf-8")


@slip(
    "overlong-utf8",
    sentence="S3.1-utf8",
    origin="a UTF-8 decoder that computes each code point from its bytes without checking "
    "for the shortest form (Java's modified UTF-8, many hand-written decoders)",
)
class OverlongUtf8(SlipAdapter):
    """Overlong UTF-8 forms (C0 AF for '/') are decoded as the character they spell."""

    def read(self, line: bytes) -> Any:
        return decode(_OVERLONG.sub(_ascii_of, line))


@slip(
    "replacement-characters",
    sentence="S3.1-utf8",
    origin="a decoder in lenient mode (Python's errors='replace', Rust's "
    "String::from_utf8_lossy, Java's default CharsetDecoder) that swaps bad bytes for U+FFFD",
)
class ReplacementCharacters(SlipAdapter):
    """Bytes that are not UTF-8 are read as U+FFFD, and the line is answered."""

    def read(self, line: bytes) -> Any:
        return decode(line.decode("utf-8", errors="replace").removeprefix("\ufeff"))


@slip(
    "escaped-names-not-decoded",
    sentence="S3.1-escapes",
    origin="a reader that matches member names on the line's raw bytes (a hand-written "
    'scanner looking for "id":), so "\\u0069d" is not id',
)
class EscapedNamesNotDecoded(SlipAdapter):
    """Member names are compared as written, before their escapes are decoded."""

    def read(self, line: bytes) -> Any:
        return decode(names(_text(line), lambda name: name.replace("\\", "\\\\")))


@slip(
    "lone-surrogates-refused",
    sentence="S3.1-escapes",
    origin="serde_json reading into a String, or any reader that insists on well-formed "
    "UTF-16 escapes, refusing a lone \\ud800",
)
class LoneSurrogatesRefused(SlipAdapter):
    """A string holding a lone surrogate escape makes the line unparseable."""

    def read(self, line: bytes) -> Any:
        request = decode(line)
        if _has_lone_surrogate(request):
            raise DecodeError("lone surrogate")
        return request


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(char) <= 0xDFFF for char in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(item) for item in value)
    return False


@slip(
    "first-name-wins",
    sentence="S3.1-repeated",
    origin="a reader that stops at the first match (a hand-written scanner, Jackson or Gson "
    "configured to keep the first, a map filled with putIfAbsent)",
)
class FirstNameWins(SlipAdapter):
    """Where an object repeats a member name, the first occurrence counts, at every depth."""

    def read(self, line: bytes) -> Any:
        def first(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            kept: dict[str, Any] = {}
            for key, value in pairs:
                kept.setdefault(key, value)
            return kept

        decoder = json.JSONDecoder(object_pairs_hook=first, parse_constant=refuse_constant)
        return decoder.decode(_text(line))


@slip(
    "cr-ends-line",
    sentence="S3.1-line-ends",
    origin="universal-newline reading (Python's text mode, .NET's ReadLine, Java's "
    "BufferedReader.readLine) that ends a line at a lone CR too",
)
class CrEndsLine(SlipAdapter):
    """A lone CR ends a line, as LF does."""

    def lines(self, stream: Iterable[bytes]) -> Iterator[bytes]:
        for line in stream:
            parts = re.split(rb"\r(?!\n)", line)
            yield from (part + b"\n" for part in parts[:-1])
            yield parts[-1]


@slip(
    "last-line-dropped",
    sentence="S3.1-line-ends",
    origin="a reader that only takes lines ended by LF (C's fgets checked for the newline, "
    "a split that drops the last piece)",
)
class LastLineDropped(SlipAdapter):
    """A last line without a final LF is never answered."""

    def lines(self, stream: Iterable[bytes]) -> Iterator[bytes]:
        return (line for line in stream if line.endswith(b"\n"))


@slip(
    "blank-line-answered",
    sentence="S3.1-answers",
    origin="a loop that answers every line it reads, a blank one with bad-request",
)
class BlankLineAnswered(SlipAdapter):
    """A blank line is answered with bad-request."""

    def is_blank(self, line: bytes) -> bool:
        return False

    def answer_line(self, line: bytes) -> Answer:
        if not line.strip(b" \t\r\n"):
            return refusal(None, "bad-request", "empty line")
        return super().answer_line(line)


def _text(line: bytes) -> str:
    """The line as text, strictly decoded (a slip of the grammar is not one of UTF-8)."""
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DecodeError(f"not UTF-8 ({error.reason})") from None
