"""The protocol checks as written: drafts (the bytes to send and each answered line's intended
outcome), realized on the reference by :func:`conformance.suite.validation.realize` into the files
under ``vectors/protocol/`` (``snapkv-conformance generate``).

The drafts are written one module per family under
:mod:`conformance.tools.generate.check_families`; this module collects them, adds the checks
kept from ``fuzz --protocol`` (:data:`FINDINGS`) and realizes them all.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from conformance.spec.text import split_description
from conformance.suite.protocol_checks import THEME, ProtocolCheck, load_check
from conformance.suite.validation import CheckDraft, realize
from conformance.suite.vectors import is_protocol_check_file
from conformance.tools.generate.check_families import (
    fields_checks,
    grammar_checks,
    hello_checks,
    ids_checks,
    limits_checks,
    lines_checks,
    state_checks,
)

FAMILIES = (
    hello_checks,
    ids_checks,
    grammar_checks,
    lines_checks,
    limits_checks,
    fields_checks,
    state_checks,
)


def drafts() -> Iterator[CheckDraft]:
    """Every protocol check, family by family in the order of SPEC.md §3."""
    for family in FAMILIES:
        yield from family.drafts()


#: Where protocol checks found by ``snapkv-conformance fuzz --protocol`` are kept to be
#: generated into the suite, beside the vectors kept from fuzzing.
FINDINGS = Path(__file__).resolve().parent / "builders" / "findings"


def finding_drafts() -> Iterator[CheckDraft]:
    """The protocol checks kept in :data:`FINDINGS`, as drafts: their bytes are kept, their
    expectations recomputed (an outcome must still be the reference's)."""
    for path in sorted(FINDINGS.glob("*.json")) if FINDINGS.is_dir() else ():
        if not is_protocol_check_file(path):
            continue  # a vector, the findings builder's
        check = load_check(path)
        pins, said = split_description(check.description)
        catches = said or ""
        yield CheckDraft(
            check.id.removeprefix(f"{THEME}/"),
            check.rule,
            pins,
            catches,
            check.send,
            tuple("ok" if item["ok"] else item["error"] for item in check.expect),
            {
                i: tuple(item["latitude"])
                for i, item in enumerate(check.expect)
                if "latitude" in item
            },
            check.spec,
        )


def build_checks() -> list[ProtocolCheck]:
    return [realize(draft) for draft in (*drafts(), *finding_drafts())]
