"""What starting a command costs: CPU seconds of whole short commands, and what each loads.

Each command runs in a fresh interpreter, ``--repeats`` times, interleaved; the figure is the
child's CPU time (user + system, from ``wait4``; an adapter the command starts is reaped by
it and counts too), median of the repeats, beside ``python -c pass``:

- ``snapkv-conformance --help``;
- ``snapkv-conformance adapter`` answering ``hello`` and ``bye`` (the reference adapter's
  start-up, numpy included: it serves the numpy fast path; every ``run`` against it and
  every ``bench`` pays it);
- ``snapkv-conformance adapter --mutant float32-accumulation`` answering the same (a
  catalogued mistake served for the triage's own tests and benchmarks: it loads that
  mistake's family module, not the whole catalogue, and a run against it starts it once per
  protocol check);
- the reference's server alone serving the plain reference from ``python -c`` (no CLI, no
  numpy: ``bench_runner.py``'s passing program beside the mutant);
- ``snapkv-conformance run`` on one vector against the C port (``make -C adapters/c``), the
  reference adapter if the port is not built.

It then prints how many modules each loads, and which of the kit's heavy dependencies
(numpy, jsonschema, hypothesis, orjson) and layers; ``tests/cli/test_commands_startup.py`` pins what
must stay out. ``python -X importtime`` on the same commands says where the time goes.

    python3 benchmarks/bench_startup.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from in_tree import PORTS, ROOT

from conformance.spec import resources

#: Runs the CLI, then writes the modules it loaded to stderr (the command's own output is kept
#: apart on stdout).
_PROBE = """
import json, sys
from conformance.cli import main
try:
    status = main(sys.argv[1:])
except SystemExit as exit:
    status = exit.code
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""
HELLO = b'{"id":0,"op":"hello","protocol":1}\n{"id":1,"op":"bye"}\n'
WATCHED = ("numpy", "jsonschema", "hypothesis", "orjson")
#: The reference's server serving the plain reference, started without the CLI (no numpy).
PLAIN_REFERENCE = (
    "import sys; from conformance.adapter.server import main; "
    "from conformance.policy.reference import new_policy; sys.exit(main(new_policy))"
)
#: A catalogued mistake, served by ``adapter --mutant`` (it loads its family module).
MUTANT = "float32-accumulation"


def cpu_of(argv: list[str], stdin: bytes = b"") -> float:
    """CPU seconds of one process and the children it reaped."""
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    assert process.stdin is not None
    process.stdin.write(stdin)
    process.stdin.close()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def loaded(args: list[str], stdin: bytes = b"") -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        input=stdin,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        check=False,
    )
    return list(json.loads(done.stderr.decode().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    vector = str(resources.suite_dir() / "evict" / "many-victims-one-call.json")
    port = PORTS["c"]
    adapter = ["--adapter", str(port)] if port.is_file() else []
    against = "the C port" if adapter else "the reference adapter"
    commands: dict[str, tuple[list[str], bytes]] = {
        "python -c pass": ([], b""),
        "snapkv-conformance --help": (["--help"], b""),
        "snapkv-conformance adapter (hello, bye)": (["adapter"], HELLO),
        f"snapkv-conformance adapter --mutant {MUTANT} (hello, bye)": (
            ["adapter", "--mutant", MUTANT],
            HELLO,
        ),
        f"snapkv-conformance run, one vector, {against}": (["run", vector, *adapter], b""),
    }
    # Timed only: the reference's server without the CLI or numpy (the passing program of
    # bench_runner.py's triage part).
    plain = "the server alone, plain reference, python -c (hello, bye)"
    times: dict[str, list[float]] = {name: [] for name in (*commands, plain)}
    for _ in range(args.repeats):
        for name, (cli_args, stdin) in commands.items():
            argv = [sys.executable, "-m", "conformance", *cli_args]
            if not cli_args:
                argv = [sys.executable, "-c", "pass"]
            times[name].append(cpu_of(argv, stdin))
        times[plain].append(cpu_of([sys.executable, "-c", PLAIN_REFERENCE], HELLO))
    print(
        f"start-up: CPU seconds of whole commands, median of {args.repeats}, interleaved; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    for name, values in times.items():
        print(f"  {name:<58} {statistics.median(values):6.3f} s")
    print("what each loads (modules; the kit's heavy dependencies; the kit's layers):")
    for name, (cli_args, stdin) in commands.items():
        if not cli_args:
            continue
        modules = loaded(cli_args, stdin)
        heavy = [m for m in WATCHED if m in modules]
        layers = sorted({m.split(".")[1] for m in modules if m.startswith("conformance.")})
        print(f"  {name}: {len(modules)} modules; {', '.join(heavy) or 'none of numpy, ...'}")
        print(f"    layers: {', '.join(layers)}")


if __name__ == "__main__":
    main()
