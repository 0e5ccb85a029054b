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
    parser.add_argument(
        "--slip",
        metavar="NAME",
        help="serve the reference adapter with the named slip: one sentence of SPEC.md broken "
        "(see 'snapkv-conformance mutants --slips --list')",
    )


def run(args: argparse.Namespace) -> int:
    from conformance.adapter import server as adapter  # the server and its codec: not for --help

    adapter.single_threaded_blas()  # before the fast path or the mutants' modules import numpy
    if args.slip is not None:
        return serve_slip(args.slip)
    if args.mutant is None:
        # numpy: the reference adapter serves the fast path, bit for bit the reference
        from conformance.policy.fast import fast_policy

        return adapter.main(fast_policy)
    return serve_mutant(args.mutant)


def serve_mutant(name: str) -> int:
    """Serve the mutant ``name`` over protocol v1 on stdin/stdout (exit 2 for an unknown name).

    The ``hello`` answer names the implementation ``mutant:<name>``.
    """
    # numpy: a mutant's adapter loads the mutant's family module (not the whole catalogue: a
    # run starts this adapter once per protocol check)
    from conformance import mutants
    from conformance.adapter import server as adapter

    try:
        mutant = mutants.lookup(name)
    except KeyError as error:
        print(f"snapkv-conformance adapter: {error.args[0]}", file=sys.stderr)
        return 2
    if mutant.family != "protocol":
        # Only the protocol family's choices read a line otherwise than the reference adapter
        # (tests/cli/test_adapter.py checks it over the catalogue): the reference's server.
        return adapter.main(mutant.factory, mutant.implementation())
    from conformance.explain.play import answer_lines

    # A protocol-level choice reads the lines themselves otherwise: served line by line.
    out = sys.stdout.buffer
    for answer in answer_lines(mutant.policy, sys.stdin.buffer, mutant.implementation()):
        if answer is None:  # the mistake crashes here, as a port's process would
            print(f"snapkv-conformance adapter: {name} crashed", file=sys.stderr)
            return 1
        out.write(answer + b"\n")
        out.flush()
    return 0


def serve_slip(name: str) -> int:
    """Serve the slip ``name`` on stdin/stdout and exit with the status it chooses (exit 2 for an
    unknown name). The ``hello`` answer names the implementation ``slip:<name>``."""
    # The slip's own module (a policy slip made from a catalogued mutant: the mutant's, numpy)
    from conformance import slips

    try:
        entry = slips.lookup(name)
    except KeyError as error:
        print(f"snapkv-conformance adapter: {error.args[0]}", file=sys.stderr)
        return 2
    server = entry.make(implementation=entry.implementation())
    with open(sys.stdin.fileno(), "rb", buffering=1 << 20, closefd=False) as instream:
        return server.serve(instream, sys.stdout.buffer)
