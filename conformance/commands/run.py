"""``snapkv-conformance run``: replay the suite against an adapter and judge every answer.

Exit status: 0 when every selected vector passed (known failures aside), 1 when any vector
failed (crash and timeout included, and a known failure that now passes), 2 for a usage error,
invalid vectors, an adapter that cannot start or shake hands, or an output file that cannot be
written (checked before the run). Interruptions are :func:`conformance.cli.main`'s (130, 143).
"""

from __future__ import annotations

import argparse
import shlex
import sys

from conformance.commands._options import (
    add_count,
    add_paths,
    add_timeout,
    output_problem,
)
from conformance.exceptions import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_error

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
    parser.add_argument(
        "--write-known-failures",
        metavar="FILE",
        help="write the ids of the vectors that failed in this run to FILE",
    )


def _error(message: str) -> int:
    return print_error("run", message)


def run(args: argparse.Namespace) -> int:
    from conformance import protocol_checks, report, resources, runner, suite_filter
    from conformance.checker import VectorResult
    from conformance.driver import AdapterStartError
    from conformance.outputs import write_text
    from conformance.stream import plan_suite
    from conformance.vectors import VectorError

    try:
        adapter_argv = shlex.split(args.adapter) if args.adapter is not None else default_adapter()
    except ValueError as error:
        return _error(f"--adapter: cannot split {args.adapter!r}: {error}")
    if not adapter_argv:
        return _error("--adapter is empty")
    try:
        shard = suite_filter.parse_shard(args.shard) if args.shard is not None else None
    except ValueError as error:
        return _error(f"--shard: {error}")
    outputs = _outputs(args)
    for option, path in outputs:
        problem = output_problem(option, path)
        if problem is not None:
            return _error(problem)
    try:
        known = (
            suite_filter.read_known_failures(args.known_failures)
            if args.known_failures is not None
            else set()
        )
    except suite_filter.KnownFailuresError as error:
        return _error(str(error))
    paths = [str(p) for p in args.paths] or [str(resources.suite_dir())]
    # Only ids are read now; each file is read when its turn comes (a bad one stops the run).
    try:
        plan = plan_suite(paths)
    except VectorError as error:
        return _error(f"invalid vectors: {error}")
    entries, checks = plan.vectors, plan.checks
    if not entries and not checks:
        return _error(f"no vectors found in {', '.join(paths)}")
    selected = suite_filter.select(entries, args.patterns)
    selected_checks = [
        check
        for check in checks
        if not args.patterns or any(suite_filter.matches(check.id, p) for p in args.patterns)
    ]
    if shard is not None:
        selected_checks = [c for i, c in enumerate(selected_checks) if i % shard[1] == shard[0] - 1]
    if not selected and not selected_checks:
        return _error(f"no vector id matches -k {' / '.join(map(repr, args.patterns))}")
    unknown = sorted(known - {entry.id for entry in entries} - {check.id for check in checks})
    for vector_id in unknown:
        print(
            f"warning: {args.known_failures} lists {vector_id!r}, which is not in the suite",
            file=sys.stderr,
        )

    progress = report.ProgressLine(sys.stderr)

    def judged(result: VectorResult, done: int, total: int) -> None:
        # A failure is said on stderr as soon as it is judged; stdout's listing at the end
        # repeats it in suite order, with its details.
        if result.fails_run:
            progress.finish()
            print(report.format_result(result).splitlines()[0], file=sys.stderr, flush=True)
        progress(result, done, total)

    try:
        if selected:
            result = runner.run_suite(
                selected,
                adapter_argv,
                jobs=args.jobs,
                timeout=args.timeout,
                shard=shard,
                known_failures=known,
                progress=judged,
                validate_protocol=args.validate_protocol,
            )
        else:
            result = runner.RunResult(
                [], None, shard, adapter_argv=list(adapter_argv), jobs=args.jobs
            )
    except AdapterStartError as error:
        return _error(str(error))
    except VectorError as error:
        return _error(f"invalid vectors: {error}")
    finally:  # on Ctrl-C too (the runner has killed the adapters; cli.main says the rest)
        progress.finish()
    if not result.ok:  # the policy's mistakes; protocol checks are not the triage's
        from conformance.triage import triage

        ran = suite_filter.shard_vectors(selected, shard)
        result.triage = triage(ran, result.results)  # entries: each read only if replayed
    # Protocol checks: each in a fresh session of its own, after the vectors, read only now
    # (like a vector file, a bad one stops the run).
    try:
        loaded_checks = [protocol_checks.load_check(entry.path) for entry in selected_checks]
    except protocol_checks.CheckError as error:
        return _error(str(error))
    result.results.extend(
        protocol_checks.run_checks(
            loaded_checks,
            adapter_argv,
            timeout=args.timeout,
            jobs=args.jobs,
            known_failures=known,
        )
    )
    context = report.RunContext(
        paths=paths,
        patterns=args.patterns,
        known_failures_file=args.known_failures,
        known_failures=frozenset(known),
    )
    print(report.format_summary(result, context))
    failing = [r.vector_id for r in result.results if not r.passed]
    who = result.handshake.describe() if result.handshake else " ".join(adapter_argv)
    writers = {
        "--report": lambda path: report.write_json_report(path, result, context),
        "--junit": lambda path: report.write_junit(path, result, context),
        "--write-known-failures": lambda path: write_text(
            path,
            suite_filter.format_known_failures(
                failing, f"written by snapkv-conformance run for {who}"
            ),
        ),
    }
    unwritten = 0
    for option, path in outputs:  # each on its own: one that fails does not stop the others
        try:
            writers[option](path)
        except OSError as error:
            unwritten += 1
            _error(f"{option} {path}: cannot write: {error.strerror or error}")
    if unwritten:
        return EXIT_USAGE
    return EXIT_OK if result.ok else EXIT_FAILED


def _outputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The files this run is asked to write, as (option, path)."""
    given = {
        "--report": args.report,
        "--junit": args.junit,
        "--write-known-failures": args.write_known_failures,
    }
    return [(option, path) for option, path in given.items() if path is not None]
