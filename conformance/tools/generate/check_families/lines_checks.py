"""Protocol checks of the lines themselves (SPEC.md §3.1): where a line ends, which lines get an
answer, and what the adapter writes and does at the end of its input."""

from __future__ import annotations

from collections.abc import Iterator

from conformance.suite.validation import CheckDraft
from conformance.tools.generate.check_families._common import HELLO, NEW, draft, line

LINES = "SPEC.md §3.1: lines end at LF; a CR before it is whitespace; a blank line gets no answer"


def drafts() -> Iterator[CheckDraft]:
    yield draft(
        "blank-lines",
        LINES,
        "Empty lines and lines of spaces, tabs and CRs between requests get no answer: three "
        "requests, three answers, and nothing else on stdout.",
        "a blank line answered (bad-request) or counted as a request, which shifts every "
        "later answer; a banner, log line or blank line written to stdout",
        [HELLO, "\n", "  \t\r\n", NEW, "\r\n", line({"id": 3, "op": "evict"})],
        ["ok", "ok", "ok"],
        spec=("S3.1-answers", "S3.1-stdout"),
    )
    yield draft(
        "crlf",
        LINES,
        "Requests ending in CRLF are answered like any others.",
        "the CR kept in the line and the request refused, or taken as a second line end",
        [HELLO.replace("\n", "\r\n"), NEW.replace("\n", "\r\n"), '{"id":3,"op":"evict"}\r\n'],
        ["ok", "ok", "ok"],
        spec=("S3.1-line-ends",),
    )
    yield draft(
        "lone-cr",
        LINES,
        "A lone CR does not end a line: two requests joined by one are one line holding two "
        "values, bad-request with id null, and no policy is made.",
        "universal-newline reading (Python text mode, .NET ReadLine) that splits at CR",
        [HELLO, NEW.removesuffix("\n") + '\r{"id":3,"op":"evict"}\n', '{"id":4,"op":"evict"}\n'],
        ["ok", "bad-request", "no-policy"],
        spec=("S3.1-line-ends", "S3.1-one-value"),
    )
    yield draft(
        "last-line-without-lf",
        LINES + "; a last line without LF is still answered",
        "A last request without a final LF is answered before the adapter exits, with status 0.",
        "only LF-terminated lines read, so the last one is dropped at end of input; an exit "
        "status other than 0 at the end of input",
        [HELLO, NEW.removesuffix("\n")],
        ["ok", "ok"],
        spec=("S3.1-line-ends", "S3.2-end-of-input"),
    )
