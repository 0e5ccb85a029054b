"""Slips: the reference policy behind a protocol layer that makes one slip a port written from
SPEC.md alone made (a Java port passed every item of an earlier suite with each of these).

``python tests/lax_adapters/slips.py MODE`` serves the reference, except:

- ``single-rounding``: each weight's decimal read straight to float32 (Java's
  ``Float.parseFloat``), with a float64 guard that maps the overflow range to infinity, so only
  weights next to a float32 halfway point (and tiny negatives) are read differently.
- ``signed-64-bit-ids``: ids read as signed 64-bit integers (Java's ``Long.parseLong``): an id
  outside ``[-2^63, 2^63 - 1]`` is "not an integer", refused with bad-request and id null.
- ``first-name-wins``: where an object repeats a member name, the first occurrence counts, at
  every depth.

:func:`answer` is the protocol layer, also used in-process by the tests.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

# Run as a script from anywhere: make the checkout importable without installing it.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from conformance.adapter.server import Session, encode, refusal
from tests.support.rounding_oracle import read_once

MODES = ("single-rounding", "signed-64-bit-ids", "first-name-wins")
#: Where float32 rounding reaches infinity, as the guard compares a float64 with it.
OVERFLOW_HALFWAY = float((2 - 2**-24) * 2**127)


class Literal(float):
    """A number that remembers its text (so the weights can be read once from it)."""

    text: str

    def __new__(cls, text: str) -> Literal:
        value = super().__new__(cls, text)
        value.text = text
        return value


def java_float(text: str) -> float:
    """``Float.parseFloat`` behind a ``Double.parseDouble`` guard: one rounding, except that
    anything whose float64 reaches the overflow halfway point is infinity."""
    value = float(text)
    if abs(value) >= OVERFLOW_HALFWAY:
        return float("inf") if not text.startswith("-") else float("-inf")
    if value == 0:  # an exponent far below the float range: zero either way, and exact
        return value  # rationals of 10^-4294967295 would never finish
    return read_once(text)


def _first_wins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        result.setdefault(key, value)
    return result


def _plain(value: Any) -> Any:
    if isinstance(value, Literal):
        return int(value.text) if value.text.lstrip("-").isdigit() else float(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def answer(session: Session, mode: str, line: bytes) -> dict[str, Any] | None:
    if not line.strip(b" \t\r\n"):
        return None
    try:
        text = line.decode("utf-8")
        if mode == "single-rounding":
            request = json.loads(
                text, parse_float=Literal, parse_int=Literal, parse_constant=_refuse
            )
        elif mode == "first-name-wins":
            request = json.loads(text, object_pairs_hook=_first_wins, parse_constant=_refuse)
        else:
            request = json.loads(text, parse_constant=_refuse)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return session.handle_line(line)  # the reference's refusal
    if not isinstance(request, dict):
        return session.handle_line(line)
    if mode == "single-rounding":
        attn = request.get("attn")
        request = _plain(request)
        if request.get("op") == "step" and isinstance(attn, list):
            request["attn"] = [
                java_float(item.text) if isinstance(item, Literal) else _plain(item)
                for item in attn
            ]
    if mode == "signed-64-bit-ids":
        request_id = request.get("id")
        if type(request_id) is int and not -(2**63) <= request_id < 2**63:
            return refusal(None, "bad-request", f"id is not a long: {request_id}")
    return session.handle(request)


class Sessions:
    """``fuzz --protocol`` sessions answered in-process, line by line as a process reads them,
    by a fresh reference session behind the slip ``mode`` (None: the reference's own protocol
    layer). ``sessions`` counts the sessions run."""

    def __init__(self, mode: str | None = None) -> None:
        self.mode = mode
        self.sessions = 0

    def run(self, data: bytes) -> Any:
        from conformance.transport.raw import Transcript

        self.sessions += 1
        session, answers = Session(), []
        for line in io.BytesIO(data).readlines():  # lines end at LF only (a CR is whitespace)
            if self.mode is None:
                response = session.handle_line(line) if line.strip(b" \t\r\n") else None
            else:
                response = answer(session, self.mode, line)
            if response is not None:
                answers.append(json.dumps(response).encode())
            if session.finished:
                break
        return Transcript(tuple(answers), 0, False, "", 0.0)


def main(mode: str) -> int:
    if mode not in MODES:
        print(f"unknown mode {mode!r}; one of {', '.join(MODES)}", file=sys.stderr)
        return 2
    session = Session(implementation={"name": f"slip {mode}", "language": "python", "version": "0"})
    for line in sys.stdin.buffer:
        response = answer(session, mode, line)
        if response is None:
            continue
        sys.stdout.buffer.write(encode(response))
        sys.stdout.buffer.flush()
        if session.finished:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
