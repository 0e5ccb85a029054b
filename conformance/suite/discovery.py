"""Which vectors run: ``-k`` patterns, shards, known failures, and vectors the runner can use.

(Picking vectors to run; the victims an evict picks are the policy's *selection*.)

The rules (SPEC.md defers to README.md, "Running the suite against your port"):

- ``-k PATTERN`` matches a vector id as a glob (:func:`fnmatch.fnmatchcase`, over the whole
  id) when the pattern holds ``*``, ``?`` or ``[``, else as a substring; case-sensitive; several
  patterns select the vectors matching any of them.
- ``--shard I/N`` (``1 <= I <= N``) takes the vectors whose index in the selection sorted by id
  (code point order) is ``I - 1`` modulo ``N``; shards are applied after ``-k``, so the N shards
  of one selection partition it.
- A known-failures file lists one vector id per line; text from ``#`` to the end of a line is
  a comment; blank lines are ignored. An id is what the vector schema allows
  (:data:`VECTOR_ID`), so whatever ``--write-known-failures`` writes is read back as written.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from conformance.spec.errors import KitError
from conformance.spec.inputs import InputError, read_input_text
from conformance.spec.text import json_text

#: A vector id as the vector schema allows it: lowercase words of a-z, 0-9 and ``-``, at least
#: two segments joined by ``/``, at most 200 characters.
VECTOR_ID = re.compile(r"[a-z0-9][a-z0-9-]*(?:/[a-z0-9][a-z0-9-]*)+")
MAX_ID_LENGTH = 200


def id_problem(vector_id: str) -> str | None:
    """Why ``vector_id`` is not an id the vector schema allows, or None."""
    if len(vector_id) > MAX_ID_LENGTH or VECTOR_ID.fullmatch(vector_id) is None:
        return (
            f"{json_text(vector_id)} is not a vector id (lowercase words of a-z, 0-9 and - "
            "joined by /, "
            f"at most {MAX_ID_LENGTH} characters)"
        )
    return None


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


_V = TypeVar("_V", bound=_HasId)
_C = TypeVar("_C", bound=_HasId)


def matches(vector_id: str, pattern: str) -> bool:
    """``-k``: a glob over the whole id if the pattern has ``*``, ``?`` or ``[``, else a
    substring. Case-sensitive, since ids are."""
    if any(char in pattern for char in "*?["):
        return fnmatch.fnmatchcase(vector_id, pattern)
    return pattern in vector_id


def select(vectors: Sequence[_V], patterns: Sequence[str] | None) -> list[_V]:
    """The vectors whose id matches any of ``patterns`` (all of them when there are none)."""
    if not patterns:
        return list(vectors)
    return [v for v in vectors if any(matches(v.id, pattern) for pattern in patterns)]


class NoSuchItem(KitError, LookupError):
    """An id that names no item of the suite, or a pattern that selects several."""


def pick_one(items: Sequence[_V], wanted: str, what: str = "vector or protocol check") -> _V:
    """The one item ``wanted`` names (``show ID``): the item whose id is exactly ``wanted``,
    else the only one ``wanted`` selects as ``-k`` would (:func:`matches`).

    Raises :class:`NoSuchItem` with a one-line message: for no match, the ids closest to
    ``wanted`` (by :func:`difflib.get_close_matches`, or none); for several, the first few
    of them and how many more, so that the caller can give the whole id.
    """
    exact = [item for item in items if item.id == wanted]
    if exact:
        return exact[0]
    chosen = select(items, [wanted])
    if len(chosen) == 1:
        return chosen[0]
    if chosen:
        named = ", ".join(item.id for item in chosen[:_NAMED])
        more = f" and {len(chosen) - _NAMED:,} more" if len(chosen) > _NAMED else ""
        raise NoSuchItem(
            f"{wanted!r} matches {len(chosen):,} ids: {named}{more}; give one whole id"
        )
    close = difflib.get_close_matches(wanted, [item.id for item in items], n=3, cutoff=0.6)
    hint = f"; close ids: {', '.join(close)}" if close else "; no id is close to it"
    raise NoSuchItem(f"no {what} has the id {wanted!r}{hint}")


#: Ids a :class:`NoSuchItem` message names at most.
_NAMED = 5


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


def shard_vectors(vectors: Sequence[_V], shard: tuple[int, int] | None) -> list[_V]:
    """Shard ``I/N``: the vectors at index ``I - 1`` modulo ``N`` among the ids sorted by code
    point; the given order is kept. Every vector is in exactly one of the N shards."""
    if shard is None:
        return list(vectors)
    index, count = shard
    ranked = sorted(v.id for v in vectors)
    chosen = {vector_id for rank, vector_id in enumerate(ranked) if rank % count == index - 1}
    return [v for v in vectors if v.id in chosen]


def select_items(
    vectors: Sequence[_V],
    checks: Sequence[_C],
    patterns: Sequence[str] | None,
    shard: tuple[int, int] | None,
) -> tuple[list[_V], list[_C]]:
    """What a run runs: the vectors and the protocol checks whose ids match ``patterns``
    (:func:`select`), then shard ``I/N`` of each (:func:`shard_vectors`), in the given order."""
    return (
        shard_vectors(select(vectors, patterns), shard),
        shard_vectors(select(checks, patterns), shard),
    )


def is_generated(vector_id: str) -> bool:
    """True for random and workload vectors: they fail for many reasons at once, so a
    designed vector's failure says more."""
    theme = vector_id.split("/", 1)[0]
    return theme in ("random", "workload") or "/random" in vector_id


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
                f"{source}:{number}: expected one vector id per line, got {json_text(line)}"
            )
        problem = id_problem(line)
        if problem is not None:
            raise KnownFailuresError(f"{source}:{number}: {problem}")
        ids.add(line)
    return ids


def read_known_failures(path: str | Path) -> set[str]:
    """:func:`parse_known_failures` of a file; raise :class:`KnownFailuresError`."""
    try:
        text = read_input_text(path, what="known-failures file")
    except InputError as error:
        raise KnownFailuresError(
            f"{path}: cannot read the known-failures file: {error.reason}"
        ) from None
    return parse_known_failures(text, str(path))


def format_known_failures(ids: Iterable[str], comment: str = "") -> str:
    """The text of a known-failures file listing ``ids`` sorted, after a comment header."""
    header = "# snapkv-conformance known failures: one vector id per line; '#' starts a comment.\n"
    if comment:
        header += "".join(f"# {line}\n" for line in comment.splitlines())
    return header + "".join(f"{vector_id}\n" for vector_id in sorted(set(ids)))
