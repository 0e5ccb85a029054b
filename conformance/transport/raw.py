"""A raw session: bytes in, answer lines out, for what is judged line by line rather than
exchange by exchange (protocol checks, bench workloads, protocol fuzzing).

:func:`talk` starts the adapter through the one process lifetime
(:func:`conformance.transport.process.spawn`), writes every byte, closes its input, and reads
its answer lines until it exits, each wait bounded and everything it writes capped: at most
``max_output`` bytes and ``answers_due`` plus :data:`EXTRA_LINES` lines are kept, each line at
most ``max_line`` bytes, whatever the adapter sends. Once the answers due have come, the
adapter has :data:`EXIT_GRACE` seconds to exit (SPEC.md §3.2: end of input ends the session),
so one that lingers costs seconds, not the whole timeout. The adapter, its group and its
descendants are killed at the end, whatever happened.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from conformance.transport import pipes, process

#: How long an adapter may take to exit once its input has ended and every line due was
#: answered.
EXIT_GRACE = 2.0
#: Answer lines kept beyond those due (enough to show what an adapter answered too many).
EXTRA_LINES = 16
#: The longest answer line read by default.
MAX_LINE = 1 << 20


@dataclass(frozen=True)
class Transcript:
    """What one raw session gave.

    ``answers`` are the answer lines without their newline (an unfinished or over-long last line
    too, cut at 200 bytes when over-long), or none when they went to a ``sink``; ``count`` is
    how many were read either way; ``cut`` says the adapter wrote more than was kept.
    ``exit_status`` is None when it did not exit in time (``timed_out``). ``first_answer`` and
    ``last_answer`` are ``time.perf_counter()`` readings of the first and last line.
    """

    answers: tuple[bytes, ...]
    exit_status: int | None
    timed_out: bool
    stderr_tail: str
    duration: float
    overlong: bool = False
    cut: bool = False
    first_answer: float = 0.0
    last_answer: float = 0.0
    count: int = 0


def talk(
    argv: Sequence[str],
    data: bytes | Iterable[bytes],
    *,
    timeout: float,
    answers_due: int | None = None,
    max_line: int = MAX_LINE,
    max_output: int = 1 << 20,
    sink: Callable[[bytes], None] | None = None,
) -> Transcript:
    """Run one raw session (see the module docstring); raise
    :class:`~conformance.transport.process.StartError` for a command that cannot start.

    ``data`` is bytes, or pieces of bytes made as the writer gets to them (a workload streamed
    rather than built whole: ``timeout`` then bounds its making too). With ``sink``, each
    answer line is handed to it as it is read and not kept (``max_output`` then applies to
    nothing: the sink bounds what it keeps)."""
    started = time.monotonic()
    deadline = started + timeout
    adapter = process.spawn(argv)
    reader = pipes.LineReader(adapter.stdout, max_line)
    lines: list[bytes] = []
    count = size = 0
    timed_out = overlong = cut = False
    first = last = 0.0
    most = None if answers_due is None else answers_due + EXTRA_LINES
    try:
        adapter.write(data)
        adapter.close_input()
        while True:
            if size >= max_output or (most is not None and count >= most):
                cut = True
                break
            limit = deadline
            if answers_due is not None and count >= answers_due:
                limit = min(deadline, time.monotonic() + EXIT_GRACE)
            got = reader.next(max(0.0, limit - time.monotonic()))
            if got is None:
                timed_out = True
                break
            tag, line = got
            if tag == pipes.EOF:
                break
            last = time.perf_counter()
            first = first or last
            count += 1
            if sink is None:
                lines.append(line.removesuffix(b"\n"))
                size += len(line)
            else:
                sink(line.removesuffix(b"\n"))
            if tag != pipes.LINE:  # an unfinished or over-long last line: the stream is done
                overlong = tag == pipes.OVERLONG
                break
        status = None
        if not timed_out and not cut:
            grace = EXIT_GRACE if answers_due is not None else deadline - time.monotonic()
            status = adapter.wait(max(0.0, min(grace, deadline - time.monotonic())))
            timed_out = status is None
    finally:
        adapter.kill()
        reader.close()
    return Transcript(
        tuple(lines),
        status,
        timed_out,
        adapter.stderr_tail(),
        time.monotonic() - started,
        overlong,
        cut,
        first,
        last,
        count,
    )
