"""The reference itself through the same wrapper: the control that must pass everything."""

import sys

from _serve import SnapKV, main

if __name__ == "__main__":
    sys.exit(main(SnapKV, "none (reference)"))
