"""The package boundary: the default suite comes from the package's own data, and an installed
copy never rewrites itself."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance import cli
from conformance.spec import resources
from tests.support.paths import ROOT


def fake_installed_package(root: Path) -> Path:
    """``site-packages/conformance`` as a build installs it: data copied, not linked."""
    package = root / "site-packages" / "conformance"
    (package / "data" / "vectors" / "ties").mkdir(parents=True)
    (package / "data" / "vectors" / "ties" / "real.json").write_text("{}")
    (package / "data" / "schema").mkdir()
    return package


def test_a_stray_vectors_directory_beside_the_package_is_ignored(tmp_path, monkeypatch):
    package = fake_installed_package(tmp_path)
    stray = package.parent / "vectors"
    (stray / "hijack").mkdir(parents=True)
    (stray / "hijack" / "x.json").write_text("{}")
    monkeypatch.setattr(resources, "_PACKAGE", package)
    assert resources.suite_dir() == package / "data" / "vectors"
    assert resources.checkout_root() is None


def test_a_checkout_uses_its_own_vectors_through_the_data_links():
    root = ROOT
    assert resources.suite_dir() == root / "vectors"
    assert resources.schema_dir() == root / "schema"
    assert resources.checkout_root() == root


def test_an_installed_generate_needs_out_and_writes_only_there(tmp_path, monkeypatch, capsys):
    package = fake_installed_package(tmp_path)
    monkeypatch.setattr(resources, "_PACKAGE", package)
    assert cli.main(["generate"]) == 2
    assert "--out DIR is required" in capsys.readouterr().err
    assert sorted(p.name for p in (package / "data" / "vectors").rglob("*")) == [
        "real.json",
        "ties",
    ]


def test_an_installed_copy_refuses_to_rewrite_the_readme(tmp_path, monkeypatch, capsys):
    package = fake_installed_package(tmp_path)
    monkeypatch.setattr(resources, "_PACKAGE", package)
    readme = tmp_path / "README.md"
    shutil.copy(ROOT / "README.md", readme)
    before = readme.read_bytes()
    assert cli.main(["mutants", "--update-readme", str(readme)]) == 2
    assert "runs only from a checkout" in capsys.readouterr().err
    assert readme.read_bytes() == before


@pytest.mark.parametrize("name", ["vectors", "schema"])
def test_a_missing_data_directory_is_a_clear_error(tmp_path, monkeypatch, name):
    package = tmp_path / "conformance"
    package.mkdir()
    monkeypatch.setattr(resources, "_PACKAGE", package)
    finder = resources.suite_dir if name == "vectors" else resources.schema_dir
    with pytest.raises(FileNotFoundError, match=f"cannot find the {name}/ directory"):
        finder()
