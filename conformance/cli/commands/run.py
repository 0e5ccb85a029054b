"""``snapkv-conformance run``: replay the suite against an adapter and judge every answer.

Exit status: 0 when every selected vector passed (known failures aside; under ``--numerics P``,
when none fails: ``within P`` and ``n/a for P`` do not), 1 when any vector failed (crash and
timeout included, and a known failure that now passes), 2 for a usage error,
invalid vectors, an adapter that cannot start or shake hands, or an output file that cannot be
written (checked before the run), 70 for a fault of the kit itself. Interruptions are
:func:`conformance.cli.main`'s (130, 143, 129): the outputs hold what finished, at every stage
(the vectors, the checks, the triage).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.cli.commands._options import (
    add_count,
    add_numerics,
    add_paths,
    add_timeout,
    colliding_outputs,
    output_problem,
)
from conformance.spec.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_error

if TYPE_CHECKING:
    from conformance.report.terminal import RunContext
    from conformance.runner.run import RunResult

HELP = "Run the vector suite against an adapter and judge every answer."


def default_adapter() -> list[str]:
    """The reference adapter, run by this Python (same as ``snapkv-conformance adapter``)."""
    return [sys.executable, "-m", "conformance", "adapter"]


def configure(parser: argparse.ArgumentParser) -> None:
    add_paths(parser)
    parser.add_argument(
        "--adapter",
        metavar="CMD",
        help="the adapter command, split like a POSIX shell splits it and run without a shell "
        "(default: the Python reference adapter)",
    )
    add_timeout(parser)
    parser.add_argument(
        "-k",
        dest="patterns",
        action="append",
        default=[],
        metavar="PATTERN",
        help="run only vectors whose id contains PATTERN, or matches it as a glob when it has "
        "*, ? or [ (case-sensitive; repeat -k for any of several)",
    )
    add_count(parser, "--jobs", 1, "adapter processes run in parallel (default 1)")
    parser.add_argument(
        "--shard",
        metavar="I/N",
        help="run only shard I of N: the vectors at index I-1 modulo N in the id-sorted selection",
    )
    parser.add_argument("--report", metavar="FILE.json", help="write the JSON report here")
    parser.add_argument("--junit", metavar="FILE.xml", help="write JUnit XML here")
    parser.add_argument(
        "--known-failures",
        metavar="FILE",
        help="vector ids (one per line, '#' comments) whose failure does not fail the run; "
        "a listed vector that passes does",
    )
    parser.add_argument(
        "--validate-protocol",
        action="store_true",
        help="also check every answer against the shipped protocol schemas "
        "(schema/protocol/response.schema.json); an answer that breaks them is a protocol-error",
    )
    add_numerics(parser)
    parser.add_argument(
        "--write-known-failures",
        metavar="FILE",
        help="write the ids of the vectors that failed in this run to FILE",
    )


def _error(message: str) -> int:
    return print_error("run", message)


def run(args: argparse.Namespace) -> int:
    from conformance.report import terminal
    from conformance.runner import run
    from conformance.runner.results import VectorResult
    from conformance.spec import resources
    from conformance.spec.errors import VectorError
    from conformance.suite import discovery
    from conformance.suite.protocol_checks import CheckError
    from conformance.suite.stream import plan_suite
    from conformance.transport.failures import AdapterStartError
    from conformance.transport.process import CommandError, StartError, split_command

    try:
        adapter_argv = default_adapter() if args.adapter is None else split_command(args.adapter)
    except CommandError as error:
        return _error(str(error))
    try:
        shard = discovery.parse_shard(args.shard) if args.shard is not None else None
    except ValueError as error:
        return _error(f"--shard: {error}")
    outputs = _outputs(args)
    problems = [output_problem(option, path) for option, path in outputs]
    problem = next((p for p in problems if p is not None), None) or colliding_outputs(outputs)
    if problem is not None:
        return _error(problem)

    def stop(message: str) -> int:
        """Exit 2 with ``message``, after writing the JUnit file if one was asked for: a CI
        job's artifact step then finds the reason there too."""
        if args.junit is not None:
            with contextlib.suppress(OSError):
                terminal.write_junit_error(args.junit, message, adapter_argv)
        return _error(message)

    try:
        known = _known_failures(args.known_failures)
    except discovery.KnownFailuresError as error:
        return stop(str(error))
    paths = [str(p) for p in args.paths] or [str(resources.suite_dir())]
    # Only ids are read now; each file is read when its turn comes (a bad one stops the run).
    try:
        plan = plan_suite(paths)
    except VectorError as error:
        return stop(f"invalid vectors: {error}")
    entries, checks = plan.vectors, plan.checks
    if not entries and not checks:
        return stop(f"no vectors found in {', '.join(paths)}")
    selected, selected_checks = discovery.select_items(entries, checks, args.patterns, shard)
    matched = selected or selected_checks or discovery.select([*entries, *checks], args.patterns)
    if not matched:  # an empty shard of a selection is fine; a -k matching nothing is not
        return stop(f"no vector id matches -k {' / '.join(map(repr, args.patterns))}")
    unknown = sorted(known - {entry.id for entry in entries} - {check.id for check in checks})
    for vector_id in unknown:
        print(
            f"warning: {args.known_failures} lists {vector_id!r}, which is not in the suite",
            file=sys.stderr,
        )

    progress = terminal.ProgressLine(sys.stderr)
    finished: list[VectorResult] = []

    def judged(result: VectorResult, done: int, total: int) -> None:
        # A failure is said on stderr as soon as it is judged; stdout's listing at the end
        # repeats it in suite order, with its details.
        finished.append(result)
        if result.fails_run:
            progress.finish()
            print(terminal.format_result(result).splitlines()[0], file=sys.stderr, flush=True)
        progress(result, done, total)

    the_run = run.Run(
        selected,
        selected_checks,
        adapter_argv,
        jobs=args.jobs,
        timeout=args.timeout,
        shard=shard,
        known_failures=known,
        progress=judged,
        validate_protocol=args.validate_protocol,
        numerics=args.numerics,
        triage=True,  # entries: each read only if the triage replays something on it
    )
    context = terminal.RunContext(
        paths=paths,
        patterns=args.patterns,
        known_failures_file=args.known_failures or None,
        known_failures=frozenset(known),
    )
    try:
        result = the_run.execute()
    except (AdapterStartError, StartError, CheckError) as error:
        return stop(str(error))
    except VectorError as error:
        return stop(f"invalid vectors: {error}")
    except KeyboardInterrupt:  # write what finished, then cli.main says the rest (130, 143, 129)
        progress.finish()
        partial = run.RunResult(
            finished, None, shard, adapter_argv=list(adapter_argv), jobs=args.jobs,
            timeout=args.timeout, interrupted=True, numerics=args.numerics,
        )  # fmt: skip
        _write_outputs(outputs, partial, context, adapter_argv)
        raise
    finally:  # the runner has killed the adapters
        progress.finish()
    return _finish(result, outputs, context, adapter_argv)


