"""The generated blocks of the documentation: which page holds each, what it is made from, and
how they are rewritten or checked.

A generated block sits in a hand-written page between two comments that name it,
``<!-- docs:NAME:begin -->`` and ``<!-- docs:NAME:end -->``; everything outside them is prose
and is never touched. ``python -m conformance.docs`` rewrites every block from the kit
(only from a checkout: an installed kit has no pages); ``--check`` writes nothing and exits 1
naming each block that is stale, as ``snapkv-conformance generate --check`` does for vectors,
and each page of the site the nav of ``mkdocs.yml`` leaves out or names wrongly (:mod:`.nav`).
A change to a subcommand's options, the report schema, the exit statuses or the suite
therefore fails the check until the pages are regenerated.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.docs import examples, exit_statuses, manual, nav, report_format, suite_listing
from conformance.report.outputs import OutputError, write_text
from conformance.spec.errors import EXIT_FAILED, EXIT_OK, KitError, print_error
from conformance.spec.resources import checkout_root

COMMAND = "python -m conformance.docs"


@dataclass(frozen=True)
class Block:
    """A generated block: the page that holds it (from the checkout's root), its name in the
    markers, what it is made from (for messages), and how it is made from a checkout."""

    page: str
    name: str
    source: str
    render: Callable[[Path], str]
    #: Runs a port (seconds, not milliseconds): the tests check it in the slow tier.
    slow: bool = False

    @property
    def begin(self) -> str:
        return f"<!-- docs:{self.name}:begin -->"

    @property
    def end(self) -> str:
        return f"<!-- docs:{self.name}:end -->"


BLOCKS: tuple[Block, ...] = (
    Block("docs/reference/cli.md", "commands", "the parsers of conformance/cli/", manual.commands),
    Block(
        "docs/reference/cli.md",
        "pytest-plugin",
        "conformance/pytest_plugin.py",
        manual.plugin_options,
    ),
    Block(
        "docs/reference/exit-statuses.md",
        "exit-statuses",
        "conformance/spec/errors.py",
        exit_statuses.table,
    ),
    Block("docs/reference/reports.md", "report-fields", report_format.SCHEMA, report_format.fields),
    Block("docs/suite/vectors.md", "vectors", "vectors/", suite_listing.vectors),
    Block("docs/suite/protocol-checks.md", "protocol-checks", "vectors/", suite_listing.checks),
    Block("README.md", "first-run", examples.command(examples.FIRST_RUN), examples.first_run, True),
    Block(
        "docs/failures/output.md",
        "first-run",
        examples.command(examples.FIRST_RUN),
        examples.first_run,
        True,
    ),
    Block(
        "docs/failures/triage.md",
        "triage-java-habits",
        examples.command("java-habits"),
        examples.java_habits,
        True,
    ),
    Block(
        "docs/failures/triage.md",
        "triage-kvpress",
        examples.command("kvpress"),
        examples.kvpress,
        True,
    ),
)


class PageError(KitError):
    """A page that cannot hold its block: missing, unreadable, or without its markers."""


def current(text: str, block: Block) -> str | None:
    """What ``text`` holds between the block's markers (None when it has no such block)."""
    _, begin, rest = text.partition(block.begin)
    inside, end, _ = rest.partition(block.end)
    return inside.strip("\n") if begin and end else None


def replaced(text: str, block: Block, content: str) -> str:
    """``text`` with the block's content replaced; raises :class:`PageError` without one."""
    head, begin, rest = text.partition(block.begin)
    _, end, tail = rest.partition(block.end)
    if not begin or not end:
        raise PageError(f"{block.page}: no {block.begin} ... {block.end} block")
    return f"{head}{block.begin}\n{content}\n{block.end}{tail}"


def _read(root: Path, page: str) -> str:
    try:
        return (root / page).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PageError(f"{page}: cannot read: {error}") from None


def stale(root: Path, blocks: Sequence[Block] = BLOCKS) -> list[str]:
    """One line per block whose page does not hold what the kit makes of it now."""
    found = []
    for block in blocks:
        held = current(_read(root, block.page), block)
        if held is None:
            found.append(f"{block.page}: no {block.begin} ... {block.end} block")
        elif held != block.render(root):
            found.append(f"{block.page}: block {block.name!r} differs from {block.source}")
    return found


def write(root: Path, blocks: Sequence[Block] = BLOCKS) -> list[str]:
    """Rewrite each block from the kit; returns the pages that changed. A page is written
    once, after all its blocks are made, so a failure leaves it as it was."""
    changed = []
    for page in dict.fromkeys(block.page for block in blocks):
        before = _read(root, page)
        after = before
        for block in blocks:
            if block.page == page:
                after = replaced(after, block, block.render(root))
        if after != before:
            write_text(root / page, after)
            changed.append(page)
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=COMMAND,
        description="Rewrite the generated blocks of README.md and the pages under docs/.",
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 naming each stale block"
    )
    parser.add_argument(
        "--block",
        action="append",
        default=[],
        choices=[block.name for block in BLOCKS],
        help="only this block (repeatable; default: all)",
    )
    args = parser.parse_args(argv)
    root = checkout_root()
    if root is None:
        return print_error("docs", "the pages are in a checkout of the kit, not an installed copy")
    blocks = [block for block in BLOCKS if not args.block or block.name in args.block]
    try:
        if args.check:
            problems = stale(root, blocks)
            unlisted = [] if args.block else nav.problems(root)
            for problem in [*problems, *unlisted]:
                print(problem)
            if problems:
                print(f"regenerate with: {COMMAND}")
            return EXIT_FAILED if problems or unlisted else EXIT_OK
        for page in write(root, blocks):
            print(f"rewrote {page}")
    except (PageError, OutputError) as error:
        return print_error("docs", str(error))
    return EXIT_OK
