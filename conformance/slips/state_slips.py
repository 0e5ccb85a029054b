"""Slips in the session's state (SPEC.md §2.5, §3.2, §3.3): what ``hello``, ``new``, ``scores``
and a refused line leave behind, and what ``scores`` and ``evict`` report.

These slips reach into the reference policy's state (``kept``, ``slot``, ``rings``) the way a
port's own state would go wrong; the policy itself is the reference's.
"""

from __future__ import annotations

import contextlib
from typing import Any

from conformance.policy.reference import Params, PolicyError, SnapKV
from conformance.slips.slip_adapter import Answer, SlipAdapter, slip
from conformance.spec.protocol import refusal


def _op(request: Any) -> Any:
    return request.get("op") if isinstance(request, dict) else None


class DropsPolicyAfter(SlipAdapter):
    """Drops the policy after answering an ``OP`` request (only a refused one, with
    ``REFUSED_ONLY``)."""

    OP = ""
    REFUSED_ONLY = False

    def handle(self, request: Any) -> Answer:
        answer = super().handle(request)
        if _op(request) == self.OP and (answer.get("ok") is False or not self.REFUSED_ONLY):
            self.session.policy = None
        return answer


def _swap_in(session: Any, request: dict[str, Any]) -> None:
    """Replace ``session``'s policy with one made from the refused ``request``'s params (seed
    0), as a port that builds the policy before it validates the rest does; params it cannot
    build from change nothing."""
    with contextlib.suppress(PolicyError):
        session.policy = session.factory(Params.parse(request["params"]).as_dict(), 0)


@slip(
    "hello-resets-cursor",
    sentence="S3.2-hello-state",
    origin="a hello handler that reinitialises the session's buffers (the ring cursor "
    "among them) as if the session began again",
)
class HelloResetsCursor(SlipAdapter):
    """An accepted ``hello`` puts the ring cursor back on slot 0."""

    def handle(self, request: Any) -> Answer:
        answer = super().handle(request)
        policy = self.session.policy
        if _op(request) == "hello" and answer.get("ok") and isinstance(policy, SnapKV):
            policy.slot = 0
        return answer


@slip(
    "hello-drops-policy",
    sentence="S3.2-hello-state",
    origin="hello treated as the start of a session, dropping whatever came before it",
)
class HelloDropsPolicy(DropsPolicyAfter):
    """Any ``hello``, accepted or refused, drops the policy."""

    OP = "hello"


@slip(
    "refused-hello-drops-policy",
    sentence="S3.2-hello-state",
    origin="a handshake failure that resets the session (clears the policy) before answering "
    "unsupported",
)
class RefusedHelloDropsPolicy(DropsPolicyAfter):
    """A refused ``hello`` drops the policy."""

    OP, REFUSED_ONLY = "hello", True


@slip(
    "hello-required-first",
    sentence="S3.2-no-hello",
    origin="a handshake state machine that refuses every request until hello has been answered",
)
class HelloRequiredFirst(SlipAdapter):
    """Every request before the first ``hello`` is refused with bad-request."""

    greeted = False

    def handle(self, request: Any) -> Answer:
        if _op(request) == "hello":
            self.greeted = True
        elif not self.greeted and isinstance(request, dict):
            request_id = request.get("id")
            return refusal(
                request_id if type(request_id) is int else None, "bad-request", "hello first"
            )
        return super().handle(request)


@slip(
    "bad-seed-new-replaces-policy",
    sentence="S3.2-new-refused",
    origin="a new that builds the policy first and validates the seed afterwards, assigning "
    "the new policy before it refuses",
)
class BadSeedNewReplacesPolicy(SlipAdapter):
    """A new refused for its seed still replaces the policy with one made from its params."""

    def handle(self, request: Any) -> Answer:
        answer = super().handle(request)
        if _op(request) == "new" and answer.get("ok") is False and "params" in request:
            _swap_in(self.session, request)
        return answer


@slip(
    "missing-seed-new-replaces-policy",
    sentence="S3.2-new-refused",
    origin="a new whose missing seed is reported after the policy was already swapped in",
)
class MissingSeedNewReplacesPolicy(SlipAdapter):
    """A new refused as bad-request for a missing seed still replaces the policy."""

    def handle(self, request: Any) -> Answer:
        answer = super().handle(request)
        if (
            _op(request) == "new"
            and answer.get("ok") is False
            and "params" in request
            and "seed" not in request
        ):
            _swap_in(self.session, request)
        return answer


