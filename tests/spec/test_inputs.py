"""The one way the kit opens an input file: regular files only, a size cap, one line naming the
file, never a hang or a read without bound."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from conformance.spec.errors import KitError
from conformance.spec.inputs import (
    SUITE_FILE_LIMIT,
    InputError,
    read_input,
    read_input_text,
    read_suite_file,
)


def read_soon(path: Path, **options: object) -> bytes | BaseException:
    """``read_input(path)`` in a thread given 10 seconds: a blocking open or an endless read
    fails the test instead of hanging it."""
    outcome: list[bytes | BaseException] = []

    def read() -> None:
        try:
            outcome.append(read_input(path, **options))  # type: ignore[arg-type]
        except BaseException as error:
            outcome.append(error)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(10)
    assert outcome, f"read_input({path}) was still reading after 10 s"
    return outcome[0]


def test_a_fifo_is_refused_at_once_naming_it(tmp_path: Path) -> None:
    fifo = tmp_path / "vector.json"
    os.mkfifo(fifo)
    error = read_soon(fifo)
    assert isinstance(error, InputError) and isinstance(error, KitError | OSError)
    assert str(error) == f"{fifo}: is a FIFO (named pipe), not a regular file: a file must be one"


@pytest.mark.parametrize("name", ["zero", "link.json"])
def test_dev_zero_and_a_link_to_it_are_refused_unread(tmp_path: Path, name: str) -> None:
    path = Path("/dev/zero") if name == "zero" else tmp_path / name
    if name != "zero":
        path.symlink_to("/dev/zero")
    error = read_soon(path, what="vector file")
    assert isinstance(error, InputError)
    assert error.reason == "is a character device, not a regular file: a vector file must be one"
    assert "\n" not in str(error) and str(error).startswith(str(path))


def test_a_file_over_the_limit_is_refused_by_its_size_unread(tmp_path: Path) -> None:
    """A 2 GiB sparse file: its size is its refusal; not a byte of it is read."""
    sparse = tmp_path / "huge.json"
    try:
        with open(sparse, "wb") as handle:
            handle.truncate(2 << 30)
        error = read_soon(sparse, limit=SUITE_FILE_LIMIT, what="suite file")
        assert isinstance(error, InputError)
        assert error.reason == (
            "is 2 GiB, over the 1 GiB a suite file may hold; is it the file you meant?"
        )
    finally:
        sparse.unlink(missing_ok=True)


def test_the_limit_holds_for_the_bytes_read_as_for_the_size(tmp_path: Path) -> None:
    exactly = tmp_path / "exactly"
    exactly.write_bytes(b"x" * 100)
    assert read_input(exactly, limit=100) == b"x" * 100
    with pytest.raises(InputError, match="is 101 bytes, over the 100 bytes a file may hold"):
        exactly.write_bytes(b"x" * 101)
        read_input(exactly, limit=100)


def test_head_reads_only_the_head(tmp_path: Path) -> None:
    path = tmp_path / "v.json"
    path.write_bytes(b"{" + b" " * 10_000 + b"}")
    assert read_suite_file(path, head=4096) == b"{" + b" " * 4095


def test_a_missing_file_is_one_line_naming_it(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_input(tmp_path / "nowhere.json")
    missing = tmp_path / "nowhere.json"
    assert str(caught.value) == f"{missing}: cannot read: No such file or directory"


def test_text_that_is_not_utf8_says_where(tmp_path: Path) -> None:
    path = tmp_path / "known-failures.txt"
    path.write_bytes(b"ties/x\n\xff\n")
    with pytest.raises(InputError, match=r"is not UTF-8 text \(invalid start byte at byte 7\)"):
        read_input_text(path, what="known-failures file")
