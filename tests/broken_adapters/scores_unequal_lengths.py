"""Answers every scores request with one pooled score too few (a loop bound off by one), the
positions and sums right: three lists of unequal length, which SPEC.md §3.2 forbids."""

import sys

from _edited_scores import Scores, serve_scores


def short_pooled(scores, recent):
    return Scores(list(scores.positions), list(scores.sums), list(scores.pooled)[:-1])


if __name__ == "__main__":
    sys.exit(serve_scores(short_pooled, "scores with one pooled score too few"))
