"""Shared by the ``scores_*`` broken adapters: the reference adapter, strict codec and all,
whose policy's ``scores()`` goes through an edit, as a port whose evictions are right and whose
``scores`` op is not. Only a judge of ``scores`` answers can tell it from the reference.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Run as a script from anywhere: make the checkout importable without installing it.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.adapter.server import main
from conformance.policy.fast import fast_policy
from conformance.policy.reference import Scores

#: ``edit(scores, recent_window) -> scores``: what the broken port answers instead.
Edit = Callable[[Scores, int], Scores]


class _EditedScores:
    def __init__(self, policy: Any, edit: Edit) -> None:
        self._policy = policy
        self._edit = edit

    def __getattr__(self, name: str) -> Any:
        return getattr(self._policy, name)

    def scores(self) -> Scores:
        return self._edit(self._policy.scores(), self._policy.params.recentWindow)


def serve_scores(edit: Edit, name: str) -> int:
    def factory(params: Any, seed: int) -> _EditedScores:
        return _EditedScores(fast_policy(params, seed), edit)

    implementation = {"name": f"broken adapter: {name}", "language": "python", "version": "0"}
    return main(factory, implementation)
