"""Adapter protocol v1 (SPEC.md §3) in one place: version, ops, error kinds, the strict JSON
codec, typed requests, and the shape rules of requests and answers.

Everything that reads or writes protocol or vector JSON goes through :func:`decode` and
:func:`encode`: the reference server (:mod:`conformance.adapter.server`), the driver reading
answers, and the vector loader. One policy for all of them:

- UTF-8 only, strictly (a byte-order mark or an invalid byte is a decode error);
- no ``NaN``/``Infinity`` tokens;
- repeated member names: the last counts on the wire (SPEC.md §3.1), refused in vector files;
- nesting deeper than :data:`MAX_DEPTH` is a decode error, so nothing downstream (a printer, an
  encoder) ever meets a value too deep to recurse through;
- a :class:`NumberText` (a number kept as the text it was written as: a weight such as
  ``1.0000000596046448`` that is not a float32) is encoded as that text, never re-encoded from
  its value, and :func:`decoded` turns it into what a JSON reader makes of the text.

The typed layer (:func:`parse_request`, :func:`answer_problem`) states the shape rules that
decide ``bad-request`` and a protocol error; the shipped schemas under ``schema/protocol/``
state the same shapes (and the value ranges too), and a test holds the two together.
:func:`validate_message` checks any message against those schemas.
"""

from __future__ import annotations

import enum
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NoReturn

from conformance.spec.schemas import REQUEST_SCHEMA, RESPONSE_SCHEMA, json_pointer, schema_validator
from conformance.spec.text import KEEP_NAME, KEEP_NAMES, KEEP_TEXT, capped, json_text

PROTOCOL_VERSION = 1
#: Every op of protocol v1, in SPEC.md §3.2's order.
OPS = ("hello", "new", "step", "evict", "scores", "bye")
#: The ops every adapter implements; the others are sent only when announced (SPEC.md §3.5).
CORE_OPS = ("hello", "new", "step", "evict", "bye")
#: The optional ops (capabilities) protocol v1 knows.
CAPABILITIES = ("scores",)
#: The deepest nesting of arrays and objects the codec reads. Protocol messages and vectors
#: nest at most 5 levels; this leaves room for any extension without reaching the depth where
#: Python's recursive parser, printers and encoders give up.
MAX_DEPTH = 64


class ErrorKind(enum.StrEnum):
    """The refusal kinds of protocol v1 (SPEC.md §3.3). Nothing may be renamed."""

    INVALID_PARAMS = "invalid-params"
    INVALID_ATTENTION = "invalid-attention"
    INVALID_POSITION = "invalid-position"
    NO_POLICY = "no-policy"
    BAD_REQUEST = "bad-request"
    UNSUPPORTED = "unsupported"


#: The error kinds as plain strings, in SPEC.md §3.3's order.
ERROR_KINDS: tuple[str, ...] = tuple(kind.value for kind in ErrorKind)


# -- the codec --------------------------------------------------------------------------------


class DecodeError(ValueError):
    """Text that is not one strict JSON value within the codec's limits."""


def refuse_constant(name: str) -> NoReturn:
    """The ``parse_constant`` hook: ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON."""
    raise DecodeError(f"{name} is not valid JSON")


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DecodeError(f"duplicate key {key!r}")
        result[key] = value
    return result


_LAST_WINS = json.JSONDecoder(parse_constant=refuse_constant)
_NO_DUPLICATES = json.JSONDecoder(
    parse_constant=refuse_constant, object_pairs_hook=_refuse_duplicates
)
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
_UNICODE_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False, ensure_ascii=False)

Duplicates = Literal["last", "refuse"]


