"""What a triage found, and how it is shown: the ranked explanations (:class:`Likely`, made of
:class:`Part`), those not ruled out (:class:`Unconfirmed`), and the whole (:class:`Triage`)
with its first line, its text section and its JSON.

The first line says "likely cause" only for a candidate that reproduces every failing vector
and agrees on every passing one; when several do, it names them all and a vector that tells
them apart. Otherwise it says "closest", with both fractions ("closest found" when the search
was cut short at its budget); a candidate that reproduces no failing vector is never listed.

Invariant: values only: nothing here searches or replays; every figure shown is one the search
(:mod:`conformance.explain.triage.search`) put there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.explain.triage.groups import Group
from conformance.suite.vectors import LONG_VECTOR

SHOWN = 5


@dataclass(frozen=True)
class Part:
    """A catalogued mistake as a line shows it: what the port does and the rule it breaks."""

    name: str
    does: str
    rule: str
    parts: tuple[str, ...] = ()

    def line(self) -> str:
        made = f" (made of {', '.join(self.parts)})" if self.parts else ""
        return f"{self.name}{made}: {self.does}; breaks SPEC.md {self.rule}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "does": self.does, "rule": self.rule, "parts": list(self.parts)}


@dataclass
class Likely:
    """One ranked explanation: a catalogued mistake or a combination of mistakes on different
    steps.

    ``explains`` failing vectors (out of ``of``) are answered exactly as the port answered
    them; ``agrees`` passing vectors (out of ``passing``) pass under it too; ``first`` failing
    vectors are answered as the port did up to and including its first failing call.
    """

    names: tuple[str, ...]
    parts: tuple[Part, ...]
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
    def description(self) -> str:
        return "; and ".join(part.line() for part in self.parts)

    @property
    def total(self) -> int:
        return self.explains + self.agrees

    @property
    def exact(self) -> bool:
        """Reproduces the whole run: every failure and every pass."""
        return self.explains == self.of and self.agrees == self.passing

    @property
    def choices(self) -> tuple[str, ...]:
        """The catalogued choices it is made of (a named point's parts spelt out)."""
        out: list[str] = []
        for part in self.parts:
            out.extend(part.parts or (part.name,))
        return tuple(out)

    def label(self) -> str:
        """The names, and the choices of a named point: ``kvpress-snapkv (= a + b + c)``."""
        if self.choices != self.names:
            return f"{self.mistake} (= {' + '.join(self.choices)})"
        return self.mistake

    def evidence(self) -> str:
        """``reproduces all 61 failing vectors and agrees on the 62 passing ones``, or both
        fractions when it is not all."""
        if self.explains == self.of:
            failing = (
                "reproduces the failing vector"
                if self.of == 1
                else f"reproduces all {self.of} failing vectors"
            )
        else:
            failing = f"reproduces {self.explains} of {self.of} failing vectors"
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
            "choices": list(self.choices),
            "description": self.description,
            "parts": [part.to_json() for part in self.parts],
            "explains": self.explains,
            "of": self.of,
            "agrees": self.agrees,
            "passing": self.passing,
            "first_failure": self.first,
            "explained": list(self.explained),
        }


@dataclass
class Unconfirmed:
    """A combination that differs from the first in one part (``by`` instead of
    ``replaces``) and answers as the first on the ``checked`` vectors of the run where those two
    differ on their own in answers or scores, but was not replayed on the ``unchecked`` others it
    touches: it may answer the run alike, and is not ruled out."""

    likely: Likely
    replaces: str
    by: str
    checked: int
    unchecked: int

    def line(self, like: str = "the port") -> str:
        """``like``: what it answers as on the vectors screened (the port, when the first
        combination reproduces the whole run)."""
        if not self.checked:
            return (
                f"{self.likely.label()}: {self.by} and {self.replaces} on their own answer "
                f"alike and score alike on every vector of the run; not replayed on the "
                f"{self.unchecked} its parts change"
            )
        where = (
            f"the vector where {self.by} and {self.replaces} on their own differ in answers "
            "or scores"
            if self.checked == 1
            else f"the {self.checked} vectors where {self.by} and {self.replaces} on their own "
            "differ in answers or scores"
        )
        return (
            f"{self.likely.label()}: answers as {like} on {where}; not replayed on the "
            f"{self.unchecked} others its parts change"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "mistake": self.likely.mistake,
            "replaces": self.replaces,
            "by": self.by,
            "checked": self.checked,
            "unchecked": self.unchecked,
        }


