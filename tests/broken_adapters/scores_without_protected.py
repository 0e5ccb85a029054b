"""Answers every scores request with the candidates only, the recentWindow newest kept
positions left out with their sums and pooled scores, as a port that scores only what it may
evict would. SPEC.md §2.5 includes the protected recent entries."""

import sys

from _edited_scores import Scores, serve_scores


def candidates_only(scores, recent):
    count = len(scores.positions) - recent
    return Scores(
        list(scores.positions)[:count], list(scores.sums)[:count], list(scores.pooled)[:count]
    )


if __name__ == "__main__":
    sys.exit(serve_scores(candidates_only, "scores without the protected recent entries"))
