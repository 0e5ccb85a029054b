"""A port that breaks equal pooled scores toward the higher position."""

import sys

import numpy as np
from _serve import SnapKV, main


class TiesToHigher(SnapKV):
    def select(self, pooled: np.ndarray, count: int) -> np.ndarray:
        candidates = self.candidate_count()
        positions = self._positions[:candidates]
        # The bug: the secondary key is descending position.
        ranked = np.lexsort((-positions, pooled[:candidates]))
        return ranked[:count]


if __name__ == "__main__":
    sys.exit(main(TiesToHigher, "ties evict the higher position"))
