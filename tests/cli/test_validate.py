"""``snapkv-conformance validate`` against special files: one line naming the file, no hang."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.hostile import kit


@pytest.mark.parametrize("kind", ["named", "link.json", "in-the-suite"])
def test_dev_zero_as_a_vector_is_named_not_read(tmp_path: Path, kind: str) -> None:
    """Case 8 in validate: /dev/zero, or a ``*.json`` link to it, used to be read without
    bound (23.7 GB, then the OOM killer)."""
    path = Path("/dev/zero")
    if kind != "named":
        (tmp_path / "ties").mkdir()
        path = tmp_path / "ties" / "zero.json"
        path.symlink_to("/dev/zero")
    target = str(tmp_path) if kind == "in-the-suite" else str(path)
    done = kit("validate", target, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert f"{path}: /: is a character device, not a regular file" in said
    assert "Traceback" not in said


def test_a_fifo_in_the_suite_is_named_not_waited_on(tmp_path: Path) -> None:
    import os

    (tmp_path / "ties").mkdir()
    os.mkfifo(tmp_path / "ties" / "pipe.json")
    done = kit("validate", str(tmp_path), timeout=60)
    assert done.returncode == 2
    assert "pipe.json: /: is a FIFO (named pipe), not a regular file" in done.stdout + done.stderr
