"""Construction mistakes: what ``new`` accepts, how it reads its values, what it replaces.

SPEC.md §2.1: ``params`` is an object of exactly ``budget``, ``recentWindow``, ``obsWindow`` and
``poolKernel``, each a JSON integer with ``1 <= budget``, ``0 <= recentWindow < budget``,
``1 <= obsWindow``, ``poolKernel`` odd and ``>= 1``, all at most ``2^31 - 1``; the seed is an
integer; anything else is ``invalid-params``. SPEC.md §3.2: a ``new`` replaces the policy, and a
refused one leaves it in place. Each choice here overrides the hook of one of those rules.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from conformance.mutants._base import EVICT, Witness, mutant, params, steps
from conformance.mutants.model import Model, Refused
from conformance.policy.reference import DEFAULT_PARAMS, INT31_MAX, PARAM_NAMES, Params, PolicyError

# -- names ---------------------------------------------------------------------------------------


@mutant(
    "case-insensitive-names",
    rule="§2.1: construction takes exactly the four names, spelt exactly so",
    origin="Go's encoding/json decoding into a struct (it matches names case-insensitively), "
    "Java/Jackson with ACCEPT_CASE_INSENSITIVE_PROPERTIES, or a lower-cased dictionary lookup",
    keywords=("case-insensitive", "names in other case", "other case"),
)
class CaseInsensitiveNames(Model):
    """Matches parameter names case-insensitively (`Budget`, `RECENTWINDOW` accepted)."""

    def param_names(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        canonical = {name.lower(): name for name in PARAM_NAMES}
        named: dict[str, Any] = {}
        for key, value in raw.items():
            named[canonical.get(str(key).lower(), key)] = value
        return named


@mutant(
    "snake-case-names-accepted",
    rule="§2.1: construction takes exactly the four names (`pool_kernel` is an extra name)",
    origin="a port that accepts its own language's spelling as an alias (serde's "
    '`#[serde(alias = "pool_kernel")]`, a Python port reading `recent_window`)',
    keywords=("own language's spelling", "snake_case", "snake-case"),
)
class SnakeCaseNamesAccepted(Model):
    """Accepts `recent_window`, `obs_window` and `pool_kernel` for the camelCase names."""

    def param_names(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        aliases = {"recent_window": "recentWindow", "obs_window": "obsWindow"}
        aliases["pool_kernel"] = "poolKernel"
        return {aliases.get(key, key): value for key, value in raw.items()}


@mutant(
    "unknown-params-ignored",
    rule="§2.1: construction takes exactly the four names; an extra name is refused",
    origin="a JSON binding that skips unknown fields by default (serde without "
    "`deny_unknown_fields`, most struct decoders)",
    keywords=("unknown name", "unknown parameter", "extra name", "silently ignored"),
    witness=Witness({**params(4, 1, 2, 1), "sinkTokens": 4}),
)
class UnknownParamsIgnored(Model):
    """Drops parameters it does not know before validating the rest."""

    def extra_params(self, named: dict[str, Any]) -> dict[str, Any]:
        return {name: value for name, value in named.items() if name in PARAM_NAMES}


@mutant(
    "missing-param-defaulted",
    rule="§2.1: construction takes exactly the four names; a missing name is refused",
    origin="filling a missing field from the CLI defaults (`#[serde(default)]`, "
    "`params.get('poolKernel', 7)`)",
    keywords=("missing name", "filled from", "falls back to defaults", "default"),
    witness=Witness({"budget": 4, "recentWindow": 1, "obsWindow": 2}),
)
class MissingParamDefaulted(Model):
    """Fills missing parameters from the defaults (budget 512, ..., poolKernel 7)."""

    def missing_params(self, named: dict[str, Any]) -> dict[str, Any]:
        return {**DEFAULT_PARAMS, **named}


@mutant(
    "positional-params",
    rule="§2.1: params is an object; anything else is refused",
    origin="a reader that also takes `[budget, recentWindow, obsWindow, poolKernel]`, as a "
    "tuple-struct or array binding does",
    keywords=("positional parameters",),
)
class PositionalParams(Model):
    """Accepts a list of four values as the four parameters in order."""

    def params_object(self, raw: Any) -> Mapping[str, Any]:
        if isinstance(raw, list) and len(raw) == len(PARAM_NAMES):
            return dict(zip(PARAM_NAMES, raw, strict=True))
        return super().params_object(raw)


# -- values --------------------------------------------------------------------------------------


def _number(value: Any) -> bool:
    return type(value) in (int, float)


@mutant(
    "boolean-param-accepted",
    rule="§2.1: a boolean parameter is refused",
    origin="Python's `isinstance(True, int)`, or a JSON reader that coerces true to 1",
    keywords=("boolean",),
    witness=Witness({"budget": 4, "recentWindow": 1, "obsWindow": True, "poolKernel": 1}),
)
class BooleanParamAccepted(Model):
    """Accepts `true`/`false` for any parameter, as 1/0."""

    def param_value(self, name: str, value: Any) -> Any:
        return super().param_value(name, int(value) if type(value) is bool else value)


@mutant(
    "fractional-param-truncated",
    rule="§2.1: a non-integral parameter (4.5) is refused",
    origin="reading every JSON number as a double and casting to int (`(int)4.5 == 4`)",
    keywords=("non-integral", "fraction", "4.5"),
    witness=Witness({"budget": 4.5, "recentWindow": 1, "obsWindow": 2, "poolKernel": 1}),
)
class FractionalParamTruncated(Model):
    """Accepts a fractional value for any parameter, truncated towards zero."""

    def param_value(self, name: str, value: Any) -> Any:
        if type(value) is float and math.isfinite(value):
            value = int(value)
        return super().param_value(name, value)


@mutant(
    "string-params-coerced",
    rule="§2.1: a string parameter is refused",
    origin='a loose binding that converts `"4"` to 4 (JavaScript\'s `Number(x)`, '
    "`int(params[name])` in Python)",
    keywords=("strings coerced",),
)
class StringParamsCoerced(Model):
    """Reads a string holding an integer (`"4"`) as that integer."""

    def param_value(self, name: str, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value.strip())
        return super().param_value(name, value)


@mutant(
    "null-param-defaulted",
    rule="§2.1: a null parameter is refused",
    origin="treating `null` as 'use the default', as `params.get(name) or default` and "
    "nullable fields with defaults do",
    keywords=("use the default",),
)
class NullParamDefaulted(Model):
    """Reads a null parameter as its default (budget 512, recentWindow 16, ...)."""

    def param_value(self, name: str, value: Any) -> Any:
        return super().param_value(name, DEFAULT_PARAMS[name] if value is None else value)


@mutant(
    "null-param-as-zero",
    rule="§2.1: a null parameter is refused",
    origin="a reader that gives a missing or null number its zero value (Go's `*int` left nil "
    "and dereferenced as 0, `value or 0`)",
    keywords=("null read as 0",),
)
class NullParamAsZero(Model):
    """Reads a null parameter as 0 (which only recentWindow accepts)."""

    def param_value(self, name: str, value: Any) -> Any:
        return super().param_value(name, 0 if value is None else value)


@mutant(
    "unsigned-params",
    rule="§2.1: every parameter is an integer in [0, 2^31 - 1]",
    origin="parameters read into 64-bit unsigned integers with no upper bound checked: -4 "
    "becomes 2^64 - 4, a huge budget",
    keywords=("unsigned",),
)
class UnsignedParams(Model):
    """Reads every parameter as a 64-bit unsigned integer (a negative one wraps to a huge
    value) and checks no upper bound."""

    def param_value(self, name: str, value: Any) -> Any:
        value = super().param_value(name, value)
        return value % 2**64

    def check_upper_bound(self, name: str, value: int) -> None:
        if value >= 2**64:
            raise PolicyError("invalid-params", f"{name} does not fit in 64 bits")


# -- bounds --------------------------------------------------------------------------------------


@mutant(
    "param-above-int31-accepted",
    rule="§2.1: every parameter is at most 2^31 - 1",
    origin="64-bit or unsigned integers in the port, with no upper bound checked",
    keywords=("2^31", "64-bit", "above int31", "missing upper bound"),
    witness=Witness(params(2**31, 1, 2, 1)),
)
class ParamAboveInt31Accepted(Model):
    """Accepts any parameter up to ``2^63 - 1`` (a signed 64-bit port with no upper bound)."""

    def check_upper_bound(self, name: str, value: int) -> None:
        if value >= 2**63:
            raise PolicyError("invalid-params", f"{name} does not fit in a signed 64-bit integer")


@mutant(
    "budget-zero-accepted",
    rule="§2.1: budget >= 1, and 0 <= recentWindow < budget",
    origin="budget checked only through `0 <= recentWindow <= budget` (an unsigned budget, a "
    "`<=` for `<`): budget 0 with recentWindow 0 passes",
    keywords=("allows 0",),
)
class BudgetZeroAccepted(Model):
    """Checks the budget only through ``0 <= recentWindow <= budget``, so budget 0 (with
    recentWindow 0) is accepted, and then evicts everything on every call."""

    def check_budget(self, budget: int) -> None:
        if budget < 0:
            super().check_budget(budget)

    def check_recent(self, recent: int, budget: int) -> None:
        if recent != budget:
            super().check_recent(recent, budget)


@mutant(
    "budget-one-refused",
    rule="§2.1: budget >= 1 (1 is allowed)",
    origin="an off-by-one lower bound (`budget > 1`, or `>= 2` because 'a cache of one is "
    "pointless')",
    keywords=("refuse budget 1",),
)
class BudgetOneRefused(Model):
    """Refuses budget 1."""

    def check_budget(self, budget: int) -> None:
        if budget < 2:
            raise PolicyError("invalid-params", f"budget must be >= 2, got {budget}")


@mutant(
    "recent-window-equal-budget-accepted",
    rule="§2.1: recentWindow < budget",
    origin="`recentWindow <= budget` where `<` was meant; every kept position can then be "
    "protected",
    keywords=("recentWindow = budget", "recentWindow equal", "equals budget", "equal to budget"),
    witness=Witness(params(4, 4, 2, 1)),
)
class RecentWindowEqualBudgetAccepted(Model):
    """Accepts recentWindow == budget."""

    def check_recent(self, recent: int, budget: int) -> None:
        if recent != budget:
            super().check_recent(recent, budget)


@mutant(
    "recent-window-unchecked",
    rule="§2.1: recentWindow < budget",
    origin="no check of recentWindow against budget at all, only its sign",
    keywords=("no check of recentWindow",),
)
class RecentWindowUnchecked(Model):
    """Accepts any recentWindow >= 0, whatever the budget."""

    def check_recent(self, recent: int, budget: int) -> None:
        if recent < 0:
            super().check_recent(recent, budget)


@mutant(
    "negative-recent-window-accepted",
    rule="§2.1: recentWindow >= 0",
    origin="a recent window checked only against the budget, so -1 passes, and then "
    "`kept[:-recentWindow]` slices with a negative count",
    keywords=("checked only against the budget",),
)
class NegativeRecentWindowAccepted(Model):
    """Accepts a negative recentWindow (only `recentWindow < budget` is checked)."""

    def check_recent(self, recent: int, budget: int) -> None:
        if recent >= budget:
            super().check_recent(recent, budget)


@mutant(
    "zero-obs-window-accepted",
    rule="§2.1: obsWindow >= 1",
    origin="an unsigned size checked only for overflow; the port then treats a zero window "
    "as one slot",
    keywords=("obsWindow 0", "zero obsWindow", "zero window", "obswindow of zero"),
    witness=Witness(params(4, 1, 0, 1)),
)
class ZeroObsWindowAccepted(Model):
    """Accepts obsWindow 0 and behaves as obsWindow 1."""

    def check_obs(self, obs: int) -> None:
        if obs != 0:
            super().check_obs(obs)

    def ring_size(self) -> int:  # the step's other hook: a zero window behaves as one slot
        return max(1, self.params.obsWindow)


@mutant(
    "negative-obs-window-accepted",
    rule="§2.1: obsWindow >= 1",
    origin="`obsWindow != 0` as the only check, the window later used as an array size",
    keywords=("negative array size",),
)
class NegativeObsWindowAccepted(Model):
    """Accepts a negative obsWindow; the first write then fails (a negative array size)."""

    def check_obs(self, obs: int) -> None:
        if obs == 0:
            super().check_obs(obs)

    def ring_size(self) -> int:
        if self.params.obsWindow < 1:
            raise ValueError("negative dimensions are not allowed")
        return self.params.obsWindow


@mutant(
    "obs-window-one-refused",
    rule="§2.1: obsWindow >= 1 (1 is allowed)",
    origin="an off-by-one lower bound on the window (`obsWindow > 1`)",
    keywords=("obsWindow 1",),
)
class ObsWindowOneRefused(Model):
    """Refuses obsWindow 1."""

    def check_obs(self, obs: int) -> None:
        if obs < 2:
            raise PolicyError("invalid-params", f"obsWindow must be >= 2, got {obs}")


@mutant(
    "even-kernel-accepted",
    rule="§2.1: poolKernel must be odd",
    origin="checking only `poolKernel >= 1`; an even kernel then pools over a lopsided "
    "window (r = (k - 1) / 2 rounds down)",
    keywords=("even kernel", "even poolkernel", "must be odd"),
    witness=Witness(params(4, 1, 2, 2)),
)
class EvenKernelAccepted(Model):
    """Accepts an even poolKernel (pooling radius ``(k - 1) // 2``)."""

    def check_kernel(self, kernel: int) -> None:
        if kernel < 1:
            super().check_kernel(kernel)


@mutant(
    "kernel-oddness-only",
    rule="§2.1: poolKernel is odd and >= 1",
    origin="an oddness test alone, `poolKernel % 2 == 1`: in Python -1 % 2 is 1, so -1 passes",
    keywords=("oddness test alone",),
)
class KernelOddnessOnly(Model):
    """Checks only that poolKernel is odd, Python's way (-1 passes); a negative kernel pools
    nothing."""

    def check_kernel(self, kernel: int) -> None:
        if kernel % 2 != 1:
            raise PolicyError("invalid-params", f"poolKernel must be odd, got {kernel}")


@mutant(
    "kernel-unchecked",
    rule="§2.1: poolKernel is odd and >= 1",
    origin="no check of poolKernel at all beyond its sign; 0 then pools nothing",
    keywords=("kernel check", "or none"),
)
class KernelUnchecked(Model):
    """Accepts any poolKernel >= 0, even ones and 0 included."""

    def check_kernel(self, kernel: int) -> None:
        if kernel < 0:
            super().check_kernel(kernel)


# -- the seed ------------------------------------------------------------------------------------


@mutant(
    "seed-unvalidated",
    rule="§2.1: a seed that is not an integer is refused",
    origin='an unused seed never looked at, so `"7"` or 4.5 passes',
    keywords=("never validated",),
)
class SeedUnvalidated(Model):
    """Accepts any seed, whatever its JSON type."""

    @classmethod
    def check_seed(cls, seed: Any) -> Any:
        return seed


@mutant(
    "seed-truncated",
    rule="§2.1: a seed that is not an integer is refused",
    origin="the seed read as a double and cast to an integer (`(int)4.5`)",
    keywords=("truncated by a cast",),
)
class SeedTruncated(Model):
    """Accepts a fractional seed, truncated."""

    @classmethod
    def check_seed(cls, seed: Any) -> Any:
        if type(seed) is float and math.isfinite(seed):
            return int(seed)
        return super().check_seed(seed)


@mutant(
    "seed-too-narrow",
    rule="§2.1: a port accepts every seed in [0, 2^31 - 1]",
    origin="the seed read into a 16-bit integer (a narrower type than the rule allows), so a "
    "large seed is refused",
    keywords=("narrower",),
)
class SeedTooNarrow(Model):
    """Refuses seeds above 2^15 - 1."""

    @classmethod
    def check_seed(cls, seed: Any) -> Any:
        seed = super().check_seed(seed)
        if not -(2**15) <= seed < 2**15:
            raise PolicyError("invalid-params", f"seed {seed} does not fit in 16 bits")
        return seed


# -- memory --------------------------------------------------------------------------------------


@mutant(
    "memory-sized-by-params",
    rule="§2.1: memory is sized by what the run uses, not by the parameters",
    origin="allocating budget x obsWindow floats at construction, which fails for the "
    "largest legal parameters",
    keywords=("memory sized by the parameters",),
)
class MemorySizedByParams(Model):
    """Allocates budget x obsWindow float32 values up front (MemoryError past 2^30 bytes)."""

    def allocate(self, rows: int) -> None:
        if rows == 0 and 4 * self.params.budget * self.params.obsWindow > 2**30:
            raise MemoryError("Unable to allocate budget x obsWindow float32 values")


@mutant(
    "budget-plus-one-overflow",
    rule="§2.1: parameters up to 2^31 - 1 are accepted and work",
    origin="`budget + 1` computed in a 32-bit int for the storage capacity: at 2^31 - 1 it "
    "wraps negative and the allocation fails",
    keywords=("overflow in budget + 1",),
)
class BudgetPlusOneOverflow(Model):
    """Sizes storage as `budget + 1` in 32-bit arithmetic: a budget of 2^31 - 1 wraps to a
    negative capacity and construction fails."""

    def allocate(self, rows: int) -> None:
        if rows == 0 and self.params.budget + 1 > INT31_MAX:
            raise ValueError("negative dimensions are not allowed")


@mutant(
    "budget-plus-one-storage",
    rule="§2.4: a port must not assume len(kept) <= budget + 1; several steps may pass "
    "between evictions",
    origin="a numpy port preallocating `np.zeros((budget + 1, obs))` for the kept rows, as if "
    "every step were followed by an evict: the next admission raises IndexError",
    keywords=("budget + 1", "budget+1", "preallocat", "several steps between"),
    witness=Witness(params(1, 0, 1, 1), (*steps(0, 3), EVICT)),
)
class BudgetPlusOneStorage(Model):
    """Storage for ``budget + 1`` kept rows allocated at construction: admitting one more row
    raises IndexError, and a budget whose rows cannot be allocated (over 2^28 of them) raises
    MemoryError (both crashes)."""

    def allocate(self, rows: int) -> None:
        capacity = self.params.budget + 1
        if rows == 0 and capacity > 2**28:
            raise MemoryError(f"Unable to allocate an array with {capacity} rows")
        if rows > capacity:
            raise IndexError(f"index {capacity} is out of bounds for axis 0 with size {capacity}")


@mutant(
    "ring-allocated-up-front",
    rule="§2.1: ring columns are allocated as they are first written",
    origin="each admitted entry given a ring of obsWindow columns at once, which fails for a "
    "window of 2^31 - 1",
    keywords=("columns per entry up front", "ring allocated at obswindow"),
)
class RingAllocatedUpFront(Model):
    """Allocates obsWindow float32 columns for each admitted entry (MemoryError past 2^30
    bytes)."""

    def allocate(self, rows: int) -> None:
        if rows and 4 * self.params.obsWindow > 2**30:
            raise MemoryError(f"Unable to allocate a ring of {self.params.obsWindow} floats")


# -- what new replaces ---------------------------------------------------------------------------


@mutant(
    "new-keeps-last-position",
    rule="§3.2: new creates a policy and replaces any earlier one",
    origin="`new` resetting the kept list and the rings but not the highest admitted position",
    keywords=("keeps the last admitted position",),
)
class NewKeepsLastPosition(Model):
    """A new policy inherits the last admitted position of the one it replaces."""

    @classmethod
    def construct(cls, params: Any, seed: Any, previous: Model | None = None) -> Model:
        made = super().construct(params, seed, previous)
        if previous is not None:
            made.last_admitted = previous.last_admitted
        return made


@mutant(
    "new-keeps-kept",
    rule="§3.2: new creates a policy and replaces any earlier one",
    origin="`new` updating the parameters of the live object instead of building a fresh one",
    keywords=("the kept list",),
)
class NewKeepsKept(Model):
    """A new policy inherits the kept positions (and their rings) of the one it replaces."""

    @classmethod
    def construct(cls, params: Any, seed: Any, previous: Model | None = None) -> Model:
        made = super().construct(params, seed, previous)
        if previous is not None:
            previous.params = made.params
            previous.seed = made.seed
            return previous
        return made


@mutant(
    "new-keeps-cursor",
    rule="§3.2: new creates a policy and replaces any earlier one",
    origin="the ring cursor kept in a global or a static outside the policy object",
    keywords=("the ring cursor",),
)
class NewKeepsCursor(Model):
    """A new policy starts with the ring cursor of the one it replaces."""

    @classmethod
    def construct(cls, params: Any, seed: Any, previous: Model | None = None) -> Model:
        made = super().construct(params, seed, previous)
        if previous is not None:
            made.slot = previous.slot % made.ring_size()
        return made


@mutant(
    "refused-new-clears-policy",
    rule="§3.2: a refused new leaves the earlier policy in place",
    origin="dropping the current policy before the parameters are validated",
    keywords=("clears the current policy",),
)
class RefusedNewClearsPolicy(Model):
    """A refused new leaves no policy at all (later steps answer no-policy)."""

    @classmethod
    def construct(cls, params: Any, seed: Any, previous: Model | None = None) -> Model:
        try:
            return super().construct(params, seed, previous)
        except PolicyError as error:
            raise Refused(error.kind, error.message, None) from None


@mutant(
    "refused-new-assigns-budget",
    rule="§3.2: a refused new leaves the earlier policy in place",
    origin="assigning each parameter to the live policy as it is validated, so the ones "
    "before the bad one are already changed",
    keywords=("assigns some fields",),
)
class RefusedNewAssignsBudget(Model):
    """A refused new has already set the live policy's budget (the first parameter) when the
    parameter it refuses comes later."""

    @classmethod
    def construct(cls, params: Any, seed: Any, previous: Model | None = None) -> Model:
        try:
            return super().construct(params, seed, previous)
        except PolicyError:
            budget = params.get("budget") if isinstance(params, Mapping) else None
            if previous is not None and type(budget) is int and 1 <= budget <= INT31_MAX:
                old = previous.params
                recent = min(old.recentWindow, budget - 1)
                previous.params = Params(budget, recent, old.obsWindow, old.poolKernel)
            raise
