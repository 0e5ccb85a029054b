"""The reference SnapKV policy: SPEC.md §2 transcribed into plain Python, step by step.

This module is normative: when a port and this code disagree on a call, this code is what the
kit expects. It is written to be read in one sitting. Weights are float32 values held as
Python floats (every float32 is exactly a float64); sums are float64 additions written as a
loop over slots 0 upward starting from ``+0.0``; nothing here uses numpy, so no library
decides an order of addition.

Read :class:`SnapKV` top to bottom: ``step`` and ``evict`` are each a few calls to named steps,
and every step is one rule of the spec. The mutant catalogue (``conformance.mutants``) writes
each porting mistake as a subclass overriding one of those steps, so their names and
signatures are an interface: they are listed in the class docstring and do not change.

Two things go beyond a literal transcription, both so that parameters up to ``2^31 - 1`` cost
nothing and no legal vector is slow, neither changing a single bit:

- A :class:`Ring` holds only the slots written since its position was admitted (the rest are
  zeros, which add nothing) and remembers its partial sum, so an evict re-adds no slot it
  already summed unless that slot was rewritten since.
- Pooling is a sliding-window maximum over a monotonic deque, linear in the kept count for
  any ``poolKernel``; a maximum only compares, so any correct way to find it is exact.

``conformance.policy.fast`` is a numpy implementation of the same policy for long traces; it is
checked bit for bit against this one. Get either through :func:`new_policy`.
"""

from __future__ import annotations

import heapq
import struct
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from conformance.spec.protocol import ERROR_KINDS, is_integer
from conformance.spec.text import json_text

INT31_MAX = 2**31 - 1
#: The largest finite float32, as a float64.
FLOAT32_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]

PARAM_NAMES = ("budget", "recentWindow", "obsWindow", "poolKernel")
DEFAULT_PARAMS: dict[str, int] = {
    "budget": 512,
    "recentWindow": 16,
    "obsWindow": 16,
    "poolKernel": 7,
}


class PolicyError(Exception):
    """A refused call. ``kind`` is one of :data:`ERROR_KINDS`; the message names the value."""

    def __init__(self, kind: str, message: str) -> None:
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown error kind {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.message = message

    def __repr__(self) -> str:
        return f"PolicyError({self.kind!r}, {self.message!r})"


# -- §2.1 parameters ------------------------------------------------------------------------


@dataclass(frozen=True)
class Params:
    """Validated construction parameters (SPEC.md §2.1)."""

    budget: int
    recentWindow: int  # camelCase: the wire names, so params round-trip unchanged
    obsWindow: int
    poolKernel: int

    @classmethod
    def parse(cls, raw: Any) -> Params:
        """Validate a ``params`` object from the wire; raise ``invalid-params`` on any fault.

        Exactly the four names, each a JSON integer (not a boolean, string or ``4.5``), with
        ``budget >= 1``, ``0 <= recentWindow < budget``, ``obsWindow >= 1``, ``poolKernel``
        odd and ``>= 1``, and each at most ``2^31 - 1``.
        """
        if isinstance(raw, Params):
            raw = raw.as_dict()
        if not isinstance(raw, Mapping):
            raise PolicyError("invalid-params", f"params must be an object, got {json_text(raw)}")
        missing = [name for name in PARAM_NAMES if name not in raw]
        if missing:
            raise PolicyError("invalid-params", f"params is missing {', '.join(missing)}")
        extra = sorted(set(raw) - set(PARAM_NAMES))
        if extra:
            raise PolicyError("invalid-params", f"params has unknown field(s) {', '.join(extra)}")
        for name in PARAM_NAMES:
            value = raw[name]
            if not is_integer(value):
                raise PolicyError(
                    "invalid-params", f"{name} must be an integer, got {json_text(value)}"
                )
            if not 0 <= value <= INT31_MAX:
                raise PolicyError("invalid-params", f"{name} must be in [0, 2^31 - 1], got {value}")
        budget, recent = raw["budget"], raw["recentWindow"]
        obs, kernel = raw["obsWindow"], raw["poolKernel"]
        if budget < 1:
            raise PolicyError("invalid-params", f"budget must be >= 1, got {budget}")
        if recent >= budget:
            raise PolicyError(
                "invalid-params",
                f"recentWindow must be < budget, got recentWindow {recent} with budget {budget}",
            )
        if obs < 1:
            raise PolicyError("invalid-params", f"obsWindow must be >= 1, got {obs}")
        if kernel < 1 or kernel % 2 == 0:
            raise PolicyError("invalid-params", f"poolKernel must be odd and >= 1, got {kernel}")
        return cls(budget, recent, obs, kernel)

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in PARAM_NAMES}


