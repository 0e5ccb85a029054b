"""Differential fuzzing of the protocol layer: raw request lines, each session in a fresh
adapter, answered as the reference adapter answers them; a difference becomes a protocol check.

Where :mod:`conformance.tools.fuzz` sends policy calls as a careful encoder writes them, this module
writes the lines no careful encoder writes but SPEC.md §3 defines the answers to: numbers of
every spelling (``-0`` ids and parameters, weights with exponents, many digits or as integers,
next to float32 halfway points), ids of every size and sign, integers at every reader's
boundary (:data:`READER_BOUNDARIES`: 2^31, 2^32, 2^53, 2^64 and their neighbours, as ids,
parameters and positions), repeated member names at every depth (``params`` too), ``\\u``
escapes in names and strings, spaces, tabs and CRs between tokens, CRLF endings and blank
lines, extra fields nested up to three levels, members in any order, unknown and miscased ops,
missing, null and wrong-typed fields, and lines a lax reader would read (:data:`MANGLES`: a
leading ``+`` or zero, a bare point, ``NaN``, raw control characters and unknown escapes in
strings, Unicode whitespace, a byte-order mark, a NUL or a second value after the object, a
trailing comma), each among sessions of every op, refused ``hello`` and ``new`` (a bad,
``true`` or missing seed) and ``scores`` between steps and evicts, so that what a line leaves
behind is seen by the lines after it. It keeps to what SPEC.md
leaves no latitude on: no integral value written ``4.0`` or ``4e0`` in ``params``, ``seed`` or
``pos``, seeds in ``[0, 2^31 - 1]``, nesting within three levels and integer literals within 40
digits (§1, §3.1).

Each example is one session: a ``hello``, then up to a dozen drawn lines. Its expectations are
the reference adapter's answers (:func:`conformance.suite.validation.realize`, as the generator
records a protocol check), the port runs it in a process of its own with its input closed at
the end (:func:`conformance.runner.check_sessions.run_session`), and the protocol checks' judge
compares every answer: its id, ``ok``, the error kind, the victims, hello's protocol, and the
exit status. The first difference is shrunk by hypothesis (lines are drawn as independent
plans, materialised against a reference session, so deleting one leaves the rest valid) and
saved as a protocol check file ``protocol/fuzz-<hash>.json`` that ``run`` runs like any other.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol, cast

from hypothesis import strategies as st
from hypothesis.errors import Flaky

from conformance.adapter.server import Session
from conformance.judge.check_answers import judge_check
from conformance.judge.verdicts import Judged
from conformance.report.outputs import write_text
from conformance.runner.check_sessions import run_session
from conformance.slips import SlipAdapter
from conformance.spec.protocol import dumps
from conformance.suite.protocol_checks import ProtocolCheck, dumps_check
from conformance.suite.validation import CheckDraft, realize, reference_answers
from conformance.tools.fuzz import (
    CATCHES,
    CampaignDatabase,
    NondeterministicAdapter,
    Progress,
    example_database,
    hypothesis_storage,
    search_settings,
    seeded,
)
from conformance.tools.scenarios import ROUNDING_WEIGHTS, WEIGHTS
from conformance.transport.raw import Transcript
from conformance.transport.session import ANSWER_TIMEOUT

#: Sessions to try, and sessions to run while shrinking a difference. A session is a process
#: start, so the budget is smaller than the vector fuzzer's.
DEFAULT_MAX_SESSIONS = 200
DEFAULT_MAX_SHRINKS = 300
#: The rule a fuzz-found check quotes in its failures.
RULE = (
    "SPEC.md §3: every request line is answered as the reference adapter answers it (the id, "
    "success or the error kind, the victims)"
)
THEME_PREFIX = "fuzz-"


class Sessions(Protocol):
    """What the protocol fuzzer needs of a port: one fresh session per run of ``data``."""

    def run(self, data: bytes) -> Transcript: ...


@dataclass(frozen=True)
class ProcessSessions:
    """Each session a fresh process of ``argv``, run by
    :func:`conformance.runner.check_sessions.run_session`."""

    argv: Sequence[str]
    timeout: float = ANSWER_TIMEOUT

    def run(self, data: bytes) -> Transcript:
        return run_session(self.argv, data, self.timeout)


@dataclass(frozen=True)
class SlipSessions:
    """Each session a fresh :class:`~conformance.slips.SlipAdapter` (``make()``), answered in
    process: what the fuzzer finds in the slip catalogue, without a process per session. An
    adapter that raises has crashed (exit status 1)."""

    make: Callable[[], SlipAdapter]

    def run(self, data: bytes) -> Transcript:
        adapter = self.make()
        out = io.BytesIO()
        start = time.perf_counter()
        try:
            status = adapter.serve(io.BytesIO(data), out)
        except Exception:
            status = 1
        answers = out.getvalue().split(b"\n")
        if answers[-1] == b"":
            answers.pop()
        return Transcript(tuple(answers), status, False, "", time.perf_counter() - start)


# -- the lines -----------------------------------------------------------------------------------

#: Integers where real readers break (SPEC.md [S1-integers]): a signed and an unsigned 32-bit
#: reader wrap at 2^31 and 2^32, a float64 rounds past 2^53, 64-bit readers wrap at 2^63 and 2^64.
READER_BOUNDARIES = (
    str(2**31 - 1),
    str(2**31),
    str(2**32 - 1),
    str(2**32 + 1),
    str(-(2**31) - 1),
    str(2**53),
    str(2**64),
)
#: How an id is written (index 0: the line's own number). Integers of every size and sign, then
#: what is no integer (answered with id null).
IDS: tuple[str, ...] = (
    "",
    "0",
    "-0",
    "-7",
    *READER_BOUNDARIES,
    str(2**53 + 1),
    str(2**63 - 1),
    str(2**63),
    str(2**64 + 1),
    str(-(2**63)),
    str(-(2**63) - 1),
    str(-(2**64) - 1),
    str(10**39),
    "1.5",
    "1.0",
    "1e0",
    "5E+0",
    '"7"',
    "true",
    "null",
    "missing",
)
#: The ids that are integers (bye and scores get only these: see :func:`_plan`).
INTEGER_IDS = 12 + len(READER_BOUNDARIES)
OPS = ("hello", "new", "step", "evict", "scores", "bye")
#: Ops that are not ops (bad-request): miscased, padded, empty, not a string, missing.
UNKNOWN_OPS = ('"reset"', '"Evict"', '"EVICT"', '""', '"evict "', "5", "null", "missing")
PROTOCOLS = ("1", "true", '"1"', "1.0", "2", "-0", "null", "missing")
#: A hello's protocol, a new's params, a step's pos and attn: variant 0 is valid.
NEW_VARIANTS = 12
#: A new's seed, drawn apart from its params (so that a seed that is no integer comes often
#: enough for the default budget to find a reader that takes it): the first is valid, None
#: leaves the seed out.
SEEDS: tuple[str | None, ...] = ("0", '"0"', str(2**31 - 1), "-0", "false", None, "true")
STEP_VARIANTS = 8
#: A step's position, drawn apart from its weights (as a new's seed is): the next one, -1,
#: the last one again, 2^31, 1.5, "3", null, the next as a 32- or 64-bit reader that wraps
#: would read it, and -0 (valid as the first position).
POSITIONS = 10
#: Extra fields (ignored): values nested up to three levels, odd strings and numbers.
EXTRAS: tuple[str, ...] = (
    '"x":1',
    '"note":"\\u00e9t\\u00e9 \\ud800"',
    '"note":"été"',
    '"trace":{"a":[1,2],"b":null}',
    '"t":{"u":1,"u":[2]}',
    '"deep":[[-0,1e400]]',
    '"big":123456789012345678901234567890123456789',
    '"f":-1.5E-3',
)
#: What makes an otherwise valid line unparseable (SPEC.md §3.1), each as a lax reader would
#: take it: where it goes (a member ``"x"`` with this value, text after the opening brace or
#: before the line, after the closing brace, or a comma before it) and the text.
MANGLES: tuple[tuple[str, str], ...] = (
    ("member", "+1"),  # [S3.1-numbers]: strtod's grammar, JavaScript's Number()
    ("member", "01"),
    ("member", ".5"),
    ("member", "1."),
    ("member", "0x10"),
    ("member", "NaN"),
    ("member", "-Infinity"),
    ("member", '"a\tb"'),  # [S3.1-strings]: a raw tab, a raw U+0001 in a string
    ("member", '"a\x01b"'),
    ("member", '"\\x41"'),  # an escape JSON does not have, a short \u
    ("member", '"\\u12"'),
    ("member", "'x'"),  # [S3.1-syntax]: single quotes, a comment
    ("member", "/*c*/1"),
    ("open", "\u00a0"),  # [S3.1-whitespace]: isspace()'s and Unicode's, not JSON's
    ("open", "\u2028"),
    ("open", "\f"),
    ("open", "\v"),
    ("start", "\ufeff"),  # a byte-order mark
    ("end", "\x00"),  # [S3.1-one-value]: a NUL ends a C string, not the line
    ("end", "\x00{}"),
    ("end", " {}"),
    ("comma", ","),  # a trailing comma
)
BLANKS = ("", "  ", "\t", "\r", " \t\r ")
NOT_OBJECTS = ("[1,2]", '"hello"', "3", "null")
SPACINGS = 5


@dataclass(frozen=True)
class Plan:
    """One line as drawn, before it meets the session's state (see :func:`materialise`)."""

    op: int  # an index into OPS, or past it into UNKNOWN_OPS; BLANK, or NOT_OBJECT
    id: int  # an index into IDS
    variant: int  # which value of the op's fields (0 valid)
    size: int  # a new's parameters: budget 1 + size % 3, and so on
    weights: tuple[Any, ...]  # a step's weights, cycled over the kept positions
    decoy: int  # 0, or the member (1-based, cycling) that an earlier decoy repeats
    extra: int  # 0, or 1 + an index into EXTRAS
    order: int  # 0 as written, else members rotated by it
    escape: int  # 0, or the member (1-based, cycling) whose name is written with \u escapes
    spacing: int  # whitespace between tokens: compact, spaces, tabs, CRs, around the line
    crlf: bool
    mangle: int = 0  # 0, or 1 + an index into MANGLES
    seed: int = 0  # a new's seed (an index into SEEDS), a step's position (below POSITIONS)