def _finish(
    result: RunResult,
    outputs: list[tuple[str, str]],
    context: RunContext,
    adapter_argv: list[str],
) -> int:
    """Print the summary, write the outputs and return the exit status of a finished run; a
    stop signal that came during its triage is raised once they are written (the run is
    finished: its verdicts and outputs stand)."""
    from conformance.report import terminal

    print(terminal.format_summary(result, context))
    written = _write_outputs(outputs, result, context, adapter_argv)
    if result.stopped is not None:  # cli.main says the rest (130, 143, 129)
        raise result.stopped
    if not written:
        return EXIT_USAGE
    return EXIT_OK if result.ok else EXIT_FAILED


def _write_outputs(
    outputs: list[tuple[str, str]],
    result: RunResult,
    context: RunContext,
    adapter_argv: list[str],
) -> bool:
    """Write each output file asked for, each on its own: one that fails does not stop the
    others. False when one could not be written (said on stderr)."""
    from conformance.report import terminal
    from conformance.report.outputs import write_text
    from conformance.suite import discovery

    failing = [r.vector_id for r in result.results if not (r.passed or r.tolerated)]
    who = result.handshake.describe() if result.handshake else " ".join(adapter_argv)
    writers = {
        "--report": lambda path: terminal.write_json_report(path, result, context),
        "--junit": lambda path: terminal.write_junit(path, result, context),
        "--write-known-failures": lambda path: write_text(
            path,
            discovery.format_known_failures(
                failing, f"written by snapkv-conformance run for {who}"
            ),
        ),
    }
    written = True
    for option, path in outputs:
        try:
            writers[option](path)
        except OSError as error:
            written = False
            _error(f"{option} {path}: cannot write: {error.strerror or error}")
    return written


def _known_failures(path: str | None) -> set[str]:
    """The ids ``--known-failures`` lists. An empty path, or a file that does not exist yet,
    lists none (a port's first CI run has no list; the note says how to start one); a file
    that exists and cannot be read raises :class:`KnownFailuresError`."""
    from conformance.suite import discovery

    if not path:
        return set()
    if not Path(path).exists():
        print(
            f"note: --known-failures {path} does not exist yet, so no vector may fail; "
            "--write-known-failures FILE writes one listing this run's failures",
            file=sys.stderr,
        )
        return set()
    return discovery.read_known_failures(path)


def _outputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The files this run is asked to write, as (option, path)."""
    given = {
        "--report": args.report,
        "--junit": args.junit,
        "--write-known-failures": args.write_known_failures,
    }
    return [(option, path) for option, path in given.items() if path is not None]
