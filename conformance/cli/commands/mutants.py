"""``snapkv-conformance mutants``: measure the suite against the catalogue of wrong ports.

Replays every vector on every catalogued mutant (in process, judged by the same checker as
``run``) and prints the kill matrix: each mutant, killed or SURVIVED, and the vectors that kill
it, those whose description names the mistake first. Exit status: 0 when every mutant is
killed, 1 when any survives, 2 for a usage error or vectors that cannot be loaded.
"""

from __future__ import annotations

import argparse
from typing import Any

from conformance.cli.commands._options import (
    add_paths,
    colliding_outputs,
    load_vectors,
    output_problem,
)
from conformance.spec.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_error
from conformance.spec.inputs import InputError, read_input_text

HELP = "Run the suite against every catalogued wrong port (mutant) and print the kill matrix."

EXIT_SURVIVOR = EXIT_FAILED  # a mutant the suite does not kill
SHOWN_IDS = 3
#: The markers around the generated tables in README.md.
BEGIN, END = "<!-- mutants:begin -->", "<!-- mutants:end -->"


def configure(parser: argparse.ArgumentParser) -> None:
    add_paths(parser)
    parser.add_argument(
        "--list", action="store_true", help="list the catalogue (name, rule, origin) and exit"
    )
    parser.add_argument(
        "--mutant",
        dest="selected",
        action="append",
        default=[],
        metavar="NAME",
        help="judge only this mutant (repeat for several)",
    )
    parser.add_argument("--json", metavar="FILE", help="write the full kill matrix as JSON here")
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="print the matrix as the Markdown tables of README's 'The suite's power'",
    )
    parser.add_argument(
        "--update-readme",
        metavar="FILE",
        help=f"rewrite the block between {BEGIN} and {END} in FILE with those tables",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="list every killing vector, not the first few"
    )


def run(args: argparse.Namespace) -> int:
    from conformance import mutants

    try:
        selected = [mutants.lookup(name) for name in args.selected] or list(mutants.CATALOGUE)
    except KeyError as error:
        return _error(error.args[0])
    if args.list:
        print(format_catalogue(selected))
        return EXIT_OK
    if args.json is not None:
        problem = output_problem("--json", args.json)
        if problem is None and args.update_readme:
            problem = colliding_outputs(
                [("--update-readme", args.update_readme), ("--json", args.json)]
            )
        if problem is not None:
            return _error(problem)
    if args.update_readme:  # checked before the long replay, then rewritten after it
        from conformance.spec.resources import checkout_root

        if checkout_root() is None:
            return _error(
                "--update-readme rewrites the kit's own README tables; it runs only from a "
                "checkout of the kit, not from an installed copy"
            )
        try:
            block = readme_block(read_input_text(args.update_readme, what="README"))
        except InputError as error:
            return _error(f"--update-readme {error}")
        if block is None:
            return _error(f"--update-readme {args.update_readme}: no {BEGIN} ... {END} block")
    try:
        vectors = load_vectors(args.paths)
    except ValueError as error:
        return _error(str(error))
    from conformance.explain.kill_matrix import kill_matrix
    from conformance.report.terminal import StatusLine

    status = StatusLine()

    def progress(mutant: Any, done: int, total: int) -> None:
        status.show(f"[{done}/{total}] {mutant.name}")

    try:
        matrix = kill_matrix(vectors, selected, progress=progress if status.enabled else None)
    finally:
        status.finish()
    print(format_markdown(matrix) if args.markdown else format_matrix(matrix, args.verbose))
    failed = False
    if args.update_readme:
        try:
            replace_block(args.update_readme, format_markdown(matrix))
        except OSError as error:
            failed = bool(_error(f"--update-readme {args.update_readme}: {error.strerror}"))
        except ValueError as error:
            failed = bool(_error(f"--update-readme {error}"))
    if args.json:
        from conformance.report.outputs import write_text
        from conformance.spec.text import json_document

        try:
            write_text(args.json, json_document(matrix.to_json()) + "\n")
        except OSError as error:
            failed = bool(_error(f"--json {args.json}: cannot write: {error.strerror}"))
    if failed:
        return EXIT_USAGE
    return EXIT_SURVIVOR if matrix.survivors else EXIT_OK