#: What a drawn line is: an op of OPS by index (steps the most), an op that is none, a blank
#: line, a line that is no object.
UNKNOWN, BLANK, NOT_OBJECT = len(OPS), -1, -2
KINDS = (2, 2, 3, 1, 2, 3, 2, 4, 0, 2, 3, 5, UNKNOWN, BLANK, NOT_OBJECT, 2)
#: A step's weights: as the vector fuzzer draws them, and as often one not a float32 value.
_WEIGHTS = st.one_of(WEIGHTS, ROUNDING_WEIGHTS)


@cache
def _ints(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low, high)


def _choice(draw: st.DrawFn, count: int, rarity: int = 1) -> int:
    """One of ``count`` choices, 0 (the plain one) in all but one draw in ``rarity + 1``
    (shrinks toward 0)."""
    return 0 if draw(_ints(0, rarity)) < rarity else draw(_ints(0, count - 1))


@st.composite
def _plan(draw: st.DrawFn) -> Plan:
    op = KINDS[draw(_ints(0, len(KINDS) - 1))]
    if op == UNKNOWN:
        op = len(OPS) + draw(_ints(0, len(UNKNOWN_OPS) - 1))
    keeps_id = op in (4, 5)  # bye and scores: an id that is an integer (see realize)
    ids = INTEGER_IDS if keeps_id else len(IDS)
    variants = {
        0: len(PROTOCOLS),
        1: NEW_VARIANTS,
        2: STEP_VARIANTS,
        BLANK: len(BLANKS),
        NOT_OBJECT: len(NOT_OBJECTS),
    }.get(op, 1)
    return Plan(
        op=op,
        id=_choice(draw, ids, rarity=2),
        variant=_choice(draw, variants, rarity=2),
        size=draw(_ints(0, 5)) if op == 1 else 0,
        weights=tuple(draw(st.lists(_WEIGHTS, max_size=4))) if op == 2 else (),
        decoy=_choice(draw, 5, rarity=3),
        extra=_choice(draw, len(EXTRAS) + 1, rarity=3),
        order=_choice(draw, 4, rarity=3),
        escape=_choice(draw, 4, rarity=4),
        spacing=_choice(draw, SPACINGS, rarity=2),
        crlf=draw(_ints(0, 5)) == 5,
        mangle=_choice(draw, len(MANGLES) + 1, rarity=2),
        seed=_choice(draw, {1: len(SEEDS), 2: POSITIONS}.get(op, 1), rarity=1),
    )


