"""``snapkv-conformance show ID``: a vector's or protocol check's requests as the adapter
receives them, each with the answer it must get, its "Catches:" text and its file.

Exit status: 0 when shown; 2 for an id that names nothing (the message names close ids), a
pattern that selects several, or a file that cannot be read. Interruptions are
:func:`conformance.cli.main`'s (130, 143).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterable

from conformance.cli.commands._options import add_paths
from conformance.spec.errors import EXIT_OK, print_error

HELP = "Show a vector's or protocol check's requests, expected answers, Catches text and file."


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "id",
        metavar="ID",
        help="a vector or protocol check id, as a FAIL line names it (or a -k pattern that "
        "selects one id alone)",
    )
    add_paths(parser)
    parser.add_argument(
        "--calls",
        metavar="A:B",
        help="show only calls A to B-1 (a protocol check's lines); A:, :B and A alone too "
        "(default: every call; the first 1,000 of a vector longer than 10,000 calls)",
    )
    parser.add_argument(
        "--requests",
        action="store_true",
        help="write only the request bytes the adapter reads, exactly, hello to bye "
        "(e.g. to pipe into your adapter: show ID --requests | ./my-adapter)",
    )


def run(args: argparse.Namespace) -> int:
    from conformance.report import show
    from conformance.spec import resources
    from conformance.spec.errors import VectorError
    from conformance.suite.discovery import NoSuchItem
    from conformance.suite.protocol_checks import CheckError

    try:
        window = show.parse_window(args.calls) if args.calls is not None else None
    except ValueError as error:
        return print_error("show", f"--calls: {error}")
    try:
        paths = [str(path) for path in args.paths] or [str(resources.suite_dir())]
        shown = show.find(paths, args.id)
    except (NoSuchItem, VectorError, CheckError, FileNotFoundError) as error:
        return print_error("show", str(error))
    if args.requests:
        _write_bytes(show.request_bytes(shown, window))
    else:
        for line in show.view_lines(shown, window):
            print(line)
    return EXIT_OK


def _write_bytes(chunks: Iterable[bytes]) -> None:
    """Write ``chunks`` to stdout's bytes as they come; a reader that went away (``| head``)
    ends the output and nothing else, as for every command's text."""
    sys.stdout.flush()
    out = sys.stdout.buffer
    try:
        for chunk in chunks:
            out.write(chunk)
        out.flush()
    except OSError:
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
