"""Traps for catalogued wrong ports that the rest of the suite does not catch by name.

Each vector here is a mutant's witness (:mod:`conformance.mutants`): the small scenario on
which that porting mistake answers differently from the reference. Its description names the
mistake and where it comes from, so a porter whose port fails ``mutant-traps/<name>`` knows
what they did. The reference fills every expectation
(:func:`conformance.tools.generate.generator.realize`); the refusals a witness provokes are the ones
the reference gives.

:data:`TRAPPED` lists the mutants that get a trap: those that no other committed vector kills
*and* names (``snapkv-conformance mutants`` shows which). A mutant guarded elsewhere needs no
trap; a trap for it would only repeat that vector.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.adapter.replay import replay
from conformance.mutants import lookup
from conformance.mutants._base import Mutant
from conformance.tools.generate.builders import Draft, builder

#: Mutants that get a trap vector, with the tags of the vector (from ``vectors/TAGS.md``).
TRAPPED: dict[str, tuple[str, ...]] = {
    "gaps-refused": ("gaps", "position"),
    "non-integer-position-bad-request": ("position",),
    "wrong-length-bad-request": ("attention",),
    "per-position-cursor": ("ring", "summation"),
    "backward-only-pooling": ("pooling",),
    "pool-then-sum": ("pooling",),
    "greedy-rescoring": ("eviction-count", "pooling"),
    # Scores divided by a position's age kill many vectors, but none says so.
    "openvino-norm-sum": ("summation",),
    # The parts of OpenVINO's SUM aggregation are each named elsewhere; this names the whole.
    "openvino-sum": ("summation", "pooling"),
    # What engines and their libraries do (the sorting, paging, ring and summation choices
    # read from their code): each kills vectors of its own, but none of them says so.
    "std-sort-by-score": ("ties",),
    "std-nth-element-by-score": ("ties",),
    "std-partial-sort-by-score": ("ties",),
    "java-priority-queue-by-score": ("ties",),
    "threshold-scan-by-score": ("ties",),
    "window-padded-keepers": ("ties", "recent-window"),
    "prefix-sum-window": ("summation",),
    "renormalised-rows": ("summation",),
    "paged-eviction": ("eviction-count",),
    "deferred-eviction": ("eviction-count",),
    "masked-holes-stale": ("pool-adjacency",),
    "masked-holes-zeroed": ("pool-adjacency",),
    "slot-from-call-count": ("ring", "null-step"),
    "slot-from-position": ("ring", "gaps"),
    "openvino-paged": ("eviction-count", "summation"),
    "pool-forward-on-arrival": ("pooling",),
}


#: What a trap's scenario shows beyond the rule, for the traps that need saying.
NOTES: dict[str, str] = {
    "per-position-cursor": " Positions 0 and 1 end with rings identical slot for slot, which "
    "sum alike in every arithmetic, so `--numerics` admits this under no profile (a witness "
    "where only the order of each ring's additions differed would pass every profile but "
    "exact).",
}


def trap(mutant: Mutant, tags: tuple[str, ...]) -> Draft:
    """The witness of ``mutant`` as a draft, refusals marked as the reference refuses them."""
    witness = mutant.witness
    if witness is None:
        raise ValueError(f"{mutant.name} has no witness scenario to make a trap of")
    answers = replay(witness.requests())
    kinds = [None if answer["ok"] else answer["error"]["kind"] for answer in answers]
    draft = Draft(
        f"mutant-traps/{mutant.name}",
        pins=f"SPEC.md {mutant.rule}, on the smallest scenario where breaking it shows."
        + NOTES.get(mutant.name, ""),
        catches=f"{mutant.name}: {mutant.origin}.",
        tags=tags,
        params=dict(witness.params),
        seed=witness.seed,
        refuse=kinds[0],
    )
    for request, kind in zip(witness.calls, kinds[1:], strict=True):
        if request["op"] == "evict":
            draft.evict()
        elif kind is None:
            draft.step(request["pos"], request["attn"])
        else:
            draft.refuse_step(kind, request["pos"], request["attn"])
    return draft


@builder
def witnesses() -> Iterator[Draft]:
    """One trap per mutant in :data:`TRAPPED`."""
    for name, tags in TRAPPED.items():
        yield trap(lookup(name), tags)