PLANS = _plan()
MAX_LINES = 12


@dataclass(frozen=True)
class SessionPlan:
    """A session as drawn: whether a plain ``new`` opens it (and its size), the lines after
    it, and whether the last line lacks its LF."""

    opening: int  # 0 to 2: a new of that size; 3: none, so the policy starts absent
    plans: tuple[Plan, ...]
    unterminated: bool
    seed: int = 0  # the opening new's seed: an index into SEEDS (0: valid)


@st.composite
def _session(draw: st.DrawFn) -> SessionPlan:
    opening = draw(_ints(0, 3))
    plans = tuple(draw(st.lists(PLANS, min_size=1, max_size=MAX_LINES)))
    return SessionPlan(opening, plans, draw(_ints(0, 7)) == 7, _choice(draw, len(SEEDS), rarity=2))


SESSIONS = _session()

#: The session's first line: a plain handshake, so that capabilities are known (the judge
#: reads them from the first answer).
HELLO = '{"id":1,"op":"hello","protocol":1}\n'


def materialise(drawn: SessionPlan) -> list[str]:
    """The session's lines (each with its ending), the hello first. Positions and weight
    counts come from a reference session fed each line as it is made."""

    session = Session()
    session.handle_line(HELLO.encode())
    lines = [HELLO]
    plans = list(drawn.plans)
    if drawn.opening < 3:
        plans.insert(0, Plan(1, 0, 0, drawn.opening, (), 0, 0, 0, 0, 0, False, seed=drawn.seed))
    for number, plan in enumerate(plans, start=2):
        text = _line(plan, number, session) + ("\r\n" if plan.crlf else "\n")
        lines.append(text)
        if not session.finished and text.strip(" \t\r\n"):
            session.handle_line(text.encode("utf-8", "surrogatepass"))
    if drawn.unterminated:
        lines[-1] = lines[-1].rstrip("\n")
    return lines


