"""Answers every scores request newest first (descending positions), each sum and pooled score
still beside its position. SPEC.md §2.5 lists the kept positions ascending."""

import sys

from _edited_scores import Scores, serve_scores


def newest_first(scores, recent):
    return Scores(list(scores.positions)[::-1], list(scores.sums)[::-1], list(scores.pooled)[::-1])


if __name__ == "__main__":
    sys.exit(serve_scores(newest_first, "scores newest first"))
