"""Realistic ports, written as porters write them, for the triage to name.

``python tests/heldout/real_ports.py NAME`` serves the port ``NAME`` over adapter protocol v1.
:data:`PORTS` maps each name to the catalogued choices the first triage line must name for it:
every real difference of the port, in the catalogue's words.

These are transcriptions, not catalogue entries: a numpy port of SPEC.md §2 (history in a
float32 array of obsWindow columns, as a numpy port holds it), the scoring of NVIDIA kvpress's
SnapKVPress and of the official SnapKV repository adapted to decode time, half-precision
histories, protected-window slips, and a port with a Java port's JSON habits. Nothing here
imports the kit: the ports are the triage's test subjects, written without looking at how the
catalogue computes anything (tests/heldout/ports.py serves them).
"""

from __future__ import annotations

import bisect
import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ports import INT31_MAX, NAMES, Refused, is_int, main

F32 = np.float32
FLT_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
#: Up to this window the ring is one preallocated float32 array of obsWindow columns, as a
#: numpy port holds it; a larger one grows as slots are written (SPEC.md §2.1).
PREALLOCATE_UP_TO = 4096


class NumpyPort:
    """SPEC.md §2 with numpy: kept rows of a float32 ring array, sums in float64."""

    def __init__(self, params: Any, seed: Any) -> None:
        if not is_int(seed):
            raise Refused("invalid-params", "seed must be an integer")
        params = self.read_params(params)
        for name in NAMES:
            value = params[name]
            if not is_int(value) or not 0 <= value <= INT31_MAX:
                raise Refused("invalid-params", f"{name} is not an integer in range")
        self.budget = params["budget"]
        self.recent = params["recentWindow"]
        self.obs = params["obsWindow"]
        self.kernel = params["poolKernel"]
        if self.budget < 1 or self.recent >= self.budget or self.obs < 1:
            raise Refused("invalid-params", "budget, recentWindow or obsWindow out of range")
        if self.kernel < 1 or self.kernel % 2 == 0:
            raise Refused("invalid-params", "poolKernel must be odd")
        width = self.obs if self.obs <= PREALLOCATE_UP_TO else 1
        self.hist = np.zeros((8, width), dtype=self.storage)
        self.kept: list[int] = []
        self.slot = 0
        self.last: int | None = None
        self.calls = 0

    storage: Any = F32

    def read_params(self, params: Any) -> dict[str, Any]:
        if not isinstance(params, dict) or sorted(params) != sorted(NAMES):
            raise Refused("invalid-params", "params must have exactly the four names")
        return params

    # -- step --------------------------------------------------------------------------------

    def step(self, pos: Any, attn: Any) -> None:
        self.calls += 1
        if not is_int(pos) or not 0 <= pos <= INT31_MAX:
            raise Refused("invalid-position", "pos must be an integer in range")
        if self.last is not None and pos <= self.last:
            raise Refused("invalid-position", "pos must increase")
        weights = self.read_attention(attn)
        if weights is not None:
            self.record(weights)
        self.admit(pos)

    def read_attention(self, attn: Any) -> np.ndarray | None:
        if attn is None:
            return None
        if not isinstance(attn, list) or len(attn) != len(self.kept):
            raise Refused("invalid-attention", "attn must be null or one weight per kept position")
        values = []
        for weight in attn:
            if type(weight) not in (int, float):
                raise Refused("invalid-attention", "a weight is not a number")
            try:
                narrowed = struct.unpack("<f", struct.pack("<f", float(weight)))[0]
            except OverflowError:
                raise Refused("invalid-attention", "a weight is beyond float32") from None
            if not 0.0 <= narrowed <= FLT_MAX:
                raise Refused("invalid-attention", "a weight is negative or infinite")
            values.append(narrowed)
        return np.array(values, dtype=F32)

    def record(self, weights: np.ndarray) -> None:
        if self.slot >= self.hist.shape[1]:
            grown = np.zeros((self.hist.shape[0], self.slot + 1), dtype=self.hist.dtype)
            grown[:, : self.hist.shape[1]] = self.hist
            self.hist = grown
        self.hist[: len(weights), self.slot] = weights.astype(self.hist.dtype)
        self.slot = (self.slot + 1) % self.obs

    def admit(self, pos: int) -> None:
        count = len(self.kept)
        if count == self.hist.shape[0]:
            grown = np.zeros((2 * count, self.hist.shape[1]), dtype=self.hist.dtype)
            grown[:count] = self.hist
            self.hist = grown
        self.hist[count] = 0
        self.kept.append(pos)
        self.last = pos

    # -- evict -------------------------------------------------------------------------------

    def evict(self) -> list[int]:
        k = len(self.kept) - self.budget
        if k <= 0:
            return []
        candidates = self.candidates()
        scores = self.scores(candidates)
        victims = self.choose(scores, candidates, k)
        keep = np.ones(len(self.kept), dtype=bool)
        keep[victims] = False
        evicted = sorted(self.kept[i] for i in victims)
        survivors = int(keep.sum())
        self.hist[:survivors] = self.hist[: len(self.kept)][keep]
        self.kept = [p for i, p in enumerate(self.kept) if keep[i]]
        return evicted

    def candidates(self) -> int:
        return len(self.kept) - self.recent

    def sums(self) -> np.ndarray:
        rows = self.hist[: len(self.kept)].astype(np.float64)
        total = np.zeros(len(self.kept))
        for column in range(rows.shape[1]):  # slot order, as SPEC.md §2.4 pins it
            total += rows[:, column]
        return total

    def scores(self, candidates: int) -> np.ndarray:
        sums = self.sums()
        r = (self.kernel - 1) // 2
        n = len(sums)
        return np.array([sums[max(0, i - r) : min(n, i + r + 1)].max() for i in range(n)])

    def choose(self, scores: np.ndarray, candidates: int, k: int) -> list[int]:
        order = sorted(range(candidates), key=lambda i: (scores[i], i))
        return order[:k]