def _line(plan: Plan, number: int, session: Any) -> str:
    if plan.op == BLANK:
        return BLANKS[plan.variant % len(BLANKS)]
    if plan.op == NOT_OBJECT:
        return NOT_OBJECTS[plan.variant % len(NOT_OBJECTS)]
    members: list[tuple[str, str]] = []
    id_text = IDS[plan.id] or str(number)
    if id_text != "missing":
        members.append(("id", id_text))
    if plan.op >= len(OPS):
        op_text = UNKNOWN_OPS[plan.op - len(OPS)]
        if op_text != "missing":
            members.append(("op", op_text))
        fields: list[tuple[str, str]] = []
    else:
        op = OPS[plan.op]
        members.append(("op", json.dumps(op)))
        fields = _fields(op, plan, session)
    members += fields
    if plan.extra:
        name, _, value = EXTRAS[plan.extra - 1].partition(":")
        members.append((json.loads(name), value))
    if not members:  # no id, no op, no extra: the empty object, nothing to repeat or move
        return _render(members, -1, plan.spacing)
    if plan.decoy:
        at = (plan.decoy - 1) % len(members)
        name, value = members[at]
        members.insert(at, (name, _decoy(name, value)))
    if plan.order:
        shift = plan.order % len(members)
        members = members[shift:] + members[:shift]
    where, text = MANGLES[plan.mangle - 1] if plan.mangle else ("", "")
    if where == "member":
        members.append(("x", text))
    escaped = (plan.escape - 1) % len(members) if plan.escape else -1
    line = _render(members, escaped, plan.spacing)
    if where == "open":
        line = line.replace("{", "{" + text, 1)
    elif where == "start":
        line = text + line
    elif where == "end":
        line += text
    elif where == "comma":
        at = line.rindex("}")
        line = line[:at] + text + line[at:]
    return line


