"""Regression vectors kept from fuzzing (``snapkv-conformance fuzz``) or from bug reports.

A finding is a vector file (any id, typically ``fuzz/<hash>``) copied into
``conformance/tools/generate/builders/findings/``. This builder replays its calls on the
reference like any other draft: the calls are kept (weights as the file writes them), every
expectation is recomputed (a refusal must still be a refusal of the same kind), and the vector
is written to ``vectors/<id>.json``. Dropping a file into ``vectors/`` directly would not
survive ``snapkv-conformance generate``. A protocol check found by ``fuzz --protocol`` may be
kept there too; :func:`conformance.tools.generate.checks.finding_drafts` generates those.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from conformance.spec.text import split_description
from conformance.suite.vectors import is_protocol_check_file, load_vector
from conformance.tools.generate.builders import Draft, Planned, builder

FINDINGS = Path(__file__).resolve().parent / "findings"


@builder
def findings() -> Iterator[Draft]:
    for path in sorted(FINDINGS.glob("*.json")) if FINDINGS.is_dir() else ():
        if is_protocol_check_file(path):
            continue  # found by fuzz --protocol: conformance.suite.protocol_checks generates it
        vector = load_vector(path)
        pins, catches = split_description(vector.description)
        draft = Draft(
            vector.id,
            pins=pins,
            catches=catches or "the difference it was found for, should it come back.",
            tags=vector.tags,
            params=vector.calls[0].request["params"],
            seed=vector.calls[0].request["seed"],
            refuse=vector.calls[0].expected_error,
        )
        for call in vector.calls[1:]:  # the weights as the file writes them (SPEC.md §4.3)
            draft.calls.append(Planned(call.written_request(), call.expected_error))
        yield draft
