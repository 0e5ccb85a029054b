"""The shape of a catalogue entry, its witness scenario, and what a response decides.

A mutant is a subclass of the reference :class:`~conformance.policy.reference.SnapKV` that overrides
one step with a plausible porting mistake. Each family module registers its mutants with
:func:`mutant`; :mod:`conformance.mutants` collects them into the catalogue.

Every entry carries a *witness*: a small hand-built scenario on which the reference and the
mutant answer differently (a different victim list, or a refusal against a success, or a
different error kind). The witness proves the mutant is not equivalent to the reference; the
tests replay it on both and assert the answers differ.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.policy.reference import SnapKV
from conformance.spec.text import split_description

Request = dict[str, Any]


@dataclass(frozen=True)
class Witness:
    """A scenario the reference and a mutant disagree on: ``new(params)`` then ``calls``.

    ``calls`` are requests without ``id`` (as in a vector), so a witness can be replayed through
    :class:`conformance.adapter.server.Session` exactly like a vector.
    """

    params: Mapping[str, Any]
    calls: tuple[Request, ...] = ()
    seed: int = 0

    def requests(self) -> list[Request]:
        """The full request list, ``new`` first."""
        return [{"op": "new", "params": dict(self.params), "seed": self.seed}, *self.calls]


def step(pos: Any, attn: Any = None) -> Request:
    """A ``step`` request (``attn`` defaults to a null, inert vector)."""
    return {"op": "step", "pos": pos, "attn": attn}


def steps(first: int, count: int) -> tuple[Request, ...]:
    """``count`` null steps admitting ``first``, ``first + 1``, ...: positions with no history."""
    return tuple(step(first + offset) for offset in range(count))


EVICT: Request = {"op": "evict"}


def params(budget: int, recent: int, obs: int, kernel: int) -> dict[str, int]:
    """Construction parameters in wire form."""
    return {"budget": budget, "recentWindow": recent, "obsWindow": obs, "poolKernel": kernel}


EPS53 = 2.0**-53  # half an ulp of 1.0 in float64: 1.0 + EPS53 rounds (to even) back to 1.0
FILLER = 4.0


def ring_trap(obs: int, writes: Sequence[Sequence[float]], lead: bool = False) -> Witness:
    """A scenario whose subjects 0, 1, ... receive ``writes[i][t]`` at weighted step ``t``.

    With ``lead``, subject 0 is admitted by a step whose attention is the empty list (nothing
    is kept yet), which moves the cursor to 1 before the first weighted write. Every weighted
    step admits one filler position, which receives :data:`FILLER` at every later step; the
    newest filler is protected (``recentWindow 1``) and the budget forces exactly one
    eviction, so the victim is whichever subject ranks lower.
    """
    subjects = len(writes)
    length = max(len(log) for log in writes)
    calls: list[dict[str, Any]] = [step(0, [])] if lead else []
    calls += [step(pos) for pos in range(len(calls), subjects)]
    for t in range(length):
        fillers = [FILLER] * t
        subject_weights = [log[t] if t < len(log) else 0.0 for log in writes]
        calls.append(step(subjects + t, subject_weights + fillers))
    kept = subjects + length
    return Witness(params(kept - 1, 1, obs, 1), (*calls, EVICT))


@dataclass(frozen=True)
class Mutant:
    """One catalogued porting mistake.

    ``rule`` quotes the SPEC.md rule the mutant breaks (SPEC.md §2 is the policy, §3 the
    protocol); ``origin`` says in one line where the mistake comes from in practice;
    ``keywords`` are phrases a vector description uses when it names this mistake (matched
    case-insensitively, as is the mutant's own name; a vector guards against the mutant when
    it kills it *and* its description contains one of them).
    """

    name: str
    family: str
    rule: str
    origin: str
    keywords: tuple[str, ...]
    policy: type[SnapKV]
    witness: Witness
    doc: str = field(default="", compare=False)

    def factory(self, params: Mapping[str, Any], seed: int) -> SnapKV:
        """A policy factory for :class:`conformance.adapter.server.Session`."""
        return self.policy(params, seed)

    def implementation(self) -> dict[str, str]:
        """The ``implementation`` its adapter announces in the ``hello`` answer."""
        from conformance import __version__

        return {"name": f"mutant:{self.name}", "language": "python", "version": __version__}

    def naming_rank(self, description: str) -> int | None:
        """How directly ``description`` names this mistake: 0 when its mistake part contains
        the mutant's name, ``1 + i`` for keyword ``i`` (keywords go most specific first), None
        when it names none of them.

        The mistake part is the text after ``Catches:`` when there is one (the generator writes
        ``"<what it pins> Catches: <the mistakes it catches>"``), else the whole description:
        a vector that merely *contains* gaps, say, does not name "gaps refused" as its catch.
        """
        catches = split_description(description)[1]
        text = (catches if catches is not None else description).lower()
        for rank, keyword in enumerate((self.name, *self.keywords)):
            if keyword.lower() in text:
                return rank
        return None

    def names_mistake(self, description: str) -> bool:
        """True when ``description`` names this mistake (see :meth:`naming_rank`)."""
        return self.naming_rank(description) is not None


_REGISTRY: list[Mutant] = []


def mutant(
    name: str,
    *,
    rule: str,
    origin: str,
    keywords: Sequence[str],
    witness: Witness,
) -> Callable[[type[SnapKV]], type[SnapKV]]:
    """Class decorator: register ``cls`` as the mutant ``name`` of the calling family module."""

    def register(cls: type[SnapKV]) -> type[SnapKV]:
        family = cls.__module__.rsplit(".", 1)[-1]
        doc = " ".join((cls.__doc__ or "").split())
        _REGISTRY.append(Mutant(name, family, rule, origin, tuple(keywords), cls, witness, doc))
        return cls

    return register


def registered() -> tuple[Mutant, ...]:
    """Every mutant registered so far, in registration order."""
    return tuple(_REGISTRY)


def outcome(response: Mapping[str, Any]) -> tuple:
    """What a response decides, without the free-form message: victims, an error kind, or ok."""
    if not response.get("ok"):
        return ("error", response.get("error", {}).get("kind"))
    if "victims" in response:
        return ("victims", tuple(response["victims"]))
    return ("ok",)
