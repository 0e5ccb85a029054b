"""A port as one choice per step: SPEC.md §2 and §3 written as hooks, one group per step.

:class:`Model` answers every call exactly as the reference
:class:`~conformance.policy.reference.SnapKV` does (``tests/mutants/test_model.py`` checks it call
for call and score for score), but every rule is a hook of its own. A catalogued choice
(:mod:`conformance.mutants`) is a subclass that overrides the hooks of the step(s) it declares and
nothing else, so choices on different steps compose by plain multiple inheritance: a port is a set
of choices, at most one per step, and the triage (:mod:`conformance.explain.triage`) searches that
space.

:data:`STEPS` lists the steps in the order SPEC.md meets them, each with the hooks it owns and
the rule it pins. A hook belongs to exactly one step; that is what makes any two choices on
different steps safe to combine (``tests/mutants/test_model.py`` checks every choice).

The state is public, plain and numpy:

- ``params`` (:class:`~conformance.policy.reference.Params`), ``seed``.
- ``kept``: the kept positions as stored (a list of int, ascending unless a choice says
  otherwise); ``last_admitted``: the highest position ever admitted, as given.
- ``hist``: a float64 array, row ``i`` the ring of ``kept[i]`` (columns are ring slots, only
  the slots written so far, ``width`` of them; later ones are zero). Values are the stored
  weights, widened exactly.
- ``slot``: the shared ring cursor; ``calls``: how many ``step`` calls arrived, refused ones
  included; ``per_row``: per kept entry state some choices keep (see :attr:`Model.PER_ROW`).

Sums are float64 by default and added one column at a time, slot 0 upward, from ``+0.0``: the
additions of SPEC.md §2.4 in their order. A choice that changes the precision or the order
changes only that.
"""

from __future__ import annotations

import bisect
import struct
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from conformance.policy.reference import (
    FLOAT32_MAX,
    INT31_MAX,
    PARAM_NAMES,
    Params,
    PolicyError,
    Scores,
    float32_literal,
    is_integer,
)
from conformance.spec.protocol import NumberText
from conformance.spec.text import json_text


class Refused(PolicyError):
    """A refused ``new`` after which the session keeps ``remaining`` (None: no policy) rather
    than the policy it had: what a port that tears down or half-updates before it validates
    does. :class:`conformance.adapter.server.Session` honours it."""

    def __init__(self, kind: str, message: str, remaining: Any) -> None:
        super().__init__(kind, message)
        self.remaining = remaining


@dataclass(frozen=True)
class Step:
    """One step of the policy: the hooks that implement it and the rule they pin."""

    name: str
    title: str
    rule: str
    hooks: tuple[str, ...]


