"""The search: which catalogued porting mistakes, made together, answer exactly as the port
did.

The catalogue (:mod:`conformance.mutants`) models a port as one choice per step of the policy
(:data:`conformance.mutants.model.STEPS`); real-world code is a named point of that space. A
*candidate* is a set of catalogued mistakes with no step in common, composed into one policy.
It *explains* a failing vector when it gives the port's answers call for call (a crash where
the port crashed counts as the same answer), and *agrees* on a passing vector when it passes it
too; candidates rank by the vectors they reproduce in all.

The search costs little because most of it is known in advance: what every catalogued mistake
answers on every committed vector is shipped (:mod:`conformance.explain.known_kills`), and a mistake
that is *inert* on a vector (answers and scores the reference's) changes nothing there in any
combination. Single mistakes are scored from that table alone; a beam over the steps, guided by
the failing vectors each mistake reproduces on its own, proposes combinations, estimated from
the table; the best few are then replayed, in process, on every vector one of their parts is not
inert on, so every figure a line shows is exact.

The replays of that search are bounded by a count (:data:`SEARCH_BUDGET` evict calls), never a
clock. Past it, a candidate is replayed only until it misses a vector: one that reproduces the
whole run never misses, so a likely cause is confirmed in full whatever the budget, but a partial
candidate that might have come closer is dropped unscored; the first line then says "closest
found" and how many were dropped (a port whose mistake the catalogue does not hold is where
the budget is spent: every finalist could be the closest, and each costs a replay).

Invariant: a function of the vectors, the port's answers and the catalogue: nothing is timed,
and the ranking is deterministic.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.explain import known_kills
from conformance.explain.play import check_outcome, compose, digest, play, play_check
from conformance.explain.triage.explanations import Likely, part_of
from conformance.judge.outcomes import (
    DIES,
    Outcome,
    expected_outcomes,
)
from conformance.spec import resources
from conformance.suite.discovery import is_generated
from conformance.suite.protocol_checks import ProtocolCheck, load_check
from conformance.suite.stream import SuiteEntry
from conformance.suite.vectors import Vector

#: The beam: how many candidates are extended at each depth, by how many mistakes each, and
#: how many mistakes a candidate may hold; then how many of the best are replayed exactly.
BEAM_WIDTH = 8
EXTENSIONS = 12
MAX_PARTS = 4
FINALISTS = 8
#: How many substitutes for each part of the first combination are screened, looking for
#: another that answers the run alike: each is replayed on the vectors where it and the part
#: it replaces differ on their own in answers or scores (by the shipped outcomes), stopping at
#: the first that shows it answers otherwise than the first combination.
SUBSTITUTES = 12
#: How many of the substitutes that pass that screen are then replayed on every vector they
#: touch. The others are named as not ruled out, with how many vectors were left unreplayed: a
#: full replay is the triage's main cost (the first combination's own is about half of it), and
#: this is a count, not a clock, so the lines do not depend on the machine's speed. None by
#: default: a porter learns as much from "not ruled out" as from "found alike", at no cost.
CONFIRMED = 0
#: How many single choices, each reproducing on its own failing vectors the best combination
#: does not, are tried added to it once the beam is done.
COMPLETIONS = 4
#: How many ``evict`` calls the search for the best combination (the finalists and their
#: completions) may replay. Once they are spent, each further candidate is replayed only until
#: it misses a vector: one that reproduces the whole run never misses, so a likely cause is
#: still confirmed as before, but a partial one that might have come closer is left unscored,
#: and the lines say how many were. Evict calls are counted because they are the cost (each
#: scores and pools the whole history; the other calls cost a few times less, and a vector has
#: from one call to thousands); a count, not a clock, so the lines do not depend on the
#: machine's speed.
SEARCH_BUDGET = 10_000


# -- what the port answered ------------------------------------------------------------------


def comparable(outcomes: Sequence[Outcome]) -> tuple[Outcome, ...]:
    """The port's outcomes as a catalogued mistake's are compared with them: a policy call
    answered ``unsupported`` is a port's bug reported by its adapter host (the kit's Python
    host answers an exception so), the same finding as a crash, so the outcomes end there."""
    out: list[Outcome] = []
    for outcome in outcomes:
        if outcome == ("error", "unsupported") or outcome == DIES:
            out.append(DIES)
            break
        out.append(outcome)
    return tuple(out)


# -- the results ---------------------------------------------------------------------------


class _Run:
    """One item of the run as triage sees it: what the port answered, and whether it passed.
    The vector itself is read only when something has to be replayed on it (``source`` may be
    a :class:`~conformance.suite.vectors.Vector` or an object that loads one, by ``load()``).

    A protocol check (``check``) is one outcome: what its judgement decides
    (:func:`~conformance.explain.play.check_outcome`), ``("pass",)`` when it passed."""

    def __init__(self, source: Any, result: Any, check: bool = False) -> None:

        self.source = source
        self.id: str = source.id
        self.check = check
        self.passed: bool = bool(result.passed)
        self._vector: Vector | None = source if hasattr(source, "calls") else None
        self._check: ProtocolCheck | None = source if isinstance(source, ProtocolCheck) else None
        self._target: tuple[Outcome, ...] | None = None
        self._evicts: int | None = None
        self.first = 0
        self.digest = self.at_first = ""
        if check:
            self._evicts = 1  # a check is a few lines: cheap to replay
            self._target = (check_outcome(result),)
            self.digest = self.at_first = digest(self._target)
        elif not self.passed:
            answers = tuple(getattr(result, "answers", ()) or ())
            self._target = comparable(answers)
            first = result.call_index if result.call_index is not None else len(self._target)
            self.first = min(first, max(len(self._target) - 1, 0))
            self.digest = digest(self._target)
            self.at_first = digest(self._target[self.first : self.first + 1])

    @property
    def protocol_check(self) -> ProtocolCheck:
        if self._check is None:
            self._check = load_check(self.source.path)
        return self._check

    @property
    def vector(self) -> Vector:
        if self._vector is None:
            self._vector = _read(self.source)
        return self._vector

    @property
    def evicts(self) -> int:
        """How many of its calls are ``evict`` calls (what a replay mostly costs)."""
        if self._evicts is None:
            self._evicts = sum(call.request.get("op") == "evict" for call in self.vector.calls)
        return self._evicts

    @property
    def target(self) -> tuple[Outcome, ...]:
        """The port's comparable outcomes (the expected ones, when it passed)."""
        if self._target is None:
            self._target = expected_outcomes(self.vector)
        return self._target


