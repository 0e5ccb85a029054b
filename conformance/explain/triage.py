"""Triage: which catalogued porting mistake (or mix of them) answers exactly as the port did.

After a failing run, every catalogued mutant (:mod:`conformance.mutants`) replays the vectors
the port was run on, in process, and is compared with the port's own answers: the victims of
every evict, the kind of every refusal, the success of every other call. A mutant *explains* a
failing vector when it gives the port's answers call for call (a crash where the port crashed
counts as the same answer), and *agrees* on a passing vector when it passes it too. Mutants are
ranked by how many vectors they reproduce in all, failing and passing alike; where no single
mistake explains every failure, combinations of two or three mistakes that override different
steps of the policy are built and ranked with them.

Most of these replays have a known answer: whether a catalogued mistake passes a committed
vector is shipped with the kit (:mod:`conformance.explain.kills`), and only the rest are replayed.

Whatever the catalogue says, the failures are also grouped by where the port first diverged
(a crash, a refusal, a broken invariant, sums, pooled scores, a tie, a selection), so a porter
whose mistake is not catalogued still knows where to look.

The ranking is deterministic: it depends only on the vectors, the port's answers and the
catalogue order.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.suite.vectors import Vector

#: One call's answer as triage compares it: ``("ok",)``, ``("victims", (...))``,
#: ``("error", kind)``, ``("dies",)`` (a crash or a hang) or ``("malformed",)`` (an answer
#: that breaks the protocol's shape, which no catalogued mistake produces).
Outcome = tuple[Any, ...]
OK: Outcome = ("ok",)
DIES: Outcome = ("dies",)
MALFORMED: Outcome = ("malformed",)

#: How many single mistakes may enter combinations (the best-ranked first), and how many pairs
#: may be extended to triples: enough for every combination the catalogue has produced so far,
#: few enough that the triage stays within seconds.
COMBINE_SINGLES = 8
EXTEND_PAIRS = 3
#: At most this many pairs, and then triples, are replayed, the most promising first (those
#: whose parts reproduce the first failures of the most failing vectors between them).
MAX_ATTEMPTS = 8
SHOWN = 5

#: The groups of first divergence, in the order a porter should look at them.
GROUPS: tuple[tuple[str, str], ...] = (
    ("process", "crash, timeout or protocol error"),
    ("refusal", "refusal mismatch (a call accepted or refused wrongly, or with the wrong kind)"),
    ("invariant", "broken invariant (victims not a valid eviction)"),
    ("sums", "window sums differ from the reference's"),
    ("pooled", "pooled scores differ (sums equal)"),
    ("ties", "selection differs among equal pooled scores (a tie broken the wrong way)"),
    ("selection", "selection differs with different scores"),
    ("victims", "victims differ (no scores capability to tell sums, pooling and selection apart)"),
)


# -- what the port answered ------------------------------------------------------------------


def answer_outcome(answer: Mapping[str, Any], op: str) -> Outcome:
    """What one answer decides, for comparison with a mutant's; never raises."""
    from conformance.judge.checker import answer_problem

    if not isinstance(answer, Mapping) or answer_problem(answer, op) is not None:
        return MALFORMED
    if answer["ok"] is not True:
        return ("error", answer["error"]["kind"])
    if op == "evict":
        victims = answer["victims"]
        if not isinstance(victims, list) or not all(type(v) is int for v in victims):
            return MALFORMED
        return ("victims", tuple(victims))
    return OK


def answer_outcomes(
    vector: Vector, answers: Sequence[Mapping[str, Any]], failure_kind: str | None = None
) -> tuple[Outcome, ...]:
    """The port's outcomes for ``vector``: one per answer, then ``dies``/``malformed`` when the
    exchange was cut short by a crash or hang (``failure_kind`` ``crash``/``timeout``) or by a
    protocol failure."""
    outcomes = [
        answer_outcome(answer, call.op) for call, answer in zip(vector.calls, answers, strict=False)
    ]
    if failure_kind is not None and len(outcomes) < len(vector.calls):
        outcomes.append(MALFORMED if failure_kind == "protocol" else DIES)
    return tuple(outcomes)


def expected_outcomes(vector: Vector) -> tuple[Outcome, ...]:
    """The outcomes the vector expects: what a port that passes it answered."""
    outcomes: list[Outcome] = []
    for call in vector.calls:
        if call.expected_error is not None:
            outcomes.append(("error", call.expected_error))
        elif call.op == "evict":
            outcomes.append(("victims", tuple(call.expected_victims or ())))
        else:
            outcomes.append(OK)
    return tuple(outcomes)


