"""Differential checking of a port's protocol v1 adapter against the reference adapter.

A scenario is a stream of request lines (bytes) built from a seeded numpy RNG. The same bytes
go to the port's adapter (a subprocess) and to the reference's
:func:`conformance.adapter.server.serve` (in-process); the two response streams must agree line for
line: the same ids, the same ok/refusal, the same error kinds (messages are free text and not
compared), the same victims and positions, and ``sums``/``pooled`` bit for bit after parsing.

Scenarios exercise what a port gets wrong: random parameters (``recentWindow`` 0, kernels and
windows up to ``2^31 - 1``), gaps and positions near ``2^31 - 1``, null steps, several steps
between evictions, weights that tie, ``-0.0``, subnormals, values near ``FLT_MAX`` and values
that need float32 narrowing, and refusals of every kind and in every judgement order, including
malformed lines (bad JSON, ``NaN``, invalid UTF-8, unknown ops, missing fields).

Each scenario drives a shadow reference :class:`~conformance.adapter.server.Session` while it is
built, so it knows how many positions are kept (an ``attn`` list of the right length) and what was
admitted last. Nothing here predicts a result: expected responses come from the reference.
"""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from conformance.adapter.server import Session, serve
from tests.support.paths import ROOT

INT31 = 2**31 - 1
FLT_MAX_TEXT = "3.4028234663852886e+38"
# The midpoint between FLT_MAX and 2^128: exactly a float64; ties-to-even narrows it to inf.
FLT_MAX_MIDPOINT_TEXT = "3.4028235677973366e+38"
# One float64 below that midpoint: narrows to FLT_MAX and is accepted.
BELOW_MIDPOINT_TEXT = repr(float(np.nextafter(3.4028235677973366e38, 0.0)))

TIE_WEIGHTS = ("0.0", "0", "0.5", "0.25", "1", "1.0", "0.125")
ZERO_LIKE_WEIGHTS = ("-0.0", "-0", "-1e-50", "-0.0e+0", "1e-50")
NARROWING_WEIGHTS = ("0.1", "0.2", "0.3333333333333333", "1e-3", "2.5E-1", "7e0", "123456789")
NEGATIVE_WEIGHTS = ("-0.5", "-1e-30", "-1", "-3.4e38", "-1e400")
BEYOND_WEIGHTS = ("3.5e38", "1e39", "1e400", str(10**40), str(10**400), FLT_MAX_MIDPOINT_TEXT)
BAD_PROTOCOLS = ("2", "0", "1.0", "1e0", '"1"', "true", "null")
NOT_NUMBERS = ("null", "true", "false", '"0.5"', "[]", "{}", "[0.5]")


def weight_token(rng: np.random.Generator) -> str:
    """One weight the reference accepts, as raw JSON text, from a mix built to find bugs."""
    kind = rng.integers(100)
    if kind < 40:
        return repr(float(np.float32(rng.random())))
    if kind < 55:
        return str(rng.choice(TIE_WEIGHTS))
    if kind < 60:
        return str(rng.choice(ZERO_LIKE_WEIGHTS))
    if kind < 66:  # float32 subnormals, the smallest and random ones
        mantissa = int(rng.choice([1, 2, int(rng.integers(1, 2**23))]))
        return repr(mantissa * 2.0**-149)
    if kind < 71:
        return str(rng.choice([FLT_MAX_TEXT, BELOW_MIDPOINT_TEXT, "3.4028235e38", "1e38"]))
    if kind < 84:  # not float32 values: the adapter must narrow them
        if rng.random() < 0.5:
            return str(rng.choice(NARROWING_WEIGHTS))
        return repr(float(rng.random() * 10.0 ** int(rng.integers(-6, 6))))
    return repr(float(np.float32(rng.random() * 1000.0)))


