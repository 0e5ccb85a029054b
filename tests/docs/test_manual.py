"""The command-line reference is read from the parsers: every option of every subcommand is in
it, with its help, and the usage line is the same on any terminal and Python version."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from conformance.cli import COMMANDS
from conformance.docs import manual

ROOT = Path(__file__).resolve().parents[2]


def test_every_option_of_every_subcommand_is_in_the_reference() -> None:
    text = manual.commands(ROOT)
    for name in COMMANDS:
        assert f"### `{name}`" in text
        parser = argparse.ArgumentParser()
        module = f"conformance.cli.commands.{name.replace('-', '_')}"
        importlib.import_module(module).configure(parser)
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in text or f", {option}" in text, (name, option)


def test_the_usage_line_brackets_what_is_optional_and_wraps_at_a_fixed_width() -> None:
    parser = argparse.ArgumentParser(prog="snapkv-conformance demo")
    parser.add_argument("--adapter", metavar="CMD", required=True)
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--workload", choices=["defaults", "large"], action="append")
    parser.add_argument("paths", nargs="*", metavar="PATH")
    for index in range(8):
        parser.add_argument(f"--option-number-{index}", metavar="VALUE")
    actions = [action for action in parser._actions if action.dest != "help"]
    lines = manual.usage(parser.prog, actions).split("\n")
    assert lines[0].startswith(
        "snapkv-conformance demo --adapter CMD [--verbose] [--workload {defaults,large}]"
    )
    assert lines[-1].endswith(" [PATH ...]")
    assert all(len(line) <= manual.WIDTH for line in lines)
    assert all(line.startswith(" " * len(parser.prog) + " ") for line in lines[1:])


def test_a_required_option_says_so_and_help_substitutions_are_made() -> None:
    parser = argparse.ArgumentParser(prog="p", description="Does a thing.")
    parser.add_argument("--adapter", metavar="CMD", required=True, help="the adapter")
    parser.add_argument("--steps", type=int, default=7, help="steps (default %(default)s) | 5%%")
    text = manual._section("demo", parser)
    assert "| `--adapter CMD` | required: the adapter |" in text
    assert "| `--steps STEPS` | steps (default 7) \\| 5% |" in text


def test_the_plugin_s_options_are_read_from_its_addoption_hook() -> None:
    text = manual.plugin_options(ROOT)
    for option in ("--snapkv-adapter CMD", "--snapkv-vectors PATH", "--snapkv-timeout SECONDS"):
        assert f"| `{option}` |" in text
