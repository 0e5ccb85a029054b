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

import importlib
from typing import Any

from conformance.slips.slip_adapter import Slip, SlipAdapter, registered
from conformance.slips.slip_index import FAMILY_OF

#: The families in the order SPEC.md meets them.
FAMILIES = ("numbers", "grammar", "fields", "state", "process", "policy")

# The catalogue is built on first use (PEP 562): every family module is imported and the mutant
# catalogue joins the policy family then. An adapter serving one slip (:func:`lookup`) imports
# that slip's module alone (and, for a catalogued mutant, the mutant's). These two are declared
# here and set by _catalogue(), which module __getattr__ calls.

#: Every slip, by family and then in the order each family module lists them.
CATALOGUE: tuple[Slip, ...]
#: Every slip, by name.
BY_NAME: dict[str, Slip]


def __getattr__(attribute: str) -> Any:
    if attribute in ("CATALOGUE", "BY_NAME"):
        return _catalogue()[attribute]
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


def _catalogue() -> dict[str, Any]:
    """Import every family module once, add the catalogued mutants to the policy family, then
    build and keep :data:`CATALOGUE` and :data:`BY_NAME` as this module's attributes."""
    if "BY_NAME" not in globals():
        for family in FAMILIES:
            importlib.import_module(f"{__name__}.{family}_slips")
        from conformance.slips import policy_slips

        policy_slips.add_mutants()
        catalogue = tuple(sorted(registered(), key=lambda entry: FAMILIES.index(entry.family)))
        globals().update(CATALOGUE=catalogue, BY_NAME={entry.name: entry for entry in catalogue})
    return globals()


def lookup(name: str) -> Slip:
    """The slip called ``name``; raise KeyError listing the names when there is none.

    Before the catalogue is built, imports only the module that defines ``name``
    (:data:`~conformance.slips.slip_index.FAMILY_OF`), or for a catalogued mutant the mutant's own
    module, and returns an entry equal to the one :data:`BY_NAME` holds (the same adapter)."""
    if "BY_NAME" not in globals():
        found = _lookup_alone(name)
        if found is not None:
            return found
    by_name: dict[str, Slip] = _catalogue()["BY_NAME"]
    if name not in by_name:
        raise KeyError(f"unknown slip {name!r}; the catalogue has: {', '.join(by_name)}")
    return by_name[name]


def _lookup_alone(name: str) -> Slip | None:
    """The slip ``name`` found without building the catalogue, or None."""
    family = FAMILY_OF.get(name)
    if family is not None:
        importlib.import_module(f"{__name__}.{family}_slips")
        entry = next((entry for entry in registered() if entry.name == name), None)
        return entry if entry is not None and entry.family == family else None
    from conformance import mutants
    from conformance.mutants.mutant_index import FAMILY_OF as MUTANT_FAMILY_OF

    if MUTANT_FAMILY_OF.get(name, "protocol") not in mutants.FAMILIES:
        return None  # not a policy mutant (the protocol family's are no slips)
    from conformance.slips import policy_slips

    try:
        return policy_slips.mutant_slip(mutants.lookup(name))
    except KeyError:  # a mutant without a sentence: the catalogue says so
        return None


def by_sentence() -> dict[str, list[Slip]]:
    """The slips of each sentence id, in catalogue order."""
    found: dict[str, list[Slip]] = {}
    for entry in _catalogue()["CATALOGUE"]:
        found.setdefault(entry.sentence, []).append(entry)
    return found


__all__ = ["BY_NAME", "CATALOGUE", "FAMILIES", "Slip", "SlipAdapter", "by_sentence", "lookup"]
