"""The repository's Markdown files the site publishes as they are, and the links between pages.

The site's pages are ``docs/`` (at the site's root) and the files of :data:`PAGES`, which live
elsewhere in the repository and are published at their own paths, unchanged: SPEC.md stays the
normative text at the root, ARCHITECTURE.md beside it, the adapters' and the suite's READMEs
in their folders. Every page writes its links as paths in the repository, so they work where
the file is read (GitHub, an editor) and :func:`rewrite_links` turns them into the same targets'
places in the site: ``docs/X`` is at ``X``, everything else at its own path. A linked file that
is no page (a script, a recipe, a plot) is published beside the pages at its own path
(:func:`linked_files`), so no link of the site leads nowhere; ``mkdocs build --strict`` fails
on one that does.
"""

from __future__ import annotations

import posixpath
import re

#: Pages published from outside ``docs/``, by their paths in the repository.
PAGES: tuple[str, ...] = (
    "SPEC.md",
    "ARCHITECTURE.md",
    "adapters/README.md",
    "adapters/c/README.md",
    "adapters/rust/README.md",
    "adapters/go/README.md",
    "adapters/typescript/README.md",
    "adapters/python/README.md",
    "vectors/README.md",
    "vectors/TAGS.md",
    "schema/README.md",
)
DOCS = "docs/"

#: ``[text](target "title")`` and ``![alt](target)``, the text possibly over several lines:
#: group 2 is the target.
_LINK = re.compile(r"(!?\[[^\]]*\]\()([^()\s]+)((?:\s+\"[^\"\n]*\")?\))")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def site_path(repo_path: str) -> str:
    """Where a file of the repository is in the site: ``docs/X`` at ``X``, others as they are."""
    return repo_path.removeprefix(DOCS)


def repo_path(site_uri: str) -> str:
    """The repository path of the page at ``site_uri`` (the inverse of :func:`site_path`)."""
    return site_uri if site_uri in PAGES else DOCS + site_uri


def _chunks(markdown: str) -> list[tuple[bool, str]]:
    """The page cut into ``(is_code, text)`` runs of whole lines: fenced code blocks apart
    (code is not linked), so that ``"".join`` of the texts is the page again."""
    chunks: list[tuple[bool, str]] = []
    fenced = False
    for line in markdown.splitlines(keepends=True):
        opens_or_closes = bool(_FENCE.match(line))
        code = fenced or opens_or_closes
        if opens_or_closes:
            fenced = not fenced
        if chunks and chunks[-1][0] == code:
            chunks[-1] = (code, chunks[-1][1] + line)
        else:
            chunks.append((code, line))
    return chunks


def _target(page: str, target: str) -> tuple[str, str] | None:
    """``(repository path, '#fragment')`` of a relative link on ``page``; None for a URL, an
    anchor on the page itself, an absolute path or a path out of the repository."""
    if _SCHEME.match(target) or target.startswith(("#", "/")):
        return None
    path, hash_, fragment = target.partition("#")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
    if resolved == ".." or resolved.startswith("../"):
        return None
    return resolved, hash_ + fragment


def linked_files(markdown: str, page: str) -> set[str]:
    """The repository paths that the page at ``page`` links to (relative links only)."""
    found = set()
    for code, text in _chunks(markdown):
        if code:
            continue
        for match in _LINK.finditer(text):
            target = _target(page, match.group(2))
            if target is not None:
                found.add(target[0])
    return found


def rewrite_links(markdown: str, page: str) -> str:
    """The page at repository path ``page`` with each relative link pointing at its target's
    place in the site, relative to the page's own place; code blocks are left alone."""
    here = posixpath.dirname(site_path(page))

    def moved(match: re.Match[str]) -> str:
        target = _target(page, match.group(2))
        if target is None:
            return match.group(0)
        path, fragment = target
        relative = posixpath.relpath(site_path(path), here or ".")
        return f"{match.group(1)}{relative}{fragment}{match.group(3)}"

    return "".join(text if code else _LINK.sub(moved, text) for code, text in _chunks(markdown))
