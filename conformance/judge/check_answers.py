"""Judging a protocol check (SPEC.md §3, §5): the adapter's answer lines against the check's
expectations, the first fault deciding. Each line is read by the protocol's rules for an
answer line (:mod:`conformance.judge.answers`), as the runner reads a vector's answers. Pure:
lines in, a frozen verdict out.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.judge import verdicts
from conformance.judge.answers import LineFault, decode_answer, echoes_id
from conformance.spec.protocol import parse_hello_answer, same_integer, scores_problem
from conformance.suite.protocol_checks import ProtocolCheck, line_of, op_of


def judge_check(
    check: ProtocolCheck,
    answers: Sequence[bytes],
    *,
    exit_status: int | None = 0,
    timed_out: bool = False,
) -> verdicts.Judged:
    """Judge the adapter's answer lines to ``check`` (SPEC §3), the first fault deciding: a
    :class:`~conformance.judge.verdicts.Verdict` whose ``call_index`` is the request line it is
    about, or an :class:`~conformance.judge.verdicts.Errored` when the session ended or hung
    before the answers due.

    ``exit_status`` is the adapter's status after its input was closed (None: still running
    when the answers stopped). Capabilities come from the first answer, a hello's.
    """
    data = check.payload
    announced = _capabilities(answers[0]) if answers else ()
    for index, item in enumerate(check.expect):
        line = item["line"]
        request = line_of(data, line)
        op = op_of(request) or "line"
        said = f"{check.rule}: {_show(request)}: "
        if index >= len(answers):
            if timed_out:
                return verdicts.Errored(
                    check.id, verdicts.TIMEOUT, line, op, said + "no answer before the timeout"
                )
            if exit_status not in (0, None):
                return verdicts.Errored(
                    check.id,
                    verdicts.CRASH,
                    line,
                    op,
                    said + f"the adapter exited with status {exit_status} before answering",
                    exit_status,
                )
            return verdicts.Errored(
                check.id,
                verdicts.PROTOCOL_ERROR,
                line,
                op,
                said + "no answer (the adapter stopped answering)",
            )
        fault = _answer_fault(item, answers[index], announced)
        if fault is not None:
            kind, message, expected, actual = fault
            skipped = set(range(line)) - {other["line"] for other in check.expect}
            if kind == verdicts.PROTOCOL_ERROR and skipped and "id" in message:
                message += " (the answers are out of step: was a blank line answered?)"
            rule = None
            if kind == verdicts.BROKEN_INVARIANT:
                # The victims' own rule is broken, whatever the check pins: it is named, and
                # the verdict is the one a vector gives the same list.
                said, rule = f"{VICTIMS_ASCENDING}: {_show(request)}: ", verdicts.NOT_ASCENDING
            # an adapter's answer can be huge: what is kept is bounded
            return verdicts.Verdict(
                check.id,
                kind,
                line,
                op,
                said + message,
                verdicts.kept(expected),
                verdicts.kept(actual),
                rule,
            )
    if len(answers) > len(check.expect):
        extra = answers[len(check.expect)]
        return verdicts.Verdict(
            check.id,
            verdicts.PROTOCOL_ERROR,
            message=f"{check.rule}: {len(answers)} answers to {len(check.expect)} lines that call "
            f"for one (a blank line, a line after bye, or a second value on a line answered): "
            f"the extra answer is {_show(extra)}",
            expected=len(check.expect),
            actual=len(answers),
        )
    if timed_out:
        return verdicts.Errored(
            check.id, verdicts.TIMEOUT, message="the adapter did not exit at the end of its input"
        )
    if exit_status not in (0, None):
        return verdicts.Errored(
            check.id,
            verdicts.CRASH,
            message=f"SPEC.md §3.2: end of input ends the session with status 0, not {exit_status}",
            exit_status=exit_status,
        )
    return verdicts.Verdict(check.id, verdicts.PASS)


#: The rule a victims list out of order breaks, quoted by a check whatever it pins.
VICTIMS_ASCENDING = (
    "SPEC.md §2.4: victims are returned in ascending position order (not in rank order)"
)


def _out_of_order(victims: list[Any]) -> str | None:
    """Why a list of integer victims is not strictly ascending, in the vector judge's words,
    or None (a list holding anything else is judged as a wrong list)."""
    if not all(type(v) is int for v in victims):
        return None
    for before, after in itertools.pairwise(victims):
        if after <= before:
            what = f"repeat position {after}" if after == before else f"put {after} after {before}"
            return f"victims must be strictly ascending, but they {what}"
    return None


def _capabilities(first: bytes) -> tuple[str, ...]:
    hello = decode_answer(first)  # nested past the codec's limit: a fault, never a raise
    capabilities = hello.get("capabilities") if isinstance(hello, dict) else None
    if not isinstance(capabilities, list):
        return ()
    return tuple(c for c in capabilities if isinstance(c, str))


def _answer_fault(
    item: Mapping[str, Any], raw: bytes, announced: Sequence[str]
) -> tuple[str, str, Any, Any] | None:
    answer = decode_answer(raw)
    if isinstance(answer, LineFault):
        return verdicts.PROTOCOL_ERROR, answer.detail, None, None
    wanted = dict(item)
    without = wanted.pop("without", None)
    if without is not None and without["capability"] not in announced:
        wanted = {
            "line": item["line"],
            "id": item["id"],
            **{k: v for k, v in without.items() if k != "capability"},
        }
    fault = _outcome_fault(wanted, answer)
    for other in item.get("latitude", ()):
        if fault is not None and _outcome_fault({"line": item["line"], **other}, answer) is None:
            return None
    return fault


def _outcome_fault(
    item: Mapping[str, Any], answer: dict[str, Any]
) -> tuple[str, str, Any, Any] | None:
    if not echoes_id(answer, item["id"]):
        got = _json(answer["id"]) if "id" in answer else "no id"
        want = _json(item["id"])
        why = (
            "an integer id is echoed as the same integer"
            if item["id"] is not None
            else 'a request without an integer id gets "id": null'
        )
        return (
            verdicts.PROTOCOL_ERROR,
            f"answered with id {got}, expected {want} ({why})",
            {"id": item["id"]},
            {"id": answer.get("id")},
        )
    ok = answer.get("ok")
    if not isinstance(ok, bool):
        return (
            verdicts.PROTOCOL_ERROR,
            f"the answer's ok is {_json(ok)}, not true or false",
            None,
            None,
        )
    expected = {"error": item["error"]} if not item["ok"] else "ok"
    if item["ok"] and not ok:
        kind = _kind(answer)
        return (
            verdicts.UNEXPECTED_REFUSAL,
            f"refused with {kind}, expected it to succeed",
            expected,
            {"error": kind},
        )
    if not item["ok"] and ok:
        return (
            verdicts.UNEXPECTED_SUCCESS,
            f"answered ok, expected a refusal with {item['error']}",
            expected,
            "ok",
        )
    if not item["ok"]:
        kind = _kind(answer)
        if kind != item["error"]:
            return (
                verdicts.WRONG_ERROR_KIND,
                f"refused with {kind}, expected {item['error']}",
                expected,
                {"error": kind},
            )
        return None
    if "victims" in item:
        victims = answer.get("victims")
        if not isinstance(victims, list):
            return (
                verdicts.PROTOCOL_ERROR,
                f"victims is {_json(victims) if 'victims' in answer else 'missing'}, not a list",
                item["victims"],
                victims,
            )
        order = _out_of_order(victims)
        if order is not None:
            return verdicts.BROKEN_INVARIANT, order, item["victims"], victims
        if victims != item["victims"] or not all(
            same_integer(v, w) for v, w in zip(victims, item["victims"], strict=False)
        ):
            return (
                verdicts.WRONG_VICTIMS,
                f"evicted {_json(victims)}, expected {_json(item['victims'])}",
                item["victims"],
                victims,
            )
    if "positions" in item:
        shown = {name: answer.get(name) for name in ("positions", "sums", "pooled")}
        problem = _scores_problem(answer, item["positions"])
        if problem is not None:
            return verdicts.PROTOCOL_ERROR, problem, {"positions": item["positions"]}, shown
        problem = _scores_values_problem(answer, item)
        if problem is not None:
            wanted = {name: item[name] for name in ("positions", "sums", "pooled") if name in item}
            return verdicts.PROTOCOL_ERROR, problem, wanted, shown
    if "protocol" in item:
        if not same_integer(answer.get("protocol"), item["protocol"]):
            return (
                verdicts.PROTOCOL_ERROR,
                f"hello answered protocol {_json(answer.get('protocol'))}, not 1",
                None,
                None,
            )
        try:  # the handshake's own rule (SPEC.md §3.2): implementation and capabilities too
            parse_hello_answer(answer)
        except ValueError as error:
            return verdicts.PROTOCOL_ERROR, str(error), None, None
    return None


def _scores_problem(answer: dict[str, Any], kept: Sequence[int]) -> str | None:
    """What breaks SPEC.md §2.5 in a successful scores answer, or None: three lists of one
    length (the shape the scores diagnosis requires too), the positions exactly the ``kept``
    ones in ascending order, the protected recent entries included. The values are
    :func:`_scores_values_problem`'s."""
    problem = scores_problem(answer)
    if problem is not None:
        return problem + " (SPEC.md §3.2: one position, sum and pooled score per kept position)"
    positions = answer["positions"]
    for before, after in itertools.pairwise(positions):
        if after <= before:
            return (
                f"scores positions {_json(positions)} put {after} after {before}: they are "
                "the kept positions in ascending order, not in rank or insertion order"
            )
    listed, wanted = set(positions), set(kept)
    missing = [position for position in kept if position not in listed]
    extra = [position for position in positions if position not in wanted]
    if not missing and not extra:
        return None
    faults = []
    if missing:
        newest = missing == list(kept[len(kept) - len(missing) :])
        faults.append(
            f"leave out the kept position(s) {_json(missing)}"
            + (", the newest: the protected recent entries are scored too" if newest else "")
        )
    if extra:
        faults.append(f"list {_json(extra)}, which are not kept (evicted, or never admitted)")
    return (
        f"scores positions {_json(positions)}, expected the kept positions {_json(list(kept))}: "
        f"they {' and '.join(faults)}"
    )


