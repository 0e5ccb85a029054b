"""The errors that stop a command, the exit statuses, and the one line a stopped command prints.

Each stage of a run has its exception; all derive from :class:`KitError`:

- **reading the command line**: argparse's usage error, or
  :class:`conformance.transport.process.CommandError` for an adapter command that cannot be
  split (exit 2);
- **loading the suite**: :class:`conformance.spec.errors.VectorError` (a vector or check file:
  file, JSON pointer, reason), :class:`conformance.suite.protocol_checks.CheckError` for a
  protocol-check file, or
  :class:`conformance.suite.discovery.KnownFailuresError` for a known-failures file (exit 2);
- **generating vectors**: :class:`conformance.spec.errors.GenerationError` (exit 2);
- **starting an adapter**: :class:`conformance.transport.process.StartError` (the command
  cannot run: missing, not executable, ...) and
  :class:`conformance.transport.failures.AdapterStartError` (no handshake) (exit 2): a run
  cannot judge an adapter that never said hello;
- **running**: nothing escapes; what goes wrong with an adapter while vectors run
  (:class:`conformance.transport.failures.AdapterFailure`: crash, timeout, protocol error)
  becomes that vector's verdict, and the run goes on (exit 1 when a verdict fails the run);
- **writing outputs** (``--report``, ``--junit``, ``--write-known-failures``, ``--out``,
  ``--json``, ``--save``): :class:`conformance.report.outputs.OutputError` (exit 2), raised only
  after everything else was written and the summary printed.

Ctrl-C exits :data:`EXIT_INTERRUPTED`, SIGTERM :data:`EXIT_TERMINATED`
(:mod:`conformance.cli`): every adapter is killed at once, and ``run`` writes the outputs of
what finished first. A closed stdout does not change the exit status: the outputs are
still written and the status still tells pass from fail.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import IO

from conformance.spec.text import escape

#: Exit statuses, the same for every subcommand.
EXIT_OK = 0
EXIT_FAILED = 1  # the run judged something wrong: a failing vector, a surviving mutant, ...
EXIT_USAGE = 2  # the run could not be judged: bad arguments, invalid vectors, no handshake
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT
EXIT_TERMINATED = 143  # SIGTERM (a cancelled CI job)
EXIT_BROKEN_PIPE = 141  # the reference adapter's reader went away, as SIGPIPE would report


class KitError(Exception):
    """An error that stops a command with a one-line message (see the module docstring)."""


class GenerationError(KitError):
    """A draft (a vector's or a protocol check's) that the reference does not bear out, or a
    broken suite: raised while generating, and by ``validate`` for a check whose expectations
    are not the reference's answers."""


class VectorError(KitError):
    """A suite file (a vector or a protocol check) that cannot be used: names the file, the
    JSON pointer and the reason."""

    def __init__(self, path: str | Path | None, pointer: str, reason: str) -> None:
        self.path = str(path) if path is not None else "<vector>"
        self.pointer = pointer
        self.reason = reason
        super().__init__(f"{self.path}: {pointer or '/'}: {reason}")


def print_error(command: str, message: str, stream: IO[str] | None = None) -> int:
    """Print ``snapkv-conformance COMMAND: error: MESSAGE`` on stderr and return
    :data:`EXIT_USAGE`, for ``return print_error(...)``.

    The message is escaped for a terminal (it may quote adapter text or file names); a
    closed or full stderr is ignored, since there is nowhere left to complain.
    """
    out = stream if stream is not None else sys.stderr
    with contextlib.suppress(OSError, ValueError):
        out.write(f"snapkv-conformance {command}: error: {escape(message)}\n")
        out.flush()
    return EXIT_USAGE
