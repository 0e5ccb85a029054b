"""The numbered sentences of SPEC.md (conformance.spec.sentences): ids, sections, text, and the
shipped copy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.spec.sentences import (
    parse_sentences,
    references,
    section_of,
    sentences,
    spec_path,
    unknown_ids,
)

ROOT = Path(__file__).resolve().parents[2]
SPEC = (ROOT / "SPEC.md").read_text(encoding="utf-8")


def test_the_shipped_spec_is_the_checkouts():
    assert spec_path().read_text(encoding="utf-8") == SPEC


def test_every_id_is_defined_once_and_every_reference_names_one():
    ids = [sentence.id for sentence in sentences()]
    assert len(ids) == len(set(ids)) >= 60
    assert references(SPEC) <= set(ids)


def test_each_sentence_lives_in_the_section_its_id_names():
    """An id's section is where its sentence is written: a sentence moved to another section
    would keep its id (ids are stable) but should then be noticed here."""
    current = ""
    where: dict[str, str] = {}
    for line in SPEC.splitlines():
        heading = re.match(r"#{2,3} ([0-9]+(?:\.[0-9]+)?)[ .]", line)
        if heading:
            current = heading.group(1)
        for found in re.findall(r"\*\*\[(S[^\]]+)\]\*\*", line):
            where[found] = current
    for sentence in sentences():
        assert where[sentence.id] == sentence.section, sentence.id


def test_every_sentence_is_whole():
    """A numbered sentence is a whole rule: it ends a sentence where the next id or its block
    begins (an id in the middle of a sentence would cut the rule before it in two)."""
    for sentence in sentences():
        assert len(sentence.text) > 40, sentence
        assert sentence.text.endswith((".", ".)", ".*")), sentence


def test_a_sentence_runs_to_the_next_id_or_the_end_of_its_block():
    text = (
        "Intro.\n\n**[S9-a]** First rule. **[S9-b]** Second rule,\n"
        "over two lines.\n\n- **[S9.1-c]** In a list item.\n- Not a rule.\n"
    )
    found = {s.id: s.text for s in parse_sentences(text)}
    assert found == {
        "S9-a": "First rule.",
        "S9-b": "Second rule, over two lines.",
        "S9.1-c": "In a list item.",
    }
    assert references("see [S9-a] and **[S9-b]**") == {"S9-a"}


def test_an_id_defined_twice_is_refused():
    with pytest.raises(ValueError, match="S9-a twice"):
        parse_sentences("**[S9-a]** One.\n\n**[S9-a]** Two.\n")


def test_section_of_reads_the_id_and_refuses_anything_else():
    assert section_of("S2.3-pos") == "2.3"
    assert section_of("S1-integers") == "1"
    with pytest.raises(ValueError):
        section_of("2.3-pos")


def test_unknown_ids_names_what_spec_does_not_define():
    assert unknown_ids(["S2.3-pos", "S2.3-nope", 7]) == ["S2.3-nope", 7]
    assert unknown_ids(None) == []