# -- §2.3 what a step accepts -----------------------------------------------------------------


def parse_position(pos: Any, last_admitted: int | None) -> int:
    """Validate a step's ``pos``; raise ``invalid-position`` on any fault."""
    if not is_integer(pos):
        raise PolicyError("invalid-position", f"pos must be an integer, got {json_text(pos)}")
    if not 0 <= pos <= INT31_MAX:
        raise PolicyError("invalid-position", f"pos must be in [0, 2^31 - 1], got {pos}")
    if last_admitted is not None and pos <= last_admitted:
        raise PolicyError(
            "invalid-position",
            f"pos {pos} must be greater than the last admitted position {last_admitted}",
        )
    return pos


def float32_literal(value: float) -> float:
    """The nearest float32 of ``value`` (ties to even), as a float64; infinity past the range.

    ``struct``'s ``'f'`` is the C cast from double to float, which rounds to nearest; it
    refuses (OverflowError) exactly the finite values whose float32 would be infinite.
    """
    try:
        narrowed: float = struct.unpack("<f", struct.pack("<f", float(value)))[0]
    except OverflowError:  # beyond the float32 range, or an integer beyond float64
        return float("inf") if value > 0 else float("-inf")
    return narrowed


def narrow_attention(attn: Any, kept: int) -> list[float] | None:
    """Validate a step's ``attn`` and narrow it to float32; raise ``invalid-attention``.

    Each weight is a JSON number read as the nearest float64 and then rounded to the nearest
    float32; that float32 must be finite and not negative. ``-0.0`` counts as zero.
    """
    if attn is None:
        return None
    if not isinstance(attn, list):
        raise PolicyError(
            "invalid-attention", f"attn must be null or a list, got {json_text(attn)}"
        )
    if len(attn) != kept:
        raise PolicyError(
            "invalid-attention",
            f"attn has {len(attn)} weight(s) but {kept} position(s) are kept",
        )
    types = list(map(type, attn))  # exact types: a bool is not a number, though an int
    if types.count(float) + types.count(int) != kept:
        index = next(i for i, kind in enumerate(types) if kind is not float and kind is not int)
        raise PolicyError(
            "invalid-attention", f"attn[{index}] is not a number: {json_text(attn[index])}"
        )
    try:
        # One pack of the whole list: each weight becomes a float64 (an integer literal is
        # read as its nearest float64), then a float32, exactly as float32_literal does.
        weights = list(struct.unpack(f"<{kept}f", struct.pack(f"<{kept}f", *attn)))
    except (OverflowError, struct.error):  # struct.error: an integer beyond float64
        weights = [float32_literal(weight) for weight in attn]
    for index, weight in enumerate(weights):
        if not 0.0 <= weight <= FLOAT32_MAX:  # NaN fails too; -0.0 passes (it counts as zero)
            if weight < 0:
                reason = "is negative"
            elif weight != weight:
                reason = "is not a number"
            else:
                reason = "is beyond the float32 range"
            raise PolicyError(
                "invalid-attention", f"attn[{index}] {reason}: {json_text(attn[index])}"
            )
    return weights


def check_weight_literal(value: Any) -> bool:
    """True when ``value`` is exactly a float32, as SPEC.md §2.6 requires of the weights of
    calls that must succeed: a JSON number whose value narrowing to float32 does not change."""
    if type(value) is not int and type(value) is not float:
        return False
    if type(value) is int and abs(value) > FLOAT32_MAX:
        return False
    narrowed = float32_literal(value)
    return narrowed == value and abs(narrowed) <= FLOAT32_MAX


# -- §2.2 state: one history ring per kept position -------------------------------------------


