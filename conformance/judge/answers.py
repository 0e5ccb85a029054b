"""The protocol's rules for one answer line (SPEC.md §3.1-§3.3), in one place.

An answer line is UTF-8, one strict JSON value, an object, and echoes its request's integer id
as the same integer (:func:`echoes_id`; a request that could not be read is answered with
``"id": null``); asked to, the kit also holds it to the shipped response schema for its op
(:func:`schema_problem`). Every path that reads an adapter's answers reads them here: the
runner's exchanges (:class:`conformance.runner.client.Client`, through :func:`read_answer`)
and the protocol checks (:mod:`conformance.judge.check_answers`, through :func:`decode_answer` and
:func:`echoes_id`). What a wrong id means in a pipelined exchange is decided here too
(:func:`wrong_id`): an extra answer to a request of the exchange before, a request of this one
answered twice, a request the adapter could not read, or ``hello`` answered a second time.

An answer is held until its vector is judged in the form :func:`held` gives it: the fields no
rule reads dropped and a refusal's message capped, so that what a vector holds in flight is
bounded by its calls, not by what the adapter writes. Victims are held whole while they can be
right; a list no batch could make right (more victims in a batch that opens with an accepted
``new`` than the batch has calls: each position is admitted by one of its steps and evicted at
most once) is held cut (:func:`cut_victims`), with what the judge needs to name the rule it
breaks.

Invariant: pure: a line and what was due in, the answer or a :class:`LineFault` out; nothing
is raised for what an adapter sends.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from conformance.spec.protocol import DecodeError, decode, same_integer, validate_message
from conformance.spec.text import KEEP_ITEMS, KEEP_TEXT, capped, json_text

#: The id of ``hello``: the first request to every adapter.
HELLO_ID = 1

#: The answer fields judging reads (SPEC.md §3.2, §3.3); an extension's extra fields are
#: allowed and not kept.
JUDGED = frozenset(
    {"id", "ok", "error", "victims", "positions", "sums", "pooled", "protocol"}
    | {"implementation", "capabilities"}
)

#: The commonest answer, a bare success, read without the JSON decoder.
OK_LINE = b'{"id":%d,"ok":true}\n'
#: The start of an evict's answer as the reference writes it; the rest read by _VICTIMS_REST.
VICTIMS_LINE = b'{"id":%d,"ok":true,"victims":['
#: The longest evict answer read without the decoder: splitting a longer one costs more memory
#: than the decoder's list (a flood of 2 MiB lines doubled the kit's peak).
VICTIMS_LINE_MAX = 1 << 16
_VICTIMS_REST = re.compile(rb"((?:0|[1-9][0-9]{0,18})(?:,(?:0|[1-9][0-9]{0,18}))*)?\]\}\n")


@dataclass(frozen=True)
class LineFault:
    """Why a line is not the answer due: ``detail`` says it in the porter's words.

    ``index`` is the request it is blamed on, within the exchange being read (None: the one
    whose answer was due), or, when ``earlier``, within the exchange before (-1 if older).
    ``hello_twice``: a second answer to ``hello`` came after the handshake.
    """

    detail: str
    index: int | None = None
    earlier: bool = False
    hello_twice: bool = False


def decode_answer(line: bytes) -> dict[str, Any] | LineFault:
    """``line`` as a JSON object, or why it is not one: not UTF-8, not JSON (the strict codec
    of :func:`conformance.spec.protocol.decode`), or a JSON value that is not an object."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return LineFault(
            f"the answer is not UTF-8 ({error.reason} at byte {error.start}): "
            f"{json_text(line[:120])}"
        )
    try:
        answer = decode(text)
    except DecodeError as error:
        return LineFault(f"the answer is not JSON ({error}): {json_text(text[:120])}")
    if not isinstance(answer, dict):
        return LineFault(f"the answer is not a JSON object: {json_text(answer)}")
    return answer


def echoes_id(answer: dict[str, Any], expected: int | None) -> bool:
    """SPEC.md §3.1, §3.3: the answer carries ``id``, the request's integer id as the same
    integer (``2.0`` and ``true`` are not), or ``null`` when ``expected`` is None (a request
    without an integer id)."""
    return "id" in answer and same_integer(answer["id"], expected)


def wrong_id(answer: dict[str, Any], index: int, first: int, previous_first: int) -> LineFault:
    """What an answer whose id is not ``first + index`` (request ``index`` of an exchange whose
    first id is ``first``, after one whose first id was ``previous_first``) means: the fault
    of the request it answers when that can be told, else of the one due."""
    expected = first + index
    got = answer.get("id")
    if got == HELLO_ID and type(got) is int and first > HELLO_ID:
        return LineFault(
            f"the adapter answered hello twice (a second answer with id {HELLO_ID} came "
            "after the handshake): did it answer before it was asked?",
            hello_twice=True,
        )
    if type(got) is int and 1 <= got < first:
        # Placed within the previous exchange when it belongs there (the usual case).
        return LineFault(
            f"an extra answer with id {got} arrived after all answers to its exchange: "
            "the adapter answered that request twice",
            got - previous_first if got >= previous_first else -1,
            earlier=True,
        )
    if type(got) is int and first <= got < expected:
        return LineFault(
            f"request {got - first} of this exchange was answered twice (a second answer "
            f"with id {got} came where the answer with id {expected} was due)",
            got - first,  # blame the request answered twice, not the one after it
        )
    if got is None and answer.get("ok") is False:
        return LineFault(
            f"the adapter could not read the request (it answered with id null: "
            f"{json_text(answer.get('error'))})"
        )
    return LineFault(f"the answer has id {json_text(got)}, expected {expected}")


