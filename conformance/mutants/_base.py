"""The shape of a catalogue entry, its witness scenario, and what a response decides.

A mutant is a subclass of :class:`~conformance.mutants.model.Model` (the reference policy
written as one group of hooks per step) that overrides the hooks of one step with a plausible
porting mistake: a *choice* for that step. A few mutants are *named points*: real-world code
that makes several choices at once, built from the choices' classes by multiple inheritance
(``parts``). Each family module registers its mutants with :func:`mutant`;
:mod:`conformance.mutants` collects them into the catalogue.

A mutant's ``steps`` are derived from the hooks its classes override (see
:data:`~conformance.mutants.model.STEPS`): two mutants with no step in common compose.

An entry may carry a *witness*: a small hand-built scenario on which the reference and the
mutant answer differently (a different victim list, or a refusal against a success, or a
different error kind). Every mutant is killed by a committed vector that names it (the kill
matrix checks it); a witness is the smallest such scenario, and the trap vectors are made of
witnesses (:mod:`conformance.tools.generate.builders.mutant_traps`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance import __version__
from conformance.mutants.model import HOOK_STEP, STEPS, Model
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
    """One catalogued porting mistake: a choice for one step, or a named point made of several.

    ``rule`` quotes the SPEC.md rule the mutant breaks (SPEC.md §2 is the policy, §3 the
    protocol); ``origin`` says in one line where the mistake comes from in practice;
    ``keywords`` are phrases a vector description uses when it names this mistake (matched
    case-insensitively, as is the mutant's own name; a vector guards against the mutant when
    it kills it *and* its description contains one of them). ``steps`` are the steps of
    :data:`~conformance.mutants.model.STEPS` it changes; ``parts`` the catalogued choices a
    named point is made of (empty for a choice).
    """

    name: str
    family: str
    rule: str
    origin: str
    keywords: tuple[str, ...]
    policy: type[Model]
    witness: Witness | None
    doc: str = field(default="", compare=False)
    steps: tuple[str, ...] = ()
    parts: tuple[str, ...] = ()

    @property
    def factory(self) -> type[Model]:
        """A policy factory for :class:`conformance.adapter.server.Session`: the class itself (its
        ``construct`` makes ``new``'s policy, the seed and the policy it replaces included)."""
        return self.policy

    def implementation(self) -> dict[str, str]:
        """The ``implementation`` its adapter announces in the ``hello`` answer."""

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
_BY_CLASS: dict[type, Mutant] = {}


def overridden(policy: type) -> set[str]:
    """The hooks of :class:`Model` that ``policy``'s classes below it define."""
    return {
        name
        for klass in policy.__mro__
        if klass is not Model and issubclass(klass, Model)
        for name in vars(klass)
        if name in HOOK_STEP
    }


def steps_of(policy: type) -> tuple[str, ...]:
    """The steps whose hooks ``policy`` overrides, in :data:`STEPS` order."""
    changed = {HOOK_STEP[hook] for hook in overridden(policy)}
    return tuple(step.name for step in STEPS if step.name in changed)


def mutant(
    name: str,
    *,
    rule: str,
    origin: str,
    keywords: Sequence[str],
    witness: Witness | None = None,
) -> Callable[[type[Model]], type[Model]]:
    """Class decorator: register ``cls`` as the mutant ``name`` of the calling family module.

    Its steps are derived from the hooks it overrides; a class whose bases are registered
    mutants is a named point, and those are its parts."""

    def register(cls: type[Model]) -> type[Model]:
        family = cls.__module__.rsplit(".", 1)[-1]
        doc = " ".join((cls.__doc__ or "").split())
        parts = tuple(
            _BY_CLASS[klass].name
            for klass in cls.__mro__[1:]
            if klass in _BY_CLASS and not _BY_CLASS[klass].parts
        )
        entry = Mutant(
            name,
            family,
            rule,
            origin,
            tuple(keywords),
            cls,
            witness,
            doc,
            steps_of(cls),
            parts,
        )
        _REGISTRY.append(entry)
        _BY_CLASS[cls] = entry
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
