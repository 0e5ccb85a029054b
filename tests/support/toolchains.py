"""Toolchain checks and build locking shared by the port tests.

A test that needs gcc, make or cargo must fail, not skip, when ``CI`` is set and the toolchain
is missing: a CI run must never pass without having tested the ports.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.support.paths import ROOT


def require_tools(*names: str) -> dict[str, str]:
    """Each named executable's path; skip when one is missing, or fail when ``CI`` is set."""
    found = {name: shutil.which(name) for name in names}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        message = f"toolchain missing: {', '.join(missing)}"
        if os.environ.get("CI"):
            pytest.fail(f"{message} (CI is set, so this is a failure, not a skip)")
        pytest.skip(message)
    return {name: str(path) for name, path in found.items()}


@contextmanager
def build_lock(name: str) -> Iterator[None]:
    """Serialise a build across pytest-xdist workers, which each run session fixtures.

    ``name`` is a port under ``adapters/`` (its directory is locked) or ``"wheel"`` (the
    checkout, where the wheel's build tree goes). The lock is ``flock`` on the directory
    itself, so nothing is left behind in the temp directory, and two checkouts never wait
    for each other.
    """
    directory = ROOT if name == "wheel" else ROOT / "adapters" / name
    handle = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing releases the lock
