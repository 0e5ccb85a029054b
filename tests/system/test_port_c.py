"""The C port (adapters/c): built with make, checked against the reference adapter.

The differential scenarios (tests/support/port_differential.py) send the same request bytes to the C
adapter and to the reference and compare every response; the suite tests run the committed
vectors through ``snapkv-conformance run``. Both run twice: the optimised build and the
AddressSanitizer + UndefinedBehaviorSanitizer build. Without gcc/cc and make the tests skip,
or fail when the environment variable CI is set.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.support.paths import ROOT
from tests.support.port_differential import (
    INT31,
    build_scenario,
    check_scenarios,
    compare,
    port_output,
    reference_output,
    run_committed_suite,
)
from tests.support.toolchains import build_lock, require_tools

#: Builds toolchains, wheels or whole CI runs: README's test command leaves it to .ci/run.
pytestmark = pytest.mark.slow

C_DIR = ROOT / "adapters" / "c"
BUILD = C_DIR / "build"
#: More with SNAPKV_C_SCENARIOS=N for a longer soak (the README quotes such a run).
SCENARIOS = int(os.environ.get("SNAPKV_C_SCENARIOS", "200"))
SANITIZED_SCENARIOS = max(SCENARIOS // 5, 1)


@pytest.fixture(scope="session")
def c_build() -> dict[str, Path]:
    """Build the adapter, its sanitized twin and the memory tool once per test session."""
    require_tools(os.environ.get("CC", "cc"), "make")
    targets = [
        "build/snapkv-adapter",
        "build/snapkv-adapter-asan",
        "build/snapkv-memory",
        "build/test-decimal",
        "build/test-decimal-portable",
    ]
    with build_lock("c"):
        done = subprocess.run(
            ["make", "-s", "-C", str(C_DIR), *targets],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, f"make failed:\n{done.stdout}\n{done.stderr}"
    return {
        "adapter": BUILD / "snapkv-adapter",
        "asan": BUILD / "snapkv-adapter-asan",
        "memory": BUILD / "snapkv-memory",
        "decimal": BUILD / "test-decimal",
        "decimal-portable": BUILD / "test-decimal-portable",
    }


@pytest.fixture(params=["adapter", "asan"])
def adapter(request: pytest.FixtureRequest, c_build: dict[str, Path]) -> str:
    """The optimised adapter, then the sanitized one."""
    return str(c_build[request.param])


def test_random_scenarios_match_the_reference(adapter: str) -> None:
    count = SANITIZED_SCENARIOS if adapter.endswith("-asan") else SCENARIOS
    totals = check_scenarios([adapter], range(count))
    # The scenarios must actually exercise evictions and refusals, or the test proves little.
    assert totals["victims"] > count and totals["refusals"] > count, totals


@pytest.mark.parametrize("build", ["decimal", "decimal-portable"])
def test_number_reader_agrees_with_strtod(c_build: dict[str, Path], build: str) -> None:
    """decimal_to_double (Eisel-Lemire with a strtod fallback) against the C library's strtod
    on random float32/float64 texts in every precision, digit strings and near-ties; built as
    the adapter is, and with the portable code (no 128-bit type, digits one at a time)."""
    done = subprocess.run(
        [str(c_build[build]), "7", "60000"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    checked, differ = map(int, re.findall(r"\d+", done.stdout.splitlines()[-1]))
    assert checked > 2_000_000 and differ == 0, done.stdout


def test_hello_names_the_c_port(adapter: str) -> None:
    out = port_output([adapter], b'{"id":1,"op":"hello","protocol":1}\n')
    assert out == (
        b'{"id":1,"ok":true,"protocol":1,"implementation":{"name":"snapkv-c","language":"c",'
        b'"version":"0.1.0"},"capabilities":["scores"]}\n'
    )


def test_bye_ends_the_session_and_exits_zero(adapter: str) -> None:
    stream = b'{"id":1,"op":"bye"}\n{"id":2,"op":"evict"}\n'
    assert port_output([adapter], stream) == b'{"id":1,"ok":true}\n'


def test_answers_each_line_before_reading_the_next(adapter: str) -> None:
    """A runner may wait for each answer before sending more: no read-ahead deadlock."""
    with subprocess.Popen([adapter], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        for request_id in range(3):
            proc.stdin.write(b'{"id":%d,"op":"evict"}\n' % request_id)
            proc.stdin.flush()
            assert proc.stdout.readline().startswith(b'{"id":%d,"ok":false' % request_id)
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0


def _weights(rng: np.random.Generator, count: int) -> bytes:
    """``count`` float32 weights in shortest round-trip form, a quarter of them tied at 0.5."""
    values = rng.random(count, dtype=np.float32)
    values[rng.random(count) < 0.25] = 0.5
    return ",".join(map(repr, values.astype(float).tolist())).encode()


def test_long_lines_and_many_kept_positions(adapter: str) -> None:
    """Lines far beyond any fixed buffer: a 1 MB ignored field, attention over up to 3000
    positions, 3000 steps between two evictions, and scores over all of them."""
    rng = np.random.default_rng(7)
    lines = [
        b'{"id":1,"op":"new","params":{"budget":2500,"recentWindow":10,"obsWindow":3,'
        b'"poolKernel":5},"seed":0}',
        b'{"id":2,"op":"evict","pad":"' + b"x" * 1_000_000 + b'"}',
    ]
    for pos in range(3000):
        attn = b"[" + _weights(rng, pos) + b"]" if pos % 97 == 0 else b"null"
        lines.append(b'{"id":%d,"op":"step","pos":%d,"attn":%s}' % (pos + 3, pos, attn))
    lines += [b'{"id":9998,"op":"scores"}', b'{"id":9999,"op":"evict"}']
    lines.append(b'{"id":10000,"op":"scores"}')
    stream = b"\n".join(lines) + b"\n"
    compare(stream, reference_output(stream), port_output([adapter], stream), "long lines")


def test_parameters_at_the_limit_run_by_use(adapter: str) -> None:
    """Decision 6: every parameter near 2^31 - 1 is accepted and runs (memory by use)."""
    rng = np.random.default_rng(11)
    lines = [
        b'{"id":1,"op":"new","params":{"budget":%d,"recentWindow":%d,"obsWindow":%d,'
        b'"poolKernel":%d},"seed":%d}' % (INT31, INT31 - 1, INT31, INT31, INT31)
    ]
    for pos in range(300):
        lines.append(
            b'{"id":%d,"op":"step","pos":%d,"attn":[%s]}' % (pos + 2, pos, _weights(rng, pos))
        )
    lines += [b'{"id":400,"op":"evict"}', b'{"id":401,"op":"scores"}']
    stream = b"\n".join(lines) + b"\n"
    compare(stream, reference_output(stream), port_output([adapter], stream), "limits")


def test_memory_follows_use(c_build: dict[str, Path]) -> None:
    """The memory tool's runs: at the defaults the capacity stops at budget + 1, and with
    every parameter at 2^31 - 1 the footprint follows the 1000 steps actually taken."""
    env = dict(os.environ, GLIBC_TUNABLES="glibc.malloc.tcache_count=0")
    out = subprocess.run(
        [str(c_build["memory"])], capture_output=True, text=True, timeout=60, env=env, check=True
    ).stdout
    rows = {
        line.split()[0]: line
        for line in out.splitlines()
        if line.split() and line.split()[0] in {"defaults", "batched", "huge"}
    }
    assert set(rows) == {"defaults", "batched", "huge"}, out
    capacity = {name: int(re.search(r"capacity +(\d+)", row)[1]) for name, row in rows.items()}
    footprint = {name: int(re.search(r"footprint +(\d+)", row)[1]) for name, row in rows.items()}
    kept = {name: int(re.search(r"kept at most +(\d+)", row)[1]) for name, row in rows.items()}
    assert capacity["defaults"] == kept["defaults"] == 513, out
    assert kept["batched"] <= capacity["batched"] <= 2 * kept["batched"], out
    # 1000 kept positions and at most 1024 ring columns of 4 bytes, with room to spare.
    assert footprint["huge"] < 2 * 1024 * 1024 * 4, out


def test_scenarios_are_deterministic() -> None:
    """The seeds name the same scenarios on every run, so a failure can be replayed."""
    assert build_scenario(3) == build_scenario(3)


def _suite_committed() -> bool:
    """The committed suite has vectors (it landed after this test was written; an empty
    vectors/ makes the runner exit 2, which is the suite's problem, not the port's)."""
    return any((ROOT / "vectors").rglob("*.json"))


@pytest.mark.skipif(not _suite_committed(), reason="the committed suite has no vectors yet")
def test_committed_suite_passes(adapter: str) -> None:
    output = run_committed_suite(adapter)
    assert "snapkv-c" in output, output[-4000:]


# -- the Makefile's promise: exactness whatever CFLAGS say -------------------------------------


def _make(tmp_path: Path, *variables: str) -> subprocess.CompletedProcess[str]:
    require_tools(os.environ.get("CC", "cc"), "make")
    return subprocess.run(
        ["make", "-s", "-C", str(C_DIR), f"BUILD={tmp_path}", *variables],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_fast_math_in_cflags_and_ldflags_still_builds_a_conforming_adapter(tmp_path: Path) -> None:
    """The protective flags come after the user's: -O3 -march=native -ffast-math (on the link
    line too) still passes every vector, the summation traps and subnormal weights included."""
    done = _make(tmp_path, "CFLAGS=-O3 -march=native -ffast-math", "LDFLAGS=-ffast-math")
    assert done.returncode == 0, done.stdout + done.stderr
    out = run_committed_suite(str(tmp_path / "snapkv-adapter"))
    assert out.rstrip().endswith(" 0 failed"), out[-2000:]


@pytest.mark.parametrize("flag", ["-Ofast", "-funsafe-math-optimizations"])
def test_flags_that_link_flush_to_zero_are_refused_with_the_reason(
    tmp_path: Path, flag: str
) -> None:
    done = _make(tmp_path, f"CFLAGS=-O2 {flag}")
    assert done.returncode != 0
    assert f"{flag}: gcc then links crtfastmath.o" in done.stderr
    assert "weights/subnormal" in done.stderr
    assert not (tmp_path / "snapkv-adapter").exists()


@pytest.mark.parametrize(("method", "compiles"), [("0", True), ("16", True), ("2", False)])
def test_the_eval_method_guard_accepts_0_and_16(
    tmp_path: Path, method: str, compiles: bool
) -> None:
    """FLT_EVAL_METHOD 16 (gcc's GNU modes with AVX512-FP16) concerns _Float16 only: float
    and double are evaluated as under 0. 2 (x87 excess precision) changes sums: refused."""
    cc = os.environ.get("CC", "cc")
    require_tools(cc)
    done = subprocess.run(
        [
            cc, "-std=c99", "-Werror", "-c", str(C_DIR / "snapkv.c"), "-o", str(tmp_path / "s.o"),
            "-U__FLT_EVAL_METHOD__", f"-D__FLT_EVAL_METHOD__={method}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip
    assert (done.returncode == 0) == compiles, done.stderr
    if not compiles:
        assert "FLT_EVAL_METHOD 0 or 16" in done.stderr
