"""The ``snapkv-conformance`` command line: a thin dispatcher over ``conformance.cli.commands``.

Each subcommand lives in its own module under :mod:`conformance.cli.commands` with three names:
``HELP`` (one line), ``configure(parser)`` and ``run(args) -> int``. Exit codes are the
subcommand's; argparse's usage errors exit 2. For every subcommand, Ctrl-C exits 130 and
SIGTERM 143 with one line on stderr (no traceback; a subcommand's ``finally`` blocks and the
runner's cleanup, which kills the adapters, still run). A closed or full stdout (``| head -1``,
``> /dev/full``) silences what is left of the printed output and nothing else: the command
goes on, writes its output files and exits with the status it would have had
(:class:`conformance.report.outputs.GuardedStream`). The reference adapter, whose stdout is the
protocol, exits 141 when its reader goes away, as a program killed by SIGPIPE would.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from conformance import __version__
from conformance.spec.errors import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_TERMINATED

#: Subcommand names, in ``--help`` order; each is the module ``conformance.cli.commands.<name>``.
COMMANDS: tuple[str, ...] = (
    "run",
    "show",
    "validate",
    "generate",
    "adapter",
    "mutants",
    "fuzz",
    "matrix",
    "record",
    "bench",
)


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The parser; only the ``selected`` subcommand's module is imported and configured.

    Importing one module rather than all keeps ``snapkv-conformance adapter`` quick to start.
    """
    parser = argparse.ArgumentParser(
        prog="snapkv-conformance",
        description="Conformance kit for ports of the SnapKV KV-cache eviction policy.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    # A valid subcommand needs only its own module (``run`` then imports no numpy); the full
    # list is for --help and for a name that is not a subcommand.
    for name in (selected,) if selected in COMMANDS else COMMANDS:
        module = importlib.import_module(f"conformance.cli.commands.{name}")
        sub = subparsers.add_parser(name, help=module.HELP, description=module.HELP)
        if name == selected:
            module.configure(sub)
            starts = getattr(module, "STARTS_PROCESSES", True)
            sub.set_defaults(handler=module.run, subparser=sub, starts_processes=starts)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM (a cancelled CI job), raised like Ctrl-C so that the same cleanup runs."""


def _interrupt(signum: int, frame: Any) -> None:
    """The signal policy: every adapter is killed at once and no new one starts, so whatever
    waits on one is released; then the command unwinds as from Ctrl-C."""
    process = sys.modules.get("conformance.transport.process")  # loaded by a command that
    if process is not None:  # starts processes, before this handler is set
        process.interrupt_all()
    raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt


@contextlib.contextmanager
def _signal_policy() -> Iterator[None]:
    """:func:`_interrupt` for SIGINT and SIGTERM for the duration (main thread only)."""
    try:
        previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    selected = next((arg for arg in argv if not arg.startswith("-")), None)
    parser = build_parser(selected)
    args, extra = parser.parse_known_args(argv)
    if extra:  # the subcommand's usage, not the top level's, says what it takes
        getattr(args, "subparser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    # Only now, and only for a command that starts processes: --help, --version, a usage
    # error and the reference adapter (which starts none, and whose start-up is part of every
    # run against it) go without the process registry and the output guard, which are most
    # of this module's import time.
    process: Any = None
    guard: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext
    if args.starts_processes:
        from conformance.report.outputs import guarded_stdout
        from conformance.transport import process

        process.begin()
        process.become_subreaper()  # orphaned descendants of adapters come to the kit
        guard = guarded_stdout
    try:
        with _signal_policy(), guard():
            return int(args.handler(args))
    except KeyboardInterrupt as interrupt:
        terminated = isinstance(interrupt, Terminated)
        what = "terminated" if terminated else "interrupted"
        with contextlib.suppress(OSError, ValueError):
            print(f"snapkv-conformance {args.command}: {what}", file=sys.stderr)
        return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    except BrokenPipeError:
        # Raised only by binary writes to stdout (the reference adapter's answers), which the
        # guard does not cover: an adapter whose reader went away has nobody to answer. Point
        # stdout at /dev/null so that the interpreter's final flush does not fail again.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    finally:
        if process is not None:
            process.shutdown()  # nothing an adapter started outlives the command


if __name__ == "__main__":
    sys.exit(main())
