"""A port whose null attention advances the ring cursor without writing."""

import sys
from typing import Any

from _serve import SnapKV, main


class NullAdvancesRing(SnapKV):
    def step(self, pos: Any, attn: Any) -> None:
        position = self.check_position(pos)
        weights = self.check_attention(attn)
        if weights is None:
            # The bug: the spec says a null step is inert; this one moves the cursor.
            self.slot = (self.slot + 1) % self.params.obsWindow
        else:
            self.record(weights)
        self.admit(position)


if __name__ == "__main__":
    sys.exit(main(NullAdvancesRing, "null attention advances the ring"))
