"""``snapkv-conformance adapter``: serve the reference (or a mutant) over protocol v1."""

from __future__ import annotations

import argparse

from conformance.adapter import server as adapter

HELP = "Serve the reference policy over adapter protocol v1 on stdin/stdout."


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mutant",
        metavar="NAME",
        help="serve the named mutant from the catalogue instead of the reference "
        "(see 'snapkv-conformance mutants --list')",
    )


def run(args: argparse.Namespace) -> int:
    adapter.single_threaded_blas()  # before the mutants' modules import numpy
    if args.mutant is None:
        return adapter.main()
    from conformance.mutants import mutant_adapter_main

    return mutant_adapter_main(args.mutant)
