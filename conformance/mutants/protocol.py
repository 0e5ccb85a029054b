"""Protocol-level choices: how an adapter reads a request line before any policy sees it.

SPEC.md §3.1: lines are strict UTF-8, a blank line gets no answer, where an object repeats a
member name the last occurrence counts, and an integer ``id`` is echoed exactly whatever its
size. The vectors never send what these choices read otherwise (the runner writes their
requests itself: small ids, no repeated names, valid UTF-8, no blank lines), so these choices
are inert on every vector; the protocol checks (``vectors/protocol/``) send exactly that, and
:func:`conformance.explain.play.play_check` replays a check on a choice in process.

These choices are kept out of :data:`conformance.mutants.CATALOGUE` (whose kill matrix is over
the vectors, ``snapkv-conformance mutants``): they are :data:`conformance.mutants.PROTOCOL`,
which the triage searches with the catalogue, so that a port whose only mistakes are in its
line reader is named from the same hooks and composes with its policy's choices.
"""

from __future__ import annotations

from typing import Any, ClassVar

from conformance.mutants._base import mutant
from conformance.mutants.model import Model

# -- the line's text ----------------------------------------------------------------------------


@mutant(
    "replacement-characters",
    rule="§3.1: lines are strict UTF-8; an invalid byte makes the line unparseable "
    "(bad-request, id null)",
    origin="lines decoded leniently (Python's `errors='replace'`, Java's and .NET's default "
    "decoders, Rust's `String::from_utf8_lossy`): an invalid byte becomes U+FFFD and the "
    "request is answered with its id",
    keywords=("decoded leniently", "replacement characters"),
)
class ReplacementCharacters(Model):
    """Decodes each line with invalid UTF-8 replaced by U+FFFD, so the line is answered."""

    @staticmethod
    def line_text(line: bytes) -> str:
        return line.decode("utf-8", errors="replace")


@mutant(
    "bom-stripped",
    rule="§3.1: a byte-order mark makes the line unparseable (bad-request, id null)",
    origin="a byte-order mark skipped as the stream is decoded (`utf-8-sig`, .NET's "
    "StreamReader, a BOM-aware reader), so the line after it is read as a request",
    keywords=("bom stripped", "utf-8-sig"),
)
class BomStripped(Model):
    """Skips a byte-order mark at the start of a line before reading it."""

    @staticmethod
    def line_text(line: bytes) -> str:
        return line.decode("utf-8-sig")


# -- blank lines ----------------------------------------------------------------------------


@mutant(
    "blank-line-answered",
    rule="§3.1: a blank line (spaces, tabs and CRs only) is ignored and gets no answer",
    origin="every line handed to the JSON reader, a blank one answered as unparseable "
    "(bad-request, id null), which puts every later answer one line out of step",
    keywords=("blank line answered", "counted as a request"),
)
class BlankLineAnswered(Model):
    """Answers a blank line, as an unparseable one."""

    answers_blank_lines: ClassVar[bool] = True


# -- repeated names -----------------------------------------------------------------------------


@mutant(
    "first-name-wins",
    rule="§3.1: where an object repeats a member name, the last occurrence counts, at any depth",
    origin="a hand-written or streaming reader that stops at the first match of a name "
    "(`strstr`, a linear lookup, Jackson's first-wins settings), so the first occurrence counts",
    keywords=("first occurrence kept",),
)
class FirstNameWins(Model):
    """Keeps the first occurrence of a repeated member name."""

    @staticmethod
    def member_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in pairs:
            out.setdefault(name, value)
        return out


#: The names of §2.1, the only members of a request's ``params``.
PARAM_NAMES = frozenset(("budget", "recentWindow", "obsWindow", "poolKernel"))


@mutant(
    "params-first-name-wins",
    rule="§3.1: where an object repeats a member name, the last occurrence counts, in `params` too",
    origin="the parameters copied into a `std::map` with `insert` or `emplace` (which keep the "
    "value already there), a `putIfAbsent` or `setdefault` loop, while the request's own "
    "fields come from a reader that keeps the last",
    keywords=("first occurrence kept inside params",),
)
class ParamsFirstNameWins(Model):
    """Keeps the first occurrence of a repeated parameter name; other names keep the last."""

    @staticmethod
    def member_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in pairs:
            if name in PARAM_NAMES:
                out.setdefault(name, value)
            else:
                out[name] = value
        return out


@mutant(
    "repeated-names-refused",
    rule="§3.1: where an object repeats a member name, the last occurrence counts",
    origin="a reader that refuses repeated names (serde's derived structs: `duplicate field`), "
    "so the whole line is unparseable (bad-request, id null)",
    keywords=("refuses repeated names", "duplicate field"),
)
class RepeatedNamesRefused(Model):
    """Refuses a line whose objects repeat a member name, as unparseable."""

    @staticmethod
    def member_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        names = [name for name, _ in pairs]
        if len(set(names)) != len(names):
            raise ValueError("duplicate field")
        return dict(pairs)


# -- ids -------------------------------------------------------------------------------------


@mutant(
    "ids-int64",
    rule="§3.1: an integer id is echoed as the same integer, whatever its size or sign",
    origin="ids read into a signed 64-bit integer (Go's int64, Java's long, serde's i64): an id "
    "outside [-2^63, 2^63 - 1] fails the reader, and the line is answered as unparseable "
    "(bad-request, id null)",
    keywords=("signed 64-bit integers", "int64"),
)
class IdsInt64(Model):
    """Fails to read an id outside the signed 64-bit range, and with it the whole line."""

    @staticmethod
    def read_id(value: Any) -> Any:
        if type(value) is int and not -(2**63) <= value < 2**63:
            raise ValueError(f"id {value} does not fit in an int64")
        return value


@mutant(
    "ids-float64",
    rule="§3.1: an integer id is echoed as the same integer, whatever its size or sign",
    origin="ids read as float64 (JavaScript's `JSON.parse`, a reader with one number type): "
    "past 2^53 the id is echoed as the nearest double",
    keywords=("ids read as float64", "nearest double"),
)
class IdsFloat64(Model):
    """Reads an integer id as its nearest float64 (echoed as that integer)."""

    @staticmethod
    def read_id(value: Any) -> Any:
        if type(value) is int:
            return int(float(value))
        return value
