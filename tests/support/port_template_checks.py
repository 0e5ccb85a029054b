"""Checks shared by the template ports that build with ``make`` (Go, TypeScript).

Each takes the adapter's argv. Expected answers come from the reference adapter
(:func:`port_differential.reference_output`), never from this file, except where the protocol
fixes the bytes' meaning outright (an id echoed, one answer per line).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tests.support.port_differential import (
    INT31,
    check_scenarios,
    compare,
    port_output,
    reference_output,
)
from tests.support.toolchains import build_lock, require_tools

#: Random scenarios per port; each starts a process, and a Node process takes ten times as
#: long as a Go one to start, so the default is per port. SNAPKV_DIFF_SCENARIOS=N overrides it
#: for a longer soak.
SCENARIOS_OVERRIDE = os.environ.get("SNAPKV_DIFF_SCENARIOS")


def make_adapter(directory: Path, name: str, *tools: str) -> list[str]:
    """``make -C directory``, once at a time across xdist workers; the built adapter's argv."""
    require_tools("make", *tools)
    with build_lock(name):
        done = subprocess.run(
            ["make", "-s", "-C", str(directory)],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert done.returncode == 0, f"make -C {directory} failed:\n{done.stdout}\n{done.stderr}"
    adapter = directory / "build" / "snapkv-adapter"
    assert os.access(adapter, os.X_OK), f"make did not produce the executable {adapter}"
    return [str(adapter)]


def random_scenarios(argv: Sequence[str], count: int) -> None:
    count = int(SCENARIOS_OVERRIDE or count)
    totals = check_scenarios(argv, range(count))
    # The scenarios must exercise evictions and refusals, or the check proves little.
    assert totals["victims"] > count and totals["refusals"] > count, totals


def same_as_reference(argv: Sequence[str], lines: Sequence[bytes], label: str) -> None:
    stream = b"".join(lines)
    compare(stream, reference_output(stream), port_output(argv, stream), label)


def _weights(rng: np.random.Generator, count: int) -> bytes:
    values = rng.random(count, dtype=np.float32)
    values[rng.random(count) < 0.25] = 0.5  # a quarter tied
    return ",".join(map(repr, values.astype(float).tolist())).encode()


def long_lines(argv: Sequence[str]) -> None:
    """Lines far beyond a 64 KiB line buffer: a 1 MB ignored field, attention over up to
    3000 positions, then scores and an evict over all of them."""
    rng = np.random.default_rng(7)
    lines = [
        b'{"id":1,"op":"new","params":{"budget":2500,"recentWindow":10,"obsWindow":3,'
        b'"poolKernel":5},"seed":0}\n',
        b'{"id":2,"op":"evict","pad":"' + b"x" * 1_000_000 + b'"}\n',
    ]
    for pos in range(3000):
        attn = b"[" + _weights(rng, pos) + b"]" if pos % 97 == 0 else b"null"
        lines.append(b'{"id":%d,"op":"step","pos":%d,"attn":%s}\n' % (pos + 3, pos, attn))
    lines += [b'{"id":9998,"op":"scores"}\n', b'{"id":9999,"op":"evict"}\n']
    same_as_reference(argv, lines, "long lines")


def parameters_at_the_limit(argv: Sequence[str]) -> None:
    """Every parameter at 2^31 - 1 is accepted and runs (memory by use)."""
    rng = np.random.default_rng(11)
    lines = [
        b'{"id":1,"op":"new","params":{"budget":%d,"recentWindow":%d,"obsWindow":%d,'
        b'"poolKernel":%d},"seed":%d}\n' % (INT31, INT31 - 1, INT31, INT31, INT31)
    ]
    for pos in range(300):
        attn = _weights(rng, pos)
        lines.append(b'{"id":%d,"op":"step","pos":%d,"attn":[%s]}\n' % (pos + 2, pos, attn))
    lines += [b'{"id":400,"op":"evict"}\n', b'{"id":401,"op":"scores"}\n']
    same_as_reference(argv, lines, "limits")


#: Lines that trip the traps of JSON libraries and line readers, each answered as the
#: reference answers it.
TRAP_LINES = [
    b'{"id":1,"op":"hello","protocol":1}\n',
    b'{"id":9007199254740993,"op":"evict"}\n',  # 2^53 + 1: a double would echo ...992
    b'{"id":-12345678901234567890123,"op":"evict"}\n',
    b'{"id":4.0,"op":"evict"}\n',  # not an integer: "id": null
    b'{"id":5,\r"op":"evict"}\n',  # a lone CR is whitespace, not the end of a line
    b'{"id":6,"op":"evict","s":"a\rb"}\n',  # a raw CR inside a string: not JSON, one answer
    b'{"ID":7,"Op":"evict"}\n',  # names are exact: no id
    b'{"id":8,"OP":"evict"}\n',
    b'{"id":9,"op":"evict","s":"\xff"}\n',  # invalid UTF-8 must not become U+FFFD
    b'{"id":10,"op":"evict","s":"\xed\xa0\x80"}\n',  # an encoded surrogate
    b'{"id":11,"op":"evict","s":"\\ud800"}\n',  # an escaped lone surrogate is valid JSON
    b'\xef\xbb\xbf{"id":12,"op":"evict"}\n',  # a byte-order mark
    b'{"id":13,"op":"step","pos":0,"attn":[NaN]}\n',
    b'{"id":14,"op":"new","params":{"budget":4.0,"recentWindow":0,"obsWindow":1,'
    b'"poolKernel":1},"seed":0}\n',
    b'{"id":15,"op":"new","params":{"budget":4,"recentWindow":0,"obsWindow":1,'
    b'"poolKernel":1,"Budget":4},"seed":0}\n',
    b'{"id":16,"op":"new","params":{"budget":9,"recentWindow":0,"obsWindow":1,'
    b'"poolKernel":1,"budget":2},"seed":true}\n',
    b'{"id":17,"op":"new","params":{"budget":9,"recentWindow":0,"obsWindow":1,'
    b'"poolKernel":1,"budget":2},"seed":0}\n',  # the last budget counts
    b"\r\n",
    b" \t \n",
    b'{"id":18,"op":"step","pos":0,"attn":null}\r\n',
    b'{"id":19,"op":"step","pos":1.0,"attn":[0.5]}\n',
    b'{"id":20,"op":"step","pos":1,"attn":[3.4028235677973366e+38]}\n',  # the midpoint
    b'{"id":21,"op":"step","pos":1,"attn":[3.4028235677973362e+38]}\n',  # just below it
    b'{"id":22,"op":"step","pos":2,"attn":[1e400, 0.5]}\n',
    b'{"id":23,"op":"step","pos":2,"attn":[-1e-50, "0.5"]}\n',
    b'{"id":24,"op":"step","pos":2,"attn":[-1e-50, -0]}\n',
    b'{"id":25,"op":"step","pos":3,"attn":[1.0000000000000002,0.1,16777217]}\n',
    b'{"id":26,"op":"evict"}\n',
    b'{"id":27,"op":"scores"}\n',
    b'{"id":28,"op":"evict"} {"id":29,"op":"evict"}\n',
    b'{"id":30,"op":"bye"}',  # the last line has no LF
]


def traps(argv: Sequence[str]) -> None:
    same_as_reference(argv, TRAP_LINES, "traps")
    # One answer per non-blank line, the big ids echoed exactly (compare parses both sides
    # as Python ints; check the literal too).
    out = port_output(argv, b"".join(TRAP_LINES))
    assert len(out.splitlines()) == len([x for x in TRAP_LINES if x.strip()]), out
    assert json.loads(out.splitlines()[1])["id"] == 2**53 + 1


def answers_each_line_before_reading_the_next(argv: Sequence[str]) -> None:
    """A runner may wait for each answer before sending more: no read-ahead deadlock."""
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        for request_id in range(3):
            proc.stdin.write(b'{"id":%d,"op":"evict"}\n' % request_id)
            proc.stdin.flush()
            assert proc.stdout.readline().startswith(b'{"')
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0


def bye_ends_the_session(argv: Sequence[str]) -> None:
    out = port_output(argv, b'{"id":1,"op":"bye"}\n{"id":2,"op":"evict"}\n')
    assert json.loads(out) == {"id": 1, "ok": True}