# -- half-precision histories ------------------------------------------------------------------


class Float16History(NumpyPort):
    """A half-precision KV cache that holds the attention history too."""

    storage = np.float16


class BFloat16History(NumpyPort):
    """A bfloat16 history: each float32 weight rounded to its upper 16 bits, ties to even, as
    torch converts (numpy has no bfloat16, so the bits are kept in a uint16 array)."""

    def __init__(self, params: Any, seed: Any) -> None:
        super().__init__(params, seed)
        self.hist = np.zeros(self.hist.shape, dtype=np.uint16)

    def record(self, weights: np.ndarray) -> None:
        bits = weights.astype(F32).view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        super().record(rounded.view(np.uint16))

    def sums(self) -> np.ndarray:
        wide = (self.hist[: len(self.kept)].astype(np.uint32) << 16).view(F32)
        total = np.zeros(len(self.kept))
        for column in range(wide.shape[1]):
            total += wide[:, column].astype(np.float64)
        return total


# -- protected-window slips --------------------------------------------------------------------


class NegativeSliceCandidates(NumpyPort):
    """The candidates taken as Python's ``kept[:-recentWindow]``."""

    def candidates(self) -> int:
        return len(self.kept[: -self.recent])


class RecencyByPositionNumbers(NumpyPort):
    """The protected window read as 'positions p > last - recentWindow'."""

    def candidates(self) -> int:
        assert self.last is not None
        return bisect.bisect_right(self.kept, self.last - self.recent)


class RecencyByStepClock(NumpyPort):
    """Recency counted on a clock of step calls, which every call ticks, refused ones too: the
    positions admitted within the last recentWindow ticks are protected."""

    def __init__(self, params: Any, seed: Any) -> None:
        super().__init__(params, seed)
        self.stamps: list[int] = []

    def admit(self, pos: int) -> None:
        super().admit(pos)
        self.stamps.append(self.calls)

    def evict(self) -> list[int]:
        before = list(self.kept)
        evicted = super().evict()
        gone = set(evicted)
        self.stamps = [s for p, s in zip(before, self.stamps, strict=True) if p not in gone]
        return evicted

    def candidates(self) -> int:
        return sum(1 for stamp in self.stamps if stamp <= self.calls - self.recent)


# -- the official SnapKV code and kvpress, adapted to decode time --------------------------------


class OfficialSnapKV(NumpyPort):
    """snapkv_utils.py, `update_kv`: the attention of the observation window summed per key
    (`attn_weights[..., -window:, :-window].sum(dim=-2)`: here the ring's float32 slots, summed
    by numpy), pooled over the keys outside the window with `max_pool1d(kernel,
    padding=kernel // 2, stride=1)`, and the keepers chosen by `topk`; the window itself is
    kept. In float32 throughout, as the model's tensors are."""

    pooling = "max"

    def window_scores(self, candidates: int) -> np.ndarray:
        return self.hist[:candidates].astype(F32).sum(axis=1, dtype=F32)

    def scores(self, candidates: int) -> np.ndarray:
        scores = self.window_scores(candidates)
        r = self.kernel // 2
        pooled = np.empty(candidates, dtype=F32)
        for i in range(candidates):
            lo, hi = max(0, i - r), min(candidates, i + r + 1)
            if self.pooling == "max":
                pooled[i] = scores[lo:hi].max()  # max_pool1d pads with -inf
            else:  # avg_pool1d pads with zeros and divides by the kernel
                total = F32(0)
                for j in range(lo, hi):
                    total = F32(total + scores[j])
                pooled[i] = total / F32(self.kernel)
        return pooled

    def choose(self, scores: np.ndarray, candidates: int, k: int) -> list[int]:
        keep = candidates - k
        if keep <= 0:
            return list(range(candidates))
        keepers = set(np.argpartition(-scores, keep - 1)[:keep].tolist())  # torch.topk
        return [i for i in range(candidates) if i not in keepers]


