"""``python -m conformance.tools.generate.kills``: recompute ``conformance/data/kills.json``, what
every catalogued mistake answers on every committed vector (the file's format and its reader are
:mod:`conformance.explain.known_kills`), from a checkout.

Each vector's entry replays the whole catalogue with scores traced, and entries do not depend on
each other, so ``--jobs`` worker processes of this interpreter compute them side by side: the
one place the kit starts a process that is not an adapter (:mod:`conformance.transport.process`
starts those).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from conformance.explain import known_kills
from conformance.report.outputs import write_text
from conformance.spec import resources
from conformance.suite.vectors import Vector, load_suite


def compute(vectors: Iterable[Vector], jobs: int = 1) -> dict[str, Any]:
    """The whole file: every vector's entry, ids sorted."""
    ordered = sorted(vectors, key=lambda v: v.id)
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            entries = list(pool.map(known_kills.entry, ordered, chunksize=1))
    else:
        entries = [known_kills.entry(vector) for vector in ordered]
    return {vector.id: item for vector, item in zip(ordered, entries, strict=True)}


def main(argv: Sequence[str] | None = None) -> int:
    """Recompute the file for the committed suite (from a checkout only)."""
    parser = argparse.ArgumentParser(prog="python -m conformance.tools.generate.kills")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    if resources.checkout_root() is None:
        print(
            "kills: run from a checkout; an installed copy never edits itself",
            file=sys.stderr,
        )
        return 2
    vectors = load_suite([str(resources.suite_dir())])
    write_text(known_kills.PATH, known_kills.dumps(compute(vectors, jobs=args.jobs)))
    print(f"wrote {known_kills.PATH} ({len(vectors)} vectors)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
