"""Which vectors run: ``-k`` patterns, shards, known failures, and vectors the runner can use.

The rules (SPEC.md defers to README.md, "Running the suite against your port"):

- ``-k PATTERN`` matches a vector id as a glob (:func:`fnmatch.fnmatchcase`, over the whole
  id) when the pattern holds ``*``, ``?`` or ``[``, else as a substring; case-sensitive; several
  patterns select the vectors matching any of them.
- ``--shard I/N`` (``1 <= I <= N``) takes the vectors whose index in the selection sorted by id
  (code point order) is ``I - 1`` modulo ``N``; shards are applied after ``-k``, so the N shards
  of one selection partition it.
- A known-failures file lists one vector id per line; text from ``#`` to the end of a line is
  a comment; blank lines are ignored.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from conformance.exceptions import KitError
from conformance.protocol import ERROR_KINDS
from conformance.vectors import Vector


def matches(vector_id: str, pattern: str) -> bool:
    """``-k``: a glob over the whole id if the pattern has ``*``, ``?`` or ``[``, else a
    substring. Case-sensitive, since ids are."""
    if any(char in pattern for char in "*?["):
        return fnmatch.fnmatchcase(vector_id, pattern)
    return pattern in vector_id


def select(vectors: Sequence[Vector], patterns: Sequence[str] | None) -> list[Vector]:
    """The vectors whose id matches any of ``patterns`` (all of them when there are none)."""
    if not patterns:
        return list(vectors)
    return [v for v in vectors if any(matches(v.id, pattern) for pattern in patterns)]


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` with ``1 <= I <= N`` as ``(I, N)``; raise ValueError naming the fault."""
    head, sep, tail = text.partition("/")
    try:
        if not sep:
            raise ValueError
        index, count = int(head), int(tail)
    except ValueError:
        raise ValueError(f"shard must be I/N with integers, e.g. 1/4, got {text!r}") from None
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"shard {text!r} needs 1 <= I <= N")
    return index, count


def shard_vectors(vectors: Sequence[Vector], shard: tuple[int, int] | None) -> list[Vector]:
    """Shard ``I/N``: the vectors at index ``I - 1`` modulo ``N`` among the ids sorted by code
    point; the given order is kept. Every vector is in exactly one of the N shards."""
    if shard is None:
        return list(vectors)
    index, count = shard
    ranked = sorted(v.id for v in vectors)
    chosen = {vector_id for rank, vector_id in enumerate(ranked) if rank % count == index - 1}
    return [v for v in vectors if v.id in chosen]


class KnownFailuresError(KitError, ValueError):
    """A known-failures file that cannot be read or holds a line that is not an id."""


def parse_known_failures(text: str, source: str = "<known failures>") -> set[str]:
    """Vector ids, one per line; ``#`` starts a comment; blank lines are ignored."""
    ids = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if any(char.isspace() for char in line):
            raise KnownFailuresError(
                f"{source}:{number}: expected one vector id per line, got {line!r}"
            )
        ids.add(line)
    return ids


def read_known_failures(path: str | Path) -> set[str]:
    """:func:`parse_known_failures` of a file; raise :class:`KnownFailuresError`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise KnownFailuresError(f"{path}: cannot read the known-failures file: {error}") from None
    return parse_known_failures(text, str(path))


def format_known_failures(ids: Iterable[str], comment: str = "") -> str:
    """The text of a known-failures file listing ``ids`` sorted, after a comment header."""
    header = "# snapkv-conformance known failures: one vector id per line; '#' starts a comment.\n"
    if comment:
        header += "".join(f"# {line}\n" for line in comment.splitlines())
    return header + "".join(f"{vector_id}\n" for vector_id in sorted(set(ids)))


def runnable_problems(vectors: Sequence[Vector]) -> list[str]:
    """Faults that make vectors unusable by the runner (file, field and reason), if any.

    Cheaper than full validation (``snapkv-conformance validate``): unique ids, a ``new``
    first, and expectations of the right shape.
    """
    problems = []
    seen: dict[str, Any] = {}
    for vector in vectors:
        where = str(vector.path) if vector.path is not None else vector.id
        if vector.id in seen:
            problems.append(f"{where}: /id: duplicate id {vector.id!r} (also in {seen[vector.id]})")
        seen[vector.id] = where
        if not vector.calls or vector.calls[0].op != "new":
            problems.append(f"{where}: /calls/0: the first call must be new")
        for index, call in enumerate(vector.calls):
            problem = _expect_problem(call.op, call.expect)
            if problem:
                problems.append(f"{where}: /calls/{index}/expect: {problem}")
    return problems


def _expect_problem(op: str, expect: Mapping[str, Any] | None) -> str | None:
    if expect is None:
        return None
    if not isinstance(expect, Mapping) or len(expect) != 1:
        return "must be {'victims': [...]} or {'error': kind}"
    if "error" in expect:
        return None if expect["error"] in ERROR_KINDS else f"unknown error kind {expect['error']!r}"
    victims = expect.get("victims")
    if op != "evict":
        return "only an evict can expect victims"
    if not isinstance(victims, list) or not all(type(v) is int for v in victims):
        return "victims must be a list of integers"
    return None


def needs_fresh_session(vector: Vector) -> bool:
    """True for a vector whose ``new`` must be refused and which goes on after it.

    A refused ``new`` leaves any earlier policy in place, so what follows (a step expecting
    ``no-policy``, say) means something only on an adapter that has had no policy yet.
    """
    return len(vector.calls) > 1 and vector.calls[0].expected_error is not None
