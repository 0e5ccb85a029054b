"""Construction mistakes: parameters a port accepts that SPEC.md §2.1 refuses with invalid-params.

Each mutant validates a *substitute* of the offending value with the reference's own rules, then
constructs with the value it was given (or, where that value cannot work, the one a port would
fall back to), so it differs from the reference only in what it accepts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from conformance.mutants._base import Witness, mutant, params
from conformance.policy.reference import DEFAULT_PARAMS, INT31_MAX, PARAM_NAMES, Params, SnapKV


def lenient(
    raw: Any,
    names: tuple[str, ...],
    accepts: Callable[[Any, Mapping[str, Any]], bool],
    substitute: Callable[[Any, Mapping[str, Any]], int],
    keep: Callable[[Any, Mapping[str, Any]], int] | None = None,
) -> Params:
    """Parse ``raw`` like the reference, except that each parameter among ``names`` whose value
    ``accepts`` passes is validated as ``substitute(value, raw)`` and then stored as
    ``keep(value, raw)`` (by default the substitute itself)."""
    if not isinstance(raw, Mapping):
        return Params.parse(raw)
    lenient_names = [name for name in names if name in raw and accepts(raw[name], raw)]
    if not lenient_names:
        return Params.parse(raw)
    keep = keep or substitute
    checked = Params.parse({**raw, **{n: substitute(raw[n], raw) for n in lenient_names}})
    return replace(checked, **{n: keep(raw[n], raw) for n in lenient_names})


def is_int(value: Any) -> bool:
    return type(value) is int


def _same(value: Any, raw: Mapping[str, Any]) -> Any:
    return value


def _as_int(value: Any, raw: Mapping[str, Any]) -> int:
    return int(value)


@mutant(
    "even-kernel-accepted",
    rule="§2.1: poolKernel must be odd",
    origin="checking only `poolKernel >= 1`; an even kernel then pools over a lopsided "
    "window (r = (k - 1) / 2 rounds down)",
    keywords=("even kernel", "even poolkernel", "must be odd"),
    witness=Witness(params(4, 1, 2, 2)),
)
class EvenKernelAccepted(SnapKV):
    """Accepts an even poolKernel (pooling radius ``(k - 1) // 2``)."""

    def parse_params(self, raw: Any) -> Params:
        return lenient(
            raw,
            ("poolKernel",),
            lambda v, _: is_int(v) and v >= 2 and v % 2 == 0,
            lambda v, _: v - 1,
            _same,
        )


@mutant(
    "zero-obs-window-accepted",
    rule="§2.1: obsWindow >= 1",
    origin="an unsigned size checked only for overflow; the port then treats a zero window "
    "as one slot",
    keywords=("obsWindow 0", "zero obsWindow", "zero window", "obswindow of zero"),
    witness=Witness(params(4, 1, 0, 1)),
)
class ZeroObsWindowAccepted(SnapKV):
    """Accepts obsWindow 0 and behaves as obsWindow 1."""

    def parse_params(self, raw: Any) -> Params:
        return lenient(raw, ("obsWindow",), lambda v, _: is_int(v) and v == 0, lambda v, _: 1)


@mutant(
    "recent-window-equal-budget-accepted",
    rule="§2.1: recentWindow < budget",
    origin="`recentWindow <= budget` where `<` was meant; every kept position can then be "
    "protected",
    keywords=("recentWindow = budget", "recentWindow equal", "equals budget", "equal to budget"),
    witness=Witness(params(4, 4, 2, 1)),
)
class RecentWindowEqualBudgetAccepted(SnapKV):
    """Accepts recentWindow == budget."""

    def parse_params(self, raw: Any) -> Params:
        return lenient(
            raw,
            ("recentWindow",),
            lambda v, raw: is_int(v) and is_int(raw.get("budget")) and v == raw["budget"] >= 1,
            lambda v, _: v - 1,
            _same,
        )


@mutant(
    "param-above-int31-accepted",
    rule="§2.1: every parameter is at most 2^31 - 1",
    origin="64-bit or unsigned integers in the port, with no upper bound checked",
    keywords=("2^31", "64-bit", "above int31"),
    witness=Witness(params(2**31, 1, 2, 1)),
)
class ParamAboveInt31Accepted(SnapKV):
    """Accepts any parameter above ``2^31 - 1`` (up to ``2^63 - 1``)."""

    def parse_params(self, raw: Any) -> Params:
        return lenient(
            raw,
            PARAM_NAMES,
            lambda v, _: is_int(v) and INT31_MAX < v < 2**63,
            lambda v, _: INT31_MAX,
            _same,
        )


@mutant(
    "boolean-param-accepted",
    rule="§2.1: a boolean parameter is refused",
    origin="Python's `isinstance(True, int)`, or a JSON reader that coerces true to 1",
    keywords=("boolean",),
    witness=Witness({"budget": 4, "recentWindow": 1, "obsWindow": True, "poolKernel": 1}),
)
class BooleanParamAccepted(SnapKV):
    """Accepts ``true``/``false`` for any parameter, as 1/0."""

    def parse_params(self, raw: Any) -> Params:
        return lenient(raw, PARAM_NAMES, lambda v, _: type(v) is bool, _as_int)


@mutant(
    "fractional-param-truncated",
    rule="§2.1: a non-integral parameter (4.5) is refused",
    origin="reading every JSON number as a double and casting to int (`(int)4.5 == 4`)",
    keywords=("non-integral", "fraction", "4.5"),
    witness=Witness({"budget": 4.5, "recentWindow": 1, "obsWindow": 2, "poolKernel": 1}),
)
class FractionalParamTruncated(SnapKV):
    """Accepts a fractional value for any parameter, truncated towards zero."""

    def parse_params(self, raw: Any) -> Params:
        return lenient(raw, PARAM_NAMES, lambda v, _: _finite_float(v), _as_int)


def _finite_float(value: Any) -> bool:
    return type(value) is float and math.isfinite(value)


@mutant(
    "unknown-params-ignored",
    rule="§2.1: construction takes exactly the four names; an extra name is refused",
    origin="a JSON binding that skips unknown fields by default (serde without "
    "`deny_unknown_fields`, most struct decoders)",
    keywords=("unknown name", "unknown parameter", "extra name", "silently ignored"),
    witness=Witness({**params(4, 1, 2, 1), "sinkTokens": 4}),
)
class UnknownParamsIgnored(SnapKV):
    """Drops parameters it does not know before validating the rest."""

    def parse_params(self, raw: Any) -> Params:
        if isinstance(raw, Mapping):
            raw = {name: value for name, value in raw.items() if name in PARAM_NAMES}
        return Params.parse(raw)


@mutant(
    "missing-param-defaulted",
    rule="§2.1: construction takes exactly the four names; a missing name is refused",
    origin="filling a missing field from the CLI defaults (`#[serde(default)]`, "
    "`params.get('poolKernel', 7)`)",
    keywords=("missing name", "filled from", "default"),
    witness=Witness({"budget": 4, "recentWindow": 1, "obsWindow": 2}),
)
class MissingParamDefaulted(SnapKV):
    """Fills missing parameters from the defaults (budget 512, ..., poolKernel 7)."""

    def parse_params(self, raw: Any) -> Params:
        if isinstance(raw, Mapping):
            raw = {**DEFAULT_PARAMS, **raw}
        return Params.parse(raw)
