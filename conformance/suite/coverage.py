"""Which items pin which numbered sentence of SPEC.md: the ``spec`` fields of a suite, joined
with :func:`conformance.spec.sentences.sentences`.

An *item* is a vector or a protocol check. Each lists, in its ``spec`` field, the ids of the
sentences it pins: a port that breaks one of them fails the item. :func:`coverage` reads every
item's ``spec`` (and nothing else of it) and gives each sentence its items, in suite order;
``snapkv-conformance spec-coverage`` prints the result, and a sentence no item pins is a hole in
the suite.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.spec.sentences import Sentence, sentences
from conformance.suite.protocol_checks import load_check
from conformance.suite.vectors import is_protocol_check_file, iter_vector_files, read_document


@dataclass(frozen=True)
class Row:
    """One sentence and the items (vector and check ids) that pin it, in suite order."""

    sentence: Sentence
    items: tuple[str, ...]

    @property
    def pinned(self) -> bool:
        return bool(self.items)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.sentence.id,
            "section": self.sentence.section,
            "text": self.sentence.text,
            "items": list(self.items),
        }


@dataclass(frozen=True)
class Coverage:
    """Every sentence's row, in SPEC.md's order; the items that pin nothing; and ids that items
    name but SPEC.md does not define (``{item id: [unknown ids]}``)."""

    rows: tuple[Row, ...]
    items: int
    unpinned_items: tuple[str, ...] = ()
    unknown: dict[str, list[str]] = field(default_factory=dict)

    @property
    def unpinned(self) -> list[Sentence]:
        """The sentences no item pins."""
        return [row.sentence for row in self.rows if not row.pinned]

    @property
    def complete(self) -> bool:
        """Every sentence pinned and no unknown id named."""
        return not self.unpinned and not self.unknown

    def to_json(self) -> dict[str, Any]:
        return {
            "sentences": len(self.rows),
            "pinned": sum(row.pinned for row in self.rows),
            "items": self.items,
            "items_pinning_nothing": list(self.unpinned_items),
            "unknown_ids": self.unknown,
            "rows": [row.to_json() for row in self.rows],
        }


def item_specs(paths: Sequence[str | Path]) -> Iterable[tuple[str, tuple[str, ...]]]:
    """``(item id, its spec)`` for every vector and protocol check under ``paths``, in the order
    the suite is walked. Raises :class:`~conformance.spec.errors.VectorError` (or
    :class:`~conformance.suite.protocol_checks.CheckError`) for a file that cannot be read."""
    for path in iter_vector_files(paths):
        if is_protocol_check_file(path):
            check = load_check(path)
            yield check.id, check.spec
            continue
        vector = read_document(path).vector()
        yield vector.id, vector.spec


def coverage(paths: Sequence[str | Path]) -> Coverage:
    """The coverage of the numbered sentences by the items under ``paths``."""
    known = {sentence.id for sentence in sentences()}
    pinning: dict[str, list[str]] = {sentence.id: [] for sentence in sentences()}
    unknown: dict[str, list[str]] = {}
    idle: list[str] = []
    count = 0
    for item, spec in sorted(item_specs(paths)):
        count += 1
        if not spec:
            idle.append(item)
        for sentence_id in spec:
            if sentence_id in known:
                pinning[sentence_id].append(item)
            else:
                unknown.setdefault(item, []).append(sentence_id)
    rows = tuple(Row(sentence, tuple(pinning[sentence.id])) for sentence in sentences())
    return Coverage(rows, count, tuple(idle), unknown)
