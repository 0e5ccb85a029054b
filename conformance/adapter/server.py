"""The reference server: serves a policy over protocol v1 (SPEC.md §3) on stdin/stdout.

"Adapter" in this kit means the program under test; this module is the reference's own
adapter program, run by ``snapkv-conformance adapter`` and by ``adapters/python``.

One JSON object per line in, one per line out, in order, flushed per line. The loop reads a
line, answers it and moves on, so a caller may pipeline any number of requests before reading
an answer. Nothing a caller sends can crash it: every malformed request gets ``bad-request``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any, ClassVar

from conformance import __version__
from conformance.policy.reference import Policy, PolicyError, PolicyFactory, new_policy
from conformance.spec.protocol import (
    CAPABILITIES,
    CORE_OPS,
    MAX_DEPTH,
    PROTOCOL_VERSION,
    BadRequest,
    ByeRequest,
    DecodeError,
    EvictRequest,
    HelloRequest,
    NewRequest,
    NumberText,
    ScoresRequest,
    StepRequest,
    decode,
    encode,
    nesting_depth,
    parse_request,
    refusal,
    show,
)

__all__ = [
    "CAPABILITIES",
    "PROTOCOL_VERSION",
    "Session",
    "decode_request",
    "encode",
    "main",
    "refusal",
    "serve",
]


def decode_request(line: bytes | str, *, weights_checked: bool = True) -> Any:
    """Parse one request line exactly as the protocol's strict codec does; raise ValueError.

    Decoding the weights is most of a step's cost, so a line goes to orjson first (when it is
    installed) and its result is taken only where it provably equals the strict codec's: orjson
    refuses every line the strict codec refuses for NaN, Infinity, overflow, lone surrogates,
    invalid UTF-8 or a byte-order mark, and takes the last of repeated names as it does; it
    differs only on integers beyond 64 bits, which it reads as floats, and on nesting between
    the codec's limit and its own. So a line is decoded again strictly when it nests deeper
    than the limit, or when a field the server reads holds a float of magnitude
    2^63 or more or a container (other than ``params``' scalars and ``attn``'s numbers). Fields
    the server ignores cannot change an answer.

    With ``weights_checked=False`` a step's ``attn`` is not looked at: it may hold what orjson
    reads differently (an integer beyond 64 bits, as the nearest float, which narrows to the
    same float32; or nesting deeper than the limit, which no policy accepts as weights), so
    the caller must answer any refused step again from the strict reading
    (:meth:`Session.handle_line` does, for the reference's own policies).
    """
    if _orjson is not None and isinstance(line, bytes):
        try:
            value = _orjson.loads(line)
        except _orjson.JSONDecodeError:
            return decode(line)  # the strict codec's own message
        if type(value) is dict and _plain(value, weights_checked):
            return value
    return decode(line)


_orjson: Any
try:
    import orjson as _orjson
except ImportError:  # the strict codec alone: the same answers, slower
    _orjson = None

_BIG = 2.0**63
_READ = ("id", "op", "protocol", "seed", "pos")
_SHAPED = (*_READ, "params", "attn")  # fields whose nesting _plain bounds itself


def _plain(request: dict[str, Any], weights_checked: bool = True) -> bool:
    """True when no field the server reads could hold a value orjson reads differently, and
    the request nests no deeper than the strict codec allows.

    The fields the server reads are scalars, ``params`` an object of scalars and ``attn`` a
    flat list (``min`` and ``max`` raise on anything else); only the other fields can nest.
    """
    keys = tuple(request)
    if (keys == ("id", "op", "pos", "attn") or keys == ("id", "op")) and (
        type(request["id"]) is int
        and type(request["op"]) is str
        and type(request.get("pos", 0)) is int  # an int is read exactly; a float may not be
    ):
        return _plain_attn(request, weights_checked)  # the decode loop's step and evict lines
    for name, value in request.items():
        if (
            isinstance(value, list | dict)
            and name not in _SHAPED
            and nesting_depth(value) >= MAX_DEPTH  # the request itself is one level
        ):
            return False
    for name in _READ:
        if name in request and not _small(request[name]):
            return False
    params = request.get("params")
    if isinstance(params, dict):
        if not all(_small(value) for value in params.values()):
            return False
    elif not _small(params):
        return False
    return _plain_attn(request, weights_checked)


def _plain_attn(request: dict[str, Any], weights_checked: bool) -> bool:
    """:func:`_plain` of ``attn``."""
    attn = request.get("attn")
    if type(attn) is list and attn:
        if not weights_checked and request.get("op") == "step":
            return True
        try:  # both at C speed; a list holding anything but numbers raises
            return min(attn) > -_BIG and max(attn) < _BIG
        except TypeError:
            return False
    return _small(attn)


def _small(value: Any) -> bool:
    """A scalar that is not a float of magnitude 2^63 or more (nor a container)."""
    if type(value) is float:
        return -_BIG < value < _BIG
    return not isinstance(value, list | dict)


def capabilities_of(factory: Callable[..., Any]) -> tuple[str, ...]:
    """The optional ops that policies from ``factory`` implement, told before any is made.

    ``factory`` is a class, or a callable whose return annotation names one: the ops announced
    are the methods that class has. Of a callable without a usable annotation nothing is known,
    so every capability is announced (and a missing method answers ``unsupported``); pass
    ``capabilities`` to :class:`Session` to say otherwise.
    """
    made: Any = factory
    if is_reference(factory):  # new_policy and fast_policy: the reference implements them all
        return CAPABILITIES
    if not isinstance(factory, type):
        import inspect  # here: only a factory that is not a class needs it

        try:
            made = inspect.signature(factory, eval_str=True).return_annotation
        except Exception:  # an annotation that does not evaluate: unknown
            made = None
        if not isinstance(made, type) or made is inspect.Signature.empty:
            return CAPABILITIES
    return tuple(op for op in CAPABILITIES if callable(getattr(made, op, None)))


#: The modules whose policies are the reference's own: the reference and its fast path.
REFERENCE_MODULES = ("conformance.policy.reference", "conformance.policy.fast")


def is_reference(factory: PolicyFactory) -> bool:
    """Whether ``factory`` makes the reference's own policies (``new_policy``, ``fast_policy``
    or their classes), known by the module that defines it: a module, not the function itself,
    so that a session serving the plain reference never imports the fast path and numpy."""
    return getattr(factory, "__module__", None) in REFERENCE_MODULES


class Session:
    """The state of one adapter connection: the current policy, if any, and its factory.

    ``capabilities`` are the optional ops announced in ``hello`` and answered; by default what
    :func:`capabilities_of` tells of the factory. An op not announced is ``unsupported``.
    """

    def __init__(
        self,
        factory: PolicyFactory = new_policy,
        implementation: Mapping[str, str] | None = None,
        capabilities: Sequence[str] | None = None,
    ) -> None:
        self.factory = factory
        self.implementation = dict(
            implementation
            or {
                "name": "snapkv-conformance reference",
                "language": "python",
                "version": __version__,
            }
        )
        self.capabilities = tuple(
            capabilities_of(factory) if capabilities is None else capabilities
        )
        self._implemented = (*CORE_OPS, *self.capabilities)
        self._atomic_steps = is_reference(factory)
        # A policy that reads a weight's decimal itself (the catalogue's one-rounding reader)
        # is handed each step's weights as the line writes them.
        self.reads_weight_text = bool(getattr(factory, "reads_weight_text", False))
        self.policy: Policy | None = None
        self.finished = False
        self._no_booleans = False  # the request being answered came from a line without one

    def handle_line(self, line: bytes | str) -> dict[str, Any]:
        """Answer one request line; never raises.

        For the reference's own policies a step's weights are read without the check that
        orjson reads them as the strict codec does (a tenth of a step's cost), and a refused
        step is read again with the check and answered again: a refused step changes nothing
        (SPEC §2.3, tested of these policies), so the answer is the strict codec's, message
        and all.
        Other policies get the check, as a port's atomicity is for the suite to judge.
        """
        lenient = self._atomic_steps and isinstance(line, bytes)
        answer, relaxed = self._answer_line(line, weights_checked=not lenient)
        if relaxed and answer.get("ok") is False:
            answer, _ = self._answer_line(line, weights_checked=True)
        return answer

    def _answer_line(self, line: bytes | str, weights_checked: bool) -> tuple[dict[str, Any], bool]:
        """The answer to one line, and whether it was a step read with its weights unchecked."""
        try:
            request = decode_request(line, weights_checked=weights_checked)
        except DecodeError as error:
            message = f"request is not a JSON object line: {error}"
            return refusal(None, "bad-request", message), False
        relaxed = not weights_checked and type(request) is dict and request.get("op") == "step"
        if self.reads_weight_text:
            request = self.as_written(request, line)
        # A line without a boolean decodes to values without one: said to a policy that has a
        # step for such values (the fast path), for this request only. A line without the
        # letters u and l holds neither true nor false: two one-byte searches (memchr) cost a
        # tenth of the two word searches over a long step line; a line with either letter
        # elsewhere (null, a string) only takes the step that looks at each weight's type.
        self._no_booleans = isinstance(line, bytes) and b"u" not in line and b"l" not in line
        try:
            return self.handle(request), relaxed
        finally:
            self._no_booleans = False

    def as_written(self, request: Any, line: bytes | str) -> Any:
        """``request`` (decoded from ``line``) with a step's weights as ``line`` writes them
        (:class:`NumberText`), for a policy that ``reads_weight_text``."""
        if type(request) is dict and isinstance(request.get("attn"), list):
            written = decode(line, parse_float=NumberText, parse_int=NumberText)
            request = {**request, "attn": written["attn"]}
        return request

    def handle(self, request: Any) -> dict[str, Any]:
        """Answer one decoded request; never raises.

        An exception other than :class:`PolicyError` is a bug in the policy; it is answered
        with a refusal naming it (kind ``unsupported``), so the runner shows it and goes on.
        """
        try:
            return self.answer(request)
        except Exception as error:  # the contract: a refusal, never a raise
            request_id = request.get("id") if isinstance(request, dict) else None
            return refusal(
                request_id if type(request_id) is int else None,
                "unsupported",
                f"the policy raised {type(error).__name__}: {show(str(error))[1:-1]} "
                "(a bug in the port, not a refusal)",
            )

    def answer(self, message: Any) -> dict[str, Any]:
        """Answer one decoded request; an exception the policy raises (a bug) propagates."""
        try:
            request = parse_request(message, self._implemented)
        except BadRequest as error:
            return refusal(error.id, error.kind, error.message)
        try:
            result = self.HANDLERS[request.op](self, request)
        except PolicyError as error:
            return refusal(request.id, error.kind, error.message)
        return {"id": request.id, "ok": True, **result}

    # -- ops ---------------------------------------------------------------------------------

    def op_hello(self, request: HelloRequest) -> dict[str, Any]:
        protocol = request.protocol
        if protocol != PROTOCOL_VERSION or type(protocol) is not int:
            raise PolicyError(
                "unsupported",
                f"this adapter speaks protocol {PROTOCOL_VERSION}, not {show(protocol)}",
            )
        return {
            "protocol": PROTOCOL_VERSION,
            "implementation": self.implementation,
            "capabilities": list(self.capabilities),
        }

    def op_new(self, request: NewRequest) -> dict[str, Any]:
        construct = getattr(self.factory, "construct", None)
        if callable(construct):
            # A policy class that judges the seed itself and may carry state over from the
            # policy it replaces (the mutant catalogue's lifecycle mistakes).
            try:
                self.policy = construct(request.params, request.seed, self.policy)
            except PolicyError as error:
                if hasattr(error, "remaining"):
                    self.policy = error.remaining
                raise
            return {}
        if type(request.seed) is not int:
            raise PolicyError(
                "invalid-params", f"seed must be an integer, got {show(request.seed)}"
            )
        self.policy = self.factory(request.params, request.seed)
        return {}

    def op_step(self, request: StepRequest) -> dict[str, Any]:
        policy = self._policy()
        decoded = getattr(policy, "step_decoded", None) if self._no_booleans else None
        (decoded or policy.step)(request.pos, request.attn)
        return {}

    def op_evict(self, request: EvictRequest) -> dict[str, Any]:
        return {"victims": self._policy().evict()}

    def op_scores(self, request: ScoresRequest) -> dict[str, Any]:
        scores = self._policy().scores()
        return {"positions": scores.positions, "sums": scores.sums, "pooled": scores.pooled}

    def op_bye(self, request: ByeRequest) -> dict[str, Any]:
        self.finished = True
        return {}

    HANDLERS: ClassVar[dict[str, Callable[[Session, Any], dict[str, Any]]]] = {
        "hello": op_hello,
        "new": op_new,
        "step": op_step,
        "evict": op_evict,
        "scores": op_scores,
        "bye": op_bye,
    }

    def _policy(self) -> Policy:
        if self.policy is None:
            raise PolicyError("no-policy", "no policy: send an accepted new first")
        return self.policy


def _encode_answer(answer: dict[str, Any]) -> bytes:
    """:func:`~conformance.spec.protocol.encode` of ``answer``, the same bytes, with the two answers
    of a decode loop (a bare success, an evict's victims) written without the JSON encoder."""
    request_id = answer.get("id")
    if type(request_id) is int and answer.get("ok") is True:
        keys = tuple(answer)
        if keys == ("id", "ok"):
            return b'{"id":%d,"ok":true}\n' % request_id
        victims = answer.get("victims")
        if keys == ("id", "ok", "victims") and type(victims) is list:
            if not all(type(v) is int for v in victims):
                return encode(answer)
            listed = ",".join(map(str, victims)).encode()
            return b'{"id":%d,"ok":true,"victims":[%s]}\n' % (request_id, listed)
    return encode(answer)


def encode_or_refuse(answer: dict[str, Any]) -> bytes:
    """:func:`_encode_answer` of ``answer``; an answer JSON cannot carry (scores holding
    infinity or NaN, a numpy integer among the victims) is a bug in the port, answered as
    such: an ``unsupported`` refusal naming the value, never a crash of the host."""
    try:
        return _encode_answer(answer)
    except (TypeError, ValueError, OverflowError) as error:
        request_id = answer.get("id")
        problem = _unencodable(answer) or f"{type(error).__name__}: {error}"
        return encode(
            refusal(
                request_id if type(request_id) is int else None,
                "unsupported",
                f"the port's answer cannot be written as JSON: {problem} "
                "(a bug in the port, not a refusal)",
            )
        )


def _unencodable(value: Any, where: str = "") -> str | None:
    """Where in ``value`` the first value JSON cannot hold is, and what it is."""
    if isinstance(value, float):
        if value != value:
            return f"{where or 'the answer'} is NaN"
        if value in (float("inf"), float("-inf")):
            sign = "-" if value < 0 else ""
            return f"{where or 'the answer'} is {sign}infinity"
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = _unencodable(item, f"{where}.{key}" if where else str(key))
            if found:
                return found
        return None
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _unencodable(item, f"{where}[{index}]")
            if found:
                return found
        return None
    if value is None or isinstance(value, bool | int | str):
        return None
    return f"{where or 'the answer'} is a {type(value).__module__}.{type(value).__name__}"


def serve(
    instream: IO[bytes],
    outstream: IO[bytes],
    factory: PolicyFactory = new_policy,
    implementation: Mapping[str, str] | None = None,
) -> int:
    """Answer requests from ``instream`` until ``bye`` or end of input; return the exit status."""
    session = Session(factory, implementation)
    for line in instream:
        if line[:1] != b"{" and not line.strip(b" \t\r\n"):  # strip copies a long line
            continue
        outstream.write(encode_or_refuse(session.handle_line(line)))
        outstream.flush()
        if session.finished:
            break
    return 0


def single_threaded_blas() -> None:
    """Ask numpy's OpenBLAS, if numpy is not imported yet, for no thread pool.

    No policy operation here is a BLAS call, and the pool's start costs an adapter process
    more CPU time than the rest of its start-up (``benchmarks/bench_adapter.py`` measures the
    adapter's CPU time). An ``OPENBLAS_NUM_THREADS`` already set is kept.
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(factory: PolicyFactory, implementation: Mapping[str, str] | None = None) -> int:
    """Serve the policies ``factory`` makes on the process's stdin/stdout (the reference
    adapter, ``snapkv-conformance adapter``, serves ``conformance.policy.fast.fast_policy``).

    stdin is re-opened with a 1 MiB buffer: a step line carries thousands of weights, and the
    default 8 KiB buffer would cost several read calls per line. (A buffered read returns
    what the pipe holds; it never waits for the buffer to fill.)
    """
    single_threaded_blas()
    with open(sys.stdin.fileno(), "rb", buffering=1 << 20, closefd=False) as instream:
        return serve(instream, sys.stdout.buffer, factory, implementation)
