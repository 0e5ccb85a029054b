"""Named vector builders, one module per theme, collected by :func:`all_builders`.

To add vectors, write a function in a theme module (or a new module) that returns
:class:`Draft` objects and decorate it with :func:`builder`; ``snapkv-conformance generate``
picks it up. See ``vectors/README.md``.
"""

from conformance.tools.generate.builders._draft import (
    DesignError,
    Draft,
    Planned,
    f32,
    over,
    params,
)
from conformance.tools.generate.builders._registry import Builder, all_builders, builder

__all__ = [
    "Builder",
    "DesignError",
    "Draft",
    "Planned",
    "all_builders",
    "builder",
    "f32",
    "over",
    "params",
]
