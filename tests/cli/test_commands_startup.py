"""What each command loads: nothing it does not use, checked in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from conformance.spec import resources

#: Loaded by no command that does not use it (the prefixes of module names).
HEAVY = (
    "numpy",
    "jsonschema",
    "hypothesis",
    "orjson",
    "conformance.explain",
    "conformance.mutants",
)

_PROBE = textwrap.dedent(
    """
    import json, sys
    from conformance.cli import main
    try:
        status = main(sys.argv[1:])
    except SystemExit as exit:
        status = exit.code
    print(json.dumps([status, sorted(sys.modules)]), file=sys.stderr)
    """
)


def loaded_by(*argv: str, stdin: bytes = b"") -> tuple[object, list[str]]:
    """The exit status of ``snapkv-conformance ARGV`` run in a fresh interpreter, and every
    module it had loaded when it returned."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv],
        input=stdin,
        capture_output=True,
        timeout=120,
        check=True,
    )
    status, modules = json.loads(done.stderr.decode().splitlines()[-1])
    return status, modules


def among(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


def test_help_loads_only_the_commands_descriptions():
    status, modules = loaded_by("--help")
    assert status == 0
    assert among(modules, HEAVY) == []
    layers = ("adapter", "policy", "suite", "judge", "transport", "runner", "report", "tools")
    assert among(modules, tuple(f"conformance.{layer}" for layer in layers)) == []


def test_a_commands_help_loads_none_of_what_the_command_runs():
    status, modules = loaded_by("adapter", "--help")
    assert status == 0
    assert among(modules, (*HEAVY, "conformance.adapter", "conformance.policy")) == []


def test_the_reference_adapter_loads_neither_the_runner_nor_the_schemas():
    hello = b'{"id":0,"op":"hello","protocol":1}\n{"id":1,"op":"bye"}\n'
    status, modules = loaded_by("adapter", stdin=hello)
    assert status == 0
    unused = ("jsonschema", "hypothesis", "conformance.explain", "conformance.mutants")
    layers = ("suite", "judge", "runner", "report.terminal", "tools")
    assert among(modules, (*unused, *(f"conformance.{layer}" for layer in layers))) == []


def test_a_passing_run_of_one_vector_loads_no_triage_and_no_numpy():
    vector = resources.suite_dir() / "evict" / "many-victims-one-call.json"
    status, modules = loaded_by("run", str(vector))
    assert status == 0
    assert among(modules, ("numpy", "hypothesis", "conformance.explain.triage")) == []
    assert among(modules, ("conformance.mutants", "conformance.tools")) == []


def test_a_mutant_s_adapter_loads_its_family_module_and_no_replay():
    hello = b'{"id":0,"op":"hello","protocol":1}\n{"id":1,"op":"bye"}\n'
    status, modules = loaded_by("adapter", "--mutant", "float32-accumulation", stdin=hello)
    assert status == 0
    assert among(modules, ("conformance.mutants",)) == [
        "conformance.mutants",
        "conformance.mutants._base",
        "conformance.mutants.model",
        "conformance.mutants.mutant_index",
        "conformance.mutants.summation",
    ]
    unused = ("jsonschema", "hypothesis", "conformance.explain", "conformance.slips")
    layers = ("suite", "judge", "runner", "report.terminal", "tools")
    assert among(modules, (*unused, *(f"conformance.{layer}" for layer in layers))) == []


def test_a_slip_s_adapter_loads_its_module_and_neither_numpy_nor_the_mutants():
    hello = b'{"id":0,"op":"hello","protocol":1}\n{"id":1,"op":"bye"}\n'
    status, modules = loaded_by("adapter", "--slip", "positions-uint32", stdin=hello)
    assert status == 0
    assert among(modules, ("numpy", "conformance.mutants", "conformance.explain")) == []
    assert among(modules, ("conformance.slips",)) == [
        "conformance.slips",
        "conformance.slips.numbers_slips",
        "conformance.slips.slip_adapter",
        "conformance.slips.slip_index",
    ]
