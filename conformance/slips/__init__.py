"""The slip catalogue: the reference adapter with exactly one numbered sentence of SPEC.md
broken, one entry per way a port written from SPEC.md alone breaks it.

Where the mutant catalogue (:mod:`conformance.mutants`) models wrong *policies*, a slip is a
wrong *adapter*: the protocol grammar, integers and floats as real readers read them, state
across ``hello``/``new``/``scores``/``evict``/``bye``, the order of refusals, the exit status.
Each entry names the sentence it breaks (``[S3.1-numbers]``, :mod:`conformance.spec.sentences`)
and where the mistake comes from in practice (``origin``), so that a failing item can be
explained by the slips of the sentences it pins. The policy mutants join the catalogue as the
``policy`` family, each under its sentence
(:data:`conformance.slips.policy_slips.MUTANT_SENTENCES`).

The families, one module each (``<family>_slips``): :mod:`~conformance.slips.grammar_slips`
(a line's JSON), :mod:`~conformance.slips.numbers_slips` (integer and float readers),
:mod:`~conformance.slips.fields_slips` (a request's members and the order of judgement),
:mod:`~conformance.slips.state_slips` (what requests leave behind, what scores and evict
report), :mod:`~conformance.slips.process_slips` (stdout, exit status, hello and refusal
answers, limits) and :mod:`~conformance.slips.policy_slips`.

Serve one with ``snapkv-conformance adapter --slip NAME`` and run the suite against it with
``snapkv-conformance run --adapter "snapkv-conformance adapter --slip NAME"``;
``snapkv-conformance mutants`` prints which the default run kills, sentence by sentence
(:mod:`conformance.explain.slip_kills`).

Invariant: adapters, nothing more: imports only :mod:`conformance.adapter`,
:mod:`conformance.mutants`, :mod:`conformance.policy` and :mod:`conformance.spec`.
"""

from __future__ import annotations

from conformance.slips import (  # noqa: F401
    fields_slips,
    grammar_slips,
    numbers_slips,
    policy_slips,
    process_slips,
    state_slips,
)
from conformance.slips.slip_adapter import Slip, SlipAdapter, registered

#: The families in the order SPEC.md meets them.
FAMILIES = ("numbers", "grammar", "fields", "state", "process", "policy")

policy_slips.add_mutants()

#: Every slip, by family and then in the order each family module lists them.
CATALOGUE: tuple[Slip, ...] = tuple(
    sorted(registered(), key=lambda entry: FAMILIES.index(entry.family))
)
BY_NAME: dict[str, Slip] = {entry.name: entry for entry in CATALOGUE}


def lookup(name: str) -> Slip:
    """The slip called ``name``; raise KeyError listing the names when there is none."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown slip {name!r}; the catalogue has: {', '.join(BY_NAME)}") from None


def by_sentence() -> dict[str, list[Slip]]:
    """The slips of each sentence id, in catalogue order."""
    found: dict[str, list[Slip]] = {}
    for entry in CATALOGUE:
        found.setdefault(entry.sentence, []).append(entry)
    return found


__all__ = ["BY_NAME", "CATALOGUE", "FAMILIES", "Slip", "SlipAdapter", "by_sentence", "lookup"]
