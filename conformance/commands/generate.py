"""``snapkv-conformance generate``: rebuild the vector suite from the registered builders."""

from __future__ import annotations

import argparse

HELP = "Regenerate the vector suite from the builders (--check: compare, write nothing)."


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="the suite directory to write or check (default: the committed suite)",
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


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from conformance.generator import GenerationError, build_suite, diff_suite, write_suite
    from conformance.resources import suite_dir

    if args.list:
        return _list()
    out = Path(args.out) if args.out else suite_dir()
    try:
        files = build_suite()
    except GenerationError as error:
        print(f"generation failed: {error}")
        return 2
    if args.check:
        change = diff_suite(out, files)
        for line in change.lines():
            print(line)
        if change.empty:
            print(f"{out}: up to date ({len(files)} vectors)")
            return 0
        print(f"{out}: differs from a fresh generation; run 'snapkv-conformance generate'")
        return 1
    change = write_suite(out, files)
    for line in change.lines():
        print(line)
    print(
        f"{out}: {len(files)} vectors ({len(change.added)} added, {len(change.removed)} "
        f"removed, {len(change.changed)} changed)"
    )
    return 0


def _list() -> int:
    from conformance.builders import all_builders

    for entry in all_builders():
        print(entry.name)
        for draft in entry.drafts():
            print(f"  {draft.id}")
    return 0
