"""The ``snapkv-conformance`` command line: a thin dispatcher over ``conformance.commands``.

Each subcommand lives in its own module under :mod:`conformance.commands` with three names:
``HELP`` (one line), ``configure(parser)`` and ``run(args) -> int``. Exit codes are the
subcommand's; argparse's usage errors exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from conformance import __version__

#: Subcommand names, in ``--help`` order; each is the module ``conformance.commands.<name>``.
COMMANDS: tuple[str, ...] = ("run", "validate", "generate", "adapter", "mutants", "fuzz", "matrix")


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
    for name in COMMANDS:
        module = importlib.import_module(f"conformance.commands.{name}")
        sub = subparsers.add_parser(name, help=module.HELP, description=module.HELP)
        if name == selected:
            module.configure(sub)
            sub.set_defaults(handler=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    selected = next((arg for arg in argv if not arg.startswith("-")), None)
    args = build_parser(selected).parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
