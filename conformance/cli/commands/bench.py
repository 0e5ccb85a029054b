"""``snapkv-conformance bench``: a port's speed beside the reference adapter's.

Exit status: 0 when the port's answers agreed with the reference's on every workload, 1 when
they did not, 2 for a usage error or an adapter that cannot be started or timed.
"""

from __future__ import annotations

import argparse

from conformance.cli.commands._options import (
    add_count,
    add_required_adapter,
    int_at_least,
    positive_float,
)
from conformance.spec.errors import EXIT_FAILED, EXIT_OK, print_error

HELP = "Time an adapter against the reference adapter on standard decode workloads."


def configure(parser: argparse.ArgumentParser) -> None:
    from conformance.tools.bench import WORKLOADS

    add_required_adapter(parser)
    add_count(parser, "--repeats", 5, "interleaved runs of each adapter per workload (default 5)")
    parser.add_argument(
        "--workload",
        action="append",
        choices=[w.name for w in WORKLOADS],
        help="run only this workload (repeatable; default: all). "
        + "; ".join(w.describe() for w in WORKLOADS),
    )
    parser.add_argument(
        "--steps",
        type=int_at_least(1),
        metavar="N",
        help="decode steps per workload (default: each workload's own)",
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=600.0,
        metavar="SECONDS",
        help="seconds allowed for one adapter's whole run (default 600)",
    )


def _error(message: str) -> int:
    return print_error("bench", message)


def run(args: argparse.Namespace) -> int:
    import dataclasses

    from conformance.spec.text import escape
    from conformance.tools import bench
    from conformance.transport.process import CommandError, split_command

    try:
        argv = split_command(args.adapter)
    except CommandError as error:
        return _error(str(error))
    workloads = [w for w in bench.WORKLOADS if not args.workload or w.name in args.workload]
    if args.steps:
        workloads = [dataclasses.replace(w, steps=args.steps) for w in workloads]
    shown = escape(args.adapter, one_line=True)  # the adapter's name reaches a terminal
    adapters = [("reference", bench.REFERENCE_ARGV), (shown, argv)]
    print(f"bench: {shown} against the reference adapter; {bench.load_average()}")
    try:
        results = bench.bench(adapters, workloads, args.repeats, args.timeout)
    except bench.BenchError as error:
        return _error(str(error))
    port = results[0].sides[1].timings[0].hello
    print(f"port: {bench.identity(port)}")
    print(bench.format_results(results, args.repeats))
    print(f"after the run: {bench.load_average()}")
    if not bench.agreed(results):
        print("the port's answers differ from the reference's (see above)")
        return EXIT_FAILED
    return EXIT_OK