# -- replaying a policy class ----------------------------------------------------------------


def divergence(policy: type, vector: Vector, target: Sequence[Outcome]) -> int | None:
    """Replay ``vector`` on ``policy`` in process; the index of the first call whose outcome
    differs from ``target`` (``len(target)`` when the replay goes on past it), or None when
    every outcome is the same."""
    from conformance.adapter.server import Session

    session = Session(lambda params, seed: policy(params, seed))
    for index, call in enumerate(vector.calls):
        if index >= len(target):
            return index
        try:
            # answer, not handle: handle turns a raised exception into a refusal
            answer = session.answer({**call.request, "id": index})
        except Exception:  # a mistake that crashes (IndexError, ...): a port would die here
            return None if target[index] == DIES and index == len(target) - 1 else index
        if not answer.get("ok"):
            got: Outcome = ("error", answer["error"]["kind"])
        elif "victims" in answer:
            got = ("victims", tuple(answer["victims"]))
        else:
            got = OK
        if got != target[index]:
            return index
    return None if len(target) == len(vector.calls) else len(vector.calls)


# -- composing mistakes ----------------------------------------------------------------------


_METADATA = frozenset(
    (
        "__module__",
        "__doc__",
        "__qualname__",
        "__dict__",
        "__weakref__",
        "__annotations__",
        "__firstlineno__",
        "__static_attributes__",
    )
)


def _defined(policy: type, base: type, exclude: Iterable[type] = ()) -> set[str]:
    """Names the classes of ``policy``'s MRO below ``base`` define, except those of
    ``exclude`` (the classes another policy shares, such as a row-state helper: a name defined
    there is defined once in a composition)."""
    skip = set(exclude)
    return {
        name
        for klass in policy.__mro__
        if klass is not base and issubclass(klass, base) and klass not in skip
        for name in vars(klass)
        if name not in _METADATA
    }


def compose(policies: Sequence[type], base: type) -> type | None:
    """A policy class with every mistake of ``policies`` at once, or None when two of them
    override the same step (the composition would silently drop one of the two)."""
    for a, b in itertools.combinations(policies, 2):
        shared = set(a.__mro__) & set(b.__mro__)
        if _defined(a, base, shared) & _defined(b, base, shared):
            return None
    try:
        return type("+".join(p.__name__ for p in policies), tuple(policies), {})
    except TypeError:  # no consistent method resolution order
        return None


# -- the triage ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mistake:
    """A catalogued mistake as triage sees it: a name, plain words, and a policy class."""

    name: str
    description: str
    policy: type


@dataclass
class Likely:
    """One ranked explanation: a mistake or a combination of independent mistakes.

    ``explains`` failing vectors (out of ``of``) are answered exactly as the port answered
    them; ``agrees`` passing vectors (out of ``passing``) pass under the mistake too; ``first``
    failing vectors are answered as the port did up to and including its first failing call.
    """

    names: tuple[str, ...]
    description: str
    explains: int
    of: int
    agrees: int
    passing: int
    first: int
    explained: tuple[str, ...] = ()

    @property
    def mistake(self) -> str:
        return " + ".join(self.names)

    @property
    def total(self) -> int:
        return self.explains + self.agrees

    @property
    def exact(self) -> bool:
        """Reproduces the whole run: every failure and every pass."""
        return self.explains == self.of and self.agrees == self.passing

    def evidence(self) -> str:
        """``reproduces all 61 failing vectors and agrees on the 62 passing ones``, or the
        counts when it is not all."""
        if self.explains == self.of:
            failing = (
                "reproduces the failing vector"
                if self.of == 1
                else f"reproduces all {self.of} failing vectors"
            )
        else:
            failing = f"reproduces {self.explains} of {self.of} failing vectors"
            if self.first > self.explains:
                failing += f" (the first failure of {self.first})"
        if not self.passing:
            return failing
        if self.agrees == self.passing:
            passing = (
                "agrees on the passing one"
                if self.passing == 1
                else f"agrees on the {self.passing} passing ones"
            )
        else:
            passing = f"agrees on {self.agrees} of the {self.passing} passing ones"
        return f"{failing} and {passing}"

    def to_json(self) -> dict[str, Any]:
        return {
            "mistake": self.mistake,
            "mistakes": list(self.names),
            "description": self.description,
            "explains": self.explains,
            "of": self.of,
            "agrees": self.agrees,
            "passing": self.passing,
            "first_failure": self.first,
            "explained": list(self.explained),
        }


