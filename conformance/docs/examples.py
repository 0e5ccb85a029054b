"""Real runs of held-out ports, shown as they print: README's first run of a port and the
triage page's examples.

The ports are ones a porter could have written, served by ``tests/heldout/real_ports.py NAME``:
numpy ports of SPEC.md held out from the kit's catalogue, each with the mistakes of a real
port (``position-numbers`` counts the protected window in position numbers; ``java-habits``
binds parameters case-insensitively and a null ``attn`` to an empty array; ``kvpress`` is NVIDIA
kvpress's SnapKVPress scoring). Each run is the ``run`` command itself
(:func:`conformance.cli.main`) from the checkout's root, so a block is what a porter sees; the
FAIL lines ``run`` also writes to stderr as vectors fail are left out, as ``2>/dev/null``
would. A port's run takes seconds: each is made once per process.
"""

from __future__ import annotations

import contextlib
import functools
import io
import shlex
import sys
from pathlib import Path

from conformance.cli import main

PORTS = "tests/heldout/real_ports.py"
#: README's first run: a port with one mistake, failing a few vectors.
FIRST_RUN = "position-numbers"
TRIAGE = "triage: "


def command(name: str) -> str:
    """The command as a porter types it, from the checkout's root."""
    return f'snapkv-conformance run --adapter "python3 {PORTS} {name}"'


@functools.cache
def run_port(root: Path, name: str) -> tuple[str, int]:
    """What ``run`` printed on stdout against the held-out port ``name``, and its status."""
    adapter = shlex.join([sys.executable, str(root / PORTS), name])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        status = main(["run", "--adapter", adapter])
    return printed.getvalue(), status


def first_run(root: Path) -> str:
    """README's block: the command, its whole stdout, and its exit status."""
    printed, status = run_port(root, FIRST_RUN)
    lines = ["```console", f"$ {command(FIRST_RUN)}", printed.rstrip("\n")]
    return "\n".join([*lines, "$ echo $?", str(status), "```"])


def triage_section(printed: str) -> str:
    """The triage section of ``run``'s output: from its ``triage:`` line to the blank line
    that ends it."""
    lines = printed.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(TRIAGE))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return "\n".join(lines[start:end])


def java_habits(root: Path) -> str:
    """The triage section of a port with a Java port's JSON habits, as a console block."""
    printed, _ = run_port(root, "java-habits")
    lines = ["```console", f"$ {command('java-habits')}", "...", triage_section(printed), "..."]
    return "\n".join([*lines, "```"])


def kvpress(root: Path) -> str:
    """The first triage line of a transcription of kvpress's scoring, as a text block."""
    printed, _ = run_port(root, "kvpress")
    return "\n".join(["```text", triage_section(printed).split("\n", 1)[0], "```"])
