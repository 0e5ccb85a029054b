"""Serve a planted-bug subclass of the reference over protocol v1 (shared by the scripts here).

Each script beside this file is a port with one deliberate mistake, run as
``python3 tests/buggy_adapters/<name>.py``; the fuzzer, the pytest plugin and the matrix tests
must tell it apart from the reference.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script from anywhere: make the checkout importable without installing it.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.adapter import serve
from conformance.policy import SnapKV


def main(policy_class: type[SnapKV], name: str) -> int:
    implementation = {"name": f"planted bug: {name}", "language": "python", "version": "0"}
    return serve(sys.stdin.buffer, sys.stdout.buffer, policy_class, implementation)
