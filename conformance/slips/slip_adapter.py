"""A slip: the reference adapter (:mod:`conformance.adapter.server`) with one sentence of
SPEC.md broken, as a port written from SPEC.md alone would break it.

:class:`SlipAdapter` is the reference's serve loop written as hooks, one per thing an adapter
does with a line: split the input into lines (:meth:`~SlipAdapter.lines`), tell a blank one
(:meth:`~SlipAdapter.is_blank`), read it (:meth:`~SlipAdapter.read`), answer the request
(:meth:`~SlipAdapter.handle`), write the answer (:meth:`~SlipAdapter.write`) and exit
(:meth:`~SlipAdapter.exit_status`). Unchanged, it answers every line byte for byte as the
reference adapter does. A slip is a subclass overriding one hook, registered with
:func:`slip`: its name, the id of the sentence it breaks, and where the mistake comes from in
practice (``origin``), as the policy mutants carry theirs (:mod:`conformance.mutants`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, ClassVar

from conformance import __version__
from conformance.adapter.server import Session, decode_request, encode_or_refuse
from conformance.policy.reference import PolicyFactory, new_policy
from conformance.spec.protocol import DecodeError, refusal

Request = dict[str, Any]
Answer = dict[str, Any]


class SlipAdapter:
    """The reference adapter as hooks (see the module docstring).

    ``factory`` makes the policy (by default the reference's own), ``implementation`` is
    announced in ``hello`` (by default the reference's), and so are ``capabilities`` (None:
    what the factory implements, as the reference adapter does).
    """

    capabilities: ClassVar[tuple[str, ...] | None] = None

    def __init__(
        self,
        factory: PolicyFactory | None = None,
        implementation: Mapping[str, str] | None = None,
    ) -> None:
        self.session = Session(factory or self.default_factory(), implementation, self.capabilities)

    def default_factory(self) -> PolicyFactory:
        """The policy a slip serves unless told otherwise: the reference."""
        return new_policy

    # -- reading ---------------------------------------------------------------------------

    def lines(self, stream: Iterable[bytes]) -> Iterator[bytes]:
        """The input's lines, each with its LF (a binary stream iterates at LF only)."""
        return iter(stream)

    def is_blank(self, line: bytes) -> bool:
        """A line of nothing but spaces, tabs and CRs (SPEC.md §3.1): it gets no answer."""
        return line[:1] != b"{" and not line.strip(b" \t\r\n")

    def answer_line(self, line: bytes) -> Answer:
        """The answer to a line that is not blank. By default the reference session's own
        (:meth:`conformance.adapter.server.Session.handle_line`); a slip that overrides
        :meth:`read` or :meth:`handle` has the line read by :meth:`read` and the request
        answered by :meth:`handle`."""
        cls = type(self)
        if cls.read is SlipAdapter.read and cls.handle is SlipAdapter.handle:
            return self.session.handle_line(line)
        try:
            request = self.read(line)
        except DecodeError as error:
            return refusal(None, "bad-request", f"request is not a JSON object line: {error}")
        except (ValueError, RecursionError) as error:
            return refusal(None, "bad-request", f"request is not a JSON object line: {error}")
        return self.handle(request)

    def read(self, line: bytes) -> Any:
        """The request a line holds; raise :class:`~conformance.spec.protocol.DecodeError`."""
        return decode_request(line)

    # -- answering -------------------------------------------------------------------------

    def handle(self, request: Any) -> Answer:
        """The answer to one decoded request."""
        return self.session.handle(request)

    @property
    def finished(self) -> bool:
        """Whether the session has ended (an answered ``bye``)."""
        return self.session.finished

    # -- writing ---------------------------------------------------------------------------

    def write(self, answer: Answer, out: IO[bytes]) -> None:
        """Write one answer line and flush it."""
        out.write(encode_or_refuse(answer))
        out.flush()

    def exit_status(self) -> int:
        """The status the adapter exits with at the end (after ``bye`` or at end of input)."""
        return 0

    # -- the loop --------------------------------------------------------------------------

    def serve(self, instream: Iterable[bytes], outstream: IO[bytes]) -> int:
        """Answer every line of ``instream`` on ``outstream`` until ``bye`` or end of input;
        return the exit status (the reference's :func:`conformance.adapter.server.serve`)."""
        for line in self.lines(instream):
            if self.is_blank(line):
                continue
            self.write(self.answer_line(line), outstream)
            if self.finished:
                break
        return self.exit_status()


@dataclass(frozen=True)
class Slip:
    """One catalogued slip: a way a port breaks exactly one numbered sentence of SPEC.md.

    ``sentence`` is the id of the sentence it breaks (:mod:`conformance.spec.sentences`);
    ``origin`` says in one line where the mistake comes from in practice; ``doc`` what the
    slip does; ``family`` the module it lives in. ``make(implementation=...)`` builds a fresh
    adapter.
    ``mutant`` names the policy mutant a ``policy`` family entry serves.
    """

    name: str
    sentence: str
    family: str
    origin: str
    doc: str
    make: Callable[..., SlipAdapter] = field(compare=False, repr=False)
    mutant: str | None = None

    def implementation(self) -> dict[str, str]:
        """The ``implementation`` its adapter announces: ``slip:<name>``."""
        return {"name": f"slip:{self.name}", "language": "python", "version": __version__}

    def to_json(self) -> dict[str, Any]:
        data = {
            "name": self.name,
            "sentence": self.sentence,
            "family": self.family,
            "origin": self.origin,
            "doc": self.doc,
        }
        if self.mutant is not None:
            data["mutant"] = self.mutant
        return data


_REGISTRY: dict[str, Slip] = {}


def slip(
    name: str, *, sentence: str, origin: str
) -> Callable[[type[SlipAdapter]], type[SlipAdapter]]:
    """Class decorator: register the :class:`SlipAdapter` subclass as the slip ``name``, which
    breaks SPEC.md's sentence ``sentence``; its docstring's first line says what it does."""

    def register(cls: type[SlipAdapter]) -> type[SlipAdapter]:
        if name in _REGISTRY:
            raise ValueError(f"two slips are named {name!r}")
        family = cls.__module__.rsplit(".", 1)[-1].removesuffix("_slips")
        doc = (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        _REGISTRY[name] = Slip(name, sentence, family, origin, " ".join(doc.split()), cls)
        return cls

    return register


def add(entry: Slip) -> None:
    """Register an entry made otherwise (the policy family's, from the mutant catalogue)."""
    if entry.name in _REGISTRY:
        raise ValueError(f"two slips are named {entry.name!r}")
    _REGISTRY[entry.name] = entry


def registered() -> list[Slip]:
    """Every registered slip, in registration order."""
    return list(_REGISTRY.values())


def request_fields(request: Any) -> Request | None:
    """``request`` if it is a JSON object (a dict), else None."""
    return request if isinstance(request, dict) else None