def decode(
    data: bytes | str,
    *,
    duplicates: Duplicates = "last",
    parse_float: Any = None,
    parse_int: Any = None,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """Parse one strict JSON text (see the module docstring); raise :class:`DecodeError`.

    Bytes are decoded as UTF-8 here: ``json.loads`` would guess UTF-16 or UTF-32 from the first
    bytes. ``parse_float`` replaces ``float`` for float literals (the validator keeps their text).
    ``parse_int`` likewise for integer literals. ``max_depth`` lowers the nesting limit for a
    text that will sit inside another (a vector file's call line sits two levels down).
    """
    if isinstance(data, bytes | bytearray | memoryview):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as error:
            raise DecodeError(f"not UTF-8 ({error.reason} at byte {error.start})") from None
    else:
        text = data
    if parse_float is not None or parse_int is not None or duplicates != "last":
        decoder = json.JSONDecoder(
            parse_constant=refuse_constant,
            parse_float=parse_float,
            parse_int=parse_int,
            object_pairs_hook=_refuse_duplicates if duplicates == "refuse" else None,
        )
    else:
        decoder = _LAST_WINS
    try:
        value = decoder.decode(text)
    except RecursionError:
        raise DecodeError(f"nested more than {MAX_DEPTH} levels deep") from None
    except DecodeError:
        raise
    except ValueError as error:  # json.JSONDecodeError, or an integer over Python's digit limit
        if "integer string conversion" in str(error):
            raise DecodeError(
                f"an integer literal of more than {sys.get_int_max_str_digits()} digits "
                "(SPEC.md §3.1: beyond the kit's limits)"
            ) from None
        raise DecodeError(str(error)) from None
    # Fewer brackets than the limit cannot nest deeper than it: the common case costs two scans.
    if text.count("[") + text.count("{") > max_depth and nesting_depth(value) > max_depth:
        raise DecodeError(f"nested more than {MAX_DEPTH} levels deep")
    return value


def decode_strict_file(
    text: bytes | str,
    *,
    parse_float: Any = None,
    parse_int: Any = None,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """A vector file's JSON: :func:`decode` with repeated member names refused."""
    return decode(
        text,
        duplicates="refuse",
        parse_float=parse_float,
        parse_int=parse_int,
        max_depth=max_depth,
    )


def nesting_depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (a scalar is 0), without recursion."""
    deepest = 0
    stack = [(value, 1)] if isinstance(value, list | dict) else []
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > MAX_DEPTH:
                break
        items = node.values() if isinstance(node, dict) else node
        stack.extend((item, depth + 1) for item in items if isinstance(item, list | dict))
    return deepest


#: A JSON number (RFC 8259 §6), and an integer literal among them.
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")


class NumberText(float):
    """A JSON number kept as the text it was written as (``"1.0000000596046448"``, ``"-0"``,
    ``"18446744073709551617"``, ``"7.0064923216240854e-46"``).

    As a float it is the nearest float64 to the text (``float(text)`` rounds correctly): the
    first of the two roundings SPEC.md §2.3 applies to a weight, so its value is what every
    conforming reader computes first. Encoding writes :attr:`text` itself, so a weight chosen
    for how its decimal rounds reaches an adapter as written. Only requests built in memory
    (builders, the fuzzer) hold one; :func:`decoded` gives what a JSON reader makes of them.
    """

    text: str

    def __new__(cls, text: str) -> NumberText:
        if not isinstance(text, str) or _NUMBER.fullmatch(text) is None:
            raise ValueError(f"not a JSON number: {text!r}")
        value = super().__new__(cls, text)
        value.text = text
        return value

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return NumberText, (self.text,)

    def __repr__(self) -> str:
        return f"NumberText({self.text!r})"

    def decoded(self) -> int | float:
        """The value a JSON reader gives for the text: an int for an integer literal (Python
        keeps every digit), else the nearest float64."""
        return int(self.text) if _INTEGER.fullmatch(self.text) else float(self)


def holds_text(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` holds a :class:`NumberText` in a field, or directly inside a list or
    object that is a field's value (a step's ``attn``, ``params``): where requests hold them."""
    for value in message.values():
        kind = type(value)
        if kind is NumberText:
            return True
        if kind is list and NumberText in map(type, value):
            return True
        if kind is dict and NumberText in map(type, value.values()):
            return True
    return False


def decoded(message: Mapping[str, Any]) -> Mapping[str, Any]:
    """``message`` as an adapter reads it once it is encoded: every :class:`NumberText` where
    :func:`holds_text` looks replaced by its decoded value (the message itself if it holds
    none). Requests reach a policy in process through this, so no policy meets a NumberText."""
    if not holds_text(message):
        return message

    def plain(value: Any) -> Any:
        kind = type(value)
        if kind is NumberText:
            return value.decoded()
        if kind is list:
            return [item.decoded() if type(item) is NumberText else item for item in value]
        if kind is dict:
            return {
                key: item.decoded() if type(item) is NumberText else item
                for key, item in value.items()
            }
        return value

    return {key: plain(value) for key, value in message.items()}


def dumps(value: Any, *, ensure_ascii: bool = True) -> str:
    """Compact strict JSON text of ``value``, every :class:`NumberText` written as its text."""
    encoder = _ENCODER if ensure_ascii else _UNICODE_ENCODER
    if type(value) is dict and not holds_text(value):
        return encoder.encode(value)
    return _text_of(value, encoder)


def _text_of(value: Any, encoder: json.JSONEncoder) -> str:
    kind = type(value)
    if kind is NumberText:
        return str(value.text)
    if kind is dict:
        members = (
            f"{encoder.encode(key)}:{_text_of(item, encoder)}" for key, item in value.items()
        )
        return "{" + ",".join(members) + "}"
    if kind is list or kind is tuple:
        if NumberText not in map(type, value) and not any(
            isinstance(item, list | tuple | dict) for item in value
        ):
            return encoder.encode(value)
        return "[" + ",".join(_text_of(item, encoder) for item in value) + "]"
    return encoder.encode(value)


def encode(message: Mapping[str, Any]) -> bytes:
    """One message line: compact JSON, shortest round-trip floats (a :class:`NumberText` as its
    text), a trailing newline."""
    text = _text_of(message, _ENCODER) if holds_text(message) else _ENCODER.encode(message)
    return text.encode() + b"\n"


def encode_body(request: Mapping[str, Any]) -> bytes:
    """A request line without its opening brace and ``id``: ``"op":...}\\n``, or ``}\\n``.

    The sender writes ``{"id":N,`` (or ``{"id":N``) before it. Non-ASCII text is escaped, so a
    lone surrogate in a refused field is sent as JSON says rather than failing to encode.
    """
    fields = {key: value for key, value in request.items() if key != "id"}
    return encode(fields)[1:] if fields else b"}\n"


# -- typed requests ---------------------------------------------------------------------------


class BadRequest(Exception):
    """A request refused at SPEC.md §3.4 steps 1 and 2: ``bad-request``, or ``unsupported`` for
    an op the adapter does not implement. ``id`` is the request's id if it had an integer one."""

    def __init__(self, request_id: int | None, message: str, kind: str = "bad-request") -> None:
        super().__init__(message)
        self.id = request_id
        self.message = message
        self.kind = kind


@dataclass(frozen=True)
class HelloRequest:
    op: ClassVar[str] = "hello"
    required: ClassVar[tuple[str, ...]] = ("protocol",)
    id: int
    protocol: Any


@dataclass(frozen=True)
class NewRequest:
    op: ClassVar[str] = "new"
    required: ClassVar[tuple[str, ...]] = ("params", "seed")
    id: int
    params: Any
    seed: Any


@dataclass(frozen=True)
class StepRequest:
    op: ClassVar[str] = "step"
    required: ClassVar[tuple[str, ...]] = ("pos", "attn")
    id: int
    pos: Any
    attn: Any


@dataclass(frozen=True)
class EvictRequest:
    op: ClassVar[str] = "evict"
    required: ClassVar[tuple[str, ...]] = ()
    id: int


@dataclass(frozen=True)
class ScoresRequest:
    op: ClassVar[str] = "scores"
    required: ClassVar[tuple[str, ...]] = ()
    id: int


@dataclass(frozen=True)
class ByeRequest:
    op: ClassVar[str] = "bye"
    required: ClassVar[tuple[str, ...]] = ()
    id: int


Request = HelloRequest | NewRequest | StepRequest | EvictRequest | ScoresRequest | ByeRequest
REQUEST_TYPES: dict[str, type[Request]] = {
    kind.op: kind
    for kind in (HelloRequest, NewRequest, StepRequest, EvictRequest, ScoresRequest, ByeRequest)
}


def request_to_json(request: Request) -> dict[str, Any]:
    """The request as a JSON object, ``id`` and ``op`` first."""
    fields = {name: getattr(request, name) for name in request.required}
    return {"id": request.id, "op": request.op, **fields}


def parse_request(message: Any, implemented: Sequence[str] = OPS) -> Request:
    """The typed request for a decoded message; raise :class:`BadRequest` (SPEC.md §3.4 steps 1-2).

    Only the shape is judged here: the id, the op and the required fields' presence. Values are
    the policy's to judge (a present field counts whatever its value). Fields beyond those named
    are ignored. An op of ``OPS`` not in ``implemented`` is ``unsupported``.
    """
    if not isinstance(message, dict):
        raise BadRequest(None, f"request must be an object, got {show(message)}")
    request_id = message.get("id")
    if type(request_id) is not int:
        raise BadRequest(None, f"id must be an integer, got {show(request_id)}")
    op = message.get("op")
    kind = REQUEST_TYPES.get(op) if isinstance(op, str) else None
    if kind is None:
        raise BadRequest(request_id, f"unknown op {show(op)}")
    if op not in implemented:
        raise BadRequest(request_id, f"this adapter does not implement {op}", "unsupported")
    for name in kind.required:
        if name not in message:
            raise BadRequest(request_id, f"{op} request is missing {name!r}")
    return kind(request_id, *(message[name] for name in kind.required))


# -- the answer to hello ----------------------------------------------------------------------


@dataclass(frozen=True)
class HelloAnswer:
    """What :func:`parse_hello_answer` read from a well-formed answer to ``hello``."""

    id: int
    protocol: int
    implementation: Mapping[str, str]
    capabilities: tuple[str, ...]


def refusal(request_id: Any, kind: str, message: str) -> dict[str, Any]:
    """A protocol v1 refusal answer as a JSON object."""
    return {"id": request_id, "ok": False, "error": {"kind": kind, "message": message}}


def answer_problem(answer: Mapping[str, Any], op: str) -> str | None:
    """What makes ``answer`` break protocol v1's answer shape for ``op``, or None.

    The id is the driver's to check. Extra fields are allowed (extensions are additive); the
    contents of ``victims`` are judged as invariants, not here. ``hello`` answers are judged by
    :func:`parse_hello_answer`.
    """
    ok = answer.get("ok")
    if ok is False:
        error = answer.get("error")
        if not isinstance(error, dict):
            return f"a refusal must carry an error object, got {show(error)}"
        kind = error.get("kind")
        if kind not in ERROR_KINDS:
            return (
                f"error kind {show(kind)} is not one of protocol v1's kinds "
                f"({', '.join(ERROR_KINDS)})"
            )
        if not isinstance(error.get("message"), str):
            return f"the {kind} refusal has no string message"
        return None
    if ok is not True:
        without_id = {key: value for key, value in answer.items() if key != "id"}
        return f"the answer has no boolean ok: {show(without_id)}"
    if op == "evict" and "victims" not in answer:
        return "the evict answer has no victims"
    if op == "scores":
        return scores_problem(answer)
    return None


def scores_problem(answer: Mapping[str, Any]) -> str | None:
    """What is wrong with the shape of a successful ``scores`` answer, or None."""
    positions = answer.get("positions")
    if not isinstance(positions, list) or not all(type(p) is int for p in positions):
        return f"scores positions must be a list of integers, got {show(positions)}"
    for name in ("sums", "pooled"):
        values = answer.get(name)
        if not isinstance(values, list) or not all(is_float64(v) for v in values):
            return f"scores {name} must be a list of numbers (float64), got {show(values)}"
        if len(values) != len(positions):
            return f"scores has {len(positions)} positions but {len(values)} {name}"
    return None


def parse_hello_answer(answer: Any) -> HelloAnswer:
    """Check an answer to ``hello`` against protocol v1; raise ValueError naming the fault."""
    if not isinstance(answer, dict):
        raise ValueError(f"the answer to hello is not a JSON object: {show(answer)}")
    if type(answer.get("ok")) is not bool:
        raise ValueError(
            f"the answer to hello has no boolean ok (is the program an adapter?): {show(answer)}"
        )
    if answer.get("ok") is not True:
        error = answer.get("error")
        kind = error.get("kind") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        raise ValueError(
            f"the adapter refused hello for protocol {PROTOCOL_VERSION} "
            f"({capped(str(kind), KEEP_NAME)}: {capped(str(message), KEEP_TEXT)}); it speaks "
            "another protocol version"
        )
    if not same_integer(answer.get("protocol"), PROTOCOL_VERSION):
        raise ValueError(
            f"the adapter answered hello with protocol {show(answer.get('protocol'))}, "
            f"this runner speaks protocol {PROTOCOL_VERSION}"
        )
    implementation = answer.get("implementation")
    if not isinstance(implementation, dict):
        raise ValueError("the answer to hello has no implementation object")
    for name in ("name", "language", "version"):
        if not isinstance(implementation.get(name), str):
            raise ValueError(
                f"the answer to hello has no string implementation.{name}: "
                f"{show(implementation.get(name))}"
            )
    capabilities = answer.get("capabilities", [])
    if not isinstance(capabilities, list) or not all(isinstance(c, str) for c in capabilities):
        raise ValueError(
            f"capabilities in the answer to hello must be a list of strings, "
            f"got {show(capabilities)}"
        )
    return HelloAnswer(
        answer.get("id"),  # type: ignore[arg-type]  # the driver checks the id
        PROTOCOL_VERSION,
        {name: capped(implementation[name], KEEP_NAME) for name in ("name", "language", "version")},
        _kept_capabilities(capabilities),
    )


def _kept_capabilities(capabilities: list[str]) -> tuple[str, ...]:
    """The capabilities as the kit keeps them: the first :data:`KEEP_NAMES`, each capped at
    :data:`KEEP_NAME` characters, then the optional ops announced further on (what the kit
    acts on is never cut), then a note of how many were cut (an adapter announcing a million
    must not fill a report)."""
    first = [capped(name, KEEP_NAME) for name in capabilities[:KEEP_NAMES]]
    later = [name for name in capabilities[KEEP_NAMES:] if name in OPS and name not in first]
    kept = first + list(dict.fromkeys(later))
    cut = len(capabilities) - KEEP_NAMES - len(later)
    if cut > 0:
        kept.append(f"... ({cut:,} more capabilities)")
    return tuple(kept)


def is_integer(value: Any) -> bool:
    """Whether ``value`` is a JSON integer as the decoder gives it: an int, never a bool or a
    float with an integral value (SPEC.md §1)."""
    return type(value) is int


def same_integer(got: Any, want: int | None) -> bool:
    """Whether ``got`` is exactly the JSON integer ``want`` (or JSON's ``null`` for None): the
    one rule for an echoed id, hello's ``protocol`` and a victim, in every answer the kit
    judges. ``1.0`` and ``true`` equal 1 in Python; they are not the integer 1 (SPEC.md §1)."""
    if want is None:
        return got is None
    return is_integer(got) and got == want


def is_float64(value: Any) -> bool:
    """True for a JSON number that has a float64 (scores are float64, SPEC.md §2.6).

    An integer literal is a number too, but one beyond the float64 range (``10**400``) cannot be
    compared with the reference's scores: ``float()`` raises on it.
    """
    if type(value) is float:
        return True
    if type(value) is not int:
        return False
    try:
        float(value)
    except OverflowError:
        return False
    return True


def show(value: Any, limit: int = 160) -> str:
    """A wire value for a message, in JSON's words, escaped and capped
    (:mod:`conformance.spec.text`)."""

    return json_text(value, limit)


# -- the shipped schemas ----------------------------------------------------------------------

Direction = Literal["request", "response"]


def validate_message(direction: Direction, message: Any, op: str | None = None) -> list[str]:
    """Every way ``message`` breaks the shipped protocol schema for ``direction``, as
    ``pointer: reason`` lines (empty when it validates).

    With ``op`` a response is checked against that op's answer shape (or a refusal) rather than
    any v1 answer. The schemas are closed and constrain values too, so a message can break them
    and still be answered (a request with a value the policy refuses, say).
    """

    name = REQUEST_SCHEMA if direction == "request" else RESPONSE_SCHEMA
    if direction == "response" and op is not None and op in OPS:
        name = f"{RESPONSE_SCHEMA}#{op}"
    validator = schema_validator(name)
    errors = sorted(validator.iter_errors(message), key=lambda e: [str(p) for p in e.absolute_path])
    # Capped: a schema's message quotes the value it refuses (an answer of 500,000 members).
    return [
        f"{json_pointer(e.absolute_path) or '/'}: {capped(e.message, KEEP_TEXT)}" for e in errors
    ]
