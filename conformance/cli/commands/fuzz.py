"""``snapkv-conformance fuzz``: differential fuzzing of a port against the reference.

By default policy call sequences, shrunk to a vector; with ``--protocol`` raw request lines,
each session in a fresh adapter process, shrunk to a protocol check.

Exit status: 0 when no difference was found, 1 when one was (it is saved as a vector or a
protocol check and the command to replay it is printed), 2 for a usage error or an adapter that
cannot start, shake hands or be restarted.
"""

from __future__ import annotations

import argparse
import random
import shlex
import sys
from typing import IO

from conformance.cli.commands._options import (
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
    from conformance.tools.protocol_fuzz import DEFAULT_MAX_SESSIONS
    from conformance.tools.protocol_fuzz import DEFAULT_MAX_SHRINKS as PROTOCOL_SHRINKS

    add_required_adapter(parser)
    parser.add_argument(
        "--protocol",
        action="store_true",
        help="fuzz the protocol layer: raw request lines (numbers of every spelling, ids of "
        "every size, repeated names, escapes, whitespace, extra fields, unknown ops), each "
        "session in a fresh adapter process; a difference is saved as a protocol check",
    )
    parser.add_argument(
        "--max-examples",
        type=int_at_least(1),
        metavar="N",
        help=f"scenarios to try before giving up (default {DEFAULT_MAX_EXAMPLES}; with "
        f"--protocol, sessions, default {DEFAULT_MAX_SESSIONS})",
    )
    parser.add_argument(
        "--max-shrinks",
        type=int_at_least(1),
        metavar="N",
        help=f"runs while shrinking a difference (default {DEFAULT_MAX_SHRINKS}; with "
        f"--protocol, {PROTOCOL_SHRINKS})",
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
        "--database",
        metavar="DIR",
        help="keep hypothesis's example database in DIR (created if missing): failures found "
        "there by earlier runs are tried first, and this run's are added. A directory a CI "
        "cache can carry; the databases of several jobs merge by copying. Default: none, and "
        "nothing is written but the saved finding",
    )
    parser.add_argument(
        "--shard",
        metavar="I/N",
        help="search shard I of N (1 <= I <= N) of the campaign with this --seed: N jobs "
        "given the same seed and --shard 1/N ... N/N search N different parts of the space",
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

    def __init__(self, stream: IO[str], unit: str = "examples") -> None:
        from conformance.report.terminal import StatusLine

        self.line = StatusLine(stream)
        self.enabled = self.line.enabled
        self.unit = unit

    def __call__(self, examples: int, shrinks: int | None) -> None:
        text = f"fuzz: {examples} {self.unit}, no difference"
        if shrinks is not None:
            text = f"fuzz: difference found after {examples} {self.unit}; shrinking ({shrinks})"
        self.line.show(text)

    def finish(self) -> None:
        self.line.finish()


def _error(message: str) -> int:
    return print_error("fuzz", message)


def run(args: argparse.Namespace) -> int:
    from conformance.runner.client import Client
    from conformance.spec.inputs import InputError
    from conformance.spec.text import escape
    from conformance.suite.discovery import parse_shard
    from conformance.suite.vectors import dumps_vector
    from conformance.tools import fuzz
    from conformance.transport.failures import AdapterStartError
    from conformance.transport.process import CommandError, split_command

    try:
        argv = split_command(args.adapter)
    except CommandError as error:
        return _error(str(error))
    problem = output_problem("--save", args.save, directory=True)
    if problem is None and args.database is not None:
        problem = output_problem("--database", args.database, directory=True)
    if problem is not None:
        return _error(problem)
    try:
        fuzz.example_database(args.database)  # every entry readable, before the adapter starts
    except InputError as error:
        return _error(f"--database: {error}")
    try:
        shard = parse_shard(args.shard) if args.shard is not None else None
    except ValueError as error:
        return _error(f"--shard: {error}")
    if args.protocol and args.accept:
        return _error("--accept names mistakes of the policy; --protocol fuzzes the protocol layer")
    try:
        reference = fuzz.accepting(args.accept) if args.accept else None
    except ValueError as error:
        return _error(f"--accept: {error}")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    adapter = Client.process(argv, args.timeout)
    try:
        handshake = adapter.start()
    except (AdapterStartError, OSError) as error:
        return _error(f"the adapter cannot start: {error}")
    port = escape(handshake.describe(), one_line=True)  # the adapter's words reach a terminal
    search = fuzz.shard_seed(seed, shard)
    where = f"seed {seed}" + (
        f", shard {shard[0]}/{shard[1]} (search seed {search})" if shard else ""
    )
    if args.protocol:
        adapter.close()  # each session is a process of its own
        return _fuzz_protocol(args, argv, port, seed, search, where)
    against = "the reference"
    if args.accept:
        against += " with " + " + ".join(dict.fromkeys(args.accept)) + " accepted"
    examples = args.max_examples or fuzz.DEFAULT_MAX_EXAMPLES
    print(f"fuzzing {port} against {against}: {where}, up to {examples} examples")
    progress = FuzzProgress(sys.stderr)
    try:
        result = fuzz.fuzz(
            adapter,
            max_examples=examples,
            seed=search,
            max_shrinks=args.max_shrinks or fuzz.DEFAULT_MAX_SHRINKS,
            progress=progress,
            database=args.database,
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
        print(f"no difference in {result.examples} examples ({where})")
        return EXIT_OK
    finding = result.finding
    vector = fuzz.difference_vector(finding, port, search)
    try:
        path = fuzz.save_vector(vector, args.save)
    except OSError as error:
        # The finding must not be lost with the file: print the vector itself instead.
        print(escape(f"difference found: {finding.difference.describe(finding.scenario)}"))
        print(dumps_vector(vector), end="")
        blocker = fuzz.in_the_way(args.save, vector)
        if blocker is not None:
            return _error(
                f"--save {args.save}: cannot write the vector (printed above): {blocker} is "
                "a file, where a directory is needed"
            )
        return _error(f"--save {args.save}: cannot write the vector (printed above): {error}")
    print(
        escape(
            f"difference found after {finding.examples_to_find} examples, shrunk to "
            f"{len(vector.calls)} calls in {finding.shrink_attempts} more runs:\n"
            f"  {finding.difference.describe(finding.scenario)}\n"
            f"saved: {path}\n"
            f"replay: snapkv-conformance run {shlex.quote(str(path))} "
            f"--adapter {shlex.quote(args.adapter)}"
        )
    )
    return EXIT_FAILED


def _fuzz_protocol(
    args: argparse.Namespace, argv: list[str], port: str, seed: int, search: int, where: str
) -> int:
    """``fuzz --protocol``: raw lines, a fresh session each, a difference saved as a check."""
    from conformance.spec.text import escape
    from conformance.suite.protocol_checks import dumps_check
    from conformance.tools import fuzz, protocol_fuzz

    sessions = args.max_examples or protocol_fuzz.DEFAULT_MAX_SESSIONS
    print(
        f"fuzzing the protocol layer of {port} against the reference adapter: {where}, up to "
        f"{sessions} sessions"
    )
    progress = FuzzProgress(sys.stderr, "sessions")
    try:
        result = protocol_fuzz.fuzz_protocol(
            protocol_fuzz.ProcessSessions(argv, args.timeout),
            max_examples=sessions,
            seed=search,
            max_shrinks=args.max_shrinks or protocol_fuzz.DEFAULT_MAX_SHRINKS,
            progress=progress,
            database=args.database,
        )
    except fuzz.NondeterministicAdapter as error:
        progress.finish()
        print(f"the adapter is not deterministic: {error}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        progress.finish()
        raise
    progress.finish()
    if result.finding is None:
        print(f"no difference in {result.examples} sessions ({where})")
        return EXIT_OK
    finding = result.finding
    check = protocol_fuzz.finding_check(finding, port, search)
    summary = finding.verdict.message.removeprefix(f"{protocol_fuzz.RULE}: ")
    try:
        path = protocol_fuzz.save_check(check, args.save)
    except OSError as error:
        print(escape(f"difference found: {finding.verdict.verdict}: {summary}"))
        print(dumps_check(check), end="")
        return _error(f"--save {args.save}: cannot write the check (printed above): {error}")
    print(
        escape(
            f"difference found after {finding.examples_to_find} sessions, shrunk to "
            f"{len(finding.lines)} lines in {finding.shrink_attempts} more runs:\n"
            f"  {finding.verdict.verdict}: {summary}\n"
            f"saved: {path}\n"
            f"replay: snapkv-conformance run {shlex.quote(str(path))} "
            f"--adapter {shlex.quote(args.adapter)}"
        )
    )
    return EXIT_FAILED
