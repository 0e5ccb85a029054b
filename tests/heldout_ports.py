"""Held-out ports: the reference with its victim selection swapped for a real-world one.

``python tests/heldout_ports.py NAME`` serves the reference policy whose ``select`` ranks
the candidates by pooled score alone with numpy's default ``argsort`` (quicksort kind) or
with ``argpartition``: what a numpy port writes first. Neither is a catalogued mutant; they
are held out so the tests can show the suite catches them without having been tuned to them.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

# Run as a script from anywhere: make the checkout importable without installing it.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.adapter.server import main
from conformance.policy.reference import SnapKV


class ArgsortSelection(SnapKV):
    def select(self, pooled: Sequence[float], count: int) -> list[int]:
        scores = np.asarray(pooled[: self.candidate_count()], dtype=np.float64)
        return [int(i) for i in np.argsort(scores)[:count]]


class ArgpartitionSelection(SnapKV):
    def select(self, pooled: Sequence[float], count: int) -> list[int]:
        scores = np.asarray(pooled[: self.candidate_count()], dtype=np.float64)
        if count >= scores.size:
            return list(range(scores.size))
        return [int(i) for i in np.argpartition(scores, count - 1)[:count]]


PORTS = {"argsort": ArgsortSelection, "argpartition": ArgpartitionSelection}

if __name__ == "__main__":
    port = PORTS[sys.argv[1]]
    sys.exit(main(port, {"name": f"held-out {sys.argv[1]}", "language": "python", "version": "0"}))
