"""Text made safe for a cell of a Markdown table, the one escaping every generated table uses."""

from __future__ import annotations

import re

_SPACE = re.compile(r"\s+")


def cell(text: str) -> str:
    """``text`` on one line, with what would end the cell (``|``) or start an HTML tag or
    comment (``<``, as in ``<id>`` or ``<!-- ... -->``) escaped; everything else is left to
    Markdown (backticks and emphasis in the kit's texts are meant)."""
    one_line = _SPACE.sub(" ", text).strip()
    return one_line.replace("|", "\\|").replace("<", "&lt;")


def code(text: str) -> str:
    """``text`` as inline code (a backtick inside gets a longer fence)."""
    if "`" in text:
        return f"`` {text} ``"
    return f"`{text}`"
