"""A port that reuses an evicted entry's storage without zeroing it (stale history)."""

import sys

from _serve import SnapKV, main


class StaleSlotReuse(SnapKV):
    def admit(self, position: int) -> None:
        # The bug: the row keeps whatever an earlier (evicted or moved) entry left in it.
        if self._count == len(self._positions):
            self._grow_rows(2 * self._count)
        self._positions[self._count] = position
        self._count += 1
        self._last_admitted = position


if __name__ == "__main__":
    sys.exit(main(StaleSlotReuse, "stale history on slot reuse"))
