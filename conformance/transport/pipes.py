"""Reading and writing an adapter's pipes with every wait bounded (for
:mod:`conformance.transport.session`).

Answers are read in the calling thread: on POSIX with ``poll`` on stdout's descriptor and
``os.read``, elsewhere through a reader thread. Reading in the caller matters for speed: an
adapter flushes after every answer, so a reader thread would hand each line over to the caller
on its own, and on a loaded machine those hand-overs cost more CPU than judging the answers.
Requests are written by a writer thread and stderr is drained by another, so that neither a
full stdin nor a full stderr pipe can ever stall the caller: it only waits on stdout, and
always with a deadline.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import queue
import select
import struct
import termios
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import IO, Any

from conformance.spec.text import capped

#: How a stream of answer lines ended (the second item of :meth:`LineReader.next`'s answer).
LINE, EOF, PARTIAL, OVERLONG = "line", "eof", "partial", "overlong"
CHUNK = 65536
#: Once answers start to arrive, wait this long before reading them. An adapter flushes each
#: answer as it goes, so reading at once would wake the runner once per answer; waiting a
#: millisecond collects dozens per read and cuts the runner's CPU by a third, which on a busy
#: machine is CPU the adapter gets. The adapter never waits for it: the runner keeps the next
#: vector's requests queued, and a millisecond of answers cannot fill a pipe.
COALESCE = 0.001
#: The longest one wait of the kit lasts before its thread runs Python code again. The kernel
#: hands a signal sent to the kit (Ctrl-C, a CI runner's SIGTERM, a closed terminal's SIGHUP) to
#: whichever of its threads does not block it, and Python runs the handler in the main thread
#: only, when that thread next runs Python code: a main thread blocked for the whole of a wait
#: (a join, a future, a poll) while the signal went to another thread would obey the signal
#: policy only once that wait ended, a hung adapter's whole timeout later. So every wait is
#: waited in slices of this (:func:`waited`); huge timeouts (``--timeout 1e10``) fit it too.
WAIT_SLICE = 0.05


def waited(until: Callable[[float], bool], timeout: float | None = None) -> bool:
    """Wait in slices of :data:`WAIT_SLICE` (see there why): ``until(seconds)`` waits at most
    ``seconds`` for something and says whether it has happened. True once it has, False when
    ``timeout`` seconds (None: no bound) passed first."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = WAIT_SLICE if deadline is None else deadline - time.monotonic()
        if until(max(0.0, min(left, WAIT_SLICE))):
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False


class Splitter:
    """Cuts a byte stream into lines (newline kept), refusing lines over ``max_line`` bytes."""

    def __init__(self, max_line: int) -> None:
        self.max_line = max_line
        self._partial: list[bytes] = []  # the pieces of the line being read
        self._size = 0

    def feed(self, chunk: bytes) -> tuple[list[bytes], bytes | None]:
        """The lines ``chunk`` completes, and the start of an over-long line if one appeared
        (after which the stream must not be read further)."""
        complete: list[bytes] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            line = chunk[start : end + 1]
            start = end + 1
            if self._partial:
                line = b"".join([*self._partial, line])
                self._partial, self._size = [], 0
            if len(line) - 1 > self.max_line:
                return complete, line[:200]
            complete.append(line)
        if start < len(chunk):
            self._partial.append(chunk[start:])
            self._size += len(chunk) - start
            if self._size > self.max_line:
                return complete, b"".join(self._partial)[:200]
        return complete, None

    def rest(self) -> bytes:
        """The unfinished line at the end of the stream (empty if there is none)."""
        return b"".join(self._partial)