#: The steps, in the order SPEC.md meets them.
STEPS: tuple[Step, ...] = (
    # -- construction (§2.1, §3.2) ---------------------------------------------------------------
    Step("lifecycle", "what new does to the policy it replaces", "§3.2", ("construct",)),
    Step("seed", "how the seed is read", "§2.1", ("check_seed",)),
    Step("params-object", "what params may be", "§2.1", ("params_object",)),
    Step("params-spelling", "how parameter names are matched", "§2.1", ("param_names",)),
    Step("params-extra", "names beyond the four", "§2.1", ("extra_params",)),
    Step("params-missing", "names left out", "§2.1", ("missing_params",)),
    Step("params-values", "how a parameter value is read", "§2.1", ("param_value",)),
    Step("params-upper-bound", "the 2^31 - 1 bound", "§2.1", ("check_upper_bound",)),
    Step("budget-rule", "budget >= 1", "§2.1", ("check_budget",)),
    Step("recent-rule", "0 <= recentWindow < budget", "§2.1", ("check_recent",)),
    Step("obs-rule", "obsWindow >= 1", "§2.1", ("check_obs",)),
    Step("kernel-rule", "poolKernel odd and >= 1", "§2.1", ("check_kernel",)),
    Step("allocation", "memory sized by use", "§2.1", ("allocate",)),
    # -- step (§2.3) ----------------------------------------------------------------------------
    Step("step-phases", "the order of a step's phases", "§2.3", ("step",)),
    Step("refusal-effects", "what a refused step leaves behind", "§2.3", ("on_refusal",)),
    Step("position-type", "how pos is read", "§2.3", ("read_position",)),
    Step("position-range", "0 <= pos <= 2^31 - 1", "§2.3", ("check_position_range",)),
    Step(
        "position-order",
        "pos above every position admitted",
        "§2.3",
        ("check_order", "insertion_index"),
    ),
    Step("position-storage", "how kept positions are stored", "§2.3", ("store_position",)),
    Step("null-attention", "what a null attn does", "§2.3", ("read_null", "on_null")),
    Step("empty-attention", "what an empty attn list does", "§2.3", ("read_empty",)),
    Step("attention-shape", "attn: one weight per kept position", "§2.3", ("attention_items",)),
    Step("weight-values", "which JSON values are weights", "§2.3", ("weight_values",)),
    Step(
        "weight-narrowing",
        "nearest float64, then nearest float32",
        "§2.3, §2.6",
        ("narrow", "reads_weight_text"),
    ),
    Step("subnormals", "subnormal weights", "§2.3", ("flush",)),
    Step("weight-check", "finite and not negative; -0.0 is zero", "§2.3", ("check_weights",)),
    Step("history-storage", "history stored as float32", "§2.6", ("store",)),
    Step("ring", "one shared cursor over obsWindow slots", "§2.3", ("write", "ring_size")),
    Step("admission", "a new position's history is all zeros", "§2.3", ("fresh_row",)),
    # -- evict (§2.4) ---------------------------------------------------------------------------
    Step("evict-structure", "one scoring per evict", "§2.4", ("evict",)),
    Step("victim-count", "k = max(0, len(kept) - budget)", "§2.4", ("excess",)),
    Step("summation-order", "slot index order, recomputed", "§2.4 step 1", ("sum_ring", "observe")),
    Step(
        "summation-precision", "float64 accumulation", "§2.4 step 1", ("ACCUMULATOR", "finish_sums")
    ),
    Step("score-scale", "scores are the sums themselves", "§2.4 step 1", ("scale",)),
    Step(
        "pool-structure",
        "sum each ring, then pool the sums",
        "§2.4",
        ("arriving", "ring_view", "pool"),
    ),
    Step(
        "pool-members", "every kept entry takes part in pooling", "§2.4 step 2", ("pool_members",)
    ),
    Step("pool-window", "kept entries [i - r, i + r], clamped", "§2.4 step 2", ("pool_window",)),
    Step("pool-kind", "the maximum over the window", "§2.4 step 2", ("pool_reduce",)),
    Step(
        "protected-window",
        "the recentWindow highest are not candidates",
        "§2.4 step 3",
        ("candidate_count",),
    ),
    Step("selection", "smallest (pooled, position), ties to the lower", "§2.4 step 4", ("select",)),
    Step("victim-order", "victims returned ascending", "§2.4 step 5", ("order_victims",)),
    Step("removal", "victims removed, survivors untouched", "§2.4 step 5", ("remove",)),
)
BY_STEP: dict[str, Step] = {step.name: step for step in STEPS}
#: The step each hook belongs to.
HOOK_STEP: dict[str, str] = {hook: step.name for step in STEPS for hook in step.hooks}


def _narrow_all(values: Sequence[Any]) -> list[float]:
    """Nearest float64, then nearest float32, of every value (infinity past the range)."""
    try:
        return list(struct.unpack(f"<{len(values)}f", struct.pack(f"<{len(values)}f", *values)))
    except (OverflowError, struct.error):
        return [float32_literal(value) for value in values]