class Ring:
    """One kept position's history: the float32 weight it received at each ring slot.

    ``values[s]`` is the weight in slot ``s``. The list only reaches the highest slot written
    since the position was admitted; every slot past its end holds zero (SPEC.md §2.1 lets a
    ring grow as it is written). Write through :meth:`write`, read sums through :meth:`total`.
    """

    __slots__ = ("_partial", "_summed", "values")

    def __init__(self) -> None:
        self.values: list[float] = []
        # _partial is the slot-order sum of values[:_summed]; see total().
        self._summed = 0
        self._partial = 0.0

    def write(self, slot: int, weight: float) -> None:
        """Store ``weight`` in ``slot``."""
        values = self.values
        if slot < len(values):
            values[slot] = weight
            if slot < self._summed:  # a summed slot changed: the next total starts over
                self._summed, self._partial = 0, 0.0
            return
        if self._summed == len(values):
            self._summed = slot  # the zeros padded in below add nothing (see total)
        values.extend([0.0] * (slot - len(values)))
        values.append(weight)

    def total(self) -> float:
        """The float64 sum of the ring in slot index order, from ``+0.0`` (SPEC.md §2.4).

        Exactness of the shortcuts: the total starts at ``+0.0``, and a float64 addition
        rounded to nearest gives ``-0.0`` only when both terms are ``-0.0``, so the total is
        never ``-0.0``; adding a zero of either sign to a float64 that is not ``-0.0``
        returns it unchanged. Hence the unwritten slots past
        the end of ``values`` (and zeros padded in before a write) can be skipped. The slots
        summed by an earlier call are a prefix of the ring that has not been rewritten since
        (:meth:`write` forgets the partial sum when one is), so continuing from the partial
        sum performs the same additions in the same order as summing afresh.
        """
        total = self._partial
        values = self.values
        for slot in range(self._summed, len(values)):
            total += values[slot]
        self._summed, self._partial = len(values), total
        return total

    def copy(self) -> Ring:
        twin = Ring()
        twin.values = list(self.values)
        twin._summed, twin._partial = self._summed, self._partial
        return twin


# -- §2.4 pooling ----------------------------------------------------------------------------


def sliding_max(values: Sequence[float], radius: int) -> list[float]:
    """``out[i] = max(values[j])`` over ``j`` in ``[i - radius, i + radius]`` clamped to the
    list, in time linear in ``len(values)`` whatever the radius.

    ``window`` holds the indices of the current window whose values are each greater than
    every value after them in the window, so its front is the window's maximum.
    """
    count = len(values)
    radius = min(radius, count - 1)  # a wider window clamps to the same entries
    if radius <= 0:
        return list(values)
    out: list[float] = []
    window: deque[int] = deque()
    for right in range(count + radius):
        if right < count:
            while window and values[window[-1]] <= values[right]:
                window.pop()
            window.append(right)
        centre = right - radius  # the window of entry ``centre`` ends at ``right``
        if centre >= 0:
            while window[0] < centre - radius:
                window.popleft()
            out.append(values[window[0]])
    return out


@dataclass(frozen=True)
class Scores:
    """What an ``evict`` now would rank by: kept positions with their sums and pooled scores."""

    positions: list[int]
    sums: list[float]
    pooled: list[float]


