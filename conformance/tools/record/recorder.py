"""Teacher-force a text through the model with the KV cache evicted in the loop by a policy.

At each token the decoder attends over the positions the policy still keeps (plus the token
itself), the policy is stepped with that attention, and ``evict`` is called; the victims
leave the decoder's cache before the next token. So every recorded row is exactly what the
policy saw, over exactly the positions it kept, and the next-token loss measures what the
evictions cost the model.

Aggregation (one row per token, the weights a policy step receives): the new token's softmax
attention, averaged over every layer and every head (float64), restricted to the kept
positions (the token's attention to itself is dropped, since it is not yet admitted),
renormalised to sum to 1 over them, and narrowed to float32. The first token (position 0)
has nothing kept to attend to and steps with ``null``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from conformance.tools.record.model import Decoder, Weights, load_weights


class Evictor(Protocol):
    """What the loop needs of a policy: the reference's ``step`` and ``evict``."""

    def step(self, pos: Any, attn: Any) -> None: ...

    def evict(self) -> list[int]: ...


@dataclass
class Recording:
    """One teacher-forced run: per token the row the policy received and what it evicted."""

    tokens: list[int]
    rows: list[np.ndarray | None] = field(default_factory=list)  # float32, None for position 0
    victims: list[list[int]] = field(default_factory=list)
    #: Negative log-likelihood (nats) of token t+1 from the logits at token t, which read the
    #: positions kept before token t plus token t itself; one per predicted token.
    nll: list[float] = field(default_factory=list)
    #: The argmax next token at each step (the greedy prediction of token t+1).
    greedy: list[int] = field(default_factory=list)
    #: The fraction of the full (unrenormalised, layer- and head-averaged) attention that fell
    #: on kept positions rather than on the token itself; kept for the lab.
    kept_share: list[float] = field(default_factory=list)


def aggregate(attention: np.ndarray) -> tuple[np.ndarray, float]:
    """``(layers, heads, kept + 1)`` softmax rows -> the float32 row over the kept positions.

    Returns the row and the share of the averaged attention that the kept positions held
    before renormalisation.
    """
    mean = attention.astype(np.float64).mean(axis=(0, 1))
    kept = mean[:-1]
    share = float(kept.sum())
    return (kept / share).astype(np.float32), share


def run(
    tokens: Sequence[int],
    policy: Evictor | None,
    *,
    weights: Weights | None = None,
    on_step: Callable[[int], None] | None = None,
) -> Recording:
    """Teacher-force ``tokens``; with ``policy`` None, nothing is ever evicted (the full cache).
    ``on_step(position)`` is called after each token."""
    return run_many(tokens, [policy], weights=weights, on_step=on_step)[0]


def run_many(
    tokens: Sequence[int],
    policies: Sequence[Evictor | None],
    *,
    weights: Weights | None = None,
    on_step: Callable[[int], None] | None = None,
) -> list[Recording]:
    """Teacher-force ``tokens`` once per policy, side by side in one batched decoder.

    Each policy evicts from its own cache; ``None`` evicts nothing (the full-cache baseline).
    """
    decoder = Decoder(weights if weights is not None else load_weights(), len(policies))
    recordings = [Recording(tokens=list(tokens)) for _ in policies]
    for position, token in enumerate(tokens):
        had_cache = bool(decoder.positions[0])
        out = decoder.step(int(token), position)
        logits_all = out.logits.astype(np.float64)
        for stream, (policy, recording) in enumerate(zip(policies, recordings, strict=True)):
            row, share = aggregate(out.attention[stream]) if had_cache else (None, 0.0)
            victims: list[int] = []
            if policy is not None:
                policy.step(position, None if row is None else [float(w) for w in row])
                victims = [int(v) for v in policy.evict()]
                decoder.drop(stream, victims)
            recording.rows.append(row)
            recording.victims.append(victims)
            recording.kept_share.append(share)
            logits = logits_all[stream]
            recording.greedy.append(int(np.argmax(logits)))
            if position + 1 < len(tokens):
                top = logits.max()
                log_norm = top + np.log(np.exp(logits - top).sum())
                recording.nll.append(float(log_norm - logits[int(tokens[position + 1])]))
        if on_step is not None:
            on_step(position)
    return recordings
