"""The mutant catalogue: plausible wrong ports of SnapKV, used to measure the suite's power and
to name a port's mistakes.

The reference policy is written as one group of hooks per step (:mod:`conformance.mutants.model`);
each mutant is a *choice*: a subclass overriding the hooks of the step(s) its mistake changes,
recorded with the SPEC.md rule it breaks, where it comes from in practice, the phrases a vector
uses to name it and, for most, a witness scenario on which it answers differently from the
reference. Choices on different steps compose, so a port is modelled as a set of choices; real
code that makes several at once is a *named point* built from their classes
(:mod:`~conformance.mutants.realworld`). ``snapkv-conformance mutants`` replays the suite
against every mutant (:mod:`conformance.explain.kill_matrix`); a vector *kills* a mutant when the
mutant fails it.

The families, one module each: :mod:`~conformance.mutants.params` (construction, the seed, what
``new`` replaces), :mod:`~conformance.mutants.steps` (which positions and weights a step
accepts, how it reads and narrows them, what a refusal leaves behind),
:mod:`~conformance.mutants.ring` (null and empty attention, storage, the cursor, admission),
:mod:`~conformance.mutants.summation` (precision, order, running and cumulative totals,
scale), :mod:`~conformance.mutants.pooling`, :mod:`~conformance.mutants.selection` (how many
victims, which candidates, ranked how, returned in what order), and
:mod:`~conformance.mutants.realworld` (named points).

Invariant: the mistakes as policies, nothing more: imports only :mod:`conformance.policy` and
:mod:`conformance.spec`. Replaying them on vectors and judging the answers is
:mod:`conformance.explain`'s (:mod:`~conformance.explain.play`,
:mod:`~conformance.explain.kill_matrix`).
"""

from __future__ import annotations

import importlib
from typing import Any

from conformance.mutants._base import Mutant, registered
from conformance.mutants.mutant_index import FAMILY_OF

#: The families in the order SPEC.md §2 meets them: construction, step, ring, sums, pooling,
#: selection.
FAMILIES = (
    "params",
    "steps",
    "ring",
    "summation",
    "pooling",
    "selection",
    "sorting",
    "paging",
    "realworld",
)

# The catalogue is built on first use (PEP 562): every family module is imported then. An
# adapter serving one mutant (:func:`lookup`) imports that mutant's family module alone. These
# three are declared here and set by _catalogue(), which module __getattr__ calls.

#: Every catalogued mutant, by family and then in the order each family module lists them.
CATALOGUE: tuple[Mutant, ...]
#: The protocol-level choices (:mod:`~conformance.mutants.protocol`): inert on every vector,
#: judged on the protocol checks; the triage searches them with the catalogue.
PROTOCOL: tuple[Mutant, ...]
#: Every mutant of both, by name.
BY_NAME: dict[str, Mutant]


def __getattr__(attribute: str) -> Any:
    if attribute in ("CATALOGUE", "PROTOCOL", "BY_NAME"):
        return _catalogue()[attribute]
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


def _catalogue() -> dict[str, Any]:
    """Import every family module once, then build and keep :data:`CATALOGUE`,
    :data:`PROTOCOL` and :data:`BY_NAME` as this module's attributes."""
    if "BY_NAME" not in globals():
        for family in (*FAMILIES, "protocol"):
            importlib.import_module(f"{__name__}.{family}")
        catalogue = tuple(
            sorted(
                (mutant for mutant in registered() if mutant.family in FAMILIES),
                key=lambda mutant: FAMILIES.index(mutant.family),
            )
        )
        protocol = tuple(m for m in registered() if m.family == "protocol")
        globals().update(
            CATALOGUE=catalogue,
            PROTOCOL=protocol,
            BY_NAME={m.name: m for m in (*catalogue, *protocol)},
        )
    return globals()


