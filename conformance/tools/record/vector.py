"""A recording as a format-v1 vector whose expectations come from the reference."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from conformance.policy.reference import Params, new_policy
from conformance.suite.vectors import Call, Vector
from conformance.tools.record.model import MODEL_NAME, encode
from conformance.tools.record.recorder import Recording, run
from conformance.tools.record.texts import Text

AGGREGATION = (
    "the new token's softmax attention averaged over all 30 layers and 9 heads, restricted to "
    "the kept positions (its attention to itself dropped), renormalised to sum to 1 and "
    "narrowed to float32; position 0 steps with null"
)

#: What a recorded trace is for, and no more: which mistakes one trace kills depends on the text
#: and the parameters, so it names none (the kill matrix tells, once the trace is in a suite).
CATCHES = (
    "a port that passes synthetic weights but not a real model's rows: hundreds of distinct "
    "tiny weights and a strong sink at position 0, where a mistake may show only after hundreds "
    "of evictions (which catalogued mistakes this trace kills: snapkv-conformance mutants)"
)


def record_vector(
    vector_id: str,
    text: Text,
    params: Mapping[str, int],
    *,
    max_tokens: int | None = None,
    tags: tuple[str, ...] = ("real",),
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Vector, Recording]:
    """Record ``text`` (its first ``max_tokens`` tokens) with the reference evicting in the loop.

    The calls are ``new``, then per token a ``step`` and an ``evict``; every ``evict`` expects
    the victims the reference returned in the loop, which are the ones it returns when the
    vector is replayed, since the replay sends the same float32 weights.
    """
    checked = Params.parse(dict(params)).as_dict()
    tokens = encode(text.read())
    if max_tokens is not None:
        tokens = tokens[:max_tokens]
    on_step = None if progress is None else (lambda position: progress(position + 1, len(tokens)))
    recording = run(tokens, new_policy(checked), on_step=on_step)
    calls = [Call({"op": "new", "params": checked, "seed": 0})]
    for position, (row, victims) in enumerate(zip(recording.rows, recording.victims, strict=True)):
        attn: Any = None if row is None else [float(w) for w in row]
        calls.append(Call({"op": "step", "pos": position, "attn": attn}))
        calls.append(Call({"op": "evict"}, {"victims": victims}))
    evicting = sum(1 for victims in recording.victims if victims)
    description = (
        f"Recorded attention from {MODEL_NAME}, teacher-forced through {len(tokens)} tokens of "
        f"{text.title} (text '{text.name}'), with the KV cache evicted in the loop by the "
        f"reference (budget {checked['budget']}, recentWindow {checked['recentWindow']}, "
        f"obsWindow {checked['obsWindow']}, poolKernel {checked['poolKernel']}): each step's "
        f"weights are {AGGREGATION}; {evicting} evictions. Catches: {CATCHES}."
    )
    vector = Vector(
        id=vector_id,
        description=description,
        tags=tags,
        params=checked,
        seed=0,
        calls=tuple(calls),
    )
    return vector, recording