def _fields(op: str, plan: Plan, session: Any) -> list[tuple[str, str]]:
    """The op's own fields, by the plan's variant (0: valid in the session's state)."""
    variant = plan.variant
    if op == "hello":
        protocol = PROTOCOLS[variant]
        return [] if protocol == "missing" else [("protocol", protocol)]
    if op == "new":
        return _new_fields(variant, plan.size, plan.decoy, SEEDS[plan.seed])
    if op == "step":
        return _step_fields(variant, plan.seed, plan.weights, session)
    return []


def _new_fields(variant: int, size: int, decoy: int, seed: str | None) -> list[tuple[str, str]]:
    params: list[tuple[str, str]] = [
        ("budget", str(1 + size % 3)),
        ("recentWindow", "-0" if size % 2 else "0"),
        ("obsWindow", str(1 + size % 2)),
        ("poolKernel", "3" if size % 4 == 3 else "1"),
    ]
    changes = {
        1: ("budget", "0"),
        2: ("poolKernel", "2"),
        3: ("pool_kernel", "3"),
        4: ("Budget", "1"),
        5: ("budget", '"1"'),
        6: ("budget", "4.5"),
        7: ("obsWindow", str(2**31)),
        8: ("recentWindow", "true"),
        # a reader that wraps sees 1, or the large value it was meant to refuse
        10: ("budget", str(2**32 + 1)),
        11: ("obsWindow", str(2**64 + 1)),
    }
    if variant in changes:
        name, value = changes[variant]
        if name in dict(params):
            params = [(n, value if n == name else v) for n, v in params]
        else:
            params = [(name if n.lower() == name.lower() else n, v) for n, v in params]
            if name not in dict(params):
                params.append((name, value))
    if decoy % 2 == 0 and decoy:  # a name repeated inside params too: the first is refused
        name, value = params[(decoy // 2 - 1) % len(params)]
        params.insert(0, (name, '"x"'))
    params_text = "{" + ",".join(f"{json.dumps(n)}:{v}" for n, v in params) + "}"
    if variant == 9:
        params_text = "null"
    if seed is None:
        return [("params", params_text)]
    return [("params", params_text), ("seed", seed)]


def _step_fields(
    variant: int, position: int, weights: tuple[Any, ...], session: Any
) -> list[tuple[str, str]]:
    policy = session.policy
    kept = 0 if policy is None else len(policy.kept)
    last = None if policy is None else policy.last_admitted
    pos = "0" if last is None else str(last + 1)
    cycled = [weights[i % len(weights)] for i in range(kept)] if weights else [0.5] * kept
    attn = "[" + ",".join(_weight_text(w) for w in cycled) + "]"
    if variant == 1:
        attn = "null"
    pos = {
        1: "-1",
        2: str(last if last is not None else -1),
        3: str(2**31),
        4: "1.5",
        5: '"3"',
        6: "null",
        # the next position as a 32- or 64-bit reader that wraps would read it, and -0
        7: str(2**32 + (0 if last is None else last + 1)),
        8: str(2**64 + (0 if last is None else last + 1)),
        9: "-0" if last is None else pos,
    }.get(position, pos)
    attn = {
        2: "[" + ",".join(["0.5"] * (kept + 1)) + "]",
        3: "[" + ",".join(["0.5"] * max(0, kept - 1)) + "]" if kept else "[0.5]",
        4: '"0.5"',
        5: "[" + ",".join(["true"] * max(kept, 1)) + "]",
    }.get(variant, attn)
    if variant == 6:
        return [("attn", attn)]  # pos missing
    if variant == 7:
        return [("pos", pos)]  # attn missing
    return [("pos", pos), ("attn", attn)]


def _weight_text(weight: Any) -> str:
    return dumps(weight)


def _decoy(name: str, value: str) -> str:
    """A value the repeated name takes first, before ``value`` (which counts)."""
    return {
        "id": "999" if value != "999" else "998",
        "op": '"scores"' if value != '"scores"' else '"evict"',
        "protocol": "2",
        "params": '{"budget":0}',
        "seed": '"x"',
        "pos": "-1",
        "attn": '"bad"',
    }.get(name, "[0]")


def _render(members: list[tuple[str, str]], escaped: int, spacing: int) -> str:
    colon, comma, before, after = (
        (":", ",", "", ""),
        (": ", ", ", "", ""),
        ("\t:\t", "\t,", "\t", "\t"),
        (":\r", ",\r", "\r", ""),
        (" : ", " , ", "  ", " \t"),
    )[spacing]
    parts = []
    for index, (name, value) in enumerate(members):
        key = _escaped(name) if index == escaped else json.dumps(name, ensure_ascii=False)
        parts.append(f"{key}{colon}{value}")
    return f"{before}{{{comma.join(parts)}}}{after}"


def _escaped(name: str) -> str:
    """``name`` as a JSON string whose every character is a \\u escape."""
    return '"' + "".join(f"\\u{ord(char):04x}" for char in name) + '"'


# -- judging and searching ----------------------------------------------------------------------


def reference_check(lines: Sequence[str], name: str = "fuzz") -> ProtocolCheck:
    """The protocol check of ``lines``: the reference adapter's answers as its expectations."""
    data = "".join(lines).encode("utf-8", "surrogatepass")
    answers = [json.loads(line) for line in reference_answers(data)]
    outcomes = tuple("ok" if a["ok"] else a["error"]["kind"] for a in answers)
    draft = CheckDraft(name, RULE, "", "", tuple(lines), outcomes)
    return realize(draft)


@dataclass(frozen=True)
class LineFinding:
    """A shrunk session on which the port answers otherwise, and how it was found."""

    lines: tuple[str, ...]
    verdict: Judged
    examples_to_find: int
    shrink_attempts: int


@dataclass(frozen=True)
class LineFuzzResult:
    examples: int
    finding: LineFinding | None


class _Different(Exception):
    """Marks a session whose answers differ (hypothesis then shrinks it)."""


class _Stop(BaseException):
    """Stops hypothesis once a budget is spent."""


class _Search:
    def __init__(
        self,
        target: Sessions,
        max_examples: int,
        max_shrinks: int,
        progress: Progress | None,
        database: CampaignDatabase | None,
    ) -> None:
        self.target = target
        self.max_examples = max_examples
        self.max_shrinks = max_shrinks
        self.progress = progress
        self.database = database
        self.run = 0
        self.found_at = 0
        self.best: tuple[tuple[str, ...], Judged] | None = None

    def check(self, data: st.DataObject) -> None:
        try:
            self._check(data)
        except _Stop:
            if self.database is not None:
                self.database.stopping = True  # a stop, not a finding: nothing to keep
            raise

    def _check(self, data: st.DataObject) -> None:
        # Drawn first: a draw hypothesis cuts short (an overrun) is no session run. The stop
        # comes after a draw as usual (see conformance.tools.fuzz).
        drawn = cast(SessionPlan, data.draw(SESSIONS))
        over_budget = not self.found_at and self.run >= self.max_examples
        if over_budget or (self.found_at and self.run - self.found_at >= self.max_shrinks):
            raise _Stop
        self.run += 1
        lines = tuple(materialise(drawn))
        verdict = judge_session(lines, self.target)
        if verdict is not None:
            self.found_at = self.found_at or self.run
            if self.best is None or _size(lines) <= _size(self.best[0]):
                self.best = (lines, verdict)
        if self.progress is not None:
            self.progress(
                self.found_at or self.run, self.run - self.found_at if self.found_at else None
            )
        if verdict is not None:
            raise _Different(verdict.message)


def judge_session(lines: Sequence[str], target: Sessions) -> Judged | None:
    """The verdict on the port's answers to ``lines`` when it is not a pass, else None."""
    check = reference_check(lines)
    session = target.run(check.payload)
    verdict = judge_check(
        check, session.answers, exit_status=session.exit_status, timed_out=session.timed_out
    )
    return None if verdict.passed else verdict


def _size(lines: Sequence[str]) -> tuple[int, int]:
    return len(lines), sum(map(len, lines))


def fuzz_protocol(
    target: Sessions,
    *,
    max_examples: int = DEFAULT_MAX_SESSIONS,
    seed: int = 0,
    max_shrinks: int = DEFAULT_MAX_SHRINKS,
    progress: Progress | None = None,
    database: str | Path | None = None,
) -> LineFuzzResult:
    """Fuzz the port's protocol layer; shrink and return the first session it answers
    otherwise than the reference adapter. Raises :class:`NondeterministicAdapter` when a
    failing session passes on replay. ``database`` as for :func:`conformance.tools.fuzz.fuzz`."""
    examples = example_database(database)
    search = _Search(target, max_examples, max_shrinks, progress, examples)

    # The function's name is part of hypothesis's database key: protocol lines, not vectors.
    def protocol_lines(data: st.DataObject) -> None:
        search.check(data)

    try:
        with hypothesis_storage():
            seeded(protocol_lines, seed, search_settings(max_examples, examples))()
    except (_Different, _Stop):
        pass
    except Flaky as error:
        raise NondeterministicAdapter(str(error)) from None
    if search.best is None:
        return LineFuzzResult(search.run, None)
    lines, verdict = search.best
    lines, verdict, tries = _without_needless_lines(lines, verdict, target)
    finding = LineFinding(lines, verdict, search.found_at, search.run - search.found_at + tries)
    return LineFuzzResult(search.run + tries, finding)


def _without_needless_lines(
    lines: tuple[str, ...], verdict: Judged, target: Sessions
) -> tuple[tuple[str, ...], Judged, int]:
    """Drop each line (but the hello) whose removal keeps a difference, last to first.

    Hypothesis shrinks the drawn plans, and a plan's line depends on the lines before it; once
    it is done the lines are plain text, and any of them can go without making the rest
    invalid. A session of n lines costs at most n - 1 more runs."""
    tries = 0
    index = len(lines) - 1
    while index >= 1 and len(lines) > 2:
        shorter = lines[:index] + lines[index + 1 :]
        tries += 1
        found = judge_session(shorter, target)
        if found is not None:
            lines, verdict = shorter, found
        index -= 1
    return lines, verdict, tries


# -- saving a finding as a protocol check --------------------------------------------------------


def finding_check(finding: LineFinding, port: str, seed: int) -> ProtocolCheck:
    """The protocol check that pins ``finding``: id ``protocol/fuzz-<hash of the lines>``,
    expectations from the reference adapter, the difference in its description."""
    digest = hashlib.sha256("".join(finding.lines).encode("utf-8", "surrogatepass")).hexdigest()
    name = THEME_PREFIX + digest[:12]
    check = reference_check(finding.lines, name)
    where = finding.verdict.message.removeprefix(f"{RULE}: ")
    description = (
        f"Found by snapkv-conformance fuzz --protocol (seed {seed}) against {port}: "
        f"{finding.verdict.verdict}: {where.rstrip('.')}. Catches: {CATCHES}"
    )
    return ProtocolCheck(check.id, description, RULE, check.send, check.expect)


def save_check(check: ProtocolCheck, directory: str | Path) -> Path:
    """Write ``check`` as ``<directory>/<id>.json`` in canonical form; return the path."""

    path = Path(directory) / f"{check.id}.json"
    write_text(path, dumps_check(check))
    return path