@dataclass
class Group:
    """Failing vectors that first diverged the same way."""

    kind: str
    label: str
    vectors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "vectors": list(self.vectors)}


@dataclass
class Triage:
    """The triage of one failing run: ranked explanations and the failures' groups."""

    likely: list[Likely]
    groups: list[Group]
    failing: int
    passing: int
    mistakes: int
    combinations: int
    duration: float = 0.0

    @property
    def found(self) -> bool:
        """True when the best explanation reproduces at least one failing vector exactly."""
        return bool(self.likely) and self.likely[0].explains > 0

    def headline(self) -> str:
        """The first line: the likely cause, or that the catalogue has none."""
        if self.found:
            top = self.likely[0]
            lead = "likely cause" if top.explains == top.of else "closest catalogued mistake"
            return f"{lead}: {top.mistake}: {top.description} ({top.evidence()})"
        failing = (
            "the failing vector"
            if self.failing == 1
            else f"any of the {self.failing} failing vectors"
        )
        text = f"no catalogued mistake reproduces {failing}"
        if self.likely:
            top = self.likely[0]
            text += (
                f"; the closest, {top.mistake}, answers as the port did up to its first "
                f"failure on {top.first} of them"
            )
        return text + "; the failures by where the port first diverged follow"

    def lines(self, shown: int = SHOWN) -> list[str]:
        """The triage section of the text output (after the FAIL lines)."""
        lines = ["triage: " + self.headline()]
        others = self.likely[1:shown] if self.found else self.likely[:shown]
        if others:
            lines.append("  also close:" if self.found else "  partly close:")
            lines.extend(f"    {item.mistake}: {item.evidence()}" for item in others)
        lines.append("  failures by first divergence:")
        for group in self.groups:
            lines.append(f"    {group.label}: {len(group.vectors)} ({_ids(group.vectors)})")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "headline": self.headline(),
            "found": self.found,
            "failing": self.failing,
            "passing": self.passing,
            "mistakes_tried": self.mistakes,
            "combinations_tried": self.combinations,
            "likely": [item.to_json() for item in self.likely],
            "groups": [group.to_json() for group in self.groups],
        }