@slip(
    "refused-new-drops-policy",
    sentence="S3.2-new-refused",
    origin="a new handler that releases the old policy first (policy = None, or a move out of "
    "it) and only then validates the request, so a refused new leaves no policy",
)
class RefusedNewDropsPolicy(DropsPolicyAfter):
    """A refused ``new`` drops the earlier policy."""

    OP, REFUSED_ONLY = "new", True


@slip(
    "bad-line-resets-session",
    sentence="S3.3-unchanged",
    origin="an adapter that recovers from a line it cannot parse by resetting its session "
    "(a caught exception that re-creates the state)",
)
class BadLineResetsSession(SlipAdapter):
    """A line that cannot be parsed drops the policy."""

    def answer_line(self, line: bytes) -> Answer:
        answer = super().answer_line(line)
        if answer.get("ok") is False and answer.get("id") is None:
            self.session.policy = None
        return answer


@slip(
    "scores-moves-cursor",
    sentence="S2.5-unchanged",
    origin="scores computed by a routine shared with the step that also advances the ring cursor",
)
class ScoresMovesCursor(SlipAdapter):
    """An answered ``scores`` moves the ring cursor one slot on."""

    def handle(self, request: Any) -> Answer:
        answer = super().handle(request)
        policy = self.session.policy
        if _op(request) == "scores" and answer.get("ok") and isinstance(policy, SnapKV):
            policy.slot = (policy.slot + 1) % policy.params.obsWindow
        return answer


@slip(
    "scores-sums-and-pooled-swapped",
    sentence="S2.5-values",
    origin="two lists of the same type and length passed in the wrong order to the answer's writer",
)
class ScoresSumsAndPooledSwapped(SlipAdapter):
    """``scores`` reports the pooled scores as ``sums`` and the sums as ``pooled``."""

    def handle(self, request: Any) -> Answer:
        answer = super().handle(request)
        if _op(request) == "scores" and answer.get("ok"):
            answer["sums"], answer["pooled"] = answer["pooled"], answer["sums"]
        return answer


@slip(
    "scores-sums-are-pooled",
    sentence="S2.5-values",
    origin="one score list computed (the pooled one the ranking uses) and written under both names",
)
class ScoresSumsArePooled(SlipAdapter):
    """``scores`` reports the pooled scores as ``sums`` too."""

    def handle(self, request: Any) -> Answer:
        answer = super().handle(request)
        if _op(request) == "scores" and answer.get("ok"):
            answer["sums"] = list(answer["pooled"])
        return answer


@slip(
    "scores-candidates-only",
    sentence="S2.5-shape",
    origin="scores computed over the eviction candidates only, leaving out the protected "
    "recent entries",
)
class ScoresCandidatesOnly(SlipAdapter):
    """``scores`` leaves out the ``recentWindow`` highest kept positions."""

    def handle(self, request: Any) -> Answer:
        answer = super().handle(request)
        policy = self.session.policy
        if _op(request) == "scores" and answer.get("ok") and policy is not None:
            keep = max(0, len(answer["positions"]) - policy.params.recentWindow)
            for name in ("positions", "sums", "pooled"):
                answer[name] = answer[name][:keep]
        return answer


@slip(
    "scores-unannounced",
    sentence="S3.3-unannounced",
    origin="an adapter that implements scores but leaves it out of its capabilities (or "
    "announces none) and answers it anyway",
)
class ScoresUnannounced(SlipAdapter):
    """``scores`` is answered although ``hello`` announces no capability."""

    def handle(self, request: Any) -> Answer:
        answer = super().handle(request)
        if _op(request) == "hello" and answer.get("ok"):
            answer["capabilities"] = []
        return answer


@slip(
    "victims-null-when-empty",
    sentence="S2.4-victims",
    origin="an empty victim list written as null (a nil slice in Go, None in Python, a null "
    "pointer in C)",
)
class VictimsNullWhenEmpty(SlipAdapter):
    """An evict with nothing to evict answers ``"victims": null``."""

    def handle(self, request: Any) -> Answer:
        answer = super().handle(request)
        if answer.get("victims") == []:
            answer["victims"] = None
        return answer