class SnapKV:
    """The reference decode-time SnapKV policy (SPEC.md §2).

    Public state, all plain Python:

    - ``params``: the validated :class:`Params`; ``seed``: the construction seed (unused).
    - ``kept``: the kept positions, ascending (a list of int).
    - ``rings``: one :class:`Ring` per kept position, ``rings[i]`` for ``kept[i]``.
    - ``slot``: the ring cursor shared by every ring, starting at 0.
    - ``last_admitted``: the highest position ever admitted (evicted or not), or None.

    ``step(pos, attn)`` runs these steps, in this order:

    1. ``check_position(pos) -> int``: §2.3 rule 1 (``invalid-position``).
    2. ``check_attention(attn) -> list[float] | None``: §2.3 rule 2 (``invalid-attention``),
       the weights narrowed to float32. A refusal in 1 or 2 has changed nothing.
    3. ``write(weights)``: a non-null step writes ``weights[i]`` in ``rings[i]`` at ``slot``
       and advances ``slot`` (a null step skips this).
    4. ``admit(position)``: append the position with an empty (all-zero) ring.

    ``evict()`` runs these, all from one scoring of the state before the call:

    1. ``excess() -> int``: ``k = max(0, len(kept) - budget)``; nothing more when 0.
    2. ``window_sums() -> list[float]``: each ring's float64 sum in slot order.
    3. ``pool(sums) -> list[float]``: the max over kept entries ``[i - r, i + r]``.
    4. ``candidate_count() -> int``: how many of the lowest kept entries may be evicted.
    5. ``select(pooled, k) -> list[int]``: the kept *indices* of the victims, in rank order.
    6. ``order_victims(indices) -> list[int]``: the victims' positions as returned (ascending).
    7. ``remove(indices)``: drop those entries and their rings; ``slot`` does not move.

    ``scores()`` (§2.5) reports steps 2 and 3 without changing anything. ``parse_params(raw)``
    is the construction step. Subclasses override steps; they change state only through
    steps (and the public fields above), never through anything underscored.
    """

    def __init__(self, params: Mapping[str, Any] | Params, seed: int = 0) -> None:
        self.params = self.parse_params(params)
        self.seed = seed  # SnapKV never draws from the registry's random generator (§2.1)
        self.kept: list[int] = []
        self.rings: list[Ring] = []
        self.slot = 0
        self.last_admitted: int | None = None

    # -- the calls ----------------------------------------------------------------------------

    def step(self, pos: Any, attn: Any) -> None:
        """Record one decode step's attention over the kept positions, then admit ``pos``."""
        position = self.check_position(pos)
        weights = self.check_attention(attn)
        if weights is not None:
            self.write(weights)
        self.admit(position)

    def evict(self) -> list[int]:
        """Evict ``max(0, len(kept) - budget)`` positions and return them ascending."""
        count = self.excess()
        if count <= 0:
            return []
        pooled = self.pool(self.window_sums())
        victims = self.select(pooled, count)
        evicted = self.order_victims(victims)
        self.remove(victims)
        return evicted

    def scores(self) -> Scores:
        """The sums and pooled scores that an ``evict`` now would rank by."""
        sums = self.window_sums()
        return Scores(positions=list(self.kept), sums=list(sums), pooled=self.pool(sums))

    # -- the steps ----------------------------------------------------------------------------

    def parse_params(self, raw: Mapping[str, Any] | Params) -> Params:
        return Params.parse(raw)

    def check_position(self, pos: Any) -> int:
        return parse_position(pos, self.last_admitted)

    def check_attention(self, attn: Any) -> list[float] | None:
        return narrow_attention(attn, len(self.kept))

    def write(self, weights: Sequence[float]) -> None:
        for ring, weight in zip(self.rings, weights, strict=True):
            ring.write(self.slot, weight)
        self.slot = (self.slot + 1) % self.params.obsWindow

    def admit(self, position: int) -> None:
        self.kept.append(position)
        self.rings.append(Ring())  # a new position's history is all zeros, never a reused one
        self.last_admitted = position

    def excess(self) -> int:
        return max(0, len(self.kept) - self.params.budget)

    def window_sums(self) -> list[float]:
        return [ring.total() for ring in self.rings]

    def pool(self, sums: Sequence[float]) -> list[float]:
        return sliding_max(sums, (self.params.poolKernel - 1) // 2)

    def candidate_count(self) -> int:
        return max(0, len(self.kept) - self.params.recentWindow)

    def select(self, pooled: Sequence[float], count: int) -> list[int]:
        # kept ascends with the index, so (pooled, index) orders as (pooled, position) does.
        candidates = range(self.candidate_count())
        return heapq.nsmallest(count, candidates, key=lambda index: (pooled[index], index))

    def order_victims(self, victims: Sequence[int]) -> list[int]:
        return sorted(self.kept[index] for index in victims)

    def remove(self, victims: Iterable[int]) -> None:
        gone = set(victims)
        self.kept = [pos for index, pos in enumerate(self.kept) if index not in gone]
        self.rings = [ring for index, ring in enumerate(self.rings) if index not in gone]


# -- one way in -------------------------------------------------------------------------------


class Policy(Protocol):
    """What the kit needs of a policy: the calls, and the state a session reports."""

    @property
    def params(self) -> Params: ...

    @property
    def kept(self) -> Sequence[int]: ...

    @property
    def last_admitted(self) -> int | None: ...

    def step(self, pos: Any, attn: Any) -> None: ...

    def evict(self) -> list[int]: ...

    def scores(self) -> Scores: ...


#: What makes a policy from ``params`` and ``seed``: a class or a function such as new_policy.
PolicyFactory = Callable[[Mapping[str, Any], int], Policy]


def new_policy(params: Mapping[str, Any] | Params, seed: int = 0) -> Policy:
    """The reference policy for ``params``: :class:`SnapKV`. Its numpy fast path, which answers
    the same bit for bit and is quicker on long traces with large budgets (the reference
    adapter serves it), is :func:`conformance.policy.fast.fast_policy`."""
    return SnapKV(params, seed)


__all__ = [
    "DEFAULT_PARAMS",
    "ERROR_KINDS",
    "FLOAT32_MAX",
    "INT31_MAX",
    "PARAM_NAMES",
    "Params",
    "Policy",
    "PolicyError",
    "PolicyFactory",
    "Ring",
    "Scores",
    "SnapKV",
    "check_weight_literal",
    "float32_literal",
    "narrow_attention",
    "new_policy",
    "parse_position",
    "sliding_max",
]
