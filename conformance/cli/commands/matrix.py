"""``snapkv-conformance matrix``: several ports over the suite, as a Markdown and an HTML table.

Exit status: 0 when every port passed every vector, 1 otherwise (a port whose adapter cannot
start included), 2 for a usage error, invalid vectors or tables that cannot be written.
Interrupted (130, 143, 129), it writes the tables of the ports that finished.
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, TYPE_CHECKING

from conformance.cli.commands._options import (
    add_count,
    add_paths,
    add_timeout,
    load_checks,
    load_vectors,
    output_problem,
)
from conformance.spec.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_error

if TYPE_CHECKING:
    from conformance.report.terminal import ProgressLine
    from conformance.tools.matrix import Matrix, Port

HELP = "Run several adapters over the suite; write a vectors x ports table (Markdown and HTML)."

DEFAULT_OUT = "conformance-matrix"


def configure(parser: argparse.ArgumentParser) -> None:
    add_paths(parser)
    parser.add_argument(
        "--adapter",
        dest="adapters",
        action="append",
        required=True,
        metavar="NAME=CMD",
        help="a port: its name in the table and its adapter command (split like a POSIX shell "
        "splits it, run without a shell); repeat for each port",
    )
    parser.add_argument(
        "--out",
        metavar="FILE",
        default=DEFAULT_OUT,
        help=f"write FILE.md and FILE.html (default {DEFAULT_OUT})",
    )
    add_timeout(parser)
    add_count(parser, "--jobs", 1, "adapter processes per port run in parallel (default 1)")


def _error(message: str) -> int:
    return print_error("matrix", message)


def run(args: argparse.Namespace) -> int:
    from conformance.tools import matrix

    try:
        ports = [matrix.Port.parse(text) for text in args.adapters]
    except ValueError as error:
        return _error(f"--adapter: {error}")
    names = [port.name for port in ports]
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        return _error(f"--adapter: each port needs its own name; repeated: {', '.join(duplicated)}")
    for path in matrix.output_paths(args.out):
        problem = output_problem("--out", str(path))
        if problem is not None:
            return _error(problem)
    try:
        vectors = load_vectors([str(p) for p in args.paths])
        checks = load_checks([str(p) for p in args.paths])
    except ValueError as error:
        return _error(str(error))

    progress = _Progress(sys.stderr)
    columns: list[matrix.Column] = []
    try:
        for column in matrix.run_columns(
            vectors, ports, checks=checks, jobs=args.jobs, timeout=args.timeout, progress=progress
        ):
            columns.append(column)
    except KeyboardInterrupt:  # the ports that finished are written; cli.main says the rest
        progress.finish()
        _write(matrix.Matrix(vectors, columns, checks, interrupted=True), args.out)
        raise
    finally:
        progress.finish()
    result = matrix.Matrix(vectors, columns, checks)
    if not _write(result, args.out):
        return EXIT_USAGE
    return EXIT_OK if result.all_pass else EXIT_FAILED


def _write(result: Matrix, out: str) -> bool:
    """Print the summary and write the tables; False when they could not be written (said)."""
    from conformance.tools import matrix

    for line in matrix.summary_lines(result):  # first: a failed write must not lose them
        print(line)
    try:
        markdown, page = matrix.write_matrix(result, out)
    except OSError as error:
        where = f" {error.filename}" if error.filename else ""
        _error(f"--out{where}: cannot write: {error.strerror or error}")
        return False
    print(f"wrote {markdown} and {page}")
    return True


class _Progress:
    """A fresh :class:`conformance.report.terminal.ProgressLine` per port, the last one erased at
    the end."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.line: ProgressLine | None = None

    def __call__(self, port: Port) -> ProgressLine:
        from conformance.report.terminal import ProgressLine

        self.finish()
        self.line = ProgressLine(self.stream)
        return self.line

    def finish(self) -> None:
        if self.line is not None:
            self.line.finish()
