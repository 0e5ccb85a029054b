"""The command-line reference: every subcommand of ``snapkv-conformance`` and every option of
the pytest plugin, read from the parsers themselves, so the page says what ``--help`` says.

Each subcommand is configured as :mod:`conformance.cli` configures it (its module's ``HELP``
and ``configure``), on a parser of its own; the plugin's options are recorded by calling its
``pytest_addoption`` with a stand-in for pytest's parser. The usage line is written here rather
than by argparse, whose wrapping depends on the terminal and whose layout changes between
Python versions: the page must be the same wherever it is generated.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from typing import Any, cast

from conformance import pytest_plugin
from conformance.cli import COMMANDS
from conformance.docs.tables import cell, code

PROG = "snapkv-conformance"


def commands(root: Path) -> str:
    """A section per subcommand, in ``--help`` order: what it does, its usage, its options."""
    sections = []
    for name in COMMANDS:
        module = importlib.import_module(f"conformance.cli.commands.{name.replace('-', '_')}")
        parser = argparse.ArgumentParser(prog=f"{PROG} {name}", description=module.HELP)
        module.configure(parser)
        sections.append(_section(name, parser))
    return "\n\n".join(sections)


def _section(name: str, parser: argparse.ArgumentParser) -> str:
    actions = [action for action in parser._actions if not _is_help(action)]
    lines = [
        f"### `{name}`",
        "",
        cell(parser.description or ""),
        "",
        "```text",
        usage(parser.prog, actions),
        "```",
    ]
    if actions:
        lines += ["", "| option | meaning |", "|---|---|"]
        lines += [f"| {code(_invocation(action))} | {_meaning(action)} |" for action in actions]
    return "\n".join(lines)


def _is_help(action: argparse.Action) -> bool:
    return action.nargs == 0 and action.dest == "help"


def _metavar(action: argparse.Action) -> str:
    if action.choices is not None and action.metavar is None:
        return "{" + ",".join(map(str, action.choices)) + "}"
    if isinstance(action.metavar, tuple):
        return " ".join(action.metavar)
    return action.metavar or action.dest.upper()


def _argument(action: argparse.Action) -> str:
    """What follows the option (or stands for the positional): ``PATH ...``, ``N``."""
    if action.nargs == 0:
        return ""
    metavar = _metavar(action)
    if action.nargs == "*":
        return f"[{metavar} ...]" if action.option_strings else f"{metavar} ..."
    if action.nargs == "+":
        return f"{metavar} [{metavar} ...]"
    if action.nargs == "?":
        return f"[{metavar}]"
    return metavar


def _invocation(action: argparse.Action) -> str:
    """The option as the table names it: ``-v, --verbose``, ``--jobs N``, ``PATH ...``."""
    argument = _argument(action)
    if not action.option_strings:
        return argument
    return f"{', '.join(action.option_strings)} {argument}".rstrip()


#: Where the usage line wraps; continuation lines are indented under the first argument.
WIDTH = 88


def usage(prog: str, actions: list[argparse.Action]) -> str:
    """``prog [--option ARG] ... POSITIONAL``: optional options in brackets, required ones
    bare, positionals last, each option under its longest name, wrapped at :data:`WIDTH`."""
    words = []
    for action in actions:
        if not action.option_strings:
            continue
        option = max(action.option_strings, key=len)
        word = f"{option} {_argument(action)}".rstrip()
        words.append(word if action.required else f"[{word}]")
    for action in actions:
        if not action.option_strings:
            words.append(f"[{_argument(action)}]" if action.nargs == "*" else _argument(action))
    lines = [prog]
    for word in words:
        if len(lines[-1]) + 1 + len(word) > WIDTH and lines[-1].strip() != "":
            lines.append(" " * len(prog))
        lines[-1] += f" {word}"
    return "\n".join(lines)


def _meaning(action: argparse.Action) -> str:
    text = action.help or ""
    if "%" in text:  # argparse's own substitutions, as --help would show them
        text = text % {"default": action.default, "prog": PROG, "dest": action.dest}
    if action.required and action.option_strings:
        text = f"required: {text}"
    return cell(text)


class _PluginOptions:
    """Stands in for pytest's parser: records the options ``pytest_addoption`` adds."""

    def __init__(self) -> None:
        self.options: list[tuple[tuple[str, ...], dict[str, Any]]] = []

    def getgroup(self, name: str, description: str = "") -> _PluginOptions:
        return self

    def addoption(self, *names: str, **settings: Any) -> None:
        self.options.append((names, settings))

    def addini(self, *args: Any, **settings: Any) -> None:
        """Ini settings are not command-line options (the plugin declares none)."""


def plugin_options(root: Path) -> str:
    """The pytest plugin's options, as a table like a subcommand's."""
    recorder = _PluginOptions()
    pytest_plugin.pytest_addoption(cast(Any, recorder))
    lines = ["| option | meaning |", "|---|---|"]
    for names, settings in recorder.options:
        metavar = settings.get("metavar")
        argument = f" {metavar}" if metavar else ""
        lines.append(f"| {code(', '.join(names) + argument)} | {cell(settings.get('help', ''))} |")
    return "\n".join(lines)
