"""Every page of the site is in the navigation of ``mkdocs.yml``, and every nav entry is a page.

``mkdocs build --strict`` fails on either, but only where MkDocs is installed and only with a
list of names; :func:`problems` says the same without MkDocs, one line per page, with the nav
entry to add. ``python -m conformance.docs --check`` prints them, so a branch that adds a page
under ``docs/`` without a nav entry (or removes one that is still listed) shows at merge time.

:data:`SECTIONS` names where a page belongs before it exists, for the pages other work is
writing: its message then says under which section to put the entry. A page not named there
gets a message without a section.
"""

from __future__ import annotations

import re
from pathlib import Path

from conformance.docs.published import DOCS, PAGES, repo_path, site_path

#: A page named in the nav: ``- Title: path.md``, ``- "Title: quoted": path.md`` or
#: ``- path.md`` (the nav is the end of the file; nothing after it names a Markdown file).
_NAV_PAGE = re.compile(
    r"""^\s*-\s+(?:(?:"[^"\n]*"|'[^'\n]*'|[^:\n"']+):\s+)?([\w./-]+\.md)\s*$""", re.M
)

#: Pages expected under ``docs/``, by site path: the nav entry each is given once it exists,
#: and the page already in the site that covers the same ground (to be made one page).
SECTIONS: dict[str, tuple[str, str, str]] = {
    "show.md": ("Reading a failure", "Seeing a vector's calls", ""),
    "ci/README.md": ("Porting", "CI recipes", ""),
    "triage.md": ("Reading a failure", "Triage", "docs/failures/triage.md"),
    "numerics.md": ("Reading a failure", "Numerics", ""),
    "exit-statuses.md": (
        "Reference",
        "Signals and the kit's own faults",
        "docs/reference/exit-statuses.md",
    ),
    "spec-coverage.md": ("Reference", "Spec coverage", ""),
    "benchmarks.md": ("Benchmarks", "Benchmarks", ""),
}


def nav_pages(mkdocs_yml: str) -> list[str]:
    """The site paths the nav of ``mkdocs.yml``'s text names, in order."""
    _, heading, nav = mkdocs_yml.partition("\nnav:\n")
    return _NAV_PAGE.findall(nav) if heading else []


def site_pages(root: Path) -> set[str]:
    """The site paths of every page: each Markdown file under ``docs/`` and :data:`PAGES`."""
    docs = {path.relative_to(root / DOCS).as_posix() for path in (root / DOCS).rglob("*.md")}
    return docs | {site_path(page) for page in PAGES}


def _entry(page: str) -> str:
    section, title, overlap = SECTIONS.get(page, ("", "", ""))
    if not section:
        return f"add `- TITLE: {page}` to the nav of mkdocs.yml"
    entry = f"add `- {title}: {page}` to the nav of mkdocs.yml, under `{section}`"
    if overlap:
        entry += (
            f", or make it and {overlap} one page (move the generated blocks with"
            " conformance/docs/pages.py's BLOCKS)"
        )
    return entry


def problems(root: Path) -> list[str]:
    """One line per page the nav leaves out, per nav entry with no page, per page listed twice."""
    try:
        listed = nav_pages((root / "mkdocs.yml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        return [f"mkdocs.yml: cannot read: {error}"]
    pages = site_pages(root)
    found = [
        f"{repo_path(page)}: a page of the site in no nav entry: {_entry(page)}"
        for page in sorted(pages - set(listed))
    ]
    found += [
        f"mkdocs.yml: nav entry {page} names no page (there is no {repo_path(page)})"
        for page in sorted(set(listed) - pages)
    ]
    found += [
        f"mkdocs.yml: {page} is in the nav {listed.count(page)} times"
        for page in sorted(set(listed))
        if listed.count(page) > 1
    ]
    return found