def _ids(ids: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(ids[:limit])
    return shown if len(ids) <= limit else f"{shown}, ... {len(ids) - limit} more"


def catalogue_mistakes(exclude: Iterable[str] = ()) -> list[Mistake]:
    """The catalogue as triage candidates, in catalogue order, minus ``exclude``."""
    from conformance import mutants

    skip = set(exclude)
    return [Mistake(m.name, describe(m), m.policy) for m in mutants.CATALOGUE if m.name not in skip]


def describe(mutant: Any) -> str:
    """Plain words for a catalogued mistake: what the port does, then the rule it breaks."""
    doc = mutant.doc.rstrip(".") if mutant.doc else mutant.name
    return f"{doc}; SPEC.md {mutant.rule}".replace("``", "`")


@dataclass
class _Scored:
    names: tuple[str, ...]
    policy: type
    explained: list[str]
    firsts: frozenset[str]  # failing vectors answered as the port did up to its first failure
    indices: tuple[int, ...]
    agrees: int = -1

    @property
    def first(self) -> int:
        return len(self.firsts)


def triage(
    vectors: Sequence[Vector],
    results: Sequence[Any],
    *,
    mistakes: Sequence[Mistake] | None = None,
    combine: bool = True,
    reference: type | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Triage:
    """Rank ``mistakes`` (the catalogue by default) by how exactly each reproduces the answers
    behind ``results`` (the runner's :class:`~conformance.judge.checker.VectorResult` list, matched
    to ``vectors`` by id).

    ``reference`` is the class compositions derive from (the reference policy by default).
    """
    from conformance.policy.reference import SnapKV

    began = clock()
    base = reference or SnapKV
    candidates = list(mistakes) if mistakes is not None else catalogue_mistakes()
    by_id = {vector.id: vector for vector in vectors}
    failing: list[tuple[Vector, tuple[Outcome, ...], int]] = []
    passing: list[tuple[Vector, tuple[Outcome, ...]]] = []
    for result in results:
        vector = by_id.get(result.vector_id)
        if vector is None:
            continue
        if result.passed:
            passing.append((vector, expected_outcomes(vector)))
        else:
            answers = tuple(getattr(result, "answers", ()) or ())
            first = result.call_index if result.call_index is not None else len(answers)
            failing.append((vector, answers, first))
    failing = _designed_first(failing)

    # What the shipped kill matrix says of each catalogued mistake on the committed vectors
    # (conformance.explain.kills): a mistake a vector does not kill answers it as expected, so
    # it agrees where the port passed and cannot reproduce a failure where the port failed.
    from conformance import mutants
    from conformance.explain import kills as kill_matrix

    kills = kill_matrix.load(vectors)
    shipped = {
        m.policy: m.name
        for m in candidates
        if m.name in mutants.BY_NAME and mutants.BY_NAME[m.name].policy is m.policy
    }

    def passes(policy: type, vector: Vector) -> bool | None:
        """Whether ``policy`` passes ``vector`` by the kill matrix, or None if unknown."""
        name = shipped.get(policy)
        if name is None or vector.id not in kills:
            return None
        return name not in kills[vector.id]

    def on_failing(policy: type) -> tuple[list[str], frozenset[str]]:
        explained, firsts = [], set()
        for vector, answers, first_failure in failing:
            if passes(policy, vector):
                continue
            where = divergence(policy, vector, answers)
            if where is None:
                explained.append(vector.id)
            if where is None or where > first_failure:
                firsts.add(vector.id)
        return explained, frozenset(firsts)

    def on_passing(scored: _Scored, need: int = 0) -> bool:
        """Count the passing vectors ``scored`` agrees on; False (and stop early) once it
        cannot reach ``need`` agreements."""
        if scored.agrees >= 0:
            return scored.agrees >= need
        agrees = 0
        for done, (vector, target) in enumerate(passing):
            if agrees + len(passing) - done < need:
                return False
            known = passes(scored.policy, vector)
            agrees += divergence(scored.policy, vector, target) is None if known is None else known
        scored.agrees = agrees
        return agrees >= need

    singles: list[_Scored] = []
    for index, mistake in enumerate(candidates):
        explained, firsts = on_failing(mistake.policy)
        if firsts:
            singles.append(_Scored((mistake.name,), mistake.policy, explained, firsts, (index,)))
    for scored in singles:
        on_passing(scored)
    ranked = sorted(singles, key=_rank_key)
    tried = 0
    if combine and failing and not (ranked and _complete(ranked[0], failing, passing)):
        combos, tried = _combinations(ranked, candidates, base, on_failing, on_passing)
        ranked = sorted(ranked + combos, key=_rank_key)
    descriptions = {m.name: m.description for m in candidates}
    likely = [
        Likely(
            names=item.names,
            description="; and ".join(descriptions[name] for name in item.names),
            explains=len(item.explained),
            of=len(failing),
            agrees=item.agrees,
            passing=len(passing),
            first=item.first,
            explained=tuple(item.explained),
        )
        for item in ranked
    ]
    groups = group_failures(vectors, [r for r in results if not r.passed])
    return Triage(
        likely=likely,
        groups=groups,
        failing=len(failing),
        passing=len(passing),
        mistakes=len(candidates),
        combinations=tried,
        duration=clock() - began,
    )


def _rank_key(item: _Scored) -> tuple[Any, ...]:
    explains = len(item.explained)
    return (-(explains + item.agrees), -explains, -item.first, len(item.names), item.indices)


def _complete(item: _Scored, failing: Sequence[Any], passing: Sequence[Any]) -> bool:
    return len(item.explained) == len(failing) and item.agrees == len(passing)


def _combinations(
    ranked: list[_Scored],
    candidates: Sequence[Mistake],
    base: type,
    on_failing: Callable[[type], tuple[list[str], frozenset[str]]],
    on_passing: Callable[[_Scored, int], bool],
) -> tuple[list[_Scored], int]:
    """Pairs, then triples, of the best single mistakes, kept when they explain more failing
    vectors than each of their parts.

    Only mistakes that each reproduce the first failure of a vector the others do not are
    combined (a part that adds nothing cannot be needed), and a combination's passing vectors
    are replayed only when it could still rank first: a passing vector that one part fails, the
    combination is taken to fail too.
    """
    pool = sorted(ranked[:COMBINE_SINGLES], key=lambda item: item.indices)
    tried = 0
    found: list[_Scored] = []
    best_total = max((len(item.explained) + item.agrees for item in ranked), default=0)

    def attempt(parts: Sequence[_Scored]) -> _Scored | None:
        nonlocal tried, best_total
        policy = compose([part.policy for part in parts], base)
        if policy is None:
            return None
        tried += 1
        explained, firsts = on_failing(policy)
        best = max(len(part.explained) for part in parts)
        if len(explained) <= best:
            return None
        if len(explained) + min(part.agrees for part in parts) < best_total:
            return None
        scored = _Scored(
            tuple(name for part in parts for name in part.names),
            policy,
            explained,
            firsts,
            tuple(index for part in parts for index in part.indices),
        )
        if not on_passing(scored, best_total - len(explained)):
            return None
        best_total = max(best_total, len(explained) + scored.agrees)
        return scored

    def adds(part: _Scored, others: frozenset[str]) -> bool:
        return not part.firsts <= others

    def promise(parts: Sequence[_Scored]) -> tuple[int, tuple[int, ...]]:
        return (-len(frozenset().union(*(part.firsts for part in parts))), _indices(parts))

    def complete() -> bool:
        return best_total == len(failing_ids) + passing_count

    failing_ids = frozenset().union(*(item.firsts for item in ranked))
    passing_count = max((item.agrees for item in ranked), default=0)
    candidates_pairs = [
        (a, b)
        for a, b in itertools.combinations(pool, 2)
        if adds(a, b.firsts) and adds(b, a.firsts)
    ]
    pairs = []
    for parts in sorted(candidates_pairs, key=promise)[:MAX_ATTEMPTS]:
        if complete():
            break
        scored = attempt(parts)
        if scored is not None:
            pairs.append(scored)
    found.extend(pairs)
    triples: dict[tuple[int, ...], list[_Scored]] = {}
    for pair in sorted(pairs, key=_rank_key)[:EXTEND_PAIRS]:
        members = [s for s in pool if s.indices[0] in pair.indices]
        for single in pool:
            key = tuple(sorted((*pair.indices, single.indices[0])))
            if single in members or key in triples or not adds(single, pair.firsts):
                continue
            triples[key] = sorted([*members, single], key=lambda s: s.indices)
    for triple in sorted(triples.values(), key=promise)[:MAX_ATTEMPTS]:
        if complete():
            break
        scored = attempt(triple)
        if scored is not None:
            found.append(scored)
    # one entry per set of mistakes (a triple may be reached from several pairs)
    unique = {item.indices: item for item in found}
    return list(unique.values()), tried


def _indices(parts: Sequence[_Scored]) -> tuple[int, ...]:
    return tuple(index for part in parts for index in part.indices)


# -- grouping failures by first divergence ---------------------------------------------------


def _designed_first(items: list[Any]) -> list[Any]:
    """Designed vectors before random and workload ones, each part in suite order."""
    return sorted(items, key=lambda item: is_generated(item[0].id))


def is_generated(vector_id: str) -> bool:
    """True for random and workload vectors: they fail for many reasons at once, so a
    designed vector's failure says more."""
    theme = vector_id.split("/", 1)[0]
    return theme in ("random", "workload") or "/random" in vector_id


def divergence_kind(vector: Vector | None, result: Any) -> str:
    """The group of :data:`GROUPS` a failing result belongs to."""
    from conformance.judge import checker

    verdict = result.verdict
    if verdict in checker.PROCESS_VERDICTS:
        return "process"
    if verdict in (
        checker.WRONG_ERROR_KIND,
        checker.UNEXPECTED_SUCCESS,
        checker.UNEXPECTED_REFUSAL,
    ):
        return "refusal"
    if verdict == checker.BROKEN_INVARIANT:
        return "invariant"
    kind = getattr(result, "divergence", None)
    if kind in ("sums", "pooled", "ties", "selection"):
        return str(kind)
    if vector is not None and result.call_index is not None:
        from conformance.explain.diagnosis import tied_selection

        if tied_selection(vector, result.call_index, result.actual) is not None:
            return "ties"
    return "victims"


def group_failures(vectors: Sequence[Vector], failures: Sequence[Any]) -> list[Group]:
    """The failing results grouped by :func:`divergence_kind`, groups in :data:`GROUPS`
    order, designed vectors first within each."""
    by_id = {vector.id: vector for vector in vectors}
    groups = {kind: Group(kind, label) for kind, label in GROUPS}
    for result in sorted(failures, key=lambda r: is_generated(r.vector_id)):
        groups[divergence_kind(by_id.get(result.vector_id), result)].vectors.append(
            result.vector_id
        )
    return [group for group in groups.values() if group.vectors]
