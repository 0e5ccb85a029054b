"""``python -m conformance.docs [--check]``: see :mod:`conformance.docs.pages`."""

import sys

from conformance.docs.pages import main

sys.exit(main())