def random_params(rng: np.random.Generator) -> dict[str, int]:
    """Valid construction parameters, small enough that scenarios evict, with extremes."""
    budget = int(rng.choice([1, 2, 3, 4, 5, 8, 13, 24]))
    recent = int(rng.choice([0, 0, budget - 1, int(rng.integers(budget))]))
    obs = int(rng.choice([1, 1, 2, 3, 4, 5, 8, 16, INT31]))
    kernel = int(rng.choice([1, 1, 3, 5, 7, 9, 21, INT31]))
    return {"budget": budget, "recentWindow": recent, "obsWindow": obs, "poolKernel": kernel}


def params_text(values: dict[str, str]) -> str:
    return "{" + ",".join(f'"{name}":{token}' for name, token in values.items()) + "}"


def bad_new_body(rng: np.random.Generator) -> str:
    """The ``params`` and ``seed`` members of a ``new`` that must be refused (or, for a few
    seeds the reference accepts, succeed): raw JSON text."""
    good = {name: str(value) for name, value in random_params(rng).items()}
    name = str(rng.choice(list(good)))
    fault = int(rng.integers(14))
    seed = "0"
    if fault == 0:
        del good[name]
    elif fault == 1:
        good["extra"] = "1"
    elif fault == 2:
        good[name] = str(rng.choice(["true", "false", "null", '"4"', "[4]", "{}"]))
    elif fault == 3:
        good[name] = str(rng.choice(["4.5", "4.0", "4e0", "1E1", "-0.0"]))
    elif fault == 4:
        good[name] = str(rng.choice(["-1", str(INT31 + 1), str(10**30), str(-(10**30))]))
    elif fault == 5:
        good["poolKernel"] = str(rng.choice([0, 2, 8, INT31 - 1]))
    elif fault == 6:
        good["recentWindow"] = str(int(good["budget"]) + int(rng.integers(0, 3)))
    elif fault == 7:
        good["budget"] = "0"
    elif fault == 8:
        good["obsWindow"] = "0"
    elif fault == 9:
        return (
            f'"params":{rng.choice(["[]", "5", "null", "true", chr(34) + "p" + chr(34)])},"seed":0'
        )
    elif fault == 10:  # seeds: non-integers are refused; any JSON integer is accepted
        seed = str(rng.choice(["1.5", "1.0", '"0"', "null", "true", "[]", str(10**30), "-7"]))
    elif fault == 11:  # an escaped name still names the parameter
        good = {k.replace("b", "\\u0062"): v for k, v in good.items()}
    elif fault == 12:  # a repeated name: the last value counts
        return f'"params":{params_text(good)[:-1]},"{name}":{good[name]}}},"seed":0'
    else:
        good = {name: str(INT31) for name in good}  # kernel and windows at 2^31 - 1
        good["recentWindow"] = str(INT31 - 1)
    return f'"params":{params_text(good)},"seed":{seed}'


