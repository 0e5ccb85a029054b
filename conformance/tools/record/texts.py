"""The texts the recorder teacher-forces, shipped with the package under ``data/texts``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conformance.spec import resources
from conformance.spec.inputs import read_input_text

_TEXTS = resources.data_path("texts")


@dataclass(frozen=True)
class Text:
    name: str
    title: str
    path: Path

    def read(self) -> str:
        return read_input_text(self.path, what="text")


#: Name -> text. Each is public domain or written for this kit.
TEXTS: dict[str, Text] = {
    "alice": Text(
        "alice",
        "the opening of chapter 1 of Lewis Carroll's Alice's Adventures in Wonderland (1865, "
        "public domain)",
        _TEXTS / "alice.txt",
    ),
}


def get_text(name: str) -> Text:
    """The text called ``name``; raise ``KeyError`` with the known names otherwise."""
    try:
        return TEXTS[name]
    except KeyError:
        raise KeyError(f"unknown text {name!r}; known: {', '.join(sorted(TEXTS))}") from None
