"""Slips of the adapter as a process (SPEC.md §3.1-§3.3): what it writes on stdout and when,
how it ends, what its answers to hello and refusals carry, and its limits.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from conformance.adapter.server import encode_or_refuse
from conformance.slips.slip_adapter import Answer, SlipAdapter, slip
from conformance.spec.protocol import DecodeError, decode, nesting_depth, refusal


@slip(
    "exit-status-after-bye",
    sentence="S3.2-bye",
    origin="a main that returns a non-zero status on the way out (an error count, a "
    "destructor that fails, System.exit(1) in a shutdown path)",
)
class ExitStatusAfterBye(SlipAdapter):
    """The adapter exits with status 3 after answering ``bye``."""

    def exit_status(self) -> int:
        return 3 if self.finished else 0


@slip(
    "reads-after-bye",
    sentence="S3.2-bye",
    origin="a loop that answers bye but does not leave it, going on until end of input",
)
class ReadsAfterBye(SlipAdapter):
    """``bye`` is answered, and the adapter goes on answering until its input ends."""

    @property
    def finished(self) -> bool:
        return False


@slip(
    "exit-status-at-end-of-input",
    sentence="S3.2-end-of-input",
    origin="end of input taken as an error (no bye came): the adapter exits with status 1",
)
class ExitStatusAtEndOfInput(SlipAdapter):
    """The adapter exits with status 1 when its input ends without ``bye``."""

    def exit_status(self) -> int:
        return 0 if self.finished else 1


@slip(
    "blank-line-after-answers",
    sentence="S3.1-stdout",
    origin="an answer printed with println after a writer that already ends it with a "
    "newline, so a blank line follows each answer",
)
class BlankLineAfterAnswers(SlipAdapter):
    """Each answer line is followed by a blank line on stdout."""

    def write(self, answer: Answer, out: IO[bytes]) -> None:
        out.write(encode_or_refuse(answer) + b"\n")
        out.flush()


@slip(
    "banner-on-stdout",
    sentence="S3.1-stdout",
    origin="a start-up message or log line printed to stdout instead of stderr",
)
class BannerOnStdout(SlipAdapter):
    """A banner line is written to stdout before the first answer."""

    greeted = False

    def write(self, answer: Answer, out: IO[bytes]) -> None:
        if not self.greeted:
            self.greeted = True
            out.write(b"snapkv adapter ready\n")
        super().write(answer, out)


@slip(
    "answers-not-flushed",
    sentence="S3.1-pipelined",
    origin="stdout left block-buffered (C's stdio on a pipe, Python's sys.stdout.buffer, "
    "Java's BufferedWriter) and never flushed between answers",
)
class AnswersNotFlushed(SlipAdapter):
    """Answers go to a 64 KiB buffer of the adapter's own, written out only when it is full
    and at exit (whatever buffering the stream itself has)."""

    BUFFER = 1 << 16

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.held = bytearray()

    def write(self, answer: Answer, out: IO[bytes]) -> None:
        self.held += encode_or_refuse(answer)
        if len(self.held) >= self.BUFFER:
            self._empty(out)

    def serve(self, instream: Iterable[bytes], outstream: IO[bytes]) -> int:
        status = super().serve(instream, outstream)
        self._empty(outstream)  # exit flushes the buffer
        return status

    def _empty(self, out: IO[bytes]) -> None:
        out.write(bytes(self.held))
        out.flush()
        self.held.clear()


@slip(
    "whole-input-first",
    sentence="S3.1-pipelined",
    origin="an adapter that reads all of stdin (readAllBytes, sys.stdin.read(), "
    "io.ReadAll) before answering the first line",
)
class WholeInputFirst(SlipAdapter):
    """The whole input is read before the first line is answered."""

    def lines(self, stream: Iterable[bytes]) -> Iterator[bytes]:
        return iter(list(stream))


@slip(
    "empty-error-message",
    sentence="S3.3-refusal",
    origin="a refusal built from an error whose message is empty (a bare exception, an "
    "error code without text)",
)
class EmptyErrorMessage(SlipAdapter):
    """Every refusal carries an empty message."""

    def write(self, answer: Answer, out: IO[bytes]) -> None:
        if answer.get("ok") is False and isinstance(answer.get("error"), dict):
            answer["error"]["message"] = ""
        super().write(answer, out)


@slip(
    "error-kinds-underscored",
    sentence="S3.3-refusal",
    origin="error kinds generated from an enum's names (INVALID_PARAMS lower-cased), so "
    "invalid_params instead of invalid-params",
)
class ErrorKindsUnderscored(SlipAdapter):
    """Error kinds are written with underscores: ``invalid_params``."""

    def write(self, answer: Answer, out: IO[bytes]) -> None:
        error = answer.get("error")
        if isinstance(error, dict) and isinstance(error.get("kind"), str):
            error["kind"] = error["kind"].replace("-", "_")
        super().write(answer, out)


@slip(
    "hello-without-capabilities",
    sentence="S3.2-hello-answer",
    origin="a hello answer that leaves out capabilities when there are none, where [] is "
    "due (an optional field skipped when empty, serde's skip_serializing_if)",
)
class HelloWithoutCapabilities(SlipAdapter):
    """The hello answer has no ``capabilities`` (the adapter implements no optional op)."""

    capabilities = ()

    def write(self, answer: Answer, out: IO[bytes]) -> None:
        if answer.get("capabilities") == []:
            del answer["capabilities"]
        super().write(answer, out)


@slip(
    "hello-protocol-as-string",
    sentence="S3.2-hello-answer",
    origin='the protocol version echoed from a string constant ("1") in the hello answer',
)
class HelloProtocolAsString(SlipAdapter):
    """The hello answer's ``protocol`` is the string ``"1"``."""

    def write(self, answer: Answer, out: IO[bytes]) -> None:
        if answer.get("protocol") == 1 and "implementation" in answer:
            answer["protocol"] = "1"
        super().write(answer, out)