def _scores_values_problem(answer: dict[str, Any], item: Mapping[str, Any]) -> str | None:
    """What breaks SPEC.md §2.5 [S2.5-values] in a scores answer of the right shape: the first
    sum or pooled score that is not the reference's float64, compared as numbers (``-0``
    equals ``0``; any spelling that reads back to the same float64 is the same value)."""
    for name in ("sums", "pooled"):
        if name not in item:
            continue
        for index, (got, want) in enumerate(zip(answer[name], item[name], strict=True)):
            if float(got) != float(want):
                other = "pooled" if name == "sums" else "sums"
                swapped = other in item and float(got) == float(item[other][index])
                return (
                    f"scores {name}[{index}] (position {answer['positions'][index]}) is "
                    f"{_json(got)}, expected {_json(want)}"
                    + (f" (the {other} value: are sums and pooled swapped?)" if swapped else "")
                    + "; SPEC.md §2.5: the float64 values an evict now would rank by"
                )
    return None


def _kind(answer: dict[str, Any]) -> str:
    error = answer.get("error")
    kind = error.get("kind") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else f"no error kind ({_json(error)})"


def _json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True, allow_nan=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _show(line: bytes) -> str:
    """A request or answer line as a porter can read it: escaped, capped."""
    text = repr(bytes(line[:60]))[1:]
    return text + ("..." if len(line) > 60 else "")