def malformed_line(rng: np.random.Generator, request_id: int, pos: int) -> bytes:
    """A line that is malformed, or well-formed in an unusual way (BOM, escapes, duplicates)."""
    n, p = request_id, pos
    choices: list[bytes | str] = [
        "garbage",
        "{",
        "[1,2]",
        "5",
        '"evict"',
        "null",
        "{}",
        f'{{"id":{n}.5,"op":"evict"}}',
        f'{{"id":"{n}","op":"evict"}}',
        '{"id":true,"op":"evict"}',
        f'{{"id":[{n}],"op":"evict"}}',
        '{"op":"evict"}',
        f'{{"id":{n}}}',
        f'{{"id":{n},"op":"nope"}}',
        f'{{"id":{n},"op":5}}',
        f'{{"id":{n},"op":"EVICT"}}',
        f'{{"id":{n},"op":"step","pos":{p}}}',
        f'{{"id":{n},"op":"step","attn":null}}',
        f'{{"id":{n},"op":"new","seed":0}}',
        f'{{"id":{n},"op":"new","params":{{}}}}',
        f'{{"id":{n},"op":"hello"}}',
        f'{{"id":{n},"op":"hello","protocol":{rng.choice(BAD_PROTOCOLS)}}}',
        f'{{"id":{n},"op":"hello","protocol":1}}',
        f'{{"id":{n},"op":"step","pos":{p},"attn":[NaN]}}',
        f'{{"id":{n},"op":"step","pos":{p},"attn":[Infinity]}}',
        f'{{"id":{n},"op":"step","pos":{p},"attn":[-Infinity]}}',
        f'{{"id":{n},"op":"evict",}}',
        f"{{'id':{n},'op':'evict'}}",
        f'{{"id":0{n},"op":"evict"}}',
        f'{{"id":{n},"op":"evict"}} x',
        f'{{"id":{n},"op":"evict"}}{{}}',
        f'{{"id":{n},"op":"evi\x01ct"}}',
        f'{{"id":{n},"op":"evict\\u0000"}}',
        f'{{"id":{n},"op":"ev\\u0069ct"}}',
        f'{{"i\\u0064":{n},"op":"evict"}}',
        f'{{"id":{n},"op":"nope","op":"evict"}}',
        f'{{"id":"x","id":{n},"op":"scores"}}',
        f'{{"op":"scores","extra":[1,{{"a":null,"b":[true,false,-0.0e-0]}}],"id":{n}}}',
        f'  {{ "id" : {n} , "op" : "evict" }}  \r',
        f'{{"id":{n},"op":"evict","deep":{"[" * 40}{"]" * 40}}}',
        f'{{"id":{n},"op":"evict","s":"\\"\\\\\\/\\b\\f\\n\\r\\t\\ud83d\\ude00\\ud800"}}',
        f'{{"id":{n},"op":"evict","s":"\\x"}}',
        f'{{"id":{n},"op":"evict","s":"\\u12"}}',
        f'{{"id":{n},"op":"evict","n":1.}}',
        f'{{"id":{n},"op":"evict","n":-}}',
        f'{{"id":{n},"op":"evict","n":1e}}',
        f'{{"id":{n},"op":"evict","n":.5}}',
        f'{{"id":{n},"op":"evict","n":+1}}',
        f'{{"id":-{n},"op":"evict"}}',
        f'{{"id":{10**30 + n},"op":"evict"}}',
        '{"id":-0,"op":"evict"}',
        "   ",
        "\t\r",
        "\x0b\x0c",
        b'{"id":%d,"op":"evict","s":"\xff"}' % n,
        b'{"id":%d,"op":"evict","s":"\xc0\xaf"}' % n,
        b'{"id":%d,"op":"evict","s":"\xf4\x90\x80\x80"}' % n,
        b'{"id":%d,"op":"evict","s":"\xe2\x82"}' % n,
        b'{"id":%d,"op":"evict","s":"\xed\xa0\x80 caf\xc3\xa9 \xf0\x9f\x98\x80"}' % n,
        b'\xef\xbb\xbf{"id":%d,"op":"evict"}' % n,
    ]
    line = choices[int(rng.integers(len(choices)))]
    return line if isinstance(line, bytes) else line.encode()


