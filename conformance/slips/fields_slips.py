"""Slips in a request's members (SPEC.md §3.2, §3.4): which members are its own, which are
required, what an op and a hello's protocol must be, and in what order a request's faults are
judged.
"""

from __future__ import annotations

from typing import Any

from conformance.policy.reference import (
    PARAM_NAMES,
    Params,
    PolicyError,
    narrow_attention,
    parse_position,
)
from conformance.slips.slip_adapter import Answer, SlipAdapter, slip
from conformance.spec.protocol import CORE_OPS, OPS, refusal

#: Each op's own fields beyond id and op (SPEC.md §3.2).
OWN = {"hello": ("protocol",), "new": ("params", "seed"), "step": ("pos", "attn")}


def _request(request: Any) -> dict[str, Any] | None:
    return request if isinstance(request, dict) and type(request.get("id")) is int else None


@slip(
    "unknown-fields-refused",
    sentence="S3.4-unknown-fields",
    origin="closed request types: serde's deny_unknown_fields, a strict JSON Schema, a "
    "validator listing the fields it knows",
)
class UnknownFieldsRefused(SlipAdapter):
    """A request holding a member beyond its own fields is refused with bad-request."""

    def handle(self, request: Any) -> Answer:
        known = _request(request)
        op = known.get("op") if known else None
        if known is not None and op in OPS:
            extra = set(known) - {"id", "op", *OWN.get(op, ())}
            if extra:
                return refusal(known["id"], "bad-request", f"unknown field(s) {sorted(extra)}")
        return super().handle(request)


@slip(
    "other-ops-fields-judged",
    sentence="S3.4-unknown-fields",
    origin="one request type for every op, whose fields are all validated when present (a "
    "pos on an evict judged as a position)",
)
class OtherOpsFieldsJudged(SlipAdapter):
    """A ``pos`` or ``params`` present on any request is judged, whatever the op."""

    def handle(self, request: Any) -> Answer:
        known = _request(request)
        if known is not None and known.get("op") in OPS:
            try:
                if "pos" in known and known["op"] != "step":
                    parse_position(known["pos"], None)
                if "params" in known and known["op"] != "new":
                    Params.parse(known["params"])
            except PolicyError as error:
                return refusal(known["id"], error.kind, error.message)
        return super().handle(request)


@slip(
    "member-names-any-case",
    sentence="S3.4-unknown-fields",
    origin="Go's encoding/json decoding a request into a struct, which matches member names "
    "case-insensitively (ID and Pos read as id and pos)",
)
class MemberNamesAnyCase(SlipAdapter):
    """A request's member names are matched case-insensitively: ``ID`` is ``id``."""

    def handle(self, request: Any) -> Answer:
        if isinstance(request, dict):
            own = {"id", "op", "protocol", "params", "seed", "pos", "attn"}
            folded: dict[str, Any] = {}
            for key, value in request.items():
                name = key.lower() if key.lower() in own else key
                if name != key and name in request:
                    continue  # the exact spelling, when present, wins (as Go's does)
                folded[name] = value
            request = folded
        return super().handle(request)


@slip(
    "ops-any-case",
    sentence="S3.4-ops",
    origin="an op looked up case-insensitively or trimmed (a lower-cased switch, "
    "strings.EqualFold)",
)
class OpsAnyCase(SlipAdapter):
    """An op is matched case-insensitively and without surrounding spaces."""

    def handle(self, request: Any) -> Answer:
        if isinstance(request, dict) and isinstance(request.get("op"), str):
            request = {**request, "op": request["op"].strip().lower()}
        return super().handle(request)


@slip(
    "unknown-op-answered-ok",
    sentence="S3.4-ops",
    origin="a dispatch whose default branch answers ok (or does nothing) for an op it does "
    "not know",
)
class UnknownOpAnsweredOk(SlipAdapter):
    """An op that is not one of the six is answered ``ok``."""

    def handle(self, request: Any) -> Answer:
        known = _request(request)
        if known is not None and known.get("op") not in OPS:
            return {"id": known["id"], "ok": True}
        return super().handle(request)


@slip(
    "null-as-missing",
    sentence="S3.4-required",
    origin="a present null taken as a missing field (Go's nil, Python's dict.get, "
    "Option<T> in serde) and refused as bad-request",
)
class NullAsMissing(SlipAdapter):
    """A required field whose value is ``null`` counts as missing (bad-request)."""

    def handle(self, request: Any) -> Answer:
        known = _request(request)
        if known is not None:
            for name in OWN.get(str(known.get("op")), ()):
                if name in known and known[name] is None and name != "attn":
                    return refusal(known["id"], "bad-request", f"missing {name}")
        return super().handle(request)