class LineReader:
    """Lines from an adapter's stdout, each waited for with a timeout.

    :meth:`next` returns ``(LINE, line)``, or once the stream has ended ``(EOF, b"")``,
    ``(PARTIAL, unfinished_line)`` or ``(OVERLONG, first_bytes)`` (and the same again on every
    later call), or None when nothing arrived in time.
    """

    def __init__(self, stream: IO[bytes], max_line: int) -> None:
        self._stream = stream
        self._splitter = Splitter(max_line)
        self._lines: deque[bytes] = deque()
        self._end: tuple[str, bytes] | None = None
        self._poll: Any = None
        self._queue: queue.SimpleQueue[bytes] | None = None
        self._streaming = False
        if hasattr(select, "poll"):
            self._fd = stream.fileno()
            self._poll = select.poll()
            self._poll.register(self._fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        else:  # no poll on pipes (Windows): a thread reads, this one waits on a queue
            self._queue = queue.SimpleQueue()
            threading.Thread(target=self._pump, daemon=True).start()

    def next(self, timeout: float) -> tuple[str, bytes] | None:
        deadline = time.monotonic() + timeout
        while not self._lines and self._end is None:
            # In slices (WAIT_SLICE): a stop signal is handled between two of them.
            chunk = self._read(min(max(0.0, deadline - time.monotonic()), WAIT_SLICE))
            if chunk is None and deadline - time.monotonic() > 0:
                continue
            if chunk is None:
                return None
            self._take(chunk)
        if self._lines:
            return LINE, self._lines.popleft()
        assert self._end is not None
        return self._end

    def _take(self, chunk: bytes) -> None:
        if not chunk:
            rest = self._splitter.rest()
            self._end = (PARTIAL, rest) if rest else (EOF, b"")
            return
        lines, overlong = self._splitter.feed(chunk)
        self._lines.extend(lines)
        if overlong is not None:
            self._end = (OVERLONG, overlong)

    def _read(self, timeout: float) -> bytes | None:
        """One chunk (empty at the end of the stream), or None after ``timeout`` seconds."""
        if self._queue is not None:
            try:
                return self._queue.get(timeout=timeout)
            except queue.Empty:
                return None
        if not self._poll.poll(max(0, int(timeout * 1000) + 1)):
            return None
        if not self._streaming:
            time.sleep(COALESCE)
        try:
            chunk = os.read(self._fd, CHUNK)
        except OSError:
            return b""
        # A full chunk means more is waiting (a long line): read on without pausing.
        self._streaming = len(chunk) == CHUNK
        return chunk

    def _pump(self) -> None:
        assert self._queue is not None
        try:
            while chunk := self._stream.read1(CHUNK):  # type: ignore[attr-defined]
                self._queue.put(chunk)
        except (OSError, ValueError):
            pass
        self._queue.put(b"")

    def close(self) -> None:
        if self._queue is None:  # the pump thread closes nothing: it may still be reading
            with contextlib.suppress(OSError):
                self._stream.close()


class StderrTail:
    """The most recent bytes of a stream, kept in bounded memory."""

    def __init__(self, keep: int) -> None:
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._keep = keep
        self._lock = threading.Lock()
        #: Held by the drain thread while it reads and adds a chunk (see :func:`settle`).
        self.reading = threading.Lock()

    def add(self, chunk: bytes) -> None:
        with self._lock:
            self._chunks.append(chunk)
            self._size += len(chunk)
            while self._size - len(self._chunks[0]) >= self._keep:
                self._size -= len(self._chunks.popleft())

    def text(self, lines: int, width: int = 300) -> str:
        """The last ``lines`` lines, undecodable bytes replaced, each cut at ``width``
        characters with a note (a result keeps this for each failing vector: it must stay
        small whatever the adapter writes)."""
        with self._lock:
            data = b"".join(self._chunks)[-self._keep :]
        decoded = data.decode("utf-8", errors="replace").rstrip("\n")
        if not decoded:
            return ""
        return "\n".join(capped(line, width) for line in decoded.splitlines()[-lines:])


def settle(stderr: Any, tail: StderrTail, done: threading.Event, timeout: float) -> None:
    """Wait, up to ``timeout`` seconds, until ``tail`` holds every byte the adapter has written
    to ``stderr`` so far: the pipe holds nothing unread and no chunk is between read and add.

    An adapter that writes to stderr and then answers has done both before its answer is read,
    but the drain thread may not have run yet: a tail taken at once could miss the very lines
    that explain the answer.
    """
    deadline = time.monotonic() + timeout
    while not done.is_set() and time.monotonic() < deadline:
        with tail.reading:  # no chunk read and not yet added
            try:
                raw = fcntl.ioctl(stderr.fileno(), termios.FIONREAD, b"\0" * 4)
            except (OSError, ValueError):
                return  # closed, or no FIONREAD on pipes here: take the tail as it is
            if struct.unpack("i", raw)[0] == 0:
                return
        time.sleep(0.001)


def write_loop(stdin: Any, writes: queue.SimpleQueue[bytes | Iterable[bytes] | None]) -> None:
    """Feed stdin until told to stop (None) or the adapter stops reading; a payload is bytes
    or an iterable of pieces, each made only when the one before is written."""
    try:
        while (payload := writes.get()) is not None:
            for piece in (payload,) if isinstance(payload, bytes) else payload:
                stdin.write(piece)
                stdin.flush()
    except (OSError, ValueError):
        pass  # the adapter is gone; the reader will see it
    finally:
        with contextlib.suppress(OSError, ValueError):
            stdin.close()


def drain_loop(stderr: Any, tail: StderrTail, done: threading.Event) -> None:
    """Read stderr continuously so a chatty adapter never blocks on a full pipe."""
    try:
        fd = stderr.fileno()
        # poll, not select: select refuses a descriptor of 1024 or more (a run with --jobs 400,
        # or under a high ulimit -n), and a drain that stopped would kill a chatty adapter
        # with SIGPIPE.
        waiting = select.poll()
        waiting.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        while True:
            waiting.poll()  # wait for bytes or the end, holding nothing
            with tail.reading:  # the read cannot block now; settle sees read and add as one
                chunk = os.read(fd, CHUNK)
                tail.add(chunk)
            if not chunk:
                break
    except (OSError, ValueError):
        pass
    finally:
        with contextlib.suppress(OSError, ValueError):
            stderr.close()
        done.set()