@dataclass
class ScenarioBuilder:
    """Builds one scenario's request lines while a shadow reference session follows them."""

    rng: np.random.Generator
    lines: list[bytes]
    shadow: Session
    next_id: int = 1

    def send(self, line: bytes | str) -> None:
        data = line.encode() if isinstance(line, str) else line
        self.lines.append(data)
        if data.strip():
            self.shadow.handle_line(data)

    def take_id(self) -> int:
        self.next_id += int(self.rng.choice([1, 1, 1, 2, 1000]))
        return self.next_id

    @property
    def kept(self) -> int:
        return 0 if self.shadow.policy is None else len(self.shadow.policy.kept)

    @property
    def last(self) -> int:
        policy = self.shadow.policy
        return -1 if policy is None or policy.last_admitted is None else policy.last_admitted

    def next_position(self) -> int:
        roll = self.rng.random()
        if roll < 0.7:
            step = 1
        elif roll < 0.97:
            step = int(self.rng.integers(2, 1000))
        else:  # jump to the top of the range: later steps must all be refused
            return INT31 - int(self.rng.integers(0, 3))
        return min(self.last + step, INT31)

    def attention(self, count: int | None = None) -> str:
        count = self.kept if count is None else count
        return "[" + ",".join(weight_token(self.rng) for _ in range(count)) + "]"

    def new(self, body: str | None = None) -> None:
        if body is None:
            params = {k: str(v) for k, v in random_params(self.rng).items()}
            seed = int(self.rng.choice([0, 1, 42, INT31]))
            body = f'"params":{params_text(params)},"seed":{seed}'
        self.send(f'{{"id":{self.take_id()},"op":"new",{body}}}')

    def step(self) -> None:
        pos = self.next_position()
        attn = "null" if self.rng.random() < 0.15 else self.attention()
        self.send(f'{{"id":{self.take_id()},"op":"step","pos":{pos},"attn":{attn}}}')

    def simple(self, op: str) -> None:
        self.send(f'{{"id":{self.take_id()},"op":"{op}"}}')

    def bad_step(self) -> None:
        """A step the reference refuses: a bad position, a bad attention, or both."""
        rng, kept, last = self.rng, self.kept, self.last
        pos = str(max(last + 1, 0) if last < INT31 else INT31)
        attn = self.attention()
        fault = int(rng.integers(3))
        if fault in (0, 2):
            options = [str(last), str(last - 1), "-1", str(INT31 + 1), str(10**30)]
            options += [f"{last + 1}.0", f"{last + 1}e0", f'"{last + 1}"', "true", "null", "[1]"]
            pos = str(rng.choice(options))
        if fault in (1, 2):
            attn = self.bad_attention(kept)
        self.send(f'{{"id":{self.take_id()},"op":"step","pos":{pos},"attn":{attn}}}')

    def bad_attention(self, kept: int) -> str:
        rng = self.rng
        fault = int(rng.integers(5))
        if fault == 0 or kept == 0:  # wrong length (or not a list at all)
            if rng.random() < 0.3:
                return str(rng.choice(["5", '"x"', "true", "{}", '{"0":0.5}']))
            longer = kept == 0 or rng.random() < 0.5
            return self.attention(kept + int(rng.choice([1, 2])) if longer else kept - 1)
        weights = [weight_token(rng) for _ in range(kept)]
        index = int(rng.integers(kept))
        pool = (NOT_NUMBERS, NEGATIVE_WEIGHTS, BEYOND_WEIGHTS)[min(fault - 1, 2)]
        weights[index] = str(rng.choice(pool))
        return "[" + ",".join(weights) + "]"


def build_scenario(seed: int) -> list[bytes]:
    """The request lines of scenario ``seed`` (each ends with a newline)."""
    rng = np.random.default_rng(seed)
    builder = ScenarioBuilder(rng, [], Session())
    if rng.random() < 0.3:
        builder.send(f'{{"id":{builder.take_id()},"op":"hello","protocol":1}}')
    if rng.random() < 0.15:  # no-policy before any accepted new
        for _ in range(int(rng.integers(1, 4))):
            roll = rng.random()
            if roll < 0.4:
                builder.step()
            else:
                builder.simple("evict" if roll < 0.7 else "scores")
    if rng.random() < 0.2:
        builder.new(bad_new_body(rng))
    builder.new()
    for _ in range(int(rng.integers(5, 90))):
        roll = rng.random()
        if roll < 0.55:
            builder.step()
        elif roll < 0.75:
            builder.simple("evict")
        elif roll < 0.83:
            builder.simple("scores")
        elif roll < 0.91:
            builder.bad_step()
        elif roll < 0.94:
            builder.new(bad_new_body(rng))  # refused or not, the stream goes on
        elif roll < 0.95:
            builder.new()
        else:
            builder.send(malformed_line(rng, builder.take_id(), max(builder.last + 1, 0)))
    builder.simple("scores")
    if rng.random() < 0.7:
        builder.simple("bye")
        if rng.random() < 0.3:  # nothing after bye may be answered
            builder.simple("evict")
    lines = [line + b"\n" for line in builder.lines]
    if rng.random() < 0.2:  # the last line may end without a newline
        lines[-1] = lines[-1][:-1]
    return lines