def schema_problem(answer: dict[str, Any], op: str) -> str | None:
    """What in ``answer`` breaks the shipped response schema for ``op``, or None: asked for
    (``--validate-protocol``), an answer that breaks it is a protocol error even where the
    judge would accept it (an extra field, say)."""
    problems = validate_message("response", answer, op)
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return (
        f"the answer to {op} does not validate against schema/protocol/"
        f"response.schema.json: {problems[0]}{more}: {json_text(answer)}"
    )


def read_answer(
    line: bytes, index: int, first: int, previous_first: int, op: str | None = None
) -> dict[str, Any] | LineFault:
    """Answer line ``line`` to request ``index`` of an exchange whose first id is ``first``
    (after one whose first id was ``previous_first``), as it is held for judging
    (:func:`held`), or the fault that makes the stream untrustworthy. With ``op``, the answer
    is also held to the response schema for that op."""
    expected = first + index
    if op is None:  # most answers, written compactly: what the decoder reads, without it
        if line == OK_LINE % expected:
            return {"id": expected, "ok": True}
        start = VICTIMS_LINE % expected
        fits = len(line) <= VICTIMS_LINE_MAX and line.startswith(start)
        rest = _VICTIMS_REST.fullmatch(line, len(start)) if fits else None
        if rest is not None:
            listed = rest.group(1)
            victims = [int(victim) for victim in listed.split(b",")] if listed else []
            return {"id": expected, "ok": True, "victims": victims}
    answer = decode_answer(line)
    if isinstance(answer, LineFault):
        return answer
    if not echoes_id(answer, expected):
        return wrong_id(answer, index, first, previous_first)
    if op is not None:
        problem = schema_problem(answer, op)
        if problem is not None:
            return LineFault(problem)
    return held(answer)


def held(answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` as it is held until its vector is judged: a refusal's message capped at
    :data:`~conformance.spec.text.KEEP_TEXT` characters and fields no rule reads dropped, so
    that what a vector holds in flight is bounded by its calls, not by what the adapter
    writes (a 1 MiB message on every evict). Lists judged whole (victims) are kept whole."""
    if answer.keys() <= JUDGED and _small_error(answer.get("error")):
        return answer  # nearly every answer: nothing to cut
    bounded = {key: value for key, value in answer.items() if key in JUDGED}
    error = bounded.get("error")
    if isinstance(error, str):  # not an object: judged as such, and shown capped
        bounded["error"] = capped(error, KEEP_TEXT)
    elif isinstance(error, dict):
        message = error.get("message")
        bounded["error"] = {
            **({"kind": error["kind"]} if "kind" in error else {}),
            **({"message": capped(message, KEEP_TEXT)} if isinstance(message, str) else {}),
        }
    return bounded


class CutVictims(list[Any]):
    """A victims list held cut because no answer could make it right (see the module
    docstring): its first :data:`~conformance.spec.text.KEEP_ITEMS` items, and its first item
    that is not an integer if one came later. ``total`` is how many it had; ``disorder`` the
    first pair of integers in it that is not strictly ascending (None when they ascend)."""

    total: int = 0
    disorder: tuple[int, int] | None = None


def cut_victims(victims: list[Any]) -> CutVictims:
    """``victims`` held cut (:class:`CutVictims`), read once, whatever its length."""
    kept = CutVictims(victims[:KEEP_ITEMS])
    kept.total = len(victims)
    stray = next((index for index, item in enumerate(victims) if type(item) is not int), None)
    if stray is not None:
        if stray >= len(kept):
            kept.append(victims[stray])  # the judge finds what is not an integer in what is kept
        return kept
    pairs = itertools.pairwise(victims)
    kept.disorder = next(((before, after) for before, after in pairs if after <= before), None)
    return kept


def held_victims(answer: dict[str, Any], room: int | None) -> tuple[dict[str, Any], int | None]:
    """``answer`` as it is held when at most ``room`` more victims can be right in its batch
    (None: no bound known), and the room left after it: a victims list longer than the room
    is held cut (:func:`cut_victims`)."""
    victims = answer.get("victims")
    if room is None or not isinstance(victims, list):
        return answer, room
    if len(victims) > room:
        answer = {**answer, "victims": cut_victims(victims)}
    return answer, room - len(victims)


def _small_error(error: Any) -> bool:
    """Whether a refusal's ``error`` (or its absence) is already within bounds."""
    if isinstance(error, str):
        return len(error) <= KEEP_TEXT
    if not isinstance(error, dict):
        return True
    message = error.get("message")
    short = not isinstance(message, str) or len(message) <= KEEP_TEXT
    return short and error.keys() <= {"kind", "message"}
