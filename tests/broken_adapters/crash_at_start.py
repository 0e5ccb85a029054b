"""Dies before reading anything, with a message on stderr and exit status 3."""

import sys

sys.stderr.write("fatal: cannot open model weights\n")
sys.exit(3)