@slip(
    "missing-fields-defaulted",
    sentence="S3.4-required",
    origin="zero values for missing fields (Go structs, serde's #[serde(default)], "
    "dict.get with a default): a missing seed is 0, a missing attn null, a missing protocol 1",
)
class MissingFieldsDefaulted(SlipAdapter):
    """A missing ``seed``, ``attn`` or ``protocol`` takes a default (0, null, 1)."""

    def handle(self, request: Any) -> Answer:
        known = _request(request)
        if known is not None:
            defaults: dict[str, dict[str, Any]] = {
                "new": {"seed": 0},
                "step": {"attn": None},
                "hello": {"protocol": 1},
            }
            request = {**defaults.get(str(known.get("op")), {}), **known}
        return super().handle(request)


@slip(
    "params-unwrapped",
    sentence="S3.4-required",
    origin="a new request decoded into a struct that embeds the parameters (Go's embedded "
    "struct, serde's #[serde(flatten)]), so they are read from the request's top level",
)
class ParamsUnwrapped(SlipAdapter):
    """A new without ``params`` takes its parameters from the request's own members."""

    def handle(self, request: Any) -> Answer:
        known = _request(request)
        if known is not None and known.get("op") == "new" and "params" not in known:
            flat = {name: known[name] for name in PARAM_NAMES if name in known}
            if flat:
                request = {**known, "params": flat}
        return super().handle(request)


@slip(
    "hello-protocol-loose",
    sentence="S3.2-hello-protocol",
    origin="a protocol compared with == in a language where true == 1 and 1.0 == 1 "
    "(Python, C, JavaScript)",
)
class HelloProtocolLoose(SlipAdapter):
    """Any protocol equal to 1 by ``==`` (``true``, ``1.0``) is accepted."""

    def handle(self, request: Any) -> Answer:
        if isinstance(request, dict) and request.get("op") == "hello":
            protocol = request.get("protocol")
            if not isinstance(protocol, str) and protocol == 1:
                request = {**request, "protocol": 1}
        return super().handle(request)


# -- the order of judgement ---------------------------------------------------------------------


@slip(
    "unsupported-before-id",
    sentence="S3.4-step1",
    origin="an adapter that looks the op up in its table of implemented ops first and reads "
    "the id afterwards",
)
class UnsupportedBeforeId(SlipAdapter):
    """An op the adapter does not implement is answered ``unsupported`` (id null) before the
    id is judged. (It does not implement ``scores``.)"""

    capabilities = ()

    def handle(self, request: Any) -> Answer:
        if isinstance(request, dict) and request.get("op") in OPS and request["op"] not in CORE_OPS:
            request_id = request.get("id")
            return refusal(
                request_id if type(request_id) is int else None, "unsupported", "no scores"
            )
        return super().handle(request)


@slip(
    "values-before-presence",
    sentence="S3.4-presence-first",
    origin="each field validated as it is read, so a bad first field is reported before a "
    "missing second one",
)
class ValuesBeforePresence(SlipAdapter):
    """A new's params and a step's pos are judged before the other required field's
    presence."""

    def handle(self, request: Any) -> Answer:
        known = _request(request)
        policy = self.session.policy
        try:
            if known is not None and known.get("op") == "new" and "params" in known:
                Params.parse(known["params"])
            step = known is not None and known.get("op") == "step" and "pos" in known
            if step and known is not None and policy is not None:
                parse_position(known["pos"], policy.last_admitted)
        except PolicyError as error:
            return refusal(known["id"] if known else None, error.kind, error.message)
        return super().handle(request)


@slip(
    "position-before-policy",
    sentence="S3.4-policy-first",
    origin="a step's fields validated by the request parser, before the handler looks for "
    "the policy",
)
class PositionBeforePolicy(SlipAdapter):
    """A step's position is judged (as a first position) before whether there is a policy."""

    def handle(self, request: Any) -> Answer:
        known = _request(request)
        if (
            known is not None
            and known.get("op") == "step"
            and {"pos", "attn"} <= set(known)
            and self.session.policy is None
        ):
            try:
                parse_position(known["pos"], None)
            except PolicyError as error:
                return refusal(known["id"], error.kind, error.message)
        return super().handle(request)


@slip(
    "attention-before-position",
    sentence="S3.4-position-first",
    origin="a step that checks its attention list first (its length is the cheap check) and "
    "its position after",
)
class AttentionBeforePosition(SlipAdapter):
    """A step's attention is judged before its position."""

    def handle(self, request: Any) -> Answer:
        known = _request(request)
        policy = self.session.policy
        if (
            known is not None
            and known.get("op") == "step"
            and {"pos", "attn"} <= set(known)
            and policy is not None
        ):
            try:
                narrow_attention(known["attn"], len(policy.kept))
            except PolicyError as error:
                return refusal(known["id"], error.kind, error.message)
        return super().handle(request)
