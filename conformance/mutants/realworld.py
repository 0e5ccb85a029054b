"""Real-world variants: what shipping KV-cache eviction code does, as named points of the
catalogue's space.

Each mutant here is several catalogued choices at once, built from their classes (the method
resolution order chains their steps), with the arithmetic the real code uses, so that a port
transcribed from it is reproduced call for call and the triage can name the parts.
"""

from __future__ import annotations

from typing import Any

from conformance.mutants._base import EVICT, Witness, mutant, params, step, steps
from conformance.mutants.paging import PagedEviction
from conformance.mutants.params import BooleanParamAccepted
from conformance.mutants.pooling import (
    AveragePooling,
    ForwardOnlyPooling,
    PoolRowsOnArrival,
    RecentExcludedFromPooling,
)
from conformance.mutants.selection import ArgpartitionSelection, TopkKeepers, VictimsInRankOrder
from conformance.mutants.sorting import WindowPaddedKeepers
from conformance.mutants.steps import (
    BooleanPositionAccepted,
    BooleanWeightAccepted,
    FlushSubnormals,
)
from conformance.mutants.summation import (
    CumulativeSums,
    FastMathVectorisedSums,
    Float32Accumulation,
    MeanOverWindow,
    NormByAge,
    PairwiseSummation,
)

# -- accumulating scores (OpenVINO GenAI) ------------------------------------------------------


@mutant(
    "openvino-sum",
    rule="§2.4: sum the last obsWindow steps of each ring, then max-pool the sums over the "
    "centred window [i - r, i + r]",
    origin="OpenVINO GenAI's decode-time cache eviction, SUM aggregation "
    "(src/cpp/src/continuous_batching/cache/cache_eviction.cpp): scores accumulate for as long "
    "as a position lives, and each step's row is max-pooled (`_max_pool` over idx .. "
    "idx + window - 1) before it is added",
    keywords=("openvino-sum",),
    witness=Witness(
        params(3, 1, 1, 3),
        (*steps(0, 3), step(3, [1.0, 0.0, 0.5]), EVICT),
    ),
)
class OpenVinoSum(CumulativeSums, PoolRowsOnArrival, ForwardOnlyPooling):
    """Cumulative scores since admission (never forgotten); each step's row is max-pooled
    over ``[i, i + poolKernel - 1]`` (forward only) before it is added; no pooling after
    summing."""


@mutant(
    "openvino-norm-sum",
    rule="§2.4: scores are window sums, not cumulative sums divided by the age of the position",
    origin="OpenVINO GenAI's NORM_SUM aggregation (cache_eviction.cpp): the SUM score of each "
    "position divided by the number of steps it has lived",
    keywords=("norm_sum", "norm-sum"),
    witness=Witness(
        params(2, 1, 4, 1),
        (step(0), step(1, [1.0]), step(2, [0.25, 0.75]), EVICT),
    ),
)
class OpenVinoNormSum(NormByAge, OpenVinoSum):
    """OpenVINO's SUM score divided by the number of observed steps since admission."""


@mutant(
    "openvino-paged",
    rule="§2.4: window sums max-pooled over [i - r, i + r], exactly max(0, len(kept) - budget) "
    "victims, the lowest (pooled, position) candidates",
    origin="OpenVINO GenAI's decode-time cache eviction as a whole (cache_eviction.cpp): SUM "
    "scores accumulated from each step's forward-max-pooled row, and whole blocks of 16 tokens "
    "evicted once a block is over budget, the blocks with the lowest sums first",
    keywords=("openvino-paged",),
    witness=Witness(params(1, 0, 1, 1), (*steps(0, 2), EVICT)),
)
class OpenVinoPaged(PagedEviction, OpenVinoSum):
    """OpenVINO's SUM scores (cumulative, each row forward-max-pooled on arrival), evicted in
    whole blocks of 16."""


@mutant(
    "pool-forward-on-arrival",
    rule="§2.4: sum each ring first, then max-pool the sums over the centred window [i - r, i + r]",
    origin="OpenVINO GenAI's per-step pooling (`_max_pool` over idx .. idx + window - 1 as each "
    "step's scores arrive) kept, with SnapKV's window sums: each recorded row is max-pooled "
    "ahead only, and the ring of pooled rows is summed, with no pooling at eviction",
    keywords=("pooled ahead as it arrives",),
    witness=Witness(params(3, 1, 1, 3), (*steps(0, 3), step(3, [1.0, 0.25, 0.5]), EVICT)),
)
class PoolForwardOnArrival(PoolRowsOnArrival, ForwardOnlyPooling):
    """Each recorded row max-pooled over ``[i, i + poolKernel - 1]`` as it arrives; the window
    sums of the pooled rows are the scores."""