def _error(message: str) -> int:
    return print_error("mutants", message)


def format_catalogue(catalogue: list[Any]) -> str:
    """One block per mutant: name and family, the rule it breaks, where it comes from, the
    steps of the policy it changes, and for a named point the choices it is made of."""
    blocks = []
    for m in catalogue:
        block = f"{m.name} ({m.family})\n  breaks: {m.rule}\n  origin: {m.origin}"
        block += f"\n  steps: {', '.join(m.steps)}"
        if m.parts:
            block += f"\n  made of: {', '.join(m.parts)}"
        blocks.append(block)
    return "\n".join(blocks) + f"\n{len(catalogue)} mutants"


def _ids(row: Any, verbose: bool) -> str:
    ordered = row.guards + [vid for vid in row.killers if vid not in row.guards]
    if verbose or len(ordered) <= SHOWN_IDS:
        return ", ".join(ordered)
    return ", ".join(ordered[:SHOWN_IDS]) + f" (+{len(ordered) - SHOWN_IDS} more)"


def format_matrix(matrix: Any, verbose: bool = False) -> str:
    """The kill matrix as text: a line per mutant, then the strongest and weakest vectors."""
    width = max(len(row.mutant.name) for row in matrix.rows)
    lines = [f"{'mutant':<{width}}  {'verdict':<8}  kills  vectors (naming the mistake first)"]
    for row in matrix.rows:
        state = "killed" if row.killed else "SURVIVED"
        note = "" if row.guards or not row.killed else "  [no killing vector names it]"
        lines.append(
            f"{row.mutant.name:<{width}}  {state:<8}  {len(row.killers):>5}  "
            f"{_ids(row, verbose)}{note}"
        )
    strongest = ", ".join(f"{vid} ({kills})" for vid, kills in matrix.strongest())
    weakest = matrix.weakest()
    lines += [
        "",
        f"strongest vectors: {strongest or 'none'}",
        f"vectors killing no mutant: {len(weakest)} of {len(matrix.vectors)}",
        f"{len(matrix.rows)} mutants: {len(matrix.rows) - len(matrix.survivors)} killed, "
        f"{len(matrix.survivors)} survived",
    ]
    return "\n".join(lines)


def format_markdown(matrix: Any) -> str:
    """README's tables: a row per mutant, the strongest vectors, and the vectors killing none."""
    killed = len(matrix.rows) - len(matrix.survivors)
    weakest = matrix.weakest()
    lines = [
        f"**{len(matrix.rows)} mutants, {killed} killed, {len(matrix.survivors)} survived** "
        f"by the {len(matrix.vectors)} committed vectors.",
        "",
        "| mutant | the rule it breaks (SPEC.md) | vectors killing it "
        "| guarded by (names the mistake) |",
        "|---|---|---:|---|",
    ]
    for row in matrix.rows:
        guard = f"`{row.guards[0]}`" if row.guards else "none"
        if len(row.guards) > 1:
            guard += f" (+{len(row.guards) - 1})"
        killers = str(len(row.killers)) if row.killed else "**survived**"
        lines.append(f"| `{row.mutant.name}` | {row.mutant.rule} | {killers} | {guard} |")
    lines += ["", "| strongest vectors | mutants killed |", "|---|---:|"]
    lines += [f"| `{vid}` | {kills} |" for vid, kills in matrix.strongest(8)]
    lines += [
        "",
        f"{len(weakest)} vectors kill no mutant: "
        + (", ".join(f"`{vid}`" for vid in weakest) or "none")
        + ".",
    ]
    return "\n".join(lines)


def replace_block(path: str, tables: str) -> None:
    """Put ``tables`` between the :data:`BEGIN` and :data:`END` markers of the file ``path``."""
    text = read_input_text(path, what="README")
    head, begin, rest = text.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"{path}: no {BEGIN} ... {END} block to rewrite")
    from conformance.report.outputs import write_text

    write_text(path, f"{head}{BEGIN}\n{tables}\n{END}{tail}")


def readme_block(text: str) -> str | None:
    """The generated tables in a README's text (None when it has no block)."""
    _, begin, rest = text.partition(BEGIN)
    block, end, _ = rest.partition(END)
    return block.strip("\n") if begin and end else None