@slip(
    "scores-printed-15-digits",
    sentence="S2.6-score-text",
    origin="scores printed with %.15g (or C++'s default stream precision, or %g), which does "
    "not round-trip a float64",
)
class ScoresPrinted15Digits(SlipAdapter):
    """Scores are written with 15 significant digits."""

    def write(self, answer: Answer, out: IO[bytes]) -> None:
        if "sums" in answer and answer.get("ok"):
            fields = ",".join(
                f'"{name}":[' + ",".join(format(v, ".15g") for v in answer[name]) + "]"
                for name in ("sums", "pooled")
            )
            head = json.dumps({k: v for k, v in answer.items() if k not in ("sums", "pooled")})
            out.write((head[:-1] + "," + fields + "}\n").encode())
            out.flush()
            return
        super().write(answer, out)


#: A line buffer's size, the depth of a recursive parser's guard.
LINE_CAP = 16 * 1024
DEPTH_CAP = 32


@slip(
    "lines-capped-16k",
    sentence="S3.1-limits",
    origin="a fixed line buffer (char line[16384] with fgets, a BufferedReader or scanner "
    "with a 16 KiB limit) that refuses a longer line",
)
class LinesCapped16k(SlipAdapter):
    """A line longer than 16 KiB is refused with bad-request."""

    def answer_line(self, line: bytes) -> Answer:
        if len(line.rstrip(b"\n")) > LINE_CAP:
            return refusal(None, "bad-request", "line too long")
        return super().answer_line(line)


@slip(
    "nesting-capped-32",
    sentence="S3.1-limits",
    origin="a parser configured with a depth limit of 32 (a recursion guard, a fixed stack "
    "of containers)",
)
class NestingCapped32(SlipAdapter):
    """A request nested more than 32 levels deep is refused with bad-request."""

    def read(self, line: bytes) -> Any:
        request = decode(line)
        if nesting_depth(request) > DEPTH_CAP:
            raise DecodeError("nested too deep")
        return request
