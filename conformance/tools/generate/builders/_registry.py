"""The builder registry: every ``@builder`` function of every module in this package.

A builder is a function without arguments that returns (or yields) :class:`Draft` objects. Its
name is ``<module>.<function>`` with ``_`` written as ``-``. :func:`all_builders` imports every
module of :mod:`conformance.tools.generate.builders` whose name does not start with ``_``, so a new
theme module (``mutant_traps.py``, say) is collected just by existing.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from conformance.tools.generate.builders._draft import Draft

BuilderFunction = Callable[[], Iterable[Draft]]


@dataclass(frozen=True)
class Builder:
    """A registered builder: its name and the function that makes its drafts."""

    name: str
    function: BuilderFunction

    def drafts(self) -> list[Draft]:
        return list(self.function())


_REGISTRY: dict[str, Builder] = {}


def builder(function: BuilderFunction) -> BuilderFunction:
    """Decorator: register ``function`` as the builder ``<module>.<function-name>``."""
    module = function.__module__.rsplit(".", 1)[-1]
    name = f"{module}.{function.__name__.replace('_', '-')}"
    existing = _REGISTRY.get(name)
    if existing is not None and existing.function.__qualname__ != function.__qualname__:
        raise ValueError(f"two builders are named {name!r}")
    _REGISTRY[name] = Builder(name, function)
    return function


def all_builders() -> list[Builder]:
    """Every builder of every public module in this package, sorted by name."""
    package = importlib.import_module("conformance.tools.generate.builders")
    for module in pkgutil.iter_modules(package.__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"conformance.tools.generate.builders.{module.name}")
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]
