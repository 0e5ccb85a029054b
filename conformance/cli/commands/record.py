"""``snapkv-conformance record``: record a vector from a real model with eviction in the loop."""

from __future__ import annotations

import argparse
import sys

from conformance.cli.commands._options import int_at_least, output_problem

HELP = (
    "Record a vector from SmolLM2-135M's attention on a shipped text, the reference evicting in "
    "the loop (needs the 'record' extra and the model wheel)."
)


def configure(parser: argparse.ArgumentParser) -> None:
    from conformance.policy.reference import DEFAULT_PARAMS

    parser.add_argument("--id", required=True, help="the vector id, e.g. real/alice-b64-k7")
    parser.add_argument(
        "--out",
        required=True,
        metavar="FILE",
        help="the vector file to write (e.g. vectors/real/alice-b64-k7.json)",
    )
    parser.add_argument("--text", default="alice", help="a shipped text (default alice)")
    parser.add_argument(
        "--max-tokens",
        type=int_at_least(2),
        metavar="N",
        help="record only the first N tokens of the text",
    )
    for flag, name in (
        ("--budget", "budget"),
        ("--recent-window", "recentWindow"),
        ("--obs-window", "obsWindow"),
        ("--pool-kernel", "poolKernel"),
    ):
        parser.add_argument(
            flag,
            type=int_at_least(0),
            default=DEFAULT_PARAMS[name],
            metavar="N",
            help=f"(default {DEFAULT_PARAMS[name]})",
        )


def _error(message: str) -> int:
    print(f"snapkv-conformance record: error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from conformance.policy.reference import Params, PolicyError
    from conformance.suite.tags import load_vocabulary
    from conformance.suite.validation import check_document
    from conformance.suite.vectors import dumps_vector
    from conformance.tools.record import RecordSetupError, model_path, require_extras
    from conformance.tools.record.texts import get_text

    params = {
        "budget": args.budget,
        "recentWindow": args.recent_window,
        "obsWindow": args.obs_window,
        "poolKernel": args.pool_kernel,
    }
    try:
        Params.parse(params)
    except PolicyError as error:
        return _error(error.message)
    try:
        text = get_text(args.text)
    except KeyError as error:
        return _error(str(error.args[0]))
    problem = output_problem("--out", args.out)
    if problem is not None:
        return _error(problem)
    try:
        require_extras()
        model_path()
    except RecordSetupError as error:
        return _error(str(error))

    from conformance.report.outputs import OutputError, write_output
    from conformance.report.terminal import CountProgress
    from conformance.tools.record.vector import record_vector

    progress: CountProgress | None = None

    def show(done: int, total: int) -> None:
        nonlocal progress
        if progress is None:
            progress = CountProgress("record", "tokens", total)
        progress(done)

    print("record: loading the model and its tokenizer", file=sys.stderr, flush=True)
    try:
        vector, recording = record_vector(
            args.id, text, params, max_tokens=args.max_tokens, progress=show
        )
    except RecordSetupError as error:  # a model file that is not one
        return _error(str(error))
    finally:
        if progress is not None:
            progress.finish()
    document = dumps_vector(vector)
    # Checked as `validate` would (schema, rules, a replay on the reference); where the file
    # goes is the caller's choice, so its path is not judged against the id here.
    _, problems = check_document(document, f"{args.id}.json", tags=load_vocabulary())
    if problems:
        return _error("the recorded vector is invalid:\n  " + "\n  ".join(map(str, problems)))
    try:
        write_output(args.out, document.encode("utf-8"))
    except OutputError as error:
        return _error(f"--out {error}")
    evicting = sum(1 for victims in recording.victims if victims)
    print(
        f"{args.out}: {len(recording.tokens)} tokens, {evicting} evictions, "
        f"{len(document.encode())} bytes"
    )
    return 0
