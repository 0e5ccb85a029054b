"""Eviction as inference engines schedule and lay out their caches: in whole pages, only once
enough is over budget, or into a masked cache whose evicted rows stay where they were.

SPEC.md §2.4: an ``evict`` removes exactly ``max(0, len(kept) - budget)`` positions, the lowest
``(pooled, position)`` candidates one by one, and the victims are removed from the kept list, so
that neighbours in pooling are the adjacent *kept* entries. Engines built on paged attention
(OpenVINO GenAI, vLLM) evict whole blocks of tokens; engines that compress every few steps
(kvpress's ``DecodingPress``) let the cache run over budget first; static and masked caches
(transformers' static cache, mlx-lm's fixed buffers) leave an evicted row in place and mask it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.mutants._base import EVICT, Witness, mutant, params, step, steps
from conformance.mutants.model import Model

#: Tokens per block: OpenVINO GenAI's default block size, and vLLM's.
BLOCK = 16


# -- pages -------------------------------------------------------------------------------------


@mutant(
    "paged-eviction",
    rule="§2.4: an evict removes exactly max(0, len(kept) - budget) positions, the lowest "
    "(pooled, position) candidates",
    origin="OpenVINO GenAI's cache eviction (cache_eviction.cpp, `evict_logical_blocks`) in a "
    "port: the kept list cut into blocks of 16, nothing evicted until a whole block is over "
    "budget (`len(kept) > budget + 15`), the evictable blocks `len(kept) / 16 - recentWindow / "
    "16` (the partial last block kept), `ceil((budget - recentWindow) / 16)` of them kept, each "
    "block scored by the sum of its tokens' scores, the lowest (score, block) evicted whole",
    keywords=("whole blocks", "paged eviction", "blocks of 16"),
    witness=Witness(params(1, 0, 1, 1), (*steps(0, 2), EVICT)),
)
class PagedEviction(Model):
    """Evicts whole blocks of 16 kept entries, once the cache is a block over budget, the
    blocks with the lowest sums of pooled scores first (OpenVINO GenAI's block arithmetic with
    no start area: ``budget`` and ``recentWindow`` in tokens, rounded as it rounds them)."""

    def evict(self) -> list[int]:
        count = len(self.kept)
        budget, recent = self.params.budget, self.params.recentWindow
        if count <= budget + BLOCK - 1:
            return []
        evictable = count // BLOCK - recent // BLOCK
        keep = -(-(budget - recent) // BLOCK)  # get_num_blocks: ceil
        chosen = max(0, evictable - keep)
        if not chosen:
            return []
        _, pooled = self.score()
        totals: list[tuple[float, int]] = []
        for block in range(evictable):
            total = 0.0
            for offset in range(BLOCK):
                total += float(pooled[BLOCK * block + offset])
            totals.append((total, block))
        blocks = sorted(totals)[:chosen]
        victims = sorted(BLOCK * block + offset for _, block in blocks for offset in range(BLOCK))
        evicted = [self.kept[index] for index in victims]
        self.remove(victims)
        return evicted


# -- when ---------------------------------------------------------------------------------------


@mutant(
    "deferred-eviction",
    rule="§2.4: every evict removes max(0, len(kept) - budget) positions, however few",
    origin="compressing only every so often, as kvpress's DecodingPress does "
    "(`compression_interval` steps between compressions): an evict returns nothing until the "
    "cache is 16 over budget, then brings it back to budget at once",
    keywords=("deferred eviction", "compression_interval", "until the excess"),
    witness=Witness(params(1, 0, 1, 1), (*steps(0, 2), EVICT)),
)
class DeferredEviction(Model):
    """Evicts nothing while fewer than 16 positions are over budget, then all of the excess."""

    def excess(self) -> int:
        count = super().excess()
        return count if count >= BLOCK else 0


# -- masked caches --------------------------------------------------------------------------


class _MaskedCache(Model):
    """Evicted rows stay in the cache's storage as masked holes, in their place among the
    kept rows (new positions are appended after every row, holes never reused); pooling runs
    over the storage rows, so a hole is a neighbour, scoring :meth:`_hole_score`."""

    def _hole_score(self, sums: np.ndarray, index: int) -> float:
        raise NotImplementedError

    def remove(self, victims: Any) -> None:
        gone = sorted(set(victims))
        if not gone:
            super().remove(victims)
            return
        sums = self.window_sums()
        holes = dict(getattr(self, "_holes", {}))
        for index in gone:
            holes[self.kept[index]] = self._hole_score(sums, index)
        super().remove(victims)
        # A hole further than the pooling radius from every kept row, and from the end of the
        # buffer (where the next rows go), is in no window now or later: it is forgotten.
        reach = (self.params.poolKernel - 1) // 2
        rows = sorted([*((p, False) for p in self.kept), *((p, True) for p in holes)])
        near = np.zeros(len(rows) + 1, dtype=np.int64)
        for row, (_, hole) in enumerate(rows):
            if not hole:
                near[max(0, row - reach)] += 1
                near[min(len(rows), row + reach + 1)] -= 1
        near[max(0, len(rows) - reach)] += 1
        covered = np.cumsum(near)[: len(rows)] > 0
        self.__dict__["_holes"] = {
            p: holes[p] for row, (p, hole) in enumerate(rows) if hole and covered[row]
        }

    def pool(self, sums: np.ndarray) -> np.ndarray:
        holes: dict[int, float] = getattr(self, "_holes", {})
        if not holes:
            return super().pool(sums)
        rows = sorted(
            [*((p, False, i) for i, p in enumerate(self.kept)), *((p, True, 0) for p in holes)]
        )
        values = np.array([holes[p] if hole else float(sums[i]) for p, hole, i in rows])
        pooled = super().pool_values(values)
        return np.array([pooled[row] for row, (_, hole, _) in enumerate(rows) if not hole])


@mutant(
    "masked-holes-stale",
    rule="§2.4: victims are removed, and neighbours in pooling are the adjacent kept entries",
    origin="a static or masked cache (a fixed buffer whose evicted rows are masked out rather "
    "than removed, as transformers' static cache and mlx-lm's fixed buffers keep them): the "
    "masked row keeps its stale ring, and pooling over the buffer still reads it",
    keywords=("masked", "stale hole", "holes in the cache"),
    witness=Witness(
        params(2, 1, 1, 3),
        (step(0), step(1), step(2, [1.0, 0.0]), EVICT, step(3, [0.0, 0.5]), EVICT),
    ),
)
class MaskedHolesStale(_MaskedCache):
    """Leaves each evicted row in place, masked, its ring as it was: pooling over the buffer
    still takes its sum."""

    def _hole_score(self, sums: np.ndarray, index: int) -> float:
        return float(sums[index])


@mutant(
    "masked-holes-zeroed",
    rule="§2.4: victims are removed, and neighbours in pooling are the adjacent kept entries",
    origin="a static or masked cache whose evicted rows are zeroed and masked rather than "
    "removed: pooling over the buffer counts each hole as a neighbour scoring 0, so a kept "
    "entry's real neighbours fall out of its window",
    keywords=("masked", "zeroed hole", "holes in the cache"),
    witness=Witness(
        params(2, 0, 2, 3),
        (step(0), step(1), step(2, [1.0, 0.0]), EVICT, step(3, [0.0, 1.0]), EVICT),
    ),
)
class MaskedHolesZeroed(_MaskedCache):
    """Leaves each evicted row in place, masked and zeroed: a neighbour scoring 0 in pooling."""

    def _hole_score(self, sums: np.ndarray, index: int) -> float:
        return 0.0
