"""The numbered sentences of SPEC.md: every rule a port must keep, with its stable id.

SPEC.md opens each normative sentence with its id in bold brackets, ``**[S2.3-pos]**``: ``S``,
the section (``1``, ``2.3``), a hyphen and a name. The sentence runs from the marker to the
next marker or the end of its paragraph, list item or table row. A plain ``[S2.3-pos]`` (not
bold) is a reference to a sentence defined elsewhere. Vectors and protocol checks list the ids
they pin in their ``spec`` field; ``snapkv-conformance spec-coverage`` joins the two.

The text is read from the SPEC.md shipped with the package (``conformance/data/SPEC.md``, in a
checkout a link to the checkout's own), so an installed kit and a checkout agree on the ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from conformance.spec.resources import data_path

#: A sentence id: ``S``, a section number, a hyphen, a lowercase name.
ID_PATTERN = r"S[0-9]+(?:\.[0-9]+)?-[a-z0-9]+(?:-[a-z0-9]+)*"
_ID = re.compile(ID_PATTERN)
_DEFINITION = re.compile(r"\*\*\[(" + ID_PATTERN + r")\]\*\*")
_REFERENCE = re.compile(r"(?<!\*)\[(" + ID_PATTERN + r")\](?!\*)")
#: Where a new block starts inside a run of lines: a list item or a table row.
_BLOCK_START = re.compile(r"^\s*(?:[-*] |[0-9]+\. |\|)")


@dataclass(frozen=True)
class Sentence:
    """One numbered sentence: its id, the section it lives in (``"2.3"``) and its text as
    SPEC.md writes it, on one line, without the id."""

    id: str
    section: str
    text: str

    def short(self, width: int = 100) -> str:
        """The text cut to ``width`` characters at a word, for a table."""
        if len(self.text) <= width:
            return self.text
        return self.text[: width - 3].rsplit(" ", 1)[0] + "..."


def section_of(sentence_id: str) -> str:
    """``"2.3"`` for ``S2.3-pos``; raise ValueError for a string that is not an id."""
    if _ID.fullmatch(sentence_id) is None:
        raise ValueError(f"not a SPEC.md sentence id: {sentence_id!r}")
    return sentence_id[1:].split("-", 1)[0]


def spec_path() -> Path:
    """The SPEC.md the kit reads its sentences from."""
    return data_path("SPEC.md")


def parse_sentences(text: str) -> tuple[Sentence, ...]:
    """Every numbered sentence of ``text`` (SPEC.md), in document order; raise ValueError for
    an id defined twice."""
    sentences: list[Sentence] = []
    seen: set[str] = set()
    for block in _blocks(text):
        marks = list(_DEFINITION.finditer(block))
        for index, mark in enumerate(marks):
            end = marks[index + 1].start() if index + 1 < len(marks) else len(block)
            sentence_id = mark.group(1)
            if sentence_id in seen:
                raise ValueError(f"SPEC.md defines {sentence_id} twice")
            seen.add(sentence_id)
            body = " ".join(block[mark.end() : end].split())
            sentences.append(Sentence(sentence_id, section_of(sentence_id), body))
    return tuple(sentences)


def references(text: str) -> set[str]:
    """The ids ``text`` refers to without defining them (plain ``[S2.3-pos]``)."""
    return set(_REFERENCE.findall(text))


def _blocks(text: str) -> list[str]:
    """Paragraphs, list items and table rows, each joined into one string."""
    blocks: list[list[str]] = []
    current: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        if not line.strip() or line.startswith("#") or _BLOCK_START.match(line):
            if current:
                blocks.append(current)
            current = [] if not line.strip() or line.startswith("#") else [line]
            continue
        current.append(line)
    if current:
        blocks.append(current)
    return [" ".join(block) for block in blocks]


@cache
def sentences() -> tuple[Sentence, ...]:
    """The numbered sentences of the shipped SPEC.md, in document order."""
    return parse_sentences(spec_path().read_text(encoding="utf-8"))


def by_id() -> dict[str, Sentence]:
    """The shipped sentences by id."""
    return {sentence.id: sentence for sentence in sentences()}


def unknown_ids(ids: object) -> list[str]:
    """The entries of ``ids`` (a ``spec`` field's value) that SPEC.md does not define."""
    if not isinstance(ids, list | tuple):
        return []
    known = by_id()
    return [value for value in ids if not isinstance(value, str) or value not in known]
