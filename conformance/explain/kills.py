"""Which catalogued mistakes each committed vector kills, shipped so triage need not replay them.

A triage replays every catalogued mistake (:mod:`conformance.mutants`) on every vector the port
was run on, and most of its time goes to replays whose answer is known in advance: on a vector
of the committed suite, whether a mistake passes is a fact of the suite and the catalogue. This
module keeps those facts in ``conformance/data/kills.json``, each vector's entry with a digest
of its canonical text, so an entry is used only for the very vector it was computed on (an
edited or user-written vector is replayed as before).

What triage takes from an entry (see :func:`conformance.explain.triage.triage`): a mistake that a
vector does not kill answers it as the vector expects, so it agrees where the port passed, and
cannot reproduce a failure where the port failed. The file is regenerated from a checkout with
``python -m conformance.explain.kills``; a test recomputes it and fails when it is stale.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable, Mapping, Sequence

from conformance.spec import resources
from conformance.suite.vectors import Vector, dumps_vector

PATH = resources.data_path("kills.json")


def digest(vector: Vector) -> str:
    """The SHA-256 of the vector's canonical text
    (:func:`conformance.suite.vectors.dumps_vector`)."""
    return hashlib.sha256(dumps_vector(vector).encode("utf-8")).hexdigest()


def compute(vectors: Iterable[Vector]) -> dict[str, dict[str, object]]:
    """``{id: {"digest": ..., "kills": [names in catalogue order]}}``, by replaying every
    catalogued mistake on every vector: killed when its outcomes differ from the expected."""
    from conformance import mutants
    from conformance.explain.triage import divergence, expected_outcomes

    table: dict[str, dict[str, object]] = {}
    for vector in sorted(vectors, key=lambda v: v.id):
        expected = expected_outcomes(vector)
        kills = [
            mutant.name
            for mutant in mutants.CATALOGUE
            if divergence(mutant.policy, vector, expected) is not None
        ]
        table[vector.id] = {"digest": digest(vector), "kills": kills}
    return table


def load(vectors: Sequence[Vector]) -> dict[str, frozenset[str]]:
    """The shipped kills of each of ``vectors`` whose text is the one they were computed on
    (others are left out: their kills are unknown). Empty when the file is missing."""
    try:
        table: Mapping[str, Mapping[str, object]] = json.loads(PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    known: dict[str, frozenset[str]] = {}
    for vector in vectors:
        entry = table.get(vector.id)
        if entry is None:
            continue
        kills = entry.get("kills")
        if entry.get("digest") == digest(vector) and isinstance(kills, list):
            known[vector.id] = frozenset(str(name) for name in kills)
    return known


def dumps(table: Mapping[str, object]) -> str:
    """The file's text: one vector per line, ids sorted."""
    lines = [f"  {json.dumps(key)}: {json.dumps(table[key])}" for key in sorted(table)]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main() -> int:
    """Recompute the file for the committed suite (from a checkout only)."""
    from conformance.report.outputs import write_text
    from conformance.spec import resources
    from conformance.suite.vectors import load_suite

    if resources.checkout_root() is None:
        print(
            "kills: run from a checkout; an installed copy never edits itself",
            file=sys.stderr,
        )
        return 2
    vectors = load_suite([str(resources.suite_dir())])
    write_text(PATH, dumps(compute(vectors)))
    print(f"wrote {PATH} ({len(vectors)} vectors)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