#: Mistakes considered for the catalogue and dropped because no input can tell them from the
#: reference (victims and error kinds are all a vector observes), each with the argument.
EQUIVALENT: tuple[tuple[str, str], ...] = (
    (
        "float64-history",
        "Storing the ring as float64 instead of float32: every weight is narrowed to float32 "
        "before it is stored, and widening a float32 to float64 is exact, so every sum is the "
        "same bit for bit.",
    ),
    (
        "sum-from-negative-zero",
        "Starting the accumulator at -0.0: weights are never negative, and -0.0 + x == x for "
        "every x >= +0.0 except -0.0 itself, so a sum can only come out as -0.0 where the "
        "reference has +0.0; the two compare equal, so the ranking and the victims are the same "
        "(only a scores answer could show the sign, and scores carry no expectation).",
    ),
    (
        "recent-by-admission-order",
        "Protecting the recentWindow most recently admitted kept positions instead of the "
        "highest: positions strictly increase, so the two are the same entries.",
    ),
    (
        "sort-by-index-not-position",
        "Breaking ties by kept-list index instead of position, or returning victims sorted by "
        "index: the kept list is ascending, so index order is position order.",
    ),
    (
        "full-sort-vs-partial-selection",
        "Ranking with a heap, a partial sort (argpartition) or a full sort: every method that "
        "returns the k smallest (pooled, position) pairs returns the same set, since positions "
        "are unique and so the pairs are totally ordered.",
    ),
    (
        "pooling-split-into-halves",
        "Computing the window maximum as max(left half, right half), or with a monotonic deque "
        "(van Herk/Gil-Werman): max is exact, associative and commutative, so any grouping "
        "gives the same value.",
    ),
    (
        "integral-float-params-accepted",
        "Accepting 4.0 as the integer 4 (for params, seed or pos): SPEC.md leaves this to the "
        "port, so no vector sends an integral value written as 4.0 and the mutant is not a "
        "mistake.",
    ),
    (
        "seed-used",
        "Seeding an Rng from the seed: SnapKV never draws from it, so nothing observable "
        "depends on it (a port that *refuses* some seeds is observable: seed-too-narrow).",
    ),
)


#: Mistakes that change only the arithmetic of the window sums (the precision they are stored
#: or added in, or the order of the additions), with the numerics profiles whose arithmetic
#: they use: ``run --numerics P`` passes them there (SPEC.md, appendix "Numerics profiles").
#: Every other mistake of the catalogue fails under every profile, but those of
#: :data:`NUMERICALLY_EQUIVALENT`.
PRECISION_ONLY: dict[str, tuple[str, ...]] = {
    "float16-history": ("float16",),
    "bfloat16-history": ("bfloat16",),
    "float32-accumulation": ("float32",),
    "sums-stored-as-float32": ("float32",),
    "pairwise-summation": ("float64",),
    "reversed-slot-order": ("float64",),
    "chronological-order": ("float64",),
    # Compensated sums are more accurate than any plain order; on every committed vector they
    # land within float64's bound, which is what the profile asks.
    "kahan-summation": ("float64",),
    "neumaier-summation": ("float64",),
    "simd-lanes-4": ("float64",),
    "simd-lanes-8": ("float64",),
    "simd-lanes-16": ("float64",),
    "fast-math-vectorised-sums": ("float64",),
}

#: Semantic mistakes that no vector can tell from rounding under some numerics profiles: the
#: profiles, and the argument. Each fails the exact suite and every other profile.
NUMERICALLY_EQUIVALENT: dict[str, tuple[tuple[str, ...], str]] = {
    "new-keeps-cursor": (
        ("float64", "float32", "bfloat16", "float16", "float16-result"),
        "A new policy starting with the previous cursor writes every ring from the same "
        "offset: each ring holds the reference's weights rotated by one shared amount, so its "
        "sums are the same weights added in another order, the same order for every ring "
        "(identical rings stay identical, zero rings zero). Every profile admits any order.",
    ),
    "mean-over-window": (
        ("float32", "bfloat16", "float16", "float16-result"),
        "Dividing every sum by obsWindow is a positive scale, which ranks as the sums do, plus "
        "one float64 rounding (never an underflow: a sum is at least 2^-149 and obsWindow at "
        "most 2^31 - 1). So its choices are those of the slot-order sums each moved by at "
        "most 2^-53 relatively, which keeps identical rings equal and zero rings zero, and "
        "for two or more nonzero weights stays far inside eps(n) >= gamma_1(2^-24) of these "
        "profiles. A single-weight ring's sum is exact under float32, but two distinct "
        "float32 values differ by at least 2^-24 relatively and one rounding of 2^-53 cannot "
        "merge or swap them, so an increasing map that fixes every single-weight sum moves "
        "the others by about 2^-52 at most. float64's bound (gamma_(n-1)(2^-53)) is too "
        "tight for the extra rounding, and summation/mean-over-window-trap fails it.",
    ),
}


def names() -> list[str]:
    """The catalogued mutant names, in catalogue order."""
    return [mutant.name for mutant in _catalogue()["CATALOGUE"]]


def lookup(name: str) -> Mutant:
    """The mutant called ``name``; raise KeyError with the list of names when there is none.

    Imports only the family module that defines ``name``
    (:data:`~conformance.mutants.mutant_index.FAMILY_OF`) when the catalogue is not loaded yet; the
    entry is the one :data:`BY_NAME` holds."""
    family = FAMILY_OF.get(name)
    if family is not None and "BY_NAME" not in globals():
        importlib.import_module(f"{__name__}.{family}")
        for mutant in registered():
            if mutant.name == name and (mutant.family in FAMILIES or mutant.family == "protocol"):
                return mutant
    try:
        return _catalogue()["BY_NAME"][name]
    except KeyError:
        raise KeyError(
            f"unknown mutant {name!r}; the catalogue has: {', '.join(names())}"
        ) from None
