"""Where the committed suite and the schemas are: the package's own data, nowhere else.

``conformance/data/`` holds ``vectors`` and ``schema``. In a checkout they are symlinks to the
checkout's ``vectors/`` and ``schema/`` (one copy, edited in place); a built package holds
copies. Nothing beside the package counts: a stray ``vectors/`` directory next to an installed
``conformance/`` (in ``site-packages``, say) must not replace the default suite.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]


def data_path(*parts: str) -> Path:
    """A path under the package's ``data/`` directory (it may not exist)."""
    return _PACKAGE.joinpath("data", *parts)


def _find(name: str) -> Path:
    candidate = _PACKAGE / "data" / name
    if candidate.is_dir():
        return candidate.resolve()  # a checkout's own directory, named as users know it
    raise FileNotFoundError(
        f"cannot find the {name}/ directory in the package's data ({candidate}); "
        "reinstall snapkv-conformance"
    )


def suite_dir() -> Path:
    """The committed vector suite (``vectors/``)."""
    return _find("vectors")


def schema_dir() -> Path:
    """The JSON Schemas (``schema/``)."""
    return _find("schema")


def checkout_root() -> Path | None:
    """The checkout the kit runs from, or None for an installed copy.

    A checkout's package data links to its ``vectors/``; an installed copy holds the files
    themselves. Commands that rewrite the kit's own files (the committed suite, README tables)
    run only from a checkout, so an installed copy never edits itself.
    """
    link = _PACKAGE / "data" / "vectors"
    if not link.is_symlink():
        return None
    root = link.resolve().parent
    return root if (root / "pyproject.toml").is_file() else None
