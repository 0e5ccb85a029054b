"""Every page of the site is in the nav of mkdocs.yml and every nav entry is a page: what
strict mode checks when the site is built, checked here without MkDocs, with a message that
names the page and the entry to add."""

from __future__ import annotations

from pathlib import Path

from conformance.docs import nav, pages
from conformance.docs.published import PAGES, site_path

ROOT = Path(__file__).resolve().parents[2]


def test_every_page_is_in_the_navigation_and_every_entry_is_a_page() -> None:
    docs = {path.relative_to(ROOT / "docs").as_posix() for path in (ROOT / "docs").rglob("*.md")}
    published = {site_path(page) for page in PAGES}
    assert docs.isdisjoint(published), "a page under docs/ would hide a published one"
    assert nav.problems(ROOT) == []
    assert set(nav.nav_pages((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))) == (
        docs | published
    )
    for page in PAGES:
        assert (ROOT / page).is_file(), page


def _site(tmp_path: Path, nav_lines: str, pages: list[str]) -> Path:
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: x\nvalidation:\n  nav:\n    omitted_files: warn\n"
        f"nav:\n  - Home: index.md\n{nav_lines}"
    )
    for page in ["index.md", *pages]:
        (tmp_path / "docs" / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / page).write_text("# page\n")
    for page in PAGES:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text("# published\n")
    return tmp_path


PUBLISHED_NAV = "".join(f"  - {site_path(page)}\n" for page in PAGES)


def test_a_page_without_a_nav_entry_is_named_with_the_entry_to_add(tmp_path: Path) -> None:
    root = _site(tmp_path, PUBLISHED_NAV, ["numerics.md", "notes/extra.md"])
    assert nav.problems(root) == [
        "docs/notes/extra.md: a page of the site in no nav entry: add `- TITLE: "
        "notes/extra.md` to the nav of mkdocs.yml",
        "docs/numerics.md: a page of the site in no nav entry: add `- Numerics: numerics.md` "
        "to the nav of mkdocs.yml, under `Reading a failure`",
    ]


def test_a_published_page_left_out_is_named_by_its_own_path(tmp_path: Path) -> None:
    root = _site(tmp_path, PUBLISHED_NAV.replace("  - SPEC.md\n", ""), [])
    assert [line.split(":")[0] for line in nav.problems(root)] == ["SPEC.md"]


def test_an_entry_without_its_page_and_an_entry_twice_are_named(tmp_path: Path) -> None:
    lines = f"{PUBLISHED_NAV}  - Benchmarks: benchmarks.md\n  - Again: index.md\n"
    assert nav.problems(_site(tmp_path, lines, [])) == [
        "mkdocs.yml: nav entry benchmarks.md names no page (there is no docs/benchmarks.md)",
        "mkdocs.yml: index.md is in the nav 2 times",
    ]


def test_the_nav_is_read_after_its_heading_only() -> None:
    text = 'validation:\n  nav:\n    - not.md\nnav:\n  - Home: index.md\n  - "A: b": a/b.md\n'
    assert nav.nav_pages(text) == ["index.md", "a/b.md"]
    assert nav.nav_pages("site_name: x\n") == []


def test_the_docs_check_fails_on_a_page_missing_from_the_nav(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    root = _site(tmp_path, PUBLISHED_NAV, ["show.md"])
    monkeypatch.setattr(pages, "checkout_root", lambda: root)
    monkeypatch.setattr(pages, "BLOCKS", ())
    assert pages.main(["--check"]) == 1
    assert capsys.readouterr().out == (
        "docs/show.md: a page of the site in no nav entry: add `- Seeing a vector's calls: "
        "show.md` to the nav of mkdocs.yml, under `Reading a failure`\n"
    )


def test_a_checkout_without_mkdocs_yml_is_named(tmp_path: Path) -> None:
    [problem] = nav.problems(tmp_path)
    assert problem.startswith("mkdocs.yml: cannot read: ")


def test_a_page_that_covers_an_existing_one_says_which(tmp_path: Path) -> None:
    root = _site(tmp_path, PUBLISHED_NAV, ["triage.md"])
    assert nav.problems(root) == [
        "docs/triage.md: a page of the site in no nav entry: add `- Triage: triage.md` to the "
        "nav of mkdocs.yml, under `Reading a failure`, or make it and docs/failures/triage.md "
        "one page (move the generated blocks with conformance/docs/pages.py's BLOCKS)"
    ]
