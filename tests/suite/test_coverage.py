"""Which items pin which numbered sentence (conformance.suite.coverage), and the rule that
every sentence of SPEC.md is pinned by the committed suite."""

from __future__ import annotations

import json
import shutil

from conformance.spec.resources import suite_dir
from conformance.suite.coverage import coverage
from conformance.suite.validation import check_file, check_problems


def test_every_numbered_sentence_is_pinned_by_the_committed_suite():
    """The suite's promise: a port that breaks any numbered sentence of SPEC.md fails at least
    one item; a sentence without an item is a hole a port can slip through."""
    table = coverage([suite_dir()])
    assert [s.id for s in table.unpinned] == []
    assert table.unknown == {}
    assert table.complete


def test_every_generated_item_pins_a_sentence():
    """Only the recorded vectors (data from a real model, not generated) pin none."""
    table = coverage([suite_dir()])
    assert all(item.startswith("real/") for item in table.unpinned_items), table.unpinned_items


def test_a_suite_missing_a_sentence_reports_it(tmp_path):
    suite = tmp_path / "suite"
    shutil.copytree(suite_dir() / "ties", suite / "ties")
    table = coverage([suite])
    unpinned = {s.id for s in table.unpinned}
    assert "S2.4-selection" not in unpinned and "S3.1-utf8" in unpinned
    assert not table.complete
    row = next(row for row in table.rows if row.sentence.id == "S2.4-selection")
    assert "ties/lower-position-first" in row.items


def test_an_unknown_id_is_reported_and_refused_by_validate(tmp_path):
    source = suite_dir() / "ties" / "lower-position-first.json"
    path = tmp_path / "ties" / "lower-position-first.json"
    path.parent.mkdir()
    path.write_text(
        source.read_text().replace('"spec": ["S2.4-selection"]', '"spec": ["S2.4-nope"]')
    )
    table = coverage([tmp_path])
    assert table.unknown == {"ties/lower-position-first": ["S2.4-nope"]}
    _, problems = check_file(path)
    assert any("/spec/0" in str(p) and "S2.4-nope" in str(p) for p in problems), problems


def test_a_check_naming_an_unknown_id_is_invalid():
    data = json.loads((suite_dir() / "protocol" / "crlf.json").read_text())
    data["spec"] = ["S3.1-line-ends", "S3.9-nothing"]
    problems = check_problems(data, "protocol/crlf.json")
    assert any(p.startswith("/spec/1:") for p in problems), problems
