"""``snapkv-conformance fuzz``: differential fuzzing of a port against the reference.

Exit status: 0 when no difference was found, 1 when one was (it is saved as a vector and the
command to replay it is printed), 2 for a usage error or an adapter that cannot start, shake
hands or be restarted.
"""

from __future__ import annotations

import argparse
import random
import shlex
import sys
from typing import IO

from conformance.cli.commands._options import (
    add_count,
    add_required_adapter,
    add_timeout,
    int_at_least,
    output_problem,
)
from conformance.spec.errors import EXIT_FAILED, EXIT_OK, print_error

HELP = "Fuzz an adapter against the reference; shrink the first difference to a vector."

DEFAULT_SAVE = "snapkv-fuzz-failures"


def configure(parser: argparse.ArgumentParser) -> None:
    from conformance.tools.fuzz import DEFAULT_MAX_EXAMPLES, DEFAULT_MAX_SHRINKS

    add_required_adapter(parser)
    add_count(
        parser,
        "--max-examples",
        DEFAULT_MAX_EXAMPLES,
        f"scenarios to try before giving up (default {DEFAULT_MAX_EXAMPLES})",
    )
    add_count(
        parser,
        "--max-shrinks",
        DEFAULT_MAX_SHRINKS,
        f"scenarios to run while shrinking a difference (default {DEFAULT_MAX_SHRINKS})",
    )
    parser.add_argument(
        "--seed",
        type=int_at_least(0),
        metavar="S",
        help="random seed (an integer >= 0); the same seed and adapter give the same run "
        "(default: a fresh seed, printed so the run can be repeated)",
    )
    parser.add_argument(
        "--save",
        metavar="DIR",
        default=DEFAULT_SAVE,
        help=f"where to write the failing vector, as DIR/<id>.json (default ./{DEFAULT_SAVE})",
    )
    parser.add_argument(
        "--accept",
        action="append",
        default=[],
        metavar="NAME",
        help="treat the catalogued mistake NAME (see snapkv-conformance mutants) as the "
        "reference, so that the next, different mistake is found (repeatable)",
    )
    add_timeout(parser)


class FuzzProgress:
    """``fuzz: N examples`` rewritten in place on a terminal; silent elsewhere."""

    def __init__(self, stream: IO[str]) -> None:
        from conformance.report.terminal import StatusLine

        self.line = StatusLine(stream)
        self.enabled = self.line.enabled

    def __call__(self, examples: int, shrinks: int | None) -> None:
        text = f"fuzz: {examples} examples, no difference"
        if shrinks is not None:
            text = f"fuzz: difference found after {examples} examples; shrinking ({shrinks})"
        self.line.show(text)

    def finish(self) -> None:
        self.line.finish()


def _error(message: str) -> int:
    return print_error("fuzz", message)


def run(args: argparse.Namespace) -> int:
    from conformance.suite.vectors import dumps_vector
    from conformance.tools import fuzz
    from conformance.transport.session import AdapterProcess, AdapterStartError

    try:
        argv = shlex.split(args.adapter)
    except ValueError as error:
        return _error(f"--adapter: cannot split {args.adapter!r}: {error}")
    if not argv:
        return _error("--adapter is empty")
    problem = output_problem("--save", args.save, directory=True)
    if problem is not None:
        return _error(problem)
    try:
        reference = fuzz.accepting(args.accept) if args.accept else None
    except ValueError as error:
        return _error(f"--accept: {error}")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    adapter = AdapterProcess(argv, args.timeout)
    try:
        handshake = adapter.start()
    except (AdapterStartError, OSError) as error:
        return _error(f"the adapter cannot start: {error}")
    port = handshake.describe()
    against = "the reference"
    if args.accept:
        against += " with " + " + ".join(dict.fromkeys(args.accept)) + " accepted"
    print(f"fuzzing {port} against {against}: seed {seed}, up to {args.max_examples} examples")
    progress = FuzzProgress(sys.stderr)
    try:
        result = fuzz.fuzz(
            adapter,
            max_examples=args.max_examples,
            seed=seed,
            max_shrinks=args.max_shrinks,
            progress=progress,
            **({"reference": reference} if reference is not None else {}),
        )
    except fuzz.AdapterLost as error:
        progress.finish()
        return _error(str(error))
    except fuzz.NondeterministicAdapter as error:
        progress.finish()
        print(f"the adapter is not deterministic: {error}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: no bye, it may be mid-answer (cli.main reports)
        progress.finish()
        adapter.kill()
        raise
    finally:
        adapter.close()  # a no-op after kill()
    progress.finish()
    if result.finding is None:
        print(f"no difference in {result.examples} examples (seed {seed})")
        return EXIT_OK
    finding = result.finding
    vector = fuzz.difference_vector(finding, port, seed)
    try:
        path = fuzz.save_vector(vector, args.save)
    except OSError as error:
        # The finding must not be lost with the file: print the vector itself instead.
        print(f"difference found: {finding.difference.describe(finding.scenario)}")
        print(dumps_vector(vector), end="")
        blocker = fuzz.in_the_way(args.save, vector)
        if blocker is not None:
            return _error(
                f"--save {args.save}: cannot write the vector (printed above): {blocker} is "
                "a file, where a directory is needed"
            )
        return _error(f"--save {args.save}: cannot write the vector (printed above): {error}")
    print(
        f"difference found after {finding.examples_to_find} examples, shrunk to "
        f"{len(vector.calls)} calls in {finding.shrink_attempts} more runs:\n"
        f"  {finding.difference.describe(finding.scenario)}\n"
        f"saved: {path}\n"
        f"replay: snapkv-conformance run {shlex.quote(str(path))} "
        f"--adapter {shlex.quote(args.adapter)}"
    )
    return EXIT_FAILED
