"""What a builder writes: a :class:`Draft`, the calls of one vector without their expectations.

A builder states the inputs and, for a call meant to be refused, the error kind it intends.
The generator (:mod:`conformance.tools.generate.generator`) replays the draft on the reference to
fill in every ``expect`` and fails loudly when the reference disagrees with an intended refusal, so
no expected value is ever written by hand.

Attention may be given as a function of the kept positions (:meth:`Draft.attend`, or a
callable passed to :meth:`Draft.step`): the generator calls it with the reference's kept list
just before the step. Builders whose evictions decide what is kept need this, since only the
reference may say what was evicted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.policy.reference import float32_literal
from conformance.spec.text import CATCHES

#: An attention argument: a literal value (list, null, or anything a refusal is judged on), or a
#: function from the kept positions (ascending) to the list.
Attention = Any
AttentionFn = Callable[[Sequence[int]], list[Any]]


def f32(value: float) -> float:
    """The float64 equal to the nearest float32 of ``value``: a weight a vector may carry."""
    return float32_literal(value)


def params(budget: int, recent: int, obs: int, kernel: int) -> dict[str, int]:
    """Construction parameters in wire form."""
    return {"budget": budget, "recentWindow": recent, "obsWindow": obs, "poolKernel": kernel}


@dataclass
class Planned:
    """One call as a builder planned it: the request (``attn`` may be a function) and, for a
    call meant to be refused, the intended error kind."""

    request: dict[str, Any]
    refuse: str | None = None


class Draft:
    """One vector under construction. Methods append calls and return the draft, to chain.

    ``pins`` says what the vector pins and ``catches`` the porting mistake(s) it catches; the
    description is ``"<pins> Catches: <catches>"``, so every vector names its mistake. ``spec``
    lists the ids of the numbered SPEC.md sentences it pins (its ``spec`` field).
    """

    def __init__(
        self,
        id: str,
        *,
        pins: str,
        catches: str,
        tags: Sequence[str],
        params: Any,
        seed: Any = 0,
        refuse: str | None = None,
        spec: Sequence[str] = (),
    ) -> None:
        self.id = id
        self.spec = tuple(spec)
        self.pins = pins.strip()
        self.catches = catches.strip()
        self.tags = tuple(tags)
        self.params = params
        self.seed = seed
        self.calls: list[Planned] = [Planned({"op": "new", "params": params, "seed": seed}, refuse)]

    @property
    def description(self) -> str:
        return f"{self.pins} {CATCHES} {self.catches}"

    # -- successful calls ------------------------------------------------------------------

    def step(self, pos: Any, attn: Attention = None) -> Draft:
        """A step that must succeed; ``attn`` is used as given (or called with the kept list)."""
        self.calls.append(Planned({"op": "step", "pos": pos, "attn": attn}))
        return self

    def nulls(self, positions: Iterable[int]) -> Draft:
        """Null steps admitting ``positions``: entries with no history, cursor unmoved."""
        for pos in positions:
            self.step(pos, None)
        return self

    def attend(
        self, pos: int, weights: Mapping[int, float] | None = None, default: float = 0.0
    ) -> Draft:
        """A step whose attention gives each kept position ``weights.get(position, default)``.

        Values are narrowed to float32 here. Every position named in ``weights`` must be kept at
        that moment; the generator refuses the draft otherwise (a design error in the builder).
        """
        self.calls.append(Planned({"op": "step", "pos": pos, "attn": over(weights or {}, default)}))
        return self

    def evict(self, times: int = 1) -> Draft:
        """``times`` evict calls (their victims come from the reference)."""
        for _ in range(times):
            self.calls.append(Planned({"op": "evict"}))
        return self

    def new(self, params: Any, seed: Any = 0, refuse: str | None = None) -> Draft:
        """A later ``new``: replaces the policy, or (with ``refuse``) must leave it in place."""
        self.calls.append(Planned({"op": "new", "params": params, "seed": seed}, refuse))
        return self

    # -- refused calls ---------------------------------------------------------------------

    def refuse_step(self, kind: str, pos: Any, attn: Attention = None) -> Draft:
        """A step that the reference must refuse with ``kind``."""
        self.calls.append(Planned({"op": "step", "pos": pos, "attn": attn}, kind))
        return self


class DesignError(Exception):
    """A builder asked for something its own design rules out (e.g. a weight for an evicted
    position)."""


def over(weights: Mapping[int, float], default: float = 0.0) -> AttentionFn:
    """Attention as a function of the kept list: ``weights`` by position, else ``default``."""
    narrowed = {position: f32(value) for position, value in weights.items()}
    fallback = f32(default)

    def attention(kept: Sequence[int]) -> list[float]:
        missing = sorted(set(narrowed) - set(kept))
        if missing:
            raise DesignError(f"weights given for positions that are not kept: {missing}")
        return [narrowed.get(position, fallback) for position in kept]

    return attention