# -- the official SnapKV code and kvpress ------------------------------------------------------


@mutant(
    "official-snapkv-maxpool",
    rule="§2.4: float64 sums in slot order, max-pooled with the recent entries, the k lowest "
    "(pooled, position) evicted",
    origin="the official SnapKV repository (FasterDecoding/SnapKV, snapkv_utils.py) adapted to "
    "decode time in float32: `attn_weights[..., -window:, :-window].sum(dim=-2)` (numpy's "
    "pairwise float32 sum), `max_pool1d(kernel, padding=kernel // 2)` over the keys outside "
    "the window, `topk` of the keepers",
    keywords=("official snapkv",),
)
class OfficialSnapKVMaxpool(
    Float32Accumulation, PairwiseSummation, RecentExcludedFromPooling, TopkKeepers
):
    """Float32 pairwise window sums, max pooling among the candidates only (the recent window
    left out), and the keepers chosen by topk."""


@mutant(
    "official-snapkv-avgpool",
    rule="§2.4: float64 sums in slot order, max-pooled with the recent entries, the k lowest "
    "(pooled, position) evicted",
    origin="the official SnapKV repository with `pooling='avgpool'` (its default), adapted to "
    "decode time in float32: the window sums average-pooled with zero padding",
    keywords=("official snapkv", "avg_pool1d"),
)
class OfficialSnapKVAvgpool(AveragePooling, OfficialSnapKVMaxpool):
    """Float32 pairwise window sums, average pooling (zero padding, divided by the kernel)
    among the candidates only, and the keepers chosen by topk."""


@mutant(
    "kvpress-snapkv",
    rule="§2.4: max pooling over the window (recent entries included) of the window sums",
    origin="NVIDIA kvpress's SnapKVPress adapted to decode time in float32: the window's "
    "attention averaged (`mean(dim=-2)`), scores smoothed by `F.avg_pool1d` with zero padding "
    "over the candidates (the protected window left out of the pooling), the window's scores "
    "padded with the candidates' maximum and the keepers chosen by topk over every entry",
    keywords=("kvpress",),
    witness=Witness(params(3, 0, 1, 3), (*steps(0, 3), step(3, [0.25, 0.25, 0.25]), EVICT)),
)
class KvpressSnapKV(
    MeanOverWindow,
    AveragePooling,
    Float32Accumulation,
    PairwiseSummation,
    RecentExcludedFromPooling,
    WindowPaddedKeepers,
):
    """The float32 mean over the window, average pooling with zero padding among the
    candidates only, the window padded with the candidates' maximum, and the keepers chosen by
    topk over every entry."""


# -- the kit's own C template, built for speed ----------------------------------------------------


@mutant(
    "c-template-fast-math",
    rule="§2.4, §2.3: sums in slot order; every float32 weight kept exactly",
    origin="the kit's C template (adapters/c) built with `gcc -O3 -ffast-math -march=native` "
    "(or `-Ofast`): the re-summing loop vectorised, subnormals flushed to zero",
    keywords=("fast-math",),
)
class CTemplateFastMath(FastMathVectorisedSums, FlushSubnormals):
    """gcc's vectorised sums once the ring has wrapped, and subnormal weights flushed to zero
    (FTZ/DAZ)."""


# -- vectorised idioms -------------------------------------------------------------------------


@mutant(
    "topk-unordered",
    rule="§2.4: equal pooled scores evict the lower position, and victims come back ascending",
    origin="`torch.topk(-pooled, k).indices` returned as they come: ties in no fixed order, and "
    "the victims in rank order rather than ascending",
    keywords=("topk", "rank order", "tie"),
    witness=Witness(params(1, 0, 1, 1), (*steps(0, 2), step(2, [0.5, 0.25]), EVICT)),
)
class TopkUnordered(ArgpartitionSelection, VictimsInRankOrder):
    """argpartition-selection and victims-in-rank-order at once: what `topk` gives."""


# -- JSON numbers -------------------------------------------------------------------------------


@mutant(
    "bool-as-integer",
    rule="§1: true and false are never numbers (refused in params, seed, pos and attn)",
    origin="Python's `isinstance(x, int)` (True is an int) used for every integer and number "
    "check of a port",
    keywords=("boolean", "isinstance"),
    witness=Witness(params(1, 0, 1, 1), (step(False),)),
)
class BoolAsInteger(BooleanPositionAccepted, BooleanParamAccepted, BooleanWeightAccepted):
    """Booleans accepted as 0/1 wherever an integer or a number is read: parameters, the
    seed, positions and weights."""

    @classmethod
    def check_seed(cls, seed: Any) -> Any:
        return super().check_seed(int(seed) if type(seed) is bool else seed)
