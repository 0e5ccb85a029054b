"""``snapkv-conformance generate``: rebuild the vector suite from the registered builders."""

from __future__ import annotations

import argparse
from pathlib import Path

from conformance.cli.commands._options import output_problem
from conformance.spec.errors import EXIT_FAILED, EXIT_OK, print_error

HELP = "Regenerate the vector suite from the builders (--check: compare, write nothing)."


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="the suite directory to write or check (default, from a checkout of the kit: its "
        "vectors/; an installed kit needs --out to write)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 and list the files that differ if DIR is not what the "
        "builders generate",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the builders and the vector ids each makes"
    )


def _error(message: str) -> int:
    return print_error("generate", message)


def out_problem(out: Path) -> str | None:
    """Why ``--out`` must not be written, or None.

    Writing rewrites or removes ``*.json`` files under it, so it must be a directory (or not exist
    yet) whose JSON files are all vectors: a mistyped ``--out`` (a file, ``schema/``, a project
    directory with a ``package.json``) is refused before anything is touched.
    """
    from conformance.spec.inputs import InputError, read_suite_file
    from conformance.suite.protocol_checks import CHECK_FORMAT
    from conformance.suite.vectors import VECTOR_FORMAT

    problem = output_problem("--out", str(out), directory=True)
    if problem is not None or not out.exists():
        return problem
    for path in sorted(out.rglob("*.json")):
        if not path.is_file():  # a FIFO or socket named *.json is not read (nor touched)
            continue
        try:
            head = read_suite_file(path, head=4096)
        except InputError as error:
            if error.errno is None:  # swapped for a FIFO meanwhile, say: not a vector file
                continue
            return f"--out {out}: {path}: {error.reason}"
        if b'"format"' not in head or not (
            VECTOR_FORMAT.encode() in head or CHECK_FORMAT.encode() in head
        ):
            return (
                f'--out {out}: {path} is not a vector file (no "format": "{VECTOR_FORMAT}"); '
                "generate rewrites and removes *.json files under --out, so it writes only into a "
                "vector suite directory or a new one"
            )
    return None


def run(args: argparse.Namespace) -> int:
    from conformance.spec.errors import GenerationError
    from conformance.spec.resources import checkout_root, suite_dir
    from conformance.tools.generate.generator import build_suite, diff_suite, write_suite

    if args.list:
        return _list()
    if args.out is None and not args.check and checkout_root() is None:
        return _error(
            "--out DIR is required: an installed kit does not rewrite its own suite "
            "(from a checkout, the default is its vectors/)"
        )
    out = Path(args.out) if args.out else suite_dir()
    if args.check and out.exists() and not out.is_dir():
        return _error(f"--out {out}: exists and is not a directory")
    if not args.check:
        problem = out_problem(out)
        if problem is not None:
            return _error(problem)
    try:
        files = build_suite()
    except GenerationError as error:
        return _error(f"generation failed: {error}")
    if args.check:
        change = diff_suite(out, files)
        for line in change.lines():
            print(line)
        if change.empty:
            print(f"{out}: up to date ({len(files)} vectors)")
            return EXIT_OK
        print(f"{out}: differs from a fresh generation; run 'snapkv-conformance generate'")
        return EXIT_FAILED
    try:
        change = write_suite(out, files)  # only the vector files change; all staged first
    except OSError as error:
        where = error.filename or out
        return _error(f"--out {out}: cannot write {where}: {error.strerror}; nothing changed")
    for line in change.lines():
        print(line)
    print(
        f"{out}: {len(files)} vectors ({len(change.added)} added, {len(change.removed)} "
        f"removed, {len(change.changed)} changed)"
    )
    return EXIT_OK


def _list() -> int:
    from conformance.tools.generate.builders import all_builders

    for entry in all_builders():
        print(entry.name)
        for draft in entry.drafts():
            print(f"  {draft.id}")
    return EXIT_OK
