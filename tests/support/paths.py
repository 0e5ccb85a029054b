"""Where the checkout and the tests' own files are, whatever folder a test module sits in."""

from __future__ import annotations

from pathlib import Path

#: The checkout: README.md, adapters/, benchmarks/, vectors/.
ROOT = Path(__file__).resolve().parents[2]
#: The tests' own files: broken_adapters/, lax_adapters/, heldout/, malformed/.
TESTS = ROOT / "tests"
