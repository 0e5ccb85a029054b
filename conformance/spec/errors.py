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

A signal that stops a command (:data:`conformance.transport.process.STOP_SIGNALS`: SIGINT,
SIGTERM, SIGHUP) kills every adapter at once; the command then writes the outputs of what
finished (every stage: the vectors, the checks, the triage, a matrix's finished ports) and
exits 128 plus the signal's number, as a shell reports it. A closed or full stdout or stderr
does not change the exit status: the outputs are still written and the status still tells
pass from fail.

A fault of the kit itself (an exception no rule above expects: a bug) is never reported as a
port's: the command prints one line saying so and where the full traceback was saved
(:func:`report_internal_error`) and exits :data:`EXIT_INTERNAL`, a status of its own.

The exit statuses, the same for every subcommand and for ``pytest --snapkv-adapter`` where it
has its own say (an interruption, a fault of the kit):

======  ========================  =============================================================
status  name                      meaning
======  ========================  =============================================================
0       :data:`EXIT_OK`           everything judged passed
1       :data:`EXIT_FAILED`       something was judged wrong: a failing vector or check, a
                                  surviving mutant, a difference found by ``fuzz`` or ``bench``
2       :data:`EXIT_USAGE`        nothing could be judged: bad arguments, an invalid or
                                  unreadable input file, an adapter that cannot start or shake
                                  hands, an output file that cannot be written
70      :data:`EXIT_INTERNAL`     a bug in the kit (not in the port): one line names the file
                                  holding the traceback (``EX_SOFTWARE`` of ``sysexits.h``)
129     :data:`EXIT_HANGUP`       SIGHUP (a closed terminal or ssh session); outputs written
130     :data:`EXIT_INTERRUPTED`  SIGINT (Ctrl-C); outputs written
141     :data:`EXIT_BROKEN_PIPE`  ``adapter`` only: its reader went away, as SIGPIPE would say
143     :data:`EXIT_TERMINATED`   SIGTERM (a cancelled CI job); outputs written
======  ========================  =============================================================
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from conformance.spec.text import KEEP_TEXT, capped, escape

#: Exit statuses, the same for every subcommand (the table in the module docstring).
EXIT_OK = 0
EXIT_FAILED = 1  # the run judged something wrong: a failing vector, a surviving mutant, ...
EXIT_USAGE = 2  # the run could not be judged: bad arguments, invalid vectors, no handshake
EXIT_INTERNAL = 70  # a bug in the kit, never the port's (sysexits.h's EX_SOFTWARE)
EXIT_HANGUP = 129  # SIGHUP (a closed terminal), as a shell reports it
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT
EXIT_TERMINATED = 143  # SIGTERM (a cancelled CI job)
EXIT_BROKEN_PIPE = 141  # the reference adapter's reader went away, as SIGPIPE would report

#: Every exit status by name, in the order of the table above (for the CLI reference).
EXIT_STATUSES: dict[str, int] = {
    "EXIT_OK": EXIT_OK,
    "EXIT_FAILED": EXIT_FAILED,
    "EXIT_USAGE": EXIT_USAGE,
    "EXIT_INTERNAL": EXIT_INTERNAL,
    "EXIT_HANGUP": EXIT_HANGUP,
    "EXIT_INTERRUPTED": EXIT_INTERRUPTED,
    "EXIT_BROKEN_PIPE": EXIT_BROKEN_PIPE,
    "EXIT_TERMINATED": EXIT_TERMINATED,
}


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
        self.pointer = capped(pointer, KEEP_TEXT)
        # Capped: a schema's message may quote the whole value it refuses (a million names).
        self.reason = capped(reason, KEEP_TEXT)
        super().__init__(f"{self.path}: {self.pointer or '/'}: {self.reason}")


#: The most of a message :func:`print_error` prints: room for an adapter's stderr tail (20 lines
#: of at most 300 characters), bounded whatever a message quotes.
MESSAGE_KEEP = 8 * KEEP_TEXT


def print_error(command: str, message: str, stream: IO[str] | None = None) -> int:
    """Print ``snapkv-conformance COMMAND: error: MESSAGE`` on stderr and return
    :data:`EXIT_USAGE`, for ``return print_error(...)``.

    The message is escaped for a terminal (it may quote adapter text or file names) and capped
    at :data:`MESSAGE_KEEP` characters; a closed or full stderr is ignored, since there is
    nowhere left to complain.
    """
    out = stream if stream is not None else sys.stderr
    with contextlib.suppress(OSError, ValueError):
        out.write(f"snapkv-conformance {command}: error: {escape(capped(message, MESSAGE_KEEP))}\n")
        out.flush()
    return EXIT_USAGE


#: Where :func:`report_internal_error` saves a traceback: a new file in the temporary directory.
INTERNAL_ERROR_PREFIX = "snapkv-conformance-internal-error-"


def report_internal_error(
    command: str,
    error: BaseException,
    argv: Sequence[str] = (),
    stream: IO[str] | None = None,
) -> int:
    """A fault of the kit itself (``error``, raised where no rule expects one): print
    :func:`internal_error_line` on stderr and return :data:`EXIT_INTERNAL` (never 1, which
    would blame the port, nor 2)."""
    line = internal_error_line(command, error, argv)
    out = stream if stream is not None else sys.stderr
    with contextlib.suppress(OSError, ValueError):
        out.write(line + "\n")
        out.flush()
    return EXIT_INTERNAL


def internal_error_line(command: str, error: BaseException, argv: Sequence[str] = ()) -> str:
    """Save the full traceback of ``error`` to a new file in the temporary directory (with
    ``argv``, the command's arguments, for the bug report) and return the one line that says
    the kit, not the port, is at fault and where the traceback is."""
    from conformance import __version__

    details = "".join(traceback.format_exception(error))
    try:
        descriptor, path = tempfile.mkstemp(prefix=INTERNAL_ERROR_PREFIX, suffix=".txt")
        with os.fdopen(descriptor, "w", encoding="utf-8", errors="backslashreplace") as saved:
            saved.write(
                f"snapkv-conformance {__version__}, Python {sys.version.split()[0]}\n"
                f"command: {command}; arguments: {' '.join(argv)}\n\n{details}"
            )
        where = f"the full traceback is saved in {path}"
    except OSError as problem:
        where = f"the traceback could not be saved ({problem.strerror or problem})"
    what = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return (
        f"snapkv-conformance {command}: internal error: "
        f"{escape(capped(what, KEEP_TEXT), one_line=True)}: this is a bug in "
        f"snapkv-conformance, not in the port under test; {where}; please report it"
    )
