"""The hooks ``mkdocs.yml`` names: publish the repository's own pages and the files they link,
and point every link at its target's place in the site (:mod:`conformance.docs.published`).

MkDocs loads this file by its path; it needs the ``docs`` extra (MkDocs itself), which nothing
else of the kit does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

from conformance.docs.published import PAGES, linked_files, repo_path, rewrite_links, site_path


def on_files(files: Files, config: Any) -> Files:
    """Add :data:`PAGES`, then every file a page links to that is in the repository but not
    yet in the site (scripts, recipes, plots), each at its :func:`site_path`."""
    root = Path(config.config_file_path).resolve().parent
    for page in PAGES:
        files.append(File.generated(config, site_path(page), abs_src_path=str(root / page)))
    for file in list(files.documentation_pages()):
        source = Path(file.abs_src_path) if file.abs_src_path else None
        if source is None:
            continue
        page = repo_path(file.src_uri)
        for target in sorted(linked_files(source.read_text(encoding="utf-8"), page)):
            where = site_path(target)
            if target.endswith(".md") or files.get_file_from_path(where) is not None:
                continue  # a page: in the site already, or a broken link strict mode reports
            if (root / target).is_file():
                files.append(File.generated(config, where, abs_src_path=str(root / target)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    return rewrite_links(markdown, repo_path(page.file.src_uri))
