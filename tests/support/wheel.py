"""A wheel of the kit built from this checkout, as README's install builds one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT
from tests.support.toolchains import build_lock


def build_wheel(directory: Path) -> Path:
    """Build the wheel into ``directory`` and return its path. Without build isolation, so
    no package index is needed; serialised, since the build writes build/ in the checkout."""
    command = [sys.executable, "-m", "pip", "wheel", ".", "-w", str(directory), "--no-deps"]
    with build_lock("wheel"):
        subprocess.run(
            [*command, "--no-build-isolation", "--quiet"], cwd=ROOT, check=True, capture_output=True
        )
    (wheel,) = directory.glob("snapkv_conformance-*.whl")
    return wheel
