"""What the command-line tests share: a small suite of two plain vectors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.runner_support import plain_vector, write_suite


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suite", [plain_vector("cli/a"), plain_vector("cli/b", 2)])
