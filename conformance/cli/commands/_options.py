"""Command-line options that several subcommands share, defined once."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.suite.protocol_checks import ProtocolCheck
    from conformance.suite.vectors import Vector


def positive_float(text: str) -> float:
    """An argparse type: a finite number greater than zero (seconds), by the runner's rule
    (:func:`conformance.runner.run.timeout_problem`, the plugin's too)."""
    # Here: the runner is loaded only when a command takes a timeout.
    from conformance.runner.run import timeout_problem

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    problem = timeout_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer no smaller than ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {text!r}")
        return value

    return parse


def add_paths(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="vector files or directories (default: the committed suite)",
    )


def add_timeout(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=10.0,
        metavar="SECONDS",
        help="seconds allowed for each answer (default 10)",
    )


def add_required_adapter(parser: argparse.ArgumentParser) -> None:
    """``--adapter CMD``, required: the program under test (bench and fuzz have no default)."""
    parser.add_argument(
        "--adapter",
        metavar="CMD",
        required=True,
        help="the adapter command, split like a POSIX shell splits it and run without a shell",
    )


def add_count(parser: argparse.ArgumentParser, flag: str, default: int, help: str) -> None:
    """An option taking a positive integer."""
    parser.add_argument(flag, type=int_at_least(1), default=default, metavar="N", help=help)


def load_vectors(paths: Sequence[str]) -> list[Vector]:
    """The runnable vectors under ``paths`` (default: the committed suite), sorted by id.

    Raises ValueError with a one-line message naming the file, JSON pointer and reason for the
    first file that stops a run: one that cannot be read or parsed, breaks the vector schema
    (the loader's check, the same as ``validate``'s), or repeats an id; or no vectors.
    """
    from conformance.spec import resources
    from conformance.spec.errors import VectorError
    from conformance.suite.vectors import load_suite

    roots = list(paths) or [str(resources.suite_dir())]
    try:
        vectors = load_suite(roots)
    except (VectorError, FileNotFoundError) as error:
        raise ValueError(
            f"invalid vector: {error} (snapkv-conformance validate lists every problem)"
        ) from None
    if not vectors:
        raise ValueError(f"no vectors found in {', '.join(roots)}")
    return vectors


def load_checks(paths: Sequence[str]) -> list[ProtocolCheck]:
    """The protocol checks under ``paths`` (default: the committed suite), sorted by id; raise
    ValueError with a one-line message naming the first file that cannot be used."""
    from conformance.spec import resources
    from conformance.spec.errors import VectorError
    from conformance.suite.protocol_checks import CheckError
    from conformance.suite.stream import load_checks as load

    try:
        return load(list(paths) or [resources.suite_dir()])
    except (CheckError, VectorError) as error:
        raise ValueError(f"invalid protocol check: {error}") from None


def output_problem(option: str, path: str, *, directory: bool = False) -> str | None:
    """Why ``path`` (given to ``option``) cannot be written, or None: checked before a run, so
    a typo does not cost a whole run. Missing parent directories are fine (they are created).

    ``directory``: ``path`` is a directory to write into rather than a file. Some faults (a
    full disk, a read-only mount seen as writable) only show when writing; callers handle
    those too.
    """
    target = Path(path)
    if target.exists():
        if directory and not target.is_dir():
            return f"{option} {path}: exists and is not a directory"
        if not directory and target.is_dir():
            return f"{option} {path}: is a directory"
        if not os.access(target, os.W_OK):
            return f"{option} {path}: permission denied"
        return None
    ancestor = target.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{option} {path}: {ancestor} is not a directory"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"{option} {path}: cannot create it in {ancestor}: permission denied"
    return None


def colliding_outputs(outputs: Sequence[tuple[str, str]]) -> str | None:
    """Why two of ``outputs`` (``(option, path)`` pairs, in the order given) would be written
    to one file, or None: checked before a run, since the second write would silently replace
    the first (``--report out --junit out``). Paths are compared as the files they name
    (symlinks and ``..`` resolved, hard links found). A path that is a stream rather than a
    file (``/dev/null``, ``/dev/stdout``, a FIFO) may be named twice: nothing is replaced."""
    seen: list[tuple[str, str, Path]] = []
    for option, path in outputs:
        target = Path(os.path.realpath(path))
        if target.exists() and not target.is_file():
            continue  # a device or FIFO: written through, never replaced
        for earlier_option, earlier_path, earlier in seen:
            same = earlier == target
            if not same and target.exists() and earlier.exists():
                same = os.path.samefile(earlier, target)
            if same:
                return (
                    f"{earlier_option} {earlier_path} and {option} {path} name the same file: "
                    "the second would replace the first; give each its own path"
                )
        seen.append((option, path, target))
    return None
