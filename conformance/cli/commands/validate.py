"""``snapkv-conformance validate``: check vector files against the schema, the rules and the
reference."""

from __future__ import annotations

import argparse

from conformance.cli.commands._options import add_paths

HELP = "Validate vector files (default: the committed suite); exit 0 if valid, 2 if not."


def configure(parser: argparse.ArgumentParser) -> None:
    add_paths(parser)


def run(args: argparse.Namespace) -> int:
    from conformance.suite.validation import validate_paths

    report = validate_paths(args.paths)
    for problem in report.problems:
        print(problem)
    print(report.summary())
    return 0 if report.ok else 2
