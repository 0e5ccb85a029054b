"""The generated blocks of README.md and the pages hold what the kit makes of them now, and the
check that says so can fail: a changed parser, schema, exit status or suite shows."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.docs import pages
from conformance.docs.pages import BLOCKS, Block, PageError

ROOT = Path(__file__).resolve().parents[2]
FAST = [block for block in BLOCKS if not block.slow]
SLOW = [block for block in BLOCKS if block.slow]


def _id(block: Block) -> str:
    return f"{block.page}:{block.name}"


@pytest.mark.parametrize("block", FAST, ids=_id)
def test_each_generated_block_is_what_the_kit_makes_now(block: Block) -> None:
    assert pages.stale(ROOT, [block]) == [], f"regenerate with: {pages.COMMAND}"


@pytest.mark.slow
@pytest.mark.parametrize("block", SLOW, ids=_id)
def test_each_pasted_run_is_what_the_port_prints_now(block: Block) -> None:
    """README's first run and the triage page's examples: the runs, made again."""
    assert pages.stale(ROOT, [block]) == [], f"regenerate with: {pages.COMMAND}"


def test_every_block_has_its_markers_once_in_its_page() -> None:
    for block in BLOCKS:
        text = (ROOT / block.page).read_text(encoding="utf-8")
        assert text.count(block.begin) == 1 and text.count(block.end) == 1, _id(block)
        assert text.index(block.begin) < text.index(block.end), _id(block)


def test_a_page_is_never_two_blocks_of_one_name() -> None:
    keys = [(block.page, block.name) for block in BLOCKS]
    assert len(keys) == len(set(keys))


def _sample(render: str) -> Block:
    return Block("page.md", "sample", "a test", lambda root: render)


def test_the_check_names_a_block_that_differs_and_writing_fixes_it(tmp_path: Path) -> None:
    (tmp_path / "page.md").write_text(
        "prose before\n<!-- docs:sample:begin -->\nold\n<!-- docs:sample:end -->\nprose after\n"
    )
    block = _sample("new | table")
    assert pages.stale(tmp_path, [block]) == ["page.md: block 'sample' differs from a test"]
    assert pages.write(tmp_path, [block]) == ["page.md"]
    assert (tmp_path / "page.md").read_text() == (
        "prose before\n<!-- docs:sample:begin -->\nnew | table\n<!-- docs:sample:end -->\n"
        "prose after\n"
    )
    assert pages.stale(tmp_path, [block]) == []
    assert pages.write(tmp_path, [block]) == []  # nothing to change: nothing written


def test_a_page_without_its_markers_is_named_not_rewritten(tmp_path: Path) -> None:
    (tmp_path / "page.md").write_text("no block here\n")
    block = _sample("content")
    assert pages.stale(tmp_path, [block]) == [
        "page.md: no <!-- docs:sample:begin --> ... <!-- docs:sample:end --> block"
    ]
    with pytest.raises(PageError, match="no <!-- docs:sample:begin -->"):
        pages.write(tmp_path, [block])
    assert (tmp_path / "page.md").read_text() == "no block here\n"


def test_a_changed_suite_fails_the_check(tmp_path: Path) -> None:
    """The drift check is real: a vector's description edited in a copy of the suite makes the
    listing of that copy differ from the committed page."""
    shutil.copytree(ROOT / "vectors", tmp_path / "vectors")
    shutil.copytree(ROOT / "docs" / "suite", tmp_path / "docs" / "suite")
    (block,) = [block for block in BLOCKS if block.name == "vectors"]
    assert pages.stale(tmp_path, [block]) == []
    vector = tmp_path / "vectors" / "ties" / "lower-position-first.json"
    text = vector.read_text(encoding="utf-8")
    vector.write_text(text.replace("Catches: ties broken", "Catches: ties decided"), "utf-8")
    assert pages.stale(tmp_path, [block]) == [
        "docs/suite/vectors.md: block 'vectors' differs from vectors/"
    ]


def test_the_command_checks_and_exits_1_on_a_stale_block(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "page.md").write_text("<!-- docs:sample:begin -->\nold\n<!-- docs:sample:end -->\n")
    monkeypatch.setattr(pages, "checkout_root", lambda: tmp_path)
    monkeypatch.setattr(pages, "BLOCKS", (_sample("new"),))
    monkeypatch.setattr(pages.nav, "problems", lambda root: [])  # tests/docs/test_nav.py
    assert pages.main(["--check"]) == 1
    assert capsys.readouterr().out == (
        f"page.md: block 'sample' differs from a test\nregenerate with: {pages.COMMAND}\n"
    )
    assert pages.main([]) == 0
    assert "rewrote page.md" in capsys.readouterr().out
    assert pages.main(["--check"]) == 0


def test_an_installed_kit_has_no_pages_to_write(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(pages, "checkout_root", lambda: None)
    assert pages.main([]) == 2
    assert "not an installed copy" in capsys.readouterr().err
