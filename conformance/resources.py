"""Where the committed suite and the schemas are, from a checkout or an installed package."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    """``<checkout>/<name>`` when running from a checkout, else the copy packaged as data."""
    for candidate in (_PACKAGE.parent / name, _PACKAGE / "data" / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"cannot find the {name}/ directory beside the package or in its data; "
        "reinstall snapkv-conformance"
    )


def suite_dir() -> Path:
    """The committed vector suite (``vectors/``)."""
    return _find("vectors")


def schema_dir() -> Path:
    """The JSON Schemas (``schema/``)."""
    return _find("schema")
