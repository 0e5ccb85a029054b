"""The ``snapkv-conformance`` command line: a thin dispatcher over ``conformance.cli.commands``.

Each subcommand lives in its own module under :mod:`conformance.cli.commands` with three names:
``HELP`` (one line), ``configure(parser)`` and ``run(args) -> int``. Exit codes are the
subcommand's; argparse's usage errors exit 2; the whole table is in
:mod:`conformance.spec.errors`. For every subcommand, the transport's signal policy holds
(:func:`conformance.transport.process.signal_policy`): SIGINT exits 130, SIGTERM 143 and SIGHUP
129, with one line on stderr (no traceback; a subcommand's ``finally`` blocks and the runner's
cleanup, which kills the adapters, still run, and a command writes what finished). A closed or
full stdout or stderr (``2>&1 | head -1``, ``2>/dev/full``) silences what is left of the
printed output and nothing else: the command goes on, writes its output files and exits with
the status it would have had (:class:`conformance.report.outputs.GuardedStream`). The
reference adapter, whose stdout is the protocol, exits 141 when its reader goes away, as a
program killed by SIGPIPE would. An exception no rule expects is the kit's own fault: one line
says so and where its traceback was saved, and the status is 70
(:func:`conformance.spec.errors.report_internal_error`), never 1, which would blame the port.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence

from conformance import __version__
from conformance.spec.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    KitError,
    print_error,
    report_internal_error,
)

#: Subcommand names, in ``--help`` order; each is the module ``conformance.cli.commands.<name>``
#: (a hyphen in the name is an underscore in the module's).
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
    "spec-coverage",
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
        module = importlib.import_module(f"conformance.cli.commands.{name.replace('-', '_')}")
        sub = subparsers.add_parser(name, help=module.HELP, description=module.HELP)
        if name == selected:
            module.configure(sub)
            sub.set_defaults(handler=module.run, subparser=sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    selected = next((arg for arg in argv if not arg.startswith("-")), None)
    parser = build_parser(selected)
    args, extra = parser.parse_known_args(argv)
    if extra:  # the subcommand's usage, not the top level's, says what it takes
        getattr(args, "subparser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    # Only now: --help, --version and a usage error exit above without the process registry
    # and the output guard, which are most of this module's import time.
    from conformance.report.outputs import guarded_streams
    from conformance.transport import process

    process.begin()
    process.become_subreaper()  # orphaned descendants of adapters come to the kit
    try:
        with process.signal_policy(), guarded_streams():
            try:
                return int(args.handler(args))
            except (KeyboardInterrupt, BrokenPipeError):
                raise
            except KitError as error:  # a stage's one-line error that its command let through
                return print_error(args.command, str(error))
            except Exception as error:  # a bug of the kit's: never blamed on the port
                return report_internal_error(args.command, error, argv)
    except KeyboardInterrupt as interrupt:
        stopped = interrupt if isinstance(interrupt, process.Interrupted) else None
        what = stopped.name if stopped is not None else "interrupted"
        with contextlib.suppress(OSError, ValueError):
            print(f"snapkv-conformance {args.command}: {what}", file=sys.stderr)
        return stopped.status if stopped is not None else EXIT_INTERRUPTED
    except BrokenPipeError:
        # Raised only by binary writes to stdout (the reference adapter's answers), which the
        # guard does not cover: an adapter whose reader went away has nobody to answer. Point
        # stdout at /dev/null so that the interpreter's final flush does not fail again.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    finally:
        process.shutdown()  # nothing an adapter started outlives the command


if __name__ == "__main__":
    sys.exit(main())