def reference_output(stream: bytes) -> bytes:
    """What the reference adapter program answers to ``stream``."""
    out = io.BytesIO()
    serve(io.BytesIO(stream), out)
    return out.getvalue()


def port_output(argv: Sequence[str], stream: bytes, timeout: float = 60.0) -> bytes:
    """What the port's adapter answers to ``stream``; it must exit 0 without stderr noise."""
    done = subprocess.run(argv, input=stream, capture_output=True, timeout=timeout, check=False)
    assert done.returncode == 0, (
        f"{argv[0]} exited {done.returncode}; stderr:\n{done.stderr.decode(errors='replace')}"
    )
    return done.stdout


def float_bits(value: Any) -> str:
    """The float64 bits of a score; an integral score may be written as an integer (SPEC.md
    §2.6: only the value read back counts), as Go's and JavaScript's encoders write ``1.0``."""
    if type(value) is int and abs(value) <= 2**53:
        value = float(value)
    assert type(value) is float, f"score {value!r} is not written as a number"
    return struct.pack("<d", value).hex()


def normalize(response: Any) -> Any:
    """A response with what may differ between implementations taken out: error messages
    (checked to be non-empty text) and ``implementation``; scores as float64 bit patterns."""
    assert isinstance(response, dict), response
    out = dict(response)
    if out.get("ok") is False:
        error = out["error"]
        assert isinstance(error.get("message"), str) and error["message"], response
        out["error"] = {"kind": error["kind"]}
    for key in ("sums", "pooled"):
        if key in out:
            out[key] = [float_bits(value) for value in out[key]]
    if "implementation" in out:
        assert set(out["implementation"]) == {"name", "language", "version"}, response
        out["implementation"] = "..."
    return out


def compare(stream: bytes, expected: bytes, actual: bytes, label: str) -> None:
    """Assert the two response streams agree, naming the first request that differs."""
    requests = [line for line in stream.splitlines() if line.strip()]
    want, got = expected.splitlines(), actual.splitlines()
    for index, (want_line, got_line) in enumerate(zip(want, got, strict=False)):
        try:
            got_response = json.loads(got_line)
        except ValueError as error:
            message = f"{label}: response {index} is not JSON ({error}): {got_line!r}"
            raise AssertionError(message) from None
        assert normalize(got_response) == normalize(json.loads(want_line)), (
            f"{label}: response {index} differs\n  request:   {requests[index][:300]!r}\n"
            f"  reference: {want_line[:300]!r}\n  port:      {got_line[:300]!r}"
        )
    assert len(got) == len(want), f"{label}: {len(got)} responses, reference gave {len(want)}"


def check_scenarios(argv: Sequence[str], seeds: Sequence[int]) -> dict[str, int]:
    """Run every scenario through the port and the reference; return counts for reporting."""
    totals = {"scenarios": 0, "requests": 0, "refusals": 0, "victims": 0}
    for seed in seeds:
        stream = b"".join(build_scenario(seed))
        expected = reference_output(stream)
        compare(stream, expected, port_output(argv, stream), f"scenario {seed}")
        responses = [json.loads(line) for line in expected.splitlines()]
        totals["scenarios"] += 1
        totals["requests"] += len(responses)
        totals["refusals"] += sum(not r["ok"] for r in responses)
        totals["victims"] += sum(len(r.get("victims", ())) for r in responses)
    return totals


def run_committed_suite(adapter: str, timeout: float = 600.0) -> str:
    """Run ``snapkv-conformance run --adapter ADAPTER`` over the committed suite; assert it
    exits 0 and return its output."""
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--adapter", adapter],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done.stdout
