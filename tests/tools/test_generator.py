"""The generator: byte-identical regeneration, all-or-nothing writes, ``--check``, loud failure
when the reference does not bear a builder out, and random vectors that always validate."""

from __future__ import annotations

import json
import os
import stat

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import cli
from conformance.report import outputs
from conformance.spec.errors import GenerationError
from conformance.spec.resources import suite_dir
from conformance.suite.validation import check_document
from conformance.suite.vectors import dumps_vector
from conformance.tools.generate import generator
from conformance.tools.generate.builders import Builder, Draft, all_builders, params
from conformance.tools.generate.builders import findings as findings_module
from conformance.tools.generate.builders.randomized import random_vector
from conformance.tools.generate.generator import (
    build_suite,
    diff_suite,
    existing_vector_files,
    realize,
    write_suite,
)


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    # Unvalidated: equal bytes to the committed suite, which system/test_committed_suite.py
    # validates in full.
    return build_suite(validate=False)


def test_regeneration_is_byte_identical_to_the_committed_suite(generated):
    committed = existing_vector_files(suite_dir())
    assert sorted(committed) == sorted(generated)
    changed = [path for path, text in generated.items() if committed[path] != text.encode()]
    assert changed == []


def test_generation_is_deterministic_across_runs(generated):
    names = {"randomized.random-vectors", "workloads.noisy-attention", "ring.window-lengths"}
    again = build_suite([b for b in all_builders() if b.name in names], validate=False)
    assert again and all(generated[path] == text for path, text in again.items())


def test_every_public_builder_module_registers_builders():
    modules = {entry.name.split(".")[0] for entry in all_builders()}
    assert modules >= {
        "refusals",
        "atomicity",
        "ring",
        "pooling",
        "selection",
        "summation",
        "limits",
        "workloads",
        "randomized",
        "findings",
    }


def _small_suite() -> dict[str, str]:
    draft = Draft("ties/small", pins="P.", catches="C.", tags=("ties",), params=params(1, 0, 1, 1))
    text = dumps_vector(realize(draft.attend(0).attend(1, {0: 1.0}).evict()))
    return {"ties/small.json": text, "ring/other.json": text.replace("ties/small", "ring/other")}


def test_write_suite_replaces_vectors_and_keeps_other_files(tmp_path):
    out = tmp_path / "vectors"
    (out / "stale").mkdir(parents=True)
    (out / "stale" / "gone.json").write_text("{}")
    (out / "ties").mkdir()
    (out / "ties" / "small.json").write_text("old")
    (out / "README.md").write_text("kept")
    (out / "TAGS.md").write_text("kept too")
    os.chmod(out, 0o755)
    files = _small_suite()
    change = write_suite(out, files)
    assert (change.added, change.removed, change.changed) == (
        ["ring/other.json"],
        ["stale/gone.json"],
        ["ties/small.json"],
    )
    assert existing_vector_files(out) == {k: v.encode() for k, v in files.items()}
    assert (out / "README.md").read_text() == "kept"
    assert (out / "TAGS.md").read_text() == "kept too"
    assert stat.S_IMODE(out.stat().st_mode) == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vectors"]  # no staging left behind
    assert write_suite(out, files).empty


