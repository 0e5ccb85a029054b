"""The site builds in strict mode, with the repository's own pages and the files they link
published at their paths. Needs the docs extra: skipped without it, a failure when CI is set."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.docs.published import PAGES, site_path

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_site_builds_strictly_with_every_page_and_linked_file(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None:
        message = "the docs extra is not installed (pip install -e '.[docs]')"
        if os.environ.get("CI"):
            pytest.fail(f"{message} (CI is set, so this is a failure, not a skip)")
        pytest.skip(message)
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for page in PAGES:
        url = site_path(page).removesuffix(".md").removesuffix("README").rstrip("/")
        assert (site / url / "index.html").is_file(), page
    assert (site / "benchmarks" / "lab" / "synthetic.png").is_file()  # linked from the lab
    spec = (site / "SPEC" / "index.html").read_text(encoding="utf-8")
    assert 'href="../adapters/"' in spec  # SPEC.md's link to adapters/README.md, in the site