class Model:
    """The reference policy as hooks (see the module docstring and :data:`STEPS`)."""

    #: Per kept entry state a choice keeps: ``{name: the value of a newly admitted entry, from
    #: the model}``. Every class of the MRO may add names; ``per_row[name]`` is a list aligned
    #: with ``kept``.
    PER_ROW: ClassVar[dict[str, Callable[[Model], Any]]] = {}
    #: Whether a session serving this policy hands it a step's weights as the line writes them
    #: (:class:`~conformance.spec.protocol.NumberText`, as :func:`~conformance.explain.play.play`
    #: does for vectors whose weights are chosen for how their decimal rounds): only a choice
    #: that parses the decimal itself needs it, and reading every weight's text costs.
    reads_weight_text: ClassVar[bool] = False
    #: The accumulator's dtype (step ``summation-precision``).
    ACCUMULATOR: ClassVar[Any] = np.float64
    #: Record the sums and pooled scores of every evict in ``trace`` (for the shipped
    #: outcomes: a choice that changes no score and no answer on a vector is inert there).
    tracing: ClassVar[bool] = False

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def construct(cls, params: Any, seed: Any, previous: Model | None = None) -> Model:
        """What ``new`` makes (``previous`` is the policy it replaces, if any); a refusal
        raises and leaves ``previous`` as it was."""
        return cls(params, cls.check_seed(seed))

    @classmethod
    def check_seed(cls, seed: Any) -> Any:
        if type(seed) is not int:
            raise PolicyError("invalid-params", f"seed must be an integer, got {json_text(seed)}")
        return seed

    def __init__(self, params: Any, seed: Any = 0) -> None:
        self.params = self.parse_params(params)
        self.seed = seed
        self.kept: list[int] = []
        self.last_admitted: int | None = None
        self.slot = 0
        self.calls = 0
        #: The current step's weights as the request writes them (None where it holds a plain
        #: number): what a choice that parses the decimal itself reads.
        self.written: list[str | None] = []
        #: The current step's weights as read, before narrowing (an int or the nearest float64).
        self.read: list[Any] = []
        self.writes = 0  # non-null steps recorded
        self.admissions = 0
        self.freed: list[np.ndarray] = []  # the rings of the latest victims, the last on top
        self.width = 0
        # A fold over ring columns [0, _summed) of every kept row (the slot-order sums, say),
        # continued at the next evict while no column it covered is rewritten, as the
        # reference's Ring does: the same operations in the same order as starting afresh.
        self._summed = 0
        self._fold: tuple[np.ndarray, ...] = ()
        self._fold_key: Any = None
        self.hist = np.zeros((4, 1))
        self._fresh: dict[str, Callable[[Model], Any]] = {}
        for klass in reversed(type(self).__mro__):
            self._fresh.update(vars(klass).get("PER_ROW", {}))
        self.per_row: dict[str, list[Any]] = {name: [] for name in self._fresh}
        self.trace: list[tuple[np.ndarray, np.ndarray]] = []
        self.allocate(0)

    def parse_params(self, raw: Any) -> Params:
        named = self.param_names(self.params_object(raw))
        named = self.missing_params(self.extra_params(named))
        values = {name: self.param_value(name, named[name]) for name in PARAM_NAMES}
        for name in PARAM_NAMES:
            self.check_upper_bound(name, values[name])
        self.check_budget(values["budget"])
        self.check_recent(values["recentWindow"], values["budget"])
        self.check_obs(values["obsWindow"])
        self.check_kernel(values["poolKernel"])
        return Params(**values)

    def params_object(self, raw: Any) -> Mapping[str, Any]:
        if not isinstance(raw, Mapping):
            raise PolicyError("invalid-params", f"params must be an object, got {json_text(raw)}")
        return raw

    def param_names(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        return dict(raw)

    def extra_params(self, named: dict[str, Any]) -> dict[str, Any]:
        extra = sorted(set(named) - set(PARAM_NAMES))
        if extra:
            raise PolicyError("invalid-params", f"params has unknown field(s) {', '.join(extra)}")
        return named

    def missing_params(self, named: dict[str, Any]) -> dict[str, Any]:
        missing = [name for name in PARAM_NAMES if name not in named]
        if missing:
            raise PolicyError("invalid-params", f"params is missing {', '.join(missing)}")
        return named

    def param_value(self, name: str, value: Any) -> Any:
        if not is_integer(value):
            raise PolicyError(
                "invalid-params", f"{name} must be an integer, got {json_text(value)}"
            )
        return value

    def check_upper_bound(self, name: str, value: int) -> None:
        if value > INT31_MAX:
            raise PolicyError("invalid-params", f"{name} must be at most 2^31 - 1, got {value}")

    def check_budget(self, budget: int) -> None:
        if budget < 1:
            raise PolicyError("invalid-params", f"budget must be >= 1, got {budget}")

    def check_recent(self, recent: int, budget: int) -> None:
        if recent < 0 or recent >= budget:
            raise PolicyError(
                "invalid-params", f"recentWindow must be in [0, budget), got {recent}"
            )

    def check_obs(self, obs: int) -> None:
        if obs < 1:
            raise PolicyError("invalid-params", f"obsWindow must be >= 1, got {obs}")

    def check_kernel(self, kernel: int) -> None:
        if kernel < 1 or kernel % 2 == 0:
            raise PolicyError("invalid-params", f"poolKernel must be odd and >= 1, got {kernel}")

    def allocate(self, rows: int) -> None:
        """Called at construction (``rows`` 0) and before each admission with the number of
        kept entries it makes: the reference allocates as it goes, so nothing can fail."""

    # -- step --------------------------------------------------------------------------------

    def step(self, pos: Any, attn: Any) -> None:
        """Judge the position, then the attention; record; admit (SPEC.md §2.3)."""
        self.calls += 1
        position = None
        try:
            position = self.check_position(pos)
            weights = self.check_attention(attn)
        except PolicyError as error:
            self.on_refusal(pos, position, attn, error)
            raise
        self.record(weights)
        self.admit(position)

    def on_refusal(self, pos: Any, position: int | None, attn: Any, error: PolicyError) -> None:
        """What a refused step changes: nothing. ``position`` is the judged position (None
        when the position was refused)."""

    def check_position(self, pos: Any) -> int:
        position = self.read_position(pos)
        self.check_position_range(position)
        self.check_order(position)
        return position

    def read_position(self, pos: Any) -> int:
        if not is_integer(pos):
            raise PolicyError("invalid-position", f"pos must be an integer, got {json_text(pos)}")
        return int(pos)

    def check_position_range(self, position: int) -> None:
        if not 0 <= position <= INT31_MAX:
            raise PolicyError("invalid-position", f"pos must be in [0, 2^31 - 1], got {position}")

    def check_order(self, position: int) -> None:
        last = self.last_admitted
        if last is not None and position <= last:
            raise PolicyError(
                "invalid-position",
                f"pos {position} must be greater than the last admitted position {last}",
            )

    def insertion_index(self, stored: int) -> int:
        """Where an admitted position goes in ``kept``: at the end."""
        return len(self.kept)

    def store_position(self, position: int) -> int:
        return position

    def check_attention(self, attn: Any) -> np.ndarray | None:
        """The weights to record, as stored (a float64 array), or None for a null step."""
        if attn is None:
            attn = self.read_null()
            if attn is None:
                return None
        elif type(attn) is list and not attn:
            attn = self.read_empty()
            if attn is None:
                return None
        items = self.attention_items(attn)
        # A weight kept as its text is read as a JSON reader reads it; the text stays at hand
        # for a choice that reads the decimal itself (one rounding straight to float32).
        self.written = [item.text if isinstance(item, NumberText) else None for item in items]
        items = [item.decoded() if isinstance(item, NumberText) else item for item in items]
        self.read = self.weight_values(items)
        weights = self.narrow(self.read)
        weights = self.flush(weights)
        self.check_weights(weights)
        return self.store(weights)

    def read_null(self) -> Any:
        return None

    def on_null(self) -> None:
        """A null step writes nothing and leaves the cursor where it is."""

    def read_empty(self) -> Any:
        return []

    def attention_items(self, attn: Any) -> list[Any]:
        kept = len(self.kept)
        if not isinstance(attn, list):
            raise PolicyError(
                "invalid-attention", f"attn must be null or a list, got {json_text(attn)}"
            )
        if len(attn) != kept:
            raise PolicyError(
                "invalid-attention", f"attn has {len(attn)} weight(s) but {kept} are kept"
            )
        return attn

    def weight_values(self, items: list[Any]) -> list[Any]:
        types = list(map(type, items))  # exact types: a bool is not a number
        if types.count(float) + types.count(int) != len(items):
            index = next(i for i, t in enumerate(types) if t is not float and t is not int)
            raise PolicyError(
                "invalid-attention", f"attn[{index}] is not a number: {json_text(items[index])}"
            )
        return items

    def narrow(self, values: list[Any]) -> list[float]:
        return _narrow_all(values)

    def flush(self, weights: list[float]) -> list[float]:
        return weights

    def check_weights(self, weights: list[float]) -> None:
        if weights and not (min(weights) >= 0.0 and max(weights) <= FLOAT32_MAX):
            for index, weight in enumerate(weights):
                if not 0.0 <= weight <= FLOAT32_MAX:  # NaN fails too; -0.0 passes
                    reason = "is negative" if weight < 0 else "is beyond the float32 range"
                    raise PolicyError("invalid-attention", f"attn[{index}] {reason}")

    def store(self, weights: list[float]) -> np.ndarray:
        return np.array(weights, dtype=np.float64)

    # -- recording and admission ---------------------------------------------------------------

    def record(self, weights: np.ndarray | None) -> None:
        if weights is None:
            self.on_null()
            return
        weights = self.arriving(weights)
        self.observe(weights)
        self.write(weights)
        self.writes += 1

    def ring_size(self) -> int:
        """The ring's slots."""
        return self.params.obsWindow

    def write(self, weights: np.ndarray) -> None:
        """``hist[i][slot] = weights[i]``, then the cursor moves on, modulo the ring."""
        self.put(self.slot, weights)
        self.slot = (self.slot + 1) % self.ring_size()

    def put(self, column: int | np.ndarray, weights: np.ndarray) -> None:
        """Store ``weights`` in ``column`` (one column, or one per row) of the kept rows."""
        count = len(weights)
        if isinstance(column, np.ndarray):
            highest, lowest = (int(np.max(column)), int(np.min(column))) if count else (0, 0)
        else:
            highest = lowest = column
        if highest >= self.width:
            self._widen(highest + 1)
        if lowest < self._summed:
            self._summed = 0
        if isinstance(column, np.ndarray):
            self.hist[np.arange(count), column] = weights
        else:
            self.hist[:count, column] = weights

    def _widen(self, width: int) -> None:
        if width > self.hist.shape[1]:
            grown = np.zeros((self.hist.shape[0], max(width, 2 * self.hist.shape[1])))
            grown[:, : self.width] = self.hist[:, : self.width]
            self.hist = grown
        self.width = width

    def admit(self, position: int) -> None:
        """Append ``position`` with an all-zero history (SPEC.md §2.3)."""
        self.allocate(len(self.kept) + 1)
        stored = self.store_position(position)
        index = self.insertion_index(stored)
        count = len(self.kept)
        if count == self.hist.shape[0]:
            grown = np.zeros((2 * count, self.hist.shape[1]))
            grown[:count] = self.hist[:count]
            self.hist = grown
        width = self.width
        zeroed = type(self).fresh_row is Model.fresh_row
        row = 0.0 if zeroed else self.fresh_row(count)
        if index != count:
            self.hist[index + 1 : count + 1, :width] = self.hist[index:count, :width].copy()
        self.hist[index, :width] = row
        if self._summed:
            if not zeroed and np.any(self.hist[index, : self._summed]):
                self._summed = 0
            else:  # a new row's fold state is zero, like a fresh fold's
                self._fold = tuple(
                    np.concatenate((a[:index], np.zeros((1, *a.shape[1:]), a.dtype), a[index:]))
                    for a in self._fold
                )
        self.kept.insert(index, stored)
        for name, values in self.per_row.items():
            values.insert(index, self._fresh[name](self))
        self.last_admitted = position
        self.admissions += 1

    def fresh_row(self, free: int) -> np.ndarray | float:
        """The history a newly admitted entry starts with (``free`` is the first unused row)."""
        return 0.0

    # -- evict -------------------------------------------------------------------------------

    def evict(self) -> list[int]:
        count = self.excess()
        if count <= 0:
            return []
        sums, pooled = self.score()
        candidates = max(0, min(self.candidate_count(), len(self.kept)))
        victims = self.select(sums, pooled, candidates, count)
        evicted = self.order_victims(victims)
        self.remove(victims)
        return evicted

    def score(self) -> tuple[np.ndarray, np.ndarray]:
        """The sums and pooled scores an evict now ranks by (recorded when tracing)."""
        with np.errstate(all="ignore"):  # a float16 or float32 sum may overflow, as in a port
            sums = self.window_sums()
            pooled = self.pool(sums)
        if self.tracing:
            self.trace.append((sums.copy(), pooled.copy()))
        return sums, pooled

    def scores(self) -> Scores:
        with np.errstate(all="ignore"):
            sums = self.window_sums()
            pooled = self.pool(sums)
        return Scores(list(self.kept), [float(v) for v in sums], [float(v) for v in pooled])

    def excess(self) -> int:
        return max(0, len(self.kept) - self.params.budget)

    def window_sums(self) -> np.ndarray:
        ring = self.ring_view(self.hist[: len(self.kept), : self.width])
        sums = self.sum_ring(ring)
        return self.scale(self.finish_sums(sums))

    def _as_stored(self) -> bool:
        """True when :meth:`sum_ring` is handed the rings as stored (no view transforms them),
        so the slot-order partial sums of earlier evicts may be continued."""
        return type(self).ring_view is Model.ring_view

    def ring_view(self, ring: np.ndarray) -> np.ndarray:
        """What is summed: the rings as stored."""
        return ring

    def sum_ring(self, ring: np.ndarray) -> np.ndarray:
        """Each row's sum, column 0 upward, from ``+0.0``, in :attr:`ACCUMULATOR`."""
        dtype = self.ACCUMULATOR

        def add(state: tuple[np.ndarray, ...], column: np.ndarray, index: int) -> tuple:
            return (state[0] + column.astype(dtype, copy=False),)

        (total,) = self.fold(ring, ("slot-order", dtype), ((),), dtype, add)
        return total.astype(np.float64)

    def fold(
        self,
        ring: np.ndarray,
        key: Any,
        shapes: tuple[tuple[int, ...], ...],
        dtype: Any,
        step: Callable[[tuple[np.ndarray, ...], np.ndarray, int], tuple[np.ndarray, ...]],
        upto: int | None = None,
    ) -> tuple[np.ndarray, ...]:
        """``step(state, column values, column index)`` folded over the columns ``[0, upto)``
        of ``ring`` from zero arrays (one per shape, per row). The state of the previous evict
        is continued when it was the same fold (``key``), over rings as stored, and no column
        it covered has been rewritten since: the same operations in the same order."""
        upto = ring.shape[1] if upto is None else upto
        stored = self._as_stored()
        if stored and self._summed and self._fold_key == key and self._summed <= upto:
            state, start = tuple(a.copy() for a in self._fold), self._summed
        else:
            state = tuple(np.zeros((len(ring), *shape), dtype=dtype) for shape in shapes)
            start = 0
        for index in range(start, upto):
            state = step(state, ring[:, index], index)
        if stored:
            self._fold, self._summed, self._fold_key = tuple(a.copy() for a in state), upto, key
        return state

    def observe(self, weights: np.ndarray) -> None:
        """Called with each recorded step's weights before they are written."""

    def finish_sums(self, sums: np.ndarray) -> np.ndarray:
        return sums

    def scale(self, sums: np.ndarray) -> np.ndarray:
        return sums

    def arriving(self, weights: np.ndarray) -> np.ndarray:
        """What a recorded step writes: its weights."""
        return weights

    def pool(self, sums: np.ndarray) -> np.ndarray:
        members = max(0, min(self.pool_members(), len(sums)))
        if members == len(sums):
            return self.pool_values(sums)
        return np.concatenate((self.pool_values(sums[:members]), sums[members:]))

    def pool_values(self, values: np.ndarray) -> np.ndarray:
        if not len(values):
            return values.copy()
        low, high, wrap = self.pool_window(len(values))
        return self.pool_reduce(values, low, high, wrap)

    def pool_members(self) -> int:
        """How many of the lowest kept entries are pooled among themselves: all of them."""
        return len(self.kept)

    def pool_window(self, count: int) -> tuple[np.ndarray, np.ndarray, bool]:
        """Each entry's window ``[low, high)`` of kept indices (before clamping to the list),
        and whether indices past either end wrap round."""
        radius = (self.params.poolKernel - 1) // 2
        index = np.arange(count)
        return index - radius, index + radius + 1, False

    def pool_reduce(
        self, values: np.ndarray, low: np.ndarray, high: np.ndarray, wrap: bool
    ) -> np.ndarray:
        """The maximum over each window, clamped to the list (or wrapped round)."""
        return window_max(values, low, high, wrap)

    def candidate_count(self) -> int:
        return len(self.kept) - self.params.recentWindow

    def select(
        self, sums: np.ndarray, pooled: np.ndarray, candidates: int, count: int
    ) -> list[int]:
        """The kept indices of the victims, in rank order: smallest (pooled, index) first."""
        order = np.argsort(pooled[:candidates], kind="stable")
        return [int(index) for index in order[:count]]

    def order_victims(self, victims: Sequence[int]) -> list[int]:
        return sorted(self.kept[index] for index in victims)

    def remove(self, victims: Iterable[int]) -> None:
        """Drop the victims' entries; the survivors move down, their rings as they are."""
        gone = sorted(set(victims))
        count, width = len(self.kept), self.width
        if type(self).fresh_row is not Model.fresh_row:  # a choice that reuses freed rings
            self.freed = [*self.freed[-64:], *(self.hist[i, :width].copy() for i in gone)]
        mask = np.ones(count, dtype=bool)
        mask[gone] = False
        survivors = count - len(gone)
        self.hist[:survivors, :width] = self.hist[:count, :width][mask]
        if self._summed:
            self._fold = tuple(a[mask] for a in self._fold)
        kept = self.kept
        drop = set(gone)
        self.kept = [kept[index] for index in range(count) if index not in drop]
        for name, values in self.per_row.items():
            self.per_row[name] = [values[index] for index in range(count) if index not in drop]


# -- pooling helpers ---------------------------------------------------------------------------


def window_max(values: np.ndarray, low: np.ndarray, high: np.ndarray, wrap: bool) -> np.ndarray:
    """``max(values[low[i]:high[i]])`` for every ``i``, each window clamped to the list, or with
    ``wrap`` taken modulo its length (an empty window keeps the entry's own value). ``values``
    may have columns, pooled each on its own. A window of fixed offsets takes one
    ``np.maximum`` per offset; others a monotonic deque when both ends only move right."""
    count = len(values)
    if not count:
        return values.copy()
    index = np.arange(count)
    if wrap:  # windows of fixed offsets, taken round the ends of the list
        if int(np.max(high - low)) >= count:
            return np.broadcast_to(np.max(values, axis=0), values.shape).copy()
        pad = max(int(-np.min(low)), int(np.max(high)) - count, 0)
        if not pad:
            return window_max(values, low, high, False)
        extended = np.concatenate((values[count - pad :], values, values[:pad]))
        around = np.arange(len(extended))
        before, after = int(index[0] - low[0]), int(high[0] - index[0])
        return window_max(extended, around - before, around + after, False)[pad : pad + count]
    behind, ahead = index - low, high - index - 1
    if np.all(behind == behind[0]) and np.all(ahead == ahead[0]):
        back, forth = min(int(behind[0]), count - 1), min(int(ahead[0]), count - 1)
        if back >= 0 and forth >= 0 and back + forth <= 32:
            shifted = values.copy()
            for offset in range(1, forth + 1):
                np.maximum(shifted[:-offset], values[offset:], out=shifted[:-offset])
            for offset in range(1, back + 1):
                np.maximum(shifted[offset:], values[:-offset], out=shifted[offset:])
            return shifted
    if values.ndim > 1:
        return np.stack(
            [window_max(values[:, column], low, high, False) for column in range(values.shape[1])],
            axis=1,
        )
    low = np.clip(low, 0, count)
    high = np.clip(high, 0, count)
    data: list[Any] = values.tolist()
    out: list[Any] = list(data)
    if np.all(np.diff(low) >= 0) and np.all(np.diff(high) >= 0):
        window: deque[int] = deque()
        right = 0
        for i, (lo, hi) in enumerate(zip(low.tolist(), high.tolist(), strict=True)):
            while right < hi:
                while window and data[window[-1]] <= data[right]:
                    window.pop()
                window.append(right)
                right += 1
            while window and window[0] < lo:
                window.popleft()
            if window:
                out[i] = data[window[0]]
        return np.array(out)
    for i, (lo, hi) in enumerate(zip(low.tolist(), high.tolist(), strict=True)):
        if hi > lo:
            out[i] = max(data[lo:hi])
    return np.array(out)


def window_sum(
    values: np.ndarray, low: np.ndarray, high: np.ndarray, dtype: Any
) -> tuple[np.ndarray, np.ndarray]:
    """The sum over each window clamped to the list, added left to right in ``dtype``, and how
    many entries each window holds."""
    count = len(values)
    low = np.clip(low, 0, count)
    high = np.clip(high, 0, count)
    total = np.zeros(count, dtype=dtype)
    data = values.astype(dtype)
    widest = int(np.max(high - low)) if count else 0
    for offset in range(widest):
        index = low + offset
        inside = index < high
        total[inside] += data[index[inside]]
    return total, (high - low)


def positions_window(kept: Sequence[int], radius: int) -> tuple[np.ndarray, np.ndarray]:
    """Windows over kept entries whose position numbers are within ``radius`` of each one's."""
    low = [bisect.bisect_left(kept, position - radius) for position in kept]
    high = [bisect.bisect_right(kept, position + radius) for position in kept]
    return np.array(low, dtype=np.int64), np.array(high, dtype=np.int64)


__all__ = [
    "BY_STEP",
    "HOOK_STEP",
    "STEPS",
    "Model",
    "Refused",
    "Step",
    "positions_window",
    "window_max",
    "window_sum",
]