def test_write_suite_creates_a_missing_directory(tmp_path):
    out = tmp_path / "new" / "suite"
    change = write_suite(out, _small_suite())
    assert change.added == ["ring/other.json", "ties/small.json"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o755


def test_failed_write_leaves_the_directory_untouched(tmp_path, monkeypatch):
    out = tmp_path / "vectors"
    out.mkdir()
    (out / "keep.json").write_text("{}")
    staged = []
    original = outputs.stage

    def full_on_second(target, data, info):
        staged.append(target)
        if len(staged) == 2:
            raise OSError(28, "No space left on device")
        return original(target, data, info)

    monkeypatch.setattr(outputs, "stage", full_on_second)
    with pytest.raises(OSError, match="No space left"):
        write_suite(out, _small_suite())
    assert existing_vector_files(out) == {"keep.json": b"{}"}
    assert sorted(p.name for p in out.rglob("*")) == ["keep.json"]  # no staging, no new dirs
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vectors"]


def test_write_suite_changes_only_the_vector_files(tmp_path):
    out = tmp_path / "vectors"
    files = _small_suite()
    write_suite(out, files)
    (out / "empty").mkdir()
    private = out / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    os.mkfifo(out / "a-fifo")
    os.mkfifo(out / "ring" / "fifo.json")  # not a vector: never opened
    (out / "dangling.json").symlink_to(tmp_path / "nowhere.json")
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("old")
    (out / "ties" / "small.json").unlink()
    (out / "ties" / "small.json").symlink_to(elsewhere)
    linked = tmp_path / "hard-link.json"
    os.link(out / "ring" / "other.json", linked)
    (out / "ring" / "other.json").write_text("edited")
    (out / "ring" / "other.json").chmod(0o640)
    before = {p: p.lstat() for p in out.rglob("*")}

    change = write_suite(out, files)

    assert change.changed == ["ring/other.json", "ties/small.json"]
    assert (out / "empty").is_dir() and stat.S_IMODE(private.stat().st_mode) == 0o700
    assert stat.S_ISFIFO((out / "a-fifo").lstat().st_mode)
    assert (out / "dangling.json").is_symlink() and not (out / "dangling.json").exists()
    assert (out / "ties" / "small.json").is_symlink()
    assert elsewhere.read_text() == files["ties/small.json"]
    other = out / "ring" / "other.json"
    assert other.read_text() == files["ring/other.json"] == linked.read_text()
    assert other.stat().st_ino == before[other].st_ino and other.stat().st_nlink == 2
    assert stat.S_IMODE(other.stat().st_mode) == 0o640
    untouched = [p for p in before if p not in (other,)]
    for path in untouched:
        now = path.lstat()
        assert (now.st_ino, now.st_mode, now.st_uid) == (
            before[path].st_ino,
            before[path].st_mode,
            before[path].st_uid,
        ), path


def test_generate_check_lists_differences_and_exits_1(tmp_path, monkeypatch, capsys):
    files = _small_suite()
    monkeypatch.setattr(generator, "build_suite", lambda: files)
    out = tmp_path / "vectors"
    assert cli.main(["generate", "--out", str(out)]) == 0
    assert cli.main(["generate", "--check", "--out", str(out)]) == 0
    (out / "ties" / "small.json").write_text("edited by hand")
    (out / "ring" / "other.json").unlink()
    (out / "ring" / "extra.json").write_text("{}")
    capsys.readouterr()
    assert cli.main(["generate", "--check", "--out", str(out)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [
        "added    ring/other.json",
        "removed  ring/extra.json",
        "changed  ties/small.json",
    ]
    assert "differs from a fresh generation" in lines[3]
    assert (out / "ties" / "small.json").read_text() == "edited by hand"  # --check writes nothing


def test_generate_reports_a_generation_failure_with_exit_2(monkeypatch, capsys):
    def failing():
        raise GenerationError("ties/x: call 3 (step): meant to succeed")

    monkeypatch.setattr(generator, "build_suite", failing)
    assert cli.main(["generate", "--check"]) == 2
    assert "generation failed: ties/x: call 3" in capsys.readouterr().err


PINS, CATCHES = "What the test vector pins.", "the mistake it catches."


def _draft(**kw) -> Draft:
    return Draft(
        "ties/x", pins=PINS, catches=CATCHES, tags=("ties",), params=params(2, 1, 2, 1), **kw
    )


def test_intended_refusal_of_another_kind_fails_loudly():
    draft = _draft().attend(0).refuse_step("invalid-attention", 0, [])
    with pytest.raises(GenerationError) as error:
        realize(draft)
    assert str(error.value) == (
        "ties/x: call 2 (step): meant to be refused with invalid-attention, but the reference "
        "refuses it with invalid-position"
    )


def test_intended_refusal_that_the_reference_accepts_fails_loudly():
    draft = _draft().refuse_step("invalid-position", 0, [])
    with pytest.raises(GenerationError, match="but the reference accepts it"):
        realize(draft)


def test_a_call_meant_to_succeed_that_is_refused_fails_loudly():
    with pytest.raises(GenerationError, match="meant to succeed, but the reference refuses it"):
        realize(_draft().step(0, [0.5]))


def test_a_weight_for_a_position_not_kept_is_a_design_error():
    with pytest.raises(GenerationError, match=r"not kept: \[7\]"):
        realize(_draft().attend(0).attend(1, {7: 1.0}))


def test_expectations_come_from_the_reference():
    vector = realize(
        _draft().nulls([0, 1]).attend(2, {0: 1.0}).evict().refuse_step("invalid-position", 2)
    )
    assert [call.expect for call in vector.calls] == [
        None,
        None,
        None,
        None,
        {"victims": [1]},
        {"error": "invalid-position"},
    ]
    assert vector.description == "What the test vector pins. Catches: the mistake it catches."


def test_build_suite_refuses_invalid_vectors_and_duplicate_ids():
    not_float32 = Builder("t.a", lambda: [_draft().attend(0).step(1, [0.1])])
    with pytest.raises(GenerationError, match=r"/calls/2/attn/0: 0\.1 is not exactly a float32"):
        build_suite([not_float32])
    twice = Builder("t.b", lambda: [_draft(), _draft()])
    with pytest.raises(GenerationError, match=r"'ties/x' is also made by t\.b"):
        build_suite([twice])
    untagged = Builder(
        "t.c", lambda: [Draft("ties/y", pins="P.", catches="C.", tags=(), params={})]
    )
    with pytest.raises(GenerationError, match="at least one tag"):
        build_suite([untagged])


def test_findings_are_replayed_with_fresh_expectations(tmp_path, monkeypatch):
    committed = json.loads((suite_dir() / "ties" / "lower-position-first.json").read_text())
    committed["id"] = "fuzz/0123abcd"
    committed["tags"] = ["fuzz"]
    committed["description"] = "Found by snapkv-conformance fuzz against a port."
    committed["calls"][-1]["expect"] = {"victims": [2]}  # stale: the reference evicts 1
    (tmp_path / "finding.json").write_text(json.dumps(committed))
    monkeypatch.setattr(findings_module, "FINDINGS", tmp_path)
    files = build_suite([b for b in all_builders() if b.name == "findings.findings"])
    vector = json.loads(files["fuzz/0123abcd.json"])
    assert vector["calls"][-1]["expect"] == {"victims": [1]}
    assert vector["description"].endswith(
        "Catches: the difference it was found for, should it come back."
    )


@settings(
    max_examples=20,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_vectors_always_validate(seed):
    text = dumps_vector(realize(random_vector(seed)))
    _, problems = check_document(text, f"random/seed-{seed}.json")
    assert problems == []


def test_diff_suite_of_a_missing_directory_adds_everything(tmp_path):
    change = diff_suite(tmp_path / "missing", {"a/b.json": "{}"})
    assert change.added == ["a/b.json"] and not change.removed and not change.changed


def test_generate_neither_opens_nor_touches_a_fifo_named_like_a_vector(tmp_path, monkeypatch):
    import threading

    files = _small_suite()
    monkeypatch.setattr(generator, "build_suite", lambda: files)
    out = tmp_path / "vectors"
    out.mkdir()
    os.mkfifo(out / "pipe.json")
    status: list[int] = []
    worker = threading.Thread(
        target=lambda: status.append(cli.main(["generate", "--out", str(out)])), daemon=True
    )
    worker.start()
    worker.join(60)
    assert status == [0]  # a blocking open of the FIFO would leave the thread waiting
    assert stat.S_ISFIFO((out / "pipe.json").lstat().st_mode)
    assert existing_vector_files(out) == {k: v.encode() for k, v in files.items()}
