"""The site publishes the repository's own pages where they are, and every link written as a
path in the repository leads to the same file in the site."""

from __future__ import annotations

import re
from pathlib import Path

from conformance.docs.published import PAGES, linked_files, repo_path, rewrite_links, site_path

ROOT = Path(__file__).resolve().parents[2]


def test_docs_pages_sit_at_the_root_and_the_others_where_they_are() -> None:
    assert site_path("docs/porting/adapter.md") == "porting/adapter.md"
    assert site_path("SPEC.md") == "SPEC.md"
    assert site_path("adapters/c/README.md") == "adapters/c/README.md"
    for page in PAGES:
        assert repo_path(site_path(page)) == page
    assert repo_path("porting/adapter.md") == "docs/porting/adapter.md"


def test_a_link_in_docs_to_a_file_outside_is_moved_to_its_place_in_the_site() -> None:
    page = "docs/porting/adapter.md"
    text = "See [SPEC.md §3](../../SPEC.md#3-adapter-protocol-v1) and [running](running.md)."
    assert rewrite_links(text, page) == (
        "See [SPEC.md §3](../SPEC.md#3-adapter-protocol-v1) and [running](running.md)."
    )


def test_a_link_from_an_outside_page_into_docs_is_moved_too() -> None:
    text = "[recipes](docs/ci/README.md), [the contract](adapters/README.md)"
    assert (
        rewrite_links(text, "SPEC.md")
        == "[recipes](ci/README.md), [the contract](adapters/README.md)"
    )
    assert rewrite_links("[spec](../SPEC.md)", "adapters/README.md") == "[spec](../SPEC.md)"


def test_urls_anchors_code_and_paths_out_of_the_repository_are_left_alone() -> None:
    text = (
        "[web](https://example.org/a.md) [mail](mailto:x@example.org) [here](#heading) "
        "[out](../../../elsewhere.md)\n"
        "```sh\n[code](../../SPEC.md)\n```\n"
    )
    assert rewrite_links(text, "docs/porting/adapter.md") == text


def test_link_text_over_two_lines_and_images_are_links_too() -> None:
    text = (
        "[SPEC.md\n§4.4](../../SPEC.md#44-protocol-checks) ![plot](../../benchmarks/lab/real.png)"
    )
    assert rewrite_links(text, "docs/suite/protocol-checks.md") == (
        "[SPEC.md\n§4.4](../SPEC.md#44-protocol-checks) ![plot](../benchmarks/lab/real.png)"
    )
    assert linked_files(text, "docs/suite/protocol-checks.md") == {
        "SPEC.md",
        "benchmarks/lab/real.png",
    }


def test_every_link_of_every_page_leads_to_a_file_of_the_repository() -> None:
    broken = []
    pages = [path.relative_to(ROOT).as_posix() for path in (ROOT / "docs").rglob("*.md")]
    for page in [*pages, *PAGES]:
        text = (ROOT / page).read_text(encoding="utf-8")
        broken += [
            f"{page}: {target}"
            for target in linked_files(text, page)
            if not (ROOT / target).exists()
        ]
    assert broken == []


#: A path of the repository a page names in code: ```conformance/runner/run.py```,
#: ```tests/docs/test_nav.py::name```, ```benchmarks/```.
_NAMED_PATH = re.compile(
    r"`((?:conformance|tests|benchmarks|adapters|vectors|schema|docs|\.ci)/[\w./-]*[\w/])"
    r"(?:::[\w\[\]-]+)?`"
)
#: Folders a page tells the reader to make (nothing is in them in the kit's own checkout).
_MADE_BY_THE_READER = ("conformance/tools/generate/builders/findings/",)


def test_every_path_a_page_names_in_code_is_in_the_checkout() -> None:
    """A module, test or script moved or renamed shows here with the pages that still name
    its old path (from the checkout's root, or from the page's own folder)."""
    pages = [path.relative_to(ROOT).as_posix() for path in (ROOT / "docs").rglob("*.md")]
    stale = []
    for page in [*pages, *PAGES, "README.md"]:
        for path in _NAMED_PATH.findall((ROOT / page).read_text(encoding="utf-8")):
            here = (ROOT / page).parent / path
            built = "/build/" in path or "/target/" in path  # made by make or cargo, not committed
            if path in _MADE_BY_THE_READER or built or (ROOT / path).exists() or here.exists():
                continue
            stale.append(f"{page}: {path}")
    assert stale == []
