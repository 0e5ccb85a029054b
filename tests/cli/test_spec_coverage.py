"""``snapkv-conformance spec-coverage``, ``mutants --slips`` and ``adapter --slip``: what a porter
reads and the exit statuses."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from conformance.cli import main
from conformance.spec.resources import suite_dir
from conformance.spec.sentences import sentences


def test_spec_coverage_lists_every_sentence_with_its_items_and_slips(capsys):
    assert main(["spec-coverage"]) == 0
    out = capsys.readouterr().out
    for sentence in sentences():
        assert f"[{sentence.id}] §{sentence.section}" in out
    numbers = out.split("[S3.1-numbers]", 1)[1].split("\n\n", 1)[0]
    assert "protocol/strict-json-numbers" in numbers
    assert "slips: lax-number-grammar, nan-and-infinity-read" in out
    count = len(sentences())
    assert f"{count} numbered sentences, {count} pinned, 0 unpinned" in out


def test_spec_coverage_shows_one_sentence_in_full(capsys):
    assert main(["spec-coverage", "--sentence", "S2.4-fresh-sums"]) == 0
    out = capsys.readouterr().out
    assert "summation/resum-after-cursor-wraps" in out
    assert "running-sum-until-own-wrap" in out and "running-sum" in out
    assert "from the first write to a lower slot on" in out.lower()
    assert "[S2.3-pos]" not in out


def test_spec_coverage_fails_a_suite_that_leaves_sentences_unpinned(tmp_path, capsys):
    shutil.copytree(suite_dir() / "ties", tmp_path / "ties")
    assert main(["spec-coverage", "--unpinned", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "[S3.1-utf8]" in out and "NONE: no vector or check pins it" in out
    assert "[S2.4-selection]" not in out.split("\n\n", 1)[0] or "unpinned:" in out


def test_spec_coverage_refuses_an_unknown_sentence_and_writes_json(tmp_path, capsys):
    assert main(["spec-coverage", "--sentence", "S9-none"]) == 2
    assert "not a numbered sentence" in capsys.readouterr().err
    report = tmp_path / "coverage.json"
    assert main(["spec-coverage", "--json", str(report)]) == 0
    data = json.loads(report.read_text())
    assert data["sentences"] == data["pinned"] == len(sentences())
    row = next(row for row in data["rows"] if row["id"] == "S3.1-repeated")
    assert "first-name-wins" in row["slips"] and "protocol/repeated-names-request" in row["items"]


def test_mutants_scores_selected_slips_sentence_by_sentence(capsys):
    status = main(["mutants", "--slip", "lax-number-grammar", "--slip", "exit-status-after-bye"])
    out = capsys.readouterr().out
    assert status == 0
    assert "sentence-level kill score" in out
    assert "[S3.1-numbers]" in out and "1/1   killed" in out
    assert "lax-number-grammar" in out and "protocol/strict-json-numbers" in out
    assert "2 slips (2 protocol, 0 policy), 2 killed, 0 survived" in out


def test_mutants_lists_the_slip_catalogue(capsys):
    assert main(["mutants", "--slips", "--list"]) == 0
    out = capsys.readouterr().out
    assert "first-name-wins (grammar) breaks [S3.1-repeated]" in out
    assert "origin: " in out and "kahan-summation (policy) breaks [S2.4-sums]" in out


def test_adapter_refuses_an_unknown_slip():
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "adapter", "--slip", "no-such-slip"],
        input=b"",
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert b"unknown slip 'no-such-slip'" in done.stderr
