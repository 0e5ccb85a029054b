"""Writing output files (reports, JUnit, known failures, matrices, saved vectors) safely.

One rule for every file the kit writes to a path the user named: a regular file, or a path
that does not exist yet, is replaced whole or not at all (the bytes go to a temporary file
beside it, which is then renamed over it), so a full disk leaves the previous file intact. Any
other kind of path is written *through*, never replaced: a symlink updates the file it points
at and stays a symlink; a device (``/dev/null``), a FIFO or a socket gets the bytes as a
stream. A path under ``/dev`` or ``/proc`` is always written through; one that names an open
descriptor of the kit (``/dev/stdout``, ``/dev/fd/3``) is written to that descriptor, so
``--junit /dev/stdout > out.txt`` puts the XML in ``out.txt`` in its place among the printed
lines. A directory is an error.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from conformance.spec.errors import KitError


class OutputError(KitError, OSError):
    """An output file that could not be written; ``filename`` is the path the user named."""

    def __init__(self, path: str | Path, reason: str, errno: int | None = None) -> None:
        OSError.__init__(self, errno, reason, str(path))
        self.path = str(path)
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def write_output(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` by the rule in the module docstring, creating missing parent
    directories of a new file. Raises :class:`OutputError` naming ``path``."""
    named = Path(path)
    try:
        _write(named, data)
    except OutputError:
        raise
    except OSError as error:  # name the path asked for, not a parent or the temporary file
        raise OutputError(named, error.strerror or str(error), error.errno) from None


def write_text(path: str | Path, text: str) -> None:
    """:func:`write_output` of ``text`` as UTF-8; a lone surrogate is written as its
    backslash escape rather than failing the write."""
    write_output(path, text.encode("utf-8", "backslashreplace"))


def _write(named: Path, data: bytes) -> None:
    try:
        info: os.stat_result | None = os.stat(named)  # follows symlinks
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise OutputError(named, "is a directory")
    if info is not None and (not stat.S_ISREG(info.st_mode) or _is_system_path(named)):
        _write_through(named, data)
        return
    # A regular file or nothing yet: replace whatever the path finally names (a symlink's
    # target, even a dangling one's), so that the link stays a link.
    target = Path(os.path.realpath(named)) if os.path.islink(named) else named
    _replace(target, data, info)


def _is_system_path(named: Path) -> bool:
    """``/dev/...`` or ``/proc/...``: names of open files (``/dev/stdout``, ``/dev/fd/3``),
    never files of the user's to replace."""
    absolute = Path(os.path.abspath(named))
    return absolute.parts[1:2] in (("dev",), ("proc",))


_STANDARD = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_DESCRIPTOR = re.compile(r"/(?:dev/fd|proc/self/fd)/([0-9]+)")


def _write_through(named: Path, data: bytes) -> None:
    """Write ``data`` to ``named`` as it is (no create, no truncate, no rename)."""
    absolute = os.path.abspath(named)
    match = _DESCRIPTOR.fullmatch(absolute)
    descriptor = _STANDARD.get(absolute, int(match.group(1)) if match else None)
    if descriptor is not None:  # one of ours: share its offset rather than open it anew
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                stream.flush()
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
        return
    opened = os.open(named, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
    with os.fdopen(opened, "wb") as stream:
        stream.write(data)


def _replace(target: Path, data: bytes, info: os.stat_result | None) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = stage(target, data, info)
    try:
        os.replace(staging, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staging)
        raise


def stage(target: Path, data: bytes, info: os.stat_result | None) -> Path:
    """Write ``data`` to a new temporary file beside ``target`` and return its path, ready to
    be renamed over ``target``; nothing is left behind on failure.

    ``info`` is ``target``'s stat (None for a new file): the staged file gets its mode and,
    where permitted, its owner; a new file gets 0o666 less the umask, as any program
    creating it would.
    """
    staging = target.parent / f".{target.name}.{os.urandom(4).hex()}.tmp"
    mode = 0o666 if info is None else stat.S_IMODE(info.st_mode)
    descriptor = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
            stream.flush()
            if info is not None:
                os.fchmod(stream.fileno(), mode)
                if (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
                    with contextlib.suppress(OSError):
                        os.fchown(stream.fileno(), info.st_uid, info.st_gid)
            os.fsync(stream.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staging)
        raise
    return staging


class GuardedStream:
    """A text stream (stdout, stderr) whose failures end its output, never the command.

    When the reader has gone (``| head -1``) or the device is full (``/dev/full``), the first
    failed write or flush silences the stream: its descriptor is pointed at ``/dev/null`` so
    that nothing buffered fails again at exit, and :attr:`lost` is set. The command goes on,
    writes its output files and returns the exit status it would have returned. Text the
    stream's encoding cannot hold (a lone surrogate from an adapter) is written with
    backslash escapes rather than raising.
    """

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.lost = False

    def write(self, text: str) -> int:
        if not self.lost:
            try:
                self.stream.write(text)
            except UnicodeEncodeError:
                encoding = getattr(self.stream, "encoding", None) or "utf-8"
                safe = text.encode(encoding, "backslashreplace").decode(encoding)
                self._call(self.stream.write, safe)
            except (OSError, ValueError):
                self._lose()
        return len(text)

    def flush(self) -> None:
        if not self.lost:
            self._call(self.stream.flush)

    def _call(self, method: Callable[..., object], *args: object) -> None:
        try:
            method(*args)
        except (OSError, ValueError):
            self._lose()

    def _lose(self) -> None:
        self.lost = True
        with contextlib.suppress(OSError, ValueError, AttributeError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self.stream.fileno())
            finally:
                os.close(devnull)

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, ...
        return getattr(self.stream, name)


@contextlib.contextmanager
def guarded_streams() -> Iterator[tuple[GuardedStream, GuardedStream]]:
    """``sys.stdout`` and ``sys.stderr`` as :class:`GuardedStream` for the duration: a closed
    or full stderr (``2>&1 | head -1``, ``2>/dev/full``) is silenced as stdout is, and never
    costs a command its outputs or its exit status."""
    originals = sys.stdout, sys.stderr
    guards = GuardedStream(originals[0]), GuardedStream(originals[1])
    sys.stdout, sys.stderr = guards  # type: ignore[assignment]
    try:
        yield guards
    finally:
        for guard in guards:
            guard.flush()
        sys.stdout, sys.stderr = originals
