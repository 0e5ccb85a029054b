"""``snapkv-conformance adapter``: serve the reference (or a mutant) over protocol v1."""

from __future__ import annotations

import argparse
import sys

HELP = "Serve the reference policy over adapter protocol v1 on stdin/stdout."


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mutant",
        metavar="NAME",
        help="serve the named mutant from the catalogue instead of the reference "
        "(see 'snapkv-conformance mutants --list')",
    )


def run(args: argparse.Namespace) -> int:
    from conformance.adapter import server as adapter  # the server and its codec: not for --help

    adapter.single_threaded_blas()  # before the fast path or the mutants' modules import numpy
    if args.mutant is None:
        # numpy: the reference adapter serves the fast path, bit for bit the reference
        from conformance.policy.fast import fast_policy

        return adapter.main(fast_policy)
    return serve_mutant(args.mutant)


def serve_mutant(name: str) -> int:
    """Serve the mutant ``name`` over protocol v1 on stdin/stdout (exit 2 for an unknown name).

    The ``hello`` answer names the implementation ``mutant:<name>``.
    """
    from conformance import mutants  # numpy: only a mutant's adapter loads the catalogue
    from conformance.adapter import server as adapter

    try:
        mutant = mutants.lookup(name)
    except KeyError as error:
        print(f"snapkv-conformance adapter: {error.args[0]}", file=sys.stderr)
        return 2
    return adapter.main(mutant.factory, mutant.implementation())