@dataclass
class Triage:
    """The triage of one failing run: ranked explanations and the failures' groups.

    ``alike`` are the other candidates found, by replay, to answer exactly as the first does
    (the first line names them all); ``unconfirmed`` those that answer as it where they could
    most easily differ but were not replayed in full (the first line counts them); and
    ``tells_apart`` a vector outside the run on which they answer differently (or None when the
    committed suite has none).
    """

    likely: list[Likely]
    groups: list[Group]
    failing: int
    passing: int
    mistakes: int
    combinations: int
    duration: float = 0.0
    alike: list[Likely] = field(default_factory=list)
    tells_apart: str | None = None
    replayed: int = 0
    unconfirmed: list[Unconfirmed] = field(default_factory=list)
    #: The run's vectors too long to replay (more than LONG_VECTOR calls), by id.
    left_out: list[str] = field(default_factory=list)
    #: Candidates of the search left unscored once its budget was spent: replayed only until
    #: they missed a vector, they cannot reproduce the whole run but might have come closer than
    #: those shown.
    cut_short: int = 0
    #: The search's budget in replayed evict calls
    #: (:data:`conformance.explain.triage.search.SEARCH_BUDGET`), which the lines name when the
    #: search was cut short.
    budget: int = 0

    @property
    def found(self) -> bool:
        """True when the best explanation reproduces at least one failing vector exactly."""
        return bool(self.likely) and self.likely[0].explains > 0

    @property
    def confidence(self) -> str:
        """``likely`` (an exact explanation), ``closest`` (a partial one) or ``none``."""
        if not self.found:
            return "none"
        return "likely" if self.likely[0].exact else "closest"

    def headline(self) -> str:
        """The first line: the cause, the closest partial explanation, or that there is none."""
        if not self.failing and self.left_out:
            return (
                f"not triaged: the failing vectors are longer than triage replays (more than "
                f"{LONG_VECTOR:,} calls each: {_ids(self.left_out)})"
            )
        if not self.found:
            failing = (
                "the failing vector"
                if self.failing == 1
                else f"any of the {self.failing} failing vectors"
            )
            return (
                f"no catalogued mistake reproduces {failing}; the failures by where the port "
                "first diverged follow"
            )
        top = self.likely[0]
        lead = "likely cause" if top.exact else "closest"
        if not top.exact and self.cut_short:
            lead = "closest found"
        if not self.alike and not self.unconfirmed:
            return f"{lead}: {top.label()} ({top.evidence()}){self._cut_note()}"
        if self.alike:
            names = ", or ".join(item.label() for item in [top, *self.alike])
            count = len(self.alike) + 1
            found = "found to answer alike" if len(top.names) > 1 else "that answer alike"
            line = f"{lead}, one of {count} {found}: {names} ({top.evidence()})"
        else:
            line = f"{lead}: {top.label()} ({top.evidence()})"
        if self.unconfirmed:
            more = len(self.unconfirmed)
            kind = "combination" if more == 1 else "combinations"
            names = ", ".join(item.likely.label() for item in self.unconfirmed)
            line += f"; {more} more {kind} not ruled out, not replayed in full: {names}"
        # Those not replayed in full may yet answer otherwise on the run's own vectors: only
        # the vectors outside the run were looked at for one that tells them apart.
        if self.tells_apart:
            apart = f"; {self.tells_apart} tells them apart"
        elif self.unconfirmed:
            apart = "; no committed vector outside the run tells them apart"
        else:
            apart = "; no committed vector tells them apart"
        return line + apart + self._cut_note()

    def _cut_note(self) -> str:
        """What the headline of a partial explanation adds when the search was cut short."""
        if not self.cut_short or (self.likely and self.likely[0].exact):
            return ""
        return f"; {self._cut_words()}"

    def _cut_words(self) -> str:
        count = self.cut_short
        what = "combination" if count == 1 else "combinations"
        return (
            f"the search stopped at its budget of {self.budget:,} replayed evict calls: {count} "
            f"more {what} replayed only until a vector told them from the port (none "
            "reproduces the whole run; one may come closer)"
        )

    def lines(self, shown: int = SHOWN) -> list[str]:
        """The triage section of the text output (after the FAIL lines)."""
        lines = ["triage: " + self.headline()]
        if self.left_out and self.failing:
            lines.append(
                f"  not replayed, more than {LONG_VECTOR:,} calls each: {_ids(self.left_out)}"
            )
        if self.found:
            lines.extend(f"  - {part.line()}" for part in self.likely[0].parts)
            for item in self.alike:
                lines.extend(f"  - or {part.line()}" for part in item.parts)
            if self.unconfirmed:
                lines.append("  not ruled out (may answer alike):")
                like = "the port" if self.likely[0].exact else "the closest"
                lines.extend(f"    {item.line(like)}" for item in self.unconfirmed)
            if (self.alike or self.unconfirmed) and not self.tells_apart:
                accept = " ".join(f"--accept {name}" for name in self.likely[0].choices)
                lines.append(
                    "  to tell them apart: `snapkv-conformance fuzz --adapter CMD "
                    f"{accept}` looks for a scenario on which the port answers otherwise and "
                    "writes it as a vector"
                )
        others = [item for item in self.likely[1:] if item not in self.alike][: shown - 1]
        others = [item for item in others if item.explains > 0]
        if others and self.found:
            lines.append("  also close:")
            lines.extend(f"    {item.label()}: {item.evidence()}" for item in others)
        if self.cut_short and self.found and self.likely[0].exact:
            lines.append(f"  not ranked: {self._cut_words()}")
        lines.append("  failures by first divergence:")
        for group in self.groups:
            lines.append(f"    {group.label}: {len(group.vectors)} ({_ids(group.vectors)})")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "headline": self.headline(),
            "found": self.found,
            "confidence": self.confidence,
            "failing": self.failing,
            "passing": self.passing,
            "mistakes_tried": self.mistakes,
            "combinations_tried": self.combinations,
            "likely": [item.to_json() for item in self.likely if item.explains > 0],
            "alike": [item.mistake for item in self.alike],
            "unconfirmed": [item.to_json() for item in self.unconfirmed],
            "left_out": list(self.left_out),
            "cut_short": (
                {"budget": self.budget, "combinations": self.cut_short} if self.cut_short else None
            ),
            "tells_apart": self.tells_apart,
            "groups": [group.to_json() for group in self.groups],
        }


def _ids(ids: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(ids[:limit])
    return shown if len(ids) <= limit else f"{shown}, ... {len(ids) - limit} more"


def part_of(mutant: Any) -> Part:
    """Plain words for a catalogued mistake: what the port does, the rule it breaks."""
    does = (mutant.doc or mutant.name).rstrip(".").replace("``", "`")
    return Part(mutant.name, does, mutant.rule.replace("``", "`"), tuple(mutant.parts))
