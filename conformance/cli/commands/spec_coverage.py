"""``snapkv-conformance spec-coverage``: every numbered sentence of SPEC.md with the vectors and
protocol checks that pin it (their ``spec`` field), and the slips that break it.

Exit status: 0 when every sentence is pinned by at least one item and every id an item names is
a sentence of SPEC.md; 1 otherwise; 2 for a usage error or a suite that cannot be read.
``docs/spec-coverage.md`` says how to read the table.
"""

from __future__ import annotations

import argparse
from typing import Any

from conformance.cli.commands._options import add_paths, output_problem
from conformance.spec.errors import EXIT_FAILED, EXIT_OK, print_error

HELP = "List every numbered sentence of SPEC.md with the vectors and checks that pin it."

#: Items shown per sentence without --verbose.
SHOWN = 4


def configure(parser: argparse.ArgumentParser) -> None:
    add_paths(parser)
    parser.add_argument(
        "--sentence",
        dest="selected",
        action="append",
        default=[],
        metavar="ID",
        help="show only this sentence, in full, with every item and slip (repeat for several)",
    )
    parser.add_argument(
        "--unpinned", action="store_true", help="show only the sentences no item pins"
    )
    parser.add_argument("--json", metavar="FILE", help="write the whole table as JSON here")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="every item and the full sentence"
    )


def run(args: argparse.Namespace) -> int:
    from conformance.spec.errors import VectorError
    from conformance.spec.resources import suite_dir
    from conformance.spec.sentences import by_id
    from conformance.suite.coverage import coverage
    from conformance.suite.protocol_checks import CheckError

    unknown = [name for name in args.selected if name not in by_id()]
    if unknown:
        return _error(
            f"--sentence {unknown[0]}: not a numbered sentence of SPEC.md "
            f"(the ids are: {', '.join(by_id())})"
        )
    if args.json is not None:
        problem = output_problem("--json", args.json)
        if problem is not None:
            return _error(problem)
    try:
        table = coverage(args.paths or [str(suite_dir())])
    except (VectorError, CheckError) as error:
        return _error(str(error))
    slips = _slips_by_sentence()
    rows = [row for row in table.rows if not args.selected or row.sentence.id in args.selected]
    if args.unpinned:
        rows = [row for row in rows if not row.pinned]
    verbose = args.verbose or bool(args.selected)
    print(format_rows(rows, slips, verbose))
    print(format_summary(table))
    if args.json:
        from conformance.report.outputs import write_text
        from conformance.spec.text import json_document

        data = table.to_json()
        for row in data["rows"]:
            row["slips"] = slips.get(row["id"], [])
        try:
            write_text(args.json, json_document(data) + "\n")
        except OSError as error:
            return _error(f"--json {args.json}: cannot write: {error.strerror}")
    return EXIT_OK if table.complete else EXIT_FAILED


def _slips_by_sentence() -> dict[str, list[str]]:
    """The catalogued slips of each sentence, by name (no replay: the names only)."""
    from conformance.slips import by_sentence

    return {sentence: [slip.name for slip in found] for sentence, found in by_sentence().items()}


def format_rows(rows: list[Any], slips: dict[str, list[str]], verbose: bool) -> str:
    """One block per sentence: id and section, the sentence (cut unless ``verbose``), the items
    that pin it, and the slips that break it."""
    blocks = []
    for row in rows:
        sentence = row.sentence
        text = sentence.text if verbose else sentence.short()
        items = list(row.items)
        shown = items if verbose or len(items) <= SHOWN else items[:SHOWN]
        more = f" (+{len(items) - len(shown)} more)" if len(shown) < len(items) else ""
        pinned = f"{', '.join(shown)}{more}" if items else "NONE: no vector or check pins it"
        named = slips.get(sentence.id, [])
        lines = [
            f"[{sentence.id}] §{sentence.section}  {len(items)} item(s)",
            f"  {text}",
            f"  pinned by: {pinned}",
            f"  slips: {', '.join(named) if named else 'none catalogued'}",
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def format_summary(table: Any) -> str:
    """The last lines: how many sentences are pinned, by how many items, and what is wrong."""
    pinned = len(table.rows) - len(table.unpinned)
    lines = [
        "",
        f"{len(table.rows)} numbered sentences, {pinned} pinned, {len(table.unpinned)} unpinned, "
        f"by {table.items} items ({len(table.unpinned_items)} pin none: "
        f"{', '.join(table.unpinned_items) or '-'})",
    ]
    if table.unpinned:
        lines.append("unpinned: " + ", ".join(sentence.id for sentence in table.unpinned))
    for item, ids in table.unknown.items():
        lines.append(f"{item}: names {', '.join(ids)}, which SPEC.md does not define")
    return "\n".join(lines)


def _error(message: str) -> int:
    return print_error("spec-coverage", message)
