"""Shared test set-up: the support modules under their former top-level names.

The helpers live in :mod:`tests.support`. Test modules written before the move import them as
top-level modules (``from runner_support import ...``), which worked only because pytest put
``tests/`` on ``sys.path``; registering the same module objects under those names keeps such
imports working, and sharing one module object keeps module state single.
"""

from __future__ import annotations

import importlib
import sys

_MOVED = (
    "runner_support",
    "small_suite",
    "oracles",
    "summation",
    "port_differential",
    "toolchains",
)

for _name in _MOVED:
    sys.modules.setdefault(_name, importlib.import_module(f"tests.support.{_name}"))
