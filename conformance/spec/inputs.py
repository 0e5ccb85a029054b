"""Reading an input file: the one way the kit opens a file that a user named or a suite holds.

Vectors, protocol checks, known-failures files, the tag vocabulary, fuzz example databases and
README blocks (``mutants --update-readme``) are all read by :func:`read_input`, which reads

- **a regular file only**, symlinks followed: a FIFO, a socket, a device (``/dev/zero``,
  ``/dev/stdin``) or a directory is refused with one line naming the path and what it is. The
  file is opened without blocking (``O_NONBLOCK``), so that opening a FIFO nobody writes to
  never waits, and its kind is judged on the descriptor opened, so a path swapped for a FIFO
  between a check and the open changes nothing;
- **at most ``limit`` bytes**: a larger file is refused by its size before a byte of it is
  read (a 2 GiB sparse file costs a ``stat``, not 2 GiB of memory), and one that grows past
  the limit while it is read is refused too;
- with ``head``, only its first ``head`` bytes (a suite file's id, a file's format).

Every refusal is an :class:`InputError` (a :class:`~conformance.spec.errors.KitError` and an
``OSError``, so that a reader's ``except OSError`` already names the file), whose ``reason``
says what to do. The limits are :data:`SUITE_FILE_LIMIT` (a vector or protocol check) and
:data:`TEXT_FILE_LIMIT` (everything else the kit reads).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from conformance.spec.errors import KitError

#: The largest vector or protocol-check file read (a recorded trace held as a long vector;
#: a longer one is split into several vectors).
SUITE_FILE_LIMIT = 1 << 30
#: The largest of any other input file: a known-failures list, the tag vocabulary, a README
#: block, an entry of a fuzz example database.
TEXT_FILE_LIMIT = 16 << 20

_CHUNK = 1 << 20


class InputError(KitError, OSError):
    """An input file that cannot be read as one: ``path`` as named, ``reason`` why (one line)."""

    def __init__(self, path: str | Path, reason: str, code: int | None = None) -> None:
        OSError.__init__(self, code, reason, str(path))
        self.path = str(path)
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def size_text(size: int) -> str:
    """A byte count for a person: ``1 GiB``, ``2.5 MiB``, ``812 bytes``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{size / (1 << shift):.3g} {unit}"
    return f"{size} bytes"


def _kind(mode: int) -> str:
    """What a path that is not a regular file is, in words."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_input(
    path: str | Path, *, limit: int = TEXT_FILE_LIMIT, what: str = "file", head: int | None = None
) -> bytes:
    """The bytes of the regular file ``path`` (see the module docstring), or with ``head`` its
    first ``head`` bytes at most; ``what`` names it in a refusal (``vector file``,
    ``known-failures file``). Raises :class:`InputError` naming ``path``, also when the system
    cannot open or read it (no such file, permission denied: its words, and its ``errno``)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        descriptor = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise InputError(path, f"cannot read: {error.strerror or error}", error.errno) from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(
                path, f"is {_kind(info.st_mode)}, not a regular file: a {what} must be one"
            )
        if info.st_size > limit:
            raise _too_big(path, what, info.st_size, limit)
        wanted = limit + 1 if head is None else min(head, limit + 1)
        pieces: list[bytes] = []
        got = 0
        while got < wanted:
            piece = os.read(descriptor, min(_CHUNK, wanted - got))
            if not piece:
                break
            pieces.append(piece)
            got += len(piece)
    except InputError:
        raise
    except OSError as error:
        raise InputError(path, f"cannot read: {error.strerror or error}", error.errno) from None
    finally:
        with contextlib.suppress(OSError):
            os.close(descriptor)
    if got > limit:  # it grew while it was read
        raise _too_big(path, what, got, limit, growing=True)
    return b"".join(pieces)


def _too_big(
    path: str | Path, what: str, size: int, limit: int, growing: bool = False
) -> InputError:
    held = "grew past" if growing else f"is {size_text(size)}, over"
    return InputError(
        path,
        f"{held} the {size_text(limit)} a {what} may hold; is it the file you meant?",
        errno.EFBIG,
    )


def read_suite_file(path: str | Path, head: int | None = None) -> bytes:
    """The bytes of a vector or protocol-check file (with ``head``, its first ``head`` bytes at
    most): :func:`read_input` with :data:`SUITE_FILE_LIMIT`."""
    return read_input(path, limit=SUITE_FILE_LIMIT, what="suite file", head=head)


def read_input_text(path: str | Path, *, limit: int = TEXT_FILE_LIMIT, what: str = "file") -> str:
    """:func:`read_input` decoded as UTF-8; a file that is not UTF-8 is an :class:`InputError`
    saying where."""
    data = read_input(path, limit=limit, what=what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            path, f"is not UTF-8 text ({error.reason} at byte {error.start}): a {what} must be"
        ) from None
