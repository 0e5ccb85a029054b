"""The tag vocabulary of vectors: read from ``vectors/TAGS.md``, the single source.

Each tag is a ``## `tag` `` heading followed by exactly two one-line bullets, ``- **Rule:**``
(the SPEC.md rule it tests) and ``- **Catches:**`` (the porting bug it catches). Keeping the
vocabulary in the Markdown that people read, and parsing it here, means the validator and the
documentation cannot drift apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from conformance.spec.errors import KitError
from conformance.spec.inputs import read_input_text

TAG_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_HEADING = re.compile(r"^## `([^`]*)`\s*$")
_BULLET = re.compile(r"^- \*\*(Rule|Catches):\*\* (\S.*)$")


class VocabularyError(KitError):
    """``TAGS.md`` does not follow its format; names the file and line."""


@dataclass(frozen=True)
class Tag:
    """One tag: its name, the SPEC.md rule it tests and the bug it catches."""

    name: str
    rule: str
    catches: str


def parse_vocabulary(text: str, source: str = "TAGS.md") -> dict[str, Tag]:
    """Parse the Markdown vocabulary; raise :class:`VocabularyError` on any deviation."""
    tags: dict[str, Tag] = {}
    current: str | None = None
    notes: dict[str, str] = {}

    def finish(line_number: int) -> None:
        if current is None:
            return
        missing = [name for name in ("Rule", "Catches") if name not in notes]
        if missing:
            raise VocabularyError(
                f"{source}:{line_number}: tag {current!r} lacks {' and '.join(missing)}"
            )
        tags[current] = Tag(current, notes["Rule"], notes["Catches"])

    for number, line in enumerate(text.splitlines(), start=1):
        heading = _HEADING.match(line)
        if heading:
            finish(number)
            current, notes = heading.group(1), {}
            if not TAG_PATTERN.match(current):
                raise VocabularyError(f"{source}:{number}: {current!r} is not a valid tag name")
            if current in tags:
                raise VocabularyError(f"{source}:{number}: tag {current!r} is listed twice")
            continue
        bullet = _BULLET.match(line)
        if bullet and current is not None:
            if bullet.group(1) in notes:
                raise VocabularyError(f"{source}:{number}: a second {bullet.group(1)} note")
            notes[bullet.group(1)] = bullet.group(2)
        elif current is not None and line.strip():
            raise VocabularyError(f"{source}:{number}: unexpected line under tag {current!r}")
    finish(len(text.splitlines()) + 1)
    if not tags:
        raise VocabularyError(f"{source}: no tags found")
    return tags


def vocabulary_path() -> Path:
    """Where the vocabulary lives: ``TAGS.md`` in the committed suite directory."""
    # Here: the committed suite's place is looked up only when the vocabulary is read.
    from conformance.spec.resources import suite_dir

    return suite_dir() / "TAGS.md"


@cache
def _load(path: Path) -> dict[str, Tag]:
    return parse_vocabulary(read_input_text(path, what="tag vocabulary"), str(path))


def load_vocabulary(path: str | Path | None = None) -> dict[str, Tag]:
    """The vocabulary as ``{name: Tag}``, from ``path`` or the committed ``vectors/TAGS.md``."""
    return dict(_load(Path(path) if path is not None else vocabulary_path()))