def _read(source: Any) -> Vector:
    """The vector of a suite entry the run has just read and validated
    (:meth:`~conformance.suite.stream.SuiteEntry.reload`), or ``load()`` of another source."""
    reload = getattr(source, "reload", None)
    return reload() if reload is not None else source.load()


@dataclass
class _Single:
    """What one catalogued mistake does on the run's vectors, on its own."""

    index: int
    mutant: Any
    explains: frozenset[str]  # failing vectors it answers exactly as the port
    firsts: frozenset[str]  # failing vectors it answers as the port up to its first failure
    kills: frozenset[str]  # vectors whose answers it changes (failing or passing)
    touches: frozenset[str]  # vectors it is not inert on (or not known to be)
    breaks: int  # passing vectors it fails
    #: What it does on each vector it touches, as the shipped outcomes say: the digest of its
    #: answers, ``moved`` (scores only), or ``replayed`` when the table does not know.
    profile: dict[str, str] = field(default_factory=dict)

    def differs(self, other: _Single) -> frozenset[str]:
        """The vectors on which it and ``other`` are not known to act alike on their own: they
        answer differently, or one moves scores (two that both move them may move them
        differently), or the table does not say."""
        ids = self.touches | other.touches
        return frozenset(
            vid
            for vid in ids
            if self.profile.get(vid) != other.profile.get(vid)
            or self.profile.get(vid) in ("moved", "replayed")
        )


@dataclass
class Scored:
    indices: tuple[int, ...]
    explained: frozenset[str]
    firsts: frozenset[str]
    agrees: int
    exact: bool  # True once every figure is the replay's, not an estimate
    broken: frozenset[str] = frozenset()  # passing vectors it fails (known once replayed)

    @property
    def total(self) -> int:
        return len(self.explained) + self.agrees


