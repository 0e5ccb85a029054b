"""What a run tells people and machines: terminal progress, the summary, JSON and JUnit XML.

The terminal summary ends with exactly one line ``N passed, M failed``, where M counts what
fails the run (a failure not listed as known, or a listed vector that passed) and N the passes
that are not listed; known failures that still fail are reported on a line of their own. The
JSON report validates against ``schema/report.schema.json`` (format ``snapkv-report/1``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from conformance import __version__
from conformance.checker import PROCESS_VERDICTS, VERDICTS, VectorResult
from conformance.runner import RunResult

REPORT_FORMAT = "snapkv-report/1"


@dataclass(frozen=True)
class RunContext:
    """What the command line asked for, beyond what :class:`RunResult` knows."""

    paths: Sequence[str] = ()
    patterns: Sequence[str] = ()
    known_failures_file: str | None = None
    known_failures: frozenset[str] = field(default_factory=frozenset)


# -- terminal ----------------------------------------------------------------------------------


def terminal_width(stream: IO[str]) -> int:
    """The width of the terminal ``stream`` writes to, less one column (a line that fills the
    last column wraps on some terminals, and ``\r`` then rewrites only its second half).

    Asked of the stream itself: ``shutil.get_terminal_size`` asks stdout, which is often a
    file or a pipe while stderr, where progress goes, is the terminal.
    """
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        columns = shutil.get_terminal_size((80, 24)).columns
    return max(columns, 20) - 1


class ProgressLine:
    """A one-line progress display on a terminal (rewritten in place); silent elsewhere."""

    def __init__(self, stream: IO[str] | None = None, interval: float = 0.05) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval
        self._failed: dict[str, bool] = {}
        self._last = 0.0
        self._shown = False

    def __call__(self, result: VectorResult, done: int, total: int) -> None:
        self._failed[result.vector_id] = result.fails_run
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self._last < self.interval:
            return
        self._last = now
        failed = sum(self._failed.values())
        text = f"[{done}/{total}] {done - failed} passed, {failed} failed  {result.vector_id}"
        width = terminal_width(self.stream)
        self.stream.write("\r" + text[:width].ljust(width))
        self.stream.flush()
        self._shown = True

    def finish(self) -> None:
        """Erase the progress line so the summary starts on a clean line."""
        if self._shown:
            width = terminal_width(self.stream)
            self.stream.write("\r" + " " * width + "\r")
            self.stream.flush()
            self._shown = False


def format_result(result: VectorResult) -> str:
    """A failing (or stale known-failure) result: its one line, then indented details."""
    head = ("FAIL " if result.fails_run else "known failure: ") + result.describe()
    lines = [head]
    if result.passed:
        return head
    if result.expected is not None or result.actual is not None:
        lines.append(f"    expected: {_compact(result.expected)}")
        lines.append(f"    actual:   {_compact(result.actual)}")
    if result.diagnosis:
        lines.append(f"    diagnosis: {result.diagnosis}")
    if result.catches:
        lines.append(f"    this vector catches: {result.catches}")
    if result.stderr_tail:
        lines.append("    adapter stderr (last lines):")
        lines.extend(f"      | {line}" for line in result.stderr_tail.splitlines())
    return "\n".join(lines)


def format_summary(run: RunResult, context: RunContext | None = None) -> str:
    """The text printed after a run: failures in suite order, then the summary lines.

    The last line is exactly ``N passed, M failed``.
    """
    context = context or RunContext()
    lines = [format_result(r) for r in run.results if r.fails_run]
    known = [r for r in run.results if r.known_failure and not r.passed]
    lines.extend(format_result(r).splitlines()[0] for r in known)
    if run.triage is not None:
        lines.append("")
        lines.extend(run.triage.lines())
    if lines:
        lines.append("")
    if run.handshake is not None:
        capabilities = ", ".join(run.handshake.capabilities) or "none"
        lines.append(
            f"adapter: {run.handshake.describe()}, protocol {run.handshake.protocol}, "
            f"capabilities: {capabilities}"
        )
    if run.shard is not None:
        lines.append(f"shard {run.shard[0]}/{run.shard[1]}: {len(run.results)} vectors")
    verdicts = Counter(r.verdict for r in run.results)
    if verdicts:
        lines.append(
            "verdicts: " + ", ".join(f"{verdicts[v]} {v}" for v in VERDICTS if verdicts[v])
        )
    counts = run.counts
    if context.known_failures_file is not None:
        lines.append(
            f"known failures ({context.known_failures_file}): {counts['known_failures']} "
            f"still failing, {counts['stale_known_failures']} now passing"
        )
    lines.extend(f"warning: {warning}" for warning in run.warnings)
    lines.append(f"{counts['passed']} passed, {counts['failed']} failed")
    return "\n".join(lines)


def _compact(value: Any, limit: int = 400) -> str:
    text = json.dumps(value, separators=(", ", ": "), ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- JSON --------------------------------------------------------------------------------------


def json_report(run: RunResult, context: RunContext | None = None) -> dict[str, Any]:
    """The JSON report (``snapkv-report/1``); see ``schema/report.schema.json``."""
    context = context or RunContext()
    handshake = run.handshake
    adapter: dict[str, Any] = {"argv": run.adapter_argv}
    if handshake is not None:
        adapter.update(handshake.to_json())
    counts = run.counts
    verdicts = Counter(r.verdict for r in run.results)
    return {
        "format": REPORT_FORMAT,
        "tool": {"name": "snapkv-conformance", "version": __version__},
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "adapter": adapter,
        "suite": {"paths": [str(p) for p in context.paths], "patterns": list(context.patterns)},
        "shard": None if run.shard is None else {"index": run.shard[0], "count": run.shard[1]},
        "jobs": run.jobs,
        "timeout": run.timeout,
        "known_failures": {
            "file": context.known_failures_file,
            "ids": sorted(context.known_failures),
        },
        "duration": round(run.duration, 6),
        "summary": {**counts, "verdicts": {v: verdicts[v] for v in VERDICTS}},
        "ok": run.ok,
        "warnings": list(run.warnings),
        "triage": None if run.triage is None else run.triage.to_json(),
        "results": [result.to_json() for result in run.results],
    }


def write_json_report(path: str | Path, run: RunResult, context: RunContext | None = None) -> None:
    text = json.dumps(json_report(run, context), indent=2, ensure_ascii=False) + "\n"
    write_file(path, text.encode("utf-8"))


def write_file(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all, creating missing parent directories.

    The bytes go to a temporary file beside ``path`` that then replaces it, so a failed write
    (a full disk, say) leaves no half-written report and keeps the previous one. Raises OSError.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # mkstemp makes the file private (0600); give it the old file's mode, or the usual 0644.
        mode = target.stat().st_mode & 0o777 if target.is_file() else 0o644
        handle, staging = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as error:  # name the file asked for, not a parent or the temporary file
        raise OSError(error.errno, error.strerror, str(target)) from None
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(staging, mode)
        os.replace(staging, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(staging)
        if isinstance(error, OSError):
            raise OSError(error.errno, error.strerror, str(target)) from None
        raise


# -- JUnit XML ---------------------------------------------------------------------------------

# Characters XML 1.0 cannot hold, even escaped; adapter stderr may contain any of them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def junit_xml(run: RunResult, context: RunContext | None = None) -> bytes:
    """The run as JUnit XML: one testcase per vector, named by its id.

    Process verdicts (crash, timeout, protocol-error) are ``<error>``, other failures
    ``<failure>``, known failures that still fail ``<skipped>``; a listed vector that passes is
    a ``<failure>`` (the list went stale).
    """
    context = context or RunContext()
    name = "snapkv-conformance"
    if run.handshake is not None:
        name += f": {run.handshake.describe()}"
    if run.shard is not None:
        name += f" shard {run.shard[0]}/{run.shard[1]}"
    cases = [_testcase(result) for result in run.results]
    tally = Counter(kind for _, kind in cases)
    attributes = {
        "name": _xml_text(name),
        "tests": str(len(cases)),
        "failures": str(tally["failure"]),
        "errors": str(tally["error"]),
        "skipped": str(tally["skipped"]),
        "time": f"{run.duration:.3f}",
    }
    root = ET.Element("testsuites", attributes)
    suite = ET.SubElement(root, "testsuite", attributes)
    properties = ET.SubElement(suite, "properties")
    for key, value in _properties(run, context):
        ET.SubElement(properties, "property", {"name": key, "value": _xml_text(value)})
    for case, _ in cases:
        suite.append(case)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _properties(run: RunResult, context: RunContext) -> list[tuple[str, str]]:
    pairs = []
    if run.handshake is not None:
        pairs += [
            ("adapter.name", run.handshake.name),
            ("adapter.language", run.handshake.language),
            ("adapter.version", run.handshake.version),
            ("adapter.capabilities", ",".join(run.handshake.capabilities)),
        ]
    if run.adapter_argv is not None:
        pairs.append(("adapter.argv", json.dumps(run.adapter_argv)))
    if run.shard is not None:
        pairs.append(("shard", f"{run.shard[0]}/{run.shard[1]}"))
    if context.known_failures_file is not None:
        pairs.append(("known_failures", context.known_failures_file))
    return pairs


def _testcase(result: VectorResult) -> tuple[ET.Element, str]:
    group = result.vector_id.rpartition("/")[0] or result.vector_id
    case = ET.Element(
        "testcase",
        {
            "classname": _xml_text(group.replace("/", ".")),
            "name": _xml_text(result.vector_id),
            "time": f"{result.duration:.6f}",
        },
    )
    kind = "passed"
    if result.fails_run:
        kind = "error" if result.verdict in PROCESS_VERDICTS else "failure"
    elif result.known_failure:
        kind = "skipped"
    if kind != "passed":
        child = ET.SubElement(
            case,
            kind,
            {
                "type": result.verdict if not result.passed else "stale-known-failure",
                "message": _xml_text(result.describe()),
            },
        )
        if kind != "skipped":
            child.text = _xml_text(format_result(result))
    if result.stderr_tail and kind != "passed":
        ET.SubElement(case, "system-err").text = _xml_text(result.stderr_tail)
    return case, kind


def write_junit(path: str | Path, run: RunResult, context: RunContext | None = None) -> None:
    write_file(path, junit_xml(run, context))