class OfficialSnapKVAvgpool(OfficialSnapKV):
    """The same with `pooling='avgpool'`, the repository's default."""

    pooling = "avg"


class KvpressSnapKV(OfficialSnapKVAvgpool):
    """kvpress's SnapKVPress.score: the window's attention averaged (`mean(dim=-2)`, here the
    float32 sum over the ring divided by obsWindow), `avg_pool1d` with zero padding, the
    window's scores padded with the candidates' maximum (`F.pad(scores, (0, window),
    value=scores.max().item())`), and ScorerPress's keepers by `scores.topk(n_kept)` over every
    entry, the window included."""

    def window_scores(self, candidates: int) -> np.ndarray:
        return super().window_scores(candidates) / F32(self.obs)

    def evict(self) -> list[int]:
        k = len(self.kept) - self.budget
        if k <= 0:
            return []
        candidates = self.candidates()
        scores = self.scores(candidates)
        top = scores.max() if candidates else F32(0)
        padded = np.concatenate((scores, np.full(len(self.kept) - candidates, top, dtype=F32)))
        n_kept = len(self.kept) - k
        keepers = set(np.argpartition(-padded, n_kept - 1)[:n_kept].tolist())  # torch.topk
        victims = [i for i in range(len(self.kept)) if i not in keepers]
        keep = np.ones(len(self.kept), dtype=bool)
        keep[victims] = False
        evicted = sorted(self.kept[i] for i in victims)
        survivors = int(keep.sum())
        self.hist[:survivors] = self.hist[: len(self.kept)][keep]
        self.kept = [p for i, p in enumerate(self.kept) if keep[i]]
        return evicted


# -- a port with a Java port's JSON habits -----------------------------------------------------


class JavaHabits(NumpyPort):
    """Parameters bound case-insensitively (Jackson's ACCEPT_CASE_INSENSITIVE_PROPERTIES) and a
    null `attn` bound as an empty array (a `float[]` field set to `new float[0]` when null)."""

    def read_params(self, params: Any) -> dict[str, Any]:
        if isinstance(params, dict):
            lower = {name.lower(): name for name in NAMES}
            params = {lower.get(str(k).lower(), k): v for k, v in params.items()}
        return super().read_params(params)

    def read_attention(self, attn: Any) -> np.ndarray | None:
        return super().read_attention([] if attn is None else attn)


#: name -> (class, the catalogued choices the first triage line must name)
PORTS: dict[str, tuple[Any, tuple[str, ...]]] = {
    "numpy-spec": (NumpyPort, ()),
    "float16-history": (Float16History, ("float16-history",)),
    "bfloat16-history": (BFloat16History, ("bfloat16-history",)),
    "negative-slice": (NegativeSliceCandidates, ("candidates-slice-empty-at-zero",)),
    "position-numbers": (RecencyByPositionNumbers, ("recent-by-position-numbers",)),
    "step-clock": (RecencyByStepClock, ("recent-by-calls",)),
    "official-maxpool": (
        OfficialSnapKV,
        (
            "float32-accumulation",
            "pairwise-summation",
            "recent-excluded-from-pooling",
            "topk-keepers",
        ),
    ),
    "official-avgpool": (
        OfficialSnapKVAvgpool,
        (
            "float32-accumulation",
            "pairwise-summation",
            "average-pooling",
            "recent-excluded-from-pooling",
            "topk-keepers",
        ),
    ),
    "kvpress": (
        KvpressSnapKV,
        (
            "float32-accumulation",
            "pairwise-summation",
            "mean-over-window",
            "average-pooling",
            "recent-excluded-from-pooling",
            "window-padded-keepers",
        ),
    ),
    "java-habits": (JavaHabits, ("case-insensitive-names", "null-as-empty")),
}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], ports=PORTS))