class Engine:
    """The search for one run (see the module docstring)."""

    def __init__(
        self,
        vectors: Sequence[Any],
        results: Sequence[Any],
        pool: list[Any],
        checks: Sequence[Any] = (),
        capabilities: Sequence[str] | None = None,
    ) -> None:

        self.pool = pool
        by_id = {vector.id: vector for vector in vectors}
        check_ids = {check.id for check in checks}
        by_id.update({check.id: check for check in checks})
        runs = [
            _Run(by_id[r.vector_id], r, r.vector_id in check_ids)
            for r in results
            if r.vector_id in by_id
        ]
        runs.sort(key=lambda run: (run.passed, is_generated(run.id)))
        self.runs = runs
        self.failing = [run for run in runs if not run.passed]
        self.passing = [run for run in runs if run.passed]
        self.known = known_kills.load([run.source for run in runs])
        # The shipped outcomes were played announcing every capability: a check whose answers
        # hang on one the port did not announce is replayed announcing only the port's.
        self.capabilities = None if capabilities is None else tuple(capabilities)
        self._unannounced = {
            run.id
            for run in runs
            if run.check
            and capabilities is not None
            and run.protocol_check.capabilities - set(capabilities)
        }
        self.replayed = 0
        self.combinations = 0
        self._exact: dict[tuple[int, ...], Scored] = {}
        # Where a combination first answered otherwise than the port, per vector replayed: a
        # screen's replays are not repeated when the same combination is replayed in full.
        self._diverged: dict[tuple[tuple[int, ...], str], int | None] = {}
        self._policies: dict[tuple[int, ...], type | None] = {}
        self._order: list[_Run] | None = None
        #: Evict calls replayed by the search (:data:`SEARCH_BUDGET`), counted while ``_searching``;
        #: and the candidates it left unscored once they were spent.
        self.search_calls = 0
        self._searching = False
        self.cut: set[tuple[int, ...]] = set()
        self.singles = [self._single(index, mutant) for index, mutant in enumerate(pool)]

    # -- single mistakes, mostly from the shipped table ------------------------------------------

    def _single(self, index: int, mutant: Any) -> _Single:
        explains, firsts, kills, touches = set(), set(), set(), set()
        profile: dict[str, str] = {}
        breaks = 0
        for run in self.runs:
            vid = run.id
            known = None if vid in self._unannounced else self.known.get(vid)
            if known is not None:
                kill = known.kills.get(mutant.name)
                if kill is not None:
                    kills.add(vid)
                    touches.add(vid)
                    profile[vid] = kill.answers
                    if run.passed:
                        breaks += 1
                    elif kill.answers == run.digest:
                        explains.add(vid)
                        firsts.add(vid)
                    elif kill.first == run.first and kill.at_first == run.at_first:
                        firsts.add(vid)
                elif mutant.name in known.moved:
                    touches.add(vid)  # it passes, but its scores moved
                    profile[vid] = "moved"
                continue
            self.replayed += 1  # not known: replayed
            touches.add(vid)
            profile[vid] = "replayed"
            played = self._play(mutant.policy, run)
            if played is None:
                if not run.passed:
                    explains.add(vid)
                    firsts.add(vid)
                continue
            kills.add(vid)
            if run.passed:
                breaks += 1
            elif played > run.first:
                firsts.add(vid)
        return _Single(
            index,
            mutant,
            frozenset(explains),
            frozenset(firsts),
            frozenset(kills),
            frozenset(touches),
            breaks,
            profile,
        )

    def _play(self, policy: type, run: _Run) -> int | None:
        """Where ``policy`` first answers otherwise than the port on ``run`` (None: never)."""
        if run.check:
            outcome = check_outcome(play_check(policy, run.protocol_check, self.capabilities))
            return None if (outcome,) == run.target else 0
        return play(policy, run.vector, run.target).diverged

    # -- ranking ---------------------------------------------------------------------------------

    def rank(self, combine: bool) -> list[Scored]:
        scored = [
            Scored(
                (single.index,),
                single.explains,
                single.firsts,
                len(self.passing) - single.breaks,
                True,
            )
            for single in self.singles
            if single.explains or single.firsts
        ]
        scored.sort(key=self._key)
        complete = bool(scored) and self._complete(scored[0])
        if combine and self.failing and not complete:
            self._searching = True
            try:
                scored = self._combine(scored)
            finally:
                self._searching = False
        return [item for item in scored if item.explained or item.firsts]

    def _key(self, item: Scored) -> tuple[Any, ...]:
        return (
            -item.total,
            -len(item.explained),
            -len(item.firsts),
            len(item.indices),
            item.indices,
        )

    def _complete(self, item: Scored) -> bool:
        return len(item.explained) == len(self.failing) and item.agrees == len(self.passing)

    def _combine(self, singles: list[Scored]) -> list[Scored]:
        """A beam over the steps: each candidate is extended by the mistakes that reproduce, on
        their own, failing vectors it does not; estimates rank the beam, replays the best."""
        useful = self.singles
        estimates: dict[tuple[int, ...], Scored] = {item.indices: item for item in singles}
        beam = singles[:BEAM_WIDTH]
        for _ in range(MAX_PARTS - 1):
            grown: dict[tuple[int, ...], Scored] = {}
            for state in beam:
                for single in self._extensions(state, useful):
                    indices = tuple(sorted((*state.indices, single.index)))
                    if indices in estimates or indices in grown:
                        continue
                    estimate = self._estimate(indices)
                    if estimate is not None:
                        grown[indices] = estimate
            if not grown:
                break
            estimates.update(grown)
            beam = sorted(grown.values(), key=self._key)[:BEAM_WIDTH]
        combos = sorted(
            (item for item in estimates.values() if len(item.indices) > 1), key=self._key
        )
        exact = [item for item in singles]
        best = max((item.total for item in exact), default=0)
        # The best estimates, replayed those that could reproduce the most first: a
        # combination that reproduces the whole run ends the search.
        finalists = sorted(
            combos[:FINALISTS], key=lambda item: (-self._bound(item), self._key(item))
        )
        for item in finalists:
            if best == len(self.runs):
                break
            if self._bound(item) < best:
                continue
            replayed = self._replay(item.indices, best)
            if replayed is not None:
                exact.append(replayed)
                best = max(best, replayed.total)
        exact.sort(key=self._key)
        self._complete_best(exact)
        return self._distinct(exact)

    def _complete_best(self, exact: list[Scored]) -> None:
        """Once the beam is done: the best replayed candidate, if it misses failing vectors,
        tried with one more choice on a step it leaves free, each choice that changes on its
        own the answers of some of the failing vectors it misses, those reproducing the most of
        them on their own first, then those changing the most. The beam
        ranks combinations by estimates, which count nothing on a vector two parts change, so
        a choice whose only effect is on such a vector (one failure among a hundred another
        part explains) is never proposed by it; the replay says exactly what it adds. Repeated
        while it gains, up to :data:`MAX_PARTS` choices; ``exact`` is updated in place."""
        while exact:
            top = exact[0]
            if self._complete(top) or len(top.indices) >= MAX_PARTS:
                return
            missing = {run.id for run in self.failing} - top.explained
            taken = {step for index in top.indices for step in self.singles[index].mutant.steps}
            options = sorted(
                (
                    single
                    for single in self.singles
                    if single.index not in top.indices
                    and not taken & set(single.mutant.steps)
                    and single.kills & missing
                ),
                key=lambda single: (
                    -len(single.explains & missing),
                    -len(single.kills & missing),
                    single.breaks,
                    single.index,
                ),
            )
            gained = False
            for single in options[:COMPLETIONS]:
                indices = tuple(sorted((*top.indices, single.index)))
                self.combinations += 1
                replayed = self._replay(indices, top.total + 1)
                if replayed is not None and replayed.total > top.total:
                    exact.append(replayed)
                    gained = True
            if not gained:
                return
            exact.sort(key=self._key)

    def choices(self, item: Scored) -> frozenset[str]:
        """The catalogued choices a candidate makes (a named point's parts spelt out)."""
        return frozenset(
            name
            for index in item.indices
            for name in (self.singles[index].mutant.parts or (self.singles[index].mutant.name,))
        )

    def _distinct(self, items: list[Scored]) -> list[Scored]:
        """One entry per set of choices: a named point and the same choices combined are one
        explanation (the first, with fewer mistakes, is kept)."""
        seen: set[frozenset[str]] = set()
        out = []
        for item in items:
            choices = self.choices(item)
            if choices not in seen:
                seen.add(choices)
                out.append(item)
        return out

    def _extensions(self, state: Scored, useful: list[_Single]) -> list[_Single]:
        taken = {step for index in state.indices for step in self.singles[index].mutant.steps}
        missing = {run.id for run in self.failing} - state.explained
        options = []
        for single in useful:
            if single.index in state.indices or taken & set(single.mutant.steps):
                continue
            gain = len(single.explains & missing)
            reach = len(single.kills & missing)
            if gain or reach:
                options.append((-gain, -reach, single.breaks, single.index, single))
        options.sort(key=lambda option: option[:4])
        return [option[-1] for option in options[:EXTENSIONS]]

    def _parts(self, indices: tuple[int, ...]) -> list[_Single]:
        return [self.singles[index] for index in indices]

    def _estimate(self, indices: tuple[int, ...]) -> Scored | None:
        """Figures for the combination from its parts alone: a vector none of them touches is
        answered as the reference answers it; one that one part touches, as that part answers
        it; one that several touch is not counted (it needs a replay)."""

        parts = self._parts(indices)
        if self._policy(indices) is None:
            return None
        self.combinations += 1
        # A vector two parts touch is left out of every count; each part counts the rest.
        shared: set[str] = set()
        seen: set[str] = set()
        for single in parts:
            shared |= seen & single.touches
            seen |= single.touches
        explained = frozenset().union(*(single.explains for single in parts)) - shared
        firsts = frozenset().union(*(single.firsts for single in parts)) - shared
        killed = set().union(*(single.kills for single in parts))
        agrees = sum(1 for run in self.passing if run.id not in killed and run.id not in shared)
        return Scored(indices, explained, firsts, agrees, False)

    def _policy(self, indices: tuple[int, ...]) -> type | None:
        """The combination as one policy class (None when its parts cannot be made together),
        made once per combination."""
        if indices not in self._policies:
            self._policies[indices] = compose([self.singles[index].mutant for index in indices])
        return self._policies[indices]

    def _bound(self, item: Scored) -> int:
        """The most the combination could reproduce: every vector a part touches (a part that
        is inert on the reference's path may act on another part's), and the passing vectors
        none touches."""
        parts = self._parts(item.indices)
        touched = set().union(*(single.touches for single in parts))
        untouched_passing = sum(1 for run in self.passing if run.id not in touched)
        return untouched_passing + len(touched & {run.id for run in self.runs})

    def _replay(
        self, indices: tuple[int, ...], need: int = 0, first: Iterable[str] = ()
    ) -> Scored | None:
        """Exact figures for a combination: replayed on every vector a part touches (``first``
        first, then those where a part on its own answers otherwise than the port, then the
        failing vectors, then the passing ones, the small ones first). None when it cannot
        compose, or once it has missed so many vectors that it cannot reproduce ``need`` in
        all."""

        if indices in self._exact:
            return self._exact[indices]
        parts = self._parts(indices)
        policy = self._policy(indices)
        if policy is None:
            return None
        explained, firsts, broken = set(), set(), set()
        agrees = misses = 0
        # The vectors a part answers otherwise than the port on its own come first: where a
        # candidate that cannot win shows it soonest.
        passing = {run.id for run in self.passing}
        likely_misses: set[str] = set()
        for single in parts:
            likely_misses |= (single.kills & passing) | (single.kills - single.explains - passing)
        leading = set(first)
        order = self._replay_order()
        # The vectors no part touches cost nothing (the reference's answers), so they are
        # counted first: a candidate that misses failures nothing of it reaches shows it free.
        touched = set().union(*(single.touches for single in parts))
        order = (
            [run for run in order if run.id not in touched]
            + [run for run in order if run.id in leading]
            + [run for run in order if run.id in (likely_misses - leading) & touched]
            + [run for run in order if run.id in touched - likely_misses - leading]
        )
        for run in order:
            vid = run.id
            if misses and self._searching and self.search_calls >= SEARCH_BUDGET:
                # Past the budget only a candidate that could reproduce the whole run is
                # replayed on: this one cannot, and is left unscored.
                self.cut.add(indices)
                return None
            if not any(vid in single.touches for single in parts):
                agrees += run.passed  # every part inert: the reference's answers
                misses += not run.passed
            else:
                diverged = self._diverges(indices, policy, run)
                if run.passed:
                    agrees += diverged is None
                    misses += diverged is not None
                    if diverged is not None:
                        broken.add(vid)
                elif diverged is None:
                    explained.add(vid)
                    firsts.add(vid)
                else:
                    misses += 1
                    if diverged > run.first:
                        firsts.add(vid)
            if misses > len(self.runs) - need:
                return None
        scored = Scored(
            indices, frozenset(explained), frozenset(firsts), agrees, True, frozenset(broken)
        )
        self._exact[indices] = scored
        return scored

    def _diverges(self, indices: tuple[int, ...], policy: type, run: _Run) -> int | None:
        """Where the combination first answers otherwise than the port on ``run``, replayed
        once per combination and vector."""
        key = (indices, run.id)
        if key not in self._diverged:
            self.replayed += 1
            if self._searching:
                self.search_calls += run.evicts
            self._diverged[key] = self._play(policy, run)
        return self._diverged[key]

    def _screen(self, indices: tuple[int, ...], top: Scored, ids: frozenset[str]) -> bool:
        """Whether the combination answers as ``top`` (the port's answers where ``top``
        reproduces them, otherwise than the port where it does not) on each of ``ids``, the
        small vectors first, stopping at the first where it does not."""
        policy = self._policy(indices)
        if policy is None:
            return False
        for run in self._replay_order():
            if run.id not in ids:
                continue
            matches = self._diverges(indices, policy, run) is None
            if matches != (run.id in top.explained or (run.passed and run.id not in top.broken)):
                return False
        return True

    def _replay_order(self) -> list[_Run]:
        """The failing vectors, then the passing ones, each the smallest first: a candidate
        that cannot win shows it early."""
        if self._order is None:

            def size(run: _Run) -> int:
                if run.check:
                    return 0  # a few lines, no policy work to speak of
                if run._vector is not None:
                    return 40 * len(run._vector.calls)
                try:
                    return Path(run.source.path).stat().st_size
                except (AttributeError, OSError):
                    return 0

            self._order = sorted(self.runs, key=lambda run: (run.passed, size(run)))
        return self._order

    def alike(self, top: Scored) -> tuple[list[Scored], list[tuple[Scored, int, int, int]]]:
        """Combinations that differ from ``top`` in one part and answer the run as it does
        (the alternatives a porter must be told of).

        Each substitute is first screened: replayed on the vectors where it and the part it
        replaces differ on their own in answers or scores (:meth:`_Single.differs`), where a
        difference is most to be expected, stopping at the first where it answers otherwise
        than ``top``. The first :data:`CONFIRMED` that pass are replayed on every vector they
        touch (found alike, or not); the others that pass are returned unconfirmed, as
        ``(candidate, index of the part replaced, vectors screened, vectors not replayed)``,
        their figures ``top``'s."""
        if not top.exact or len(top.indices) < 2:
            return [], []
        found: list[Scored] = []
        unconfirmed: list[tuple[Scored, int, int, int]] = []
        confirmed = 0
        for part in top.indices:
            rest = [index for index in top.indices if index != part]
            own = self.singles[part]
            taken = {step for index in rest for step in self.singles[index].mutant.steps}
            # Those that answer the run alike on their own first (whatever their step), then
            # other choices for the same step, those reproducing most of what this part
            # reproduces on its own first.
            options = sorted(
                (
                    single
                    for single in self.singles
                    if single.index not in top.indices
                    and not taken & set(single.mutant.steps)
                    and own.explains <= single.kills
                    and (
                        (single.explains == own.explains and single.breaks == own.breaks)
                        or set(single.mutant.steps) == set(own.mutant.steps)
                    )
                ),
                key=lambda single: (
                    not (single.explains == own.explains and single.breaks == own.breaks),
                    -len(single.explains & own.explains),
                    single.index,
                ),
            )
            for single in options[:SUBSTITUTES]:
                indices = tuple(sorted((*rest, single.index)))
                if self._policy(indices) is None:
                    continue
                known = self._exact.get(indices)
                if known is not None:  # replayed in full already: alike or not, it is known
                    if known.explained == top.explained and known.agrees == top.agrees:
                        found.append(known)
                    continue
                differs = single.differs(own) & {run.id for run in self.runs}
                if not self._screen(indices, top, differs):
                    continue
                if confirmed < CONFIRMED:
                    confirmed += 1
                    replayed = self._replay(indices, top.total, first=differs)
                    if (
                        replayed is not None
                        and replayed.explained == top.explained
                        and replayed.agrees == top.agrees
                    ):
                        found.append(replayed)
                    continue
                touched = set().union(*(self.singles[index].touches for index in indices))
                touched &= {run.id for run in self.runs}
                unconfirmed.append(
                    (
                        Scored(indices, top.explained, top.firsts, top.agrees, False),
                        part,
                        len(differs),
                        len(touched - differs),
                    )
                )
        return self._distinct(found), unconfirmed

    # -- output ----------------------------------------------------------------------------------

    def likely(self, item: Scored) -> Likely:
        mutants = [self.singles[index].mutant for index in item.indices]
        order = {run.id: position for position, run in enumerate(self.failing)}
        return Likely(
            names=tuple(mutant.name for mutant in mutants),
            parts=tuple(part_of(mutant) for mutant in mutants),
            explains=len(item.explained),
            of=len(self.failing),
            agrees=item.agrees,
            passing=len(self.passing),
            first=len(item.firsts),
            explained=tuple(sorted(item.explained, key=order.__getitem__)),
            items=self.items,
        )

    @property
    def items(self) -> str:
        """What the run's items are, as the figures name them."""
        return "vectors and checks" if any(run.check for run in self.runs) else "vectors"

    def tells_apart(self, alike: Sequence[Scored]) -> str | None:
        """A committed vector outside the run on which candidates that answer the run alike
        answer differently, or None. Single mistakes are compared by their shipped answers;
        combinations are replayed on a few committed vectors their parts are not inert on."""

        ran = {run.id for run in self.runs}
        try:
            table = json.loads(known_kills.PATH.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        outside = sorted(
            key
            for key, item in table.items()
            if key not in ran and isinstance(item, dict) and not item.get("check")
        )
        if not outside:
            return None
        entries = []
        for vector_id in outside:
            path = resources.suite_dir() / f"{vector_id}.json"
            if path.is_file():
                entries.append(SuiteEntry(vector_id, path))
        known = known_kills.load(entries)
        groups = [[self.singles[index].mutant for index in item.indices] for item in alike]
        replays = 0
        for entry in entries:
            info = known.get(entry.id)
            if info is None:
                continue
            answers: set[str] = set()
            for parts in groups:
                touching = [m for m in parts if not info.inert(m.name)]
                if not touching:
                    answers.add("expected")
                elif len(parts) == 1 and parts[0].name in info.kills:
                    answers.add(info.kills[parts[0].name].answers)
                elif len(parts) == 1:
                    answers.add("expected")
                elif replays < 24:
                    replays += 1
                    policy = compose(parts)
                    vector = entry.load()
                    outcomes = play(policy, vector).outcomes if policy else ()
                    answers.add(
                        "expected" if outcomes == expected_outcomes(vector) else str(outcomes)
                    )
                else:
                    answers.add(f"unknown {id(parts)}")
            if len(answers) > 1 and not any(a.startswith("unknown") for a in answers):
                return entry.id
        return None
