"""What a run tells people and machines: terminal progress, the summary, JSON and JUnit XML.

The terminal summary ends with exactly one line ``N passed, M failed``, where M counts what
fails the run (a failure not listed as known, or a listed vector that passed) and N the passes
that are not listed; known failures that still fail are reported on a line of their own. The
JSON report validates against ``schema/report.schema.json`` (format ``snapkv-report/1``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from conformance import __version__
from conformance.judge.verdicts import PROCESS_VERDICTS, VERDICTS
from conformance.report.outputs import write_output
from conformance.report.show import show_command
from conformance.runner.results import VectorResult
from conformance.runner.run import RunResult
from conformance.spec.text import escape, json_document, json_text
from conformance.suite.discovery import is_generated

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


class StatusLine:
    """One line of status on a terminal, rewritten in place; silent when ``stream`` (stderr by
    default) is not a terminal. The one progress display of every subcommand."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._shown = False

    def show(self, text: str) -> None:
        """Replace the line with ``text`` (escaped, cut to the terminal's width)."""
        if not self.enabled:
            return
        width = terminal_width(self.stream)
        self._write("\r" + escape(text, one_line=True)[:width].ljust(width))
        self._shown = True

    def finish(self) -> None:
        """Erase the line so that what follows starts on a clean line."""
        if self._shown:
            self._write("\r" + " " * terminal_width(self.stream) + "\r")
            self._shown = False

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a terminal that went away: nothing left to show
            self.enabled = False


class CountProgress(StatusLine):
    """Progress through ``total`` units of long work (``record``'s tokens): on a terminal a
    bar rewritten in place; elsewhere (CI, a pipe) one plain line every ``every`` seconds, so
    that a log shows the work is moving. Each shows done, left and the rate."""

    def __init__(
        self,
        label: str,
        what: str,
        total: int,
        stream: IO[str] | None = None,
        every: float = 5.0,
    ) -> None:
        super().__init__(stream)
        self.label, self.what, self.total, self.every = label, what, total, every
        self._started = self._said = time.monotonic()

    def __call__(self, done: int) -> None:
        now = time.monotonic()
        rate = done / max(now - self._started, 1e-9)
        left = self.total - done
        eta = f", {left / rate:.0f} s left" if rate > 0 and left else ""
        counts = f"{done}/{self.total} {self.what}, {rate:.1f}/s{eta}"
        if self.enabled:
            filled = 20 * done // max(self.total, 1)
            self.show(f"{self.label}: [{'#' * filled}{'.' * (20 - filled)}] {counts}")
        elif now - self._said >= self.every or done == self.total:
            self._said = now
            self._write(f"{self.label}: {counts}\n")


class ProgressLine(StatusLine):
    """``run``'s progress: vectors done, passed and failed, and the last vector's id."""

    def __init__(self, stream: IO[str] | None = None, interval: float = 0.05) -> None:
        super().__init__(stream)
        self.interval = interval
        self._failed: dict[str, bool] = {}
        self._last = 0.0

    def __call__(self, result: VectorResult, done: int, total: int) -> None:
        self._failed[result.vector_id] = result.fails_run
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self._last < self.interval:
            return
        self._last = now
        failed = sum(self._failed.values())
        self.show(f"[{done}/{total}] {done - failed} passed, {failed} failed  {result.vector_id}")


def format_result(result: VectorResult, paths: Sequence[str] = ()) -> str:
    """A failing (or stale known-failure) result: its one line, then indented details, the
    last naming the command that shows its calls (``paths``: the suite run, if not the
    committed one)."""
    head = ("FAIL " if result.fails_run else "known failure: ") + escape(
        result.describe(), one_line=True
    )
    lines = [head]
    if result.passed:
        return head
    if result.expected is not None or result.actual is not None:
        lines.append(f"    expected: {json_text(result.expected, DISPLAY_LIMIT)}")
        lines.append(f"    actual:   {json_text(result.actual, DISPLAY_LIMIT)}")
    if result.diagnosis:
        lines.append(f"    diagnosis: {escape(result.diagnosis)}")
    if result.catches:
        lines.append(f"    this vector catches: {escape(result.catches)}")
    if result.elsewhere:
        lines.append(f"    {escape(result.elsewhere)}")
    if result.stderr_tail:
        lines.append("    adapter stderr (last lines):")
        lines.extend(f"      | {escape(line)}" for line in result.stderr_tail.splitlines())
    command = escape(show_command(result.vector_id, paths), one_line=True)
    lines.append(f"    its calls and the answers due: {command}")
    return "\n".join(lines)


def format_summary(run: RunResult, context: RunContext | None = None) -> str:
    """The text printed after a run: failures in suite order, then the summary lines.

    The last line is exactly ``N passed, M failed``.
    """
    context = context or RunContext()
    # Designed vectors first: a random or workload vector fails for many reasons at once.
    failing = sorted(
        (r for r in run.results if r.fails_run), key=lambda r: is_generated(r.vector_id)
    )
    lines = [format_result(r, context.paths) for r in failing]
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
            escape(
                f"adapter: {run.handshake.describe()}, protocol {run.handshake.protocol}, "
                f"capabilities: {capabilities}",
                one_line=True,
            )
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
    lines.extend(f"warning: {escape(warning)}" for warning in run.warnings)
    lines.append(f"{counts['passed']} passed, {counts['failed']} failed")
    return "\n".join(lines)


#: Characters of an expected or actual value shown in a failure.
DISPLAY_LIMIT = 400


# -- JSON --------------------------------------------------------------------------------------


def json_report(run: RunResult, context: RunContext | None = None) -> dict[str, Any]:
    """The JSON report (``snapkv-report/1``); see ``schema/report.schema.json``."""
    context = context or RunContext()
    handshake = run.handshake
    # No handshake when no vector ran (the protocol checks talk to the adapter raw): null.
    adapter: dict[str, Any] = {
        "argv": run.adapter_argv,
        "implementation": None,
        "protocol": None,
        "capabilities": None,
    }
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
        "ok": run.ok and not run.interrupted,
        **({"interrupted": True} if run.interrupted else {}),
        "warnings": list(run.warnings),
        "triage": None if run.triage is None else run.triage.to_json(),
        "results": [result.to_json() for result in run.results],
    }


def write_json_report(path: str | Path, run: RunResult, context: RunContext | None = None) -> None:
    """Write the JSON report to ``path`` (:func:`conformance.report.outputs.write_output`).

    Strict JSON whatever the adapter sent (:func:`conformance.spec.text.json_document`): an answer
    holding ``1e400`` is written ``1e999``, never ``Infinity``.
    """
    write_output(path, (json_document(json_report(run, context)) + "\n").encode("utf-8"))


# -- JUnit XML ---------------------------------------------------------------------------------

# Characters XML 1.0 cannot hold, even escaped; adapter stderr may contain any of them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    """``text`` as XML 1.0 can hold it: control characters and lone surrogates escaped."""
    return _NOT_XML.sub("\ufffd", escape(text))


def junit_xml(run: RunResult, context: RunContext | None = None) -> bytes:
    """The run as JUnit XML: one testcase per vector, named by its id.

    Process verdicts (crash, timeout, protocol-error) are ``<error>``, other failures
    ``<failure>``, known failures that still fail ``<skipped>``; a listed vector that passes is
    a ``<failure>`` (the list went stale).

    Valid against Jenkins' ``junit-10.xsd``, which the other common consumers (GitLab, the
    usual GitHub reporters) accept too: ``<testsuites>`` carries only name, tests, failures,
    errors and time; ``<skipped>`` only a message; times have at most three decimals. The
    suite's ``time`` is the run's wall time; a case's ``time`` is its vector's own time, from
    its first request to its verdict, so with ``--jobs`` above 1 case times overlap and may
    add up to more than the suite's.
    """
    context = context or RunContext()
    name = "snapkv-conformance"
    if run.handshake is not None:
        name += f": {run.handshake.describe()}"
    if run.shard is not None:
        name += f" shard {run.shard[0]}/{run.shard[1]}"
    cases = [_testcase(result, context.paths) for result in run.results]
    tally = Counter(kind for _, kind in cases)
    attributes = {
        "name": _xml_text(name),
        "tests": str(len(cases)),
        "failures": str(tally["failure"]),
        "errors": str(tally["error"]),
        "time": _seconds(run.duration),
    }
    root = ET.Element("testsuites", attributes)
    suite = ET.SubElement(root, "testsuite", {**attributes, "skipped": str(tally["skipped"])})
    pairs = _properties(run, context)
    if pairs:  # junit-10.xsd wants at least one property in <properties>
        properties = ET.SubElement(suite, "properties")
        for key, value in pairs:
            ET.SubElement(properties, "property", {"name": key, "value": _xml_text(value)})
    for case, _ in cases:
        suite.append(case)
    if run.triage is not None:
        ET.SubElement(suite, "system-out").text = _xml_text("\n".join(run.triage.lines()))
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _seconds(duration: float) -> str:
    """A JUnit time: seconds with at most three decimals (junit-10.xsd's pattern)."""
    return f"{max(duration, 0.0):.3f}"


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
    if run.triage is not None:
        pairs.append(("triage", run.triage.headline()))
    return pairs


def _testcase(result: VectorResult, paths: Sequence[str] = ()) -> tuple[ET.Element, str]:
    group = result.vector_id.rpartition("/")[0] or result.vector_id
    case = ET.Element(
        "testcase",
        {
            "classname": _xml_text(group.replace("/", ".")),
            "name": _xml_text(result.vector_id),
            "time": _seconds(result.duration),
        },
    )
    kind = "passed"
    if result.fails_run:
        kind = "error" if result.verdict in PROCESS_VERDICTS else "failure"
    elif result.known_failure:
        kind = "skipped"
    if kind != "passed":
        attributes = {"message": _xml_text(result.describe())}
        if kind != "skipped":  # junit-10.xsd allows only a message on <skipped>
            attributes["type"] = result.verdict if not result.passed else "stale-known-failure"
        child = ET.SubElement(case, kind, attributes)
        if kind != "skipped":
            child.text = _xml_text(format_result(result, paths))
    if result.stderr_tail and kind != "passed":
        ET.SubElement(case, "system-err").text = _xml_text(result.stderr_tail)
    return case, kind


def write_junit(path: str | Path, run: RunResult, context: RunContext | None = None) -> None:
    write_output(path, junit_xml(run, context))


def junit_error_xml(message: str, adapter_argv: Sequence[str] | None = None) -> bytes:
    """JUnit XML for a run that stopped before judging anything (exit status 2): one testcase,
    ``snapkv-conformance run``, in error with ``message``, so that a CI job that collects the
    file shows why instead of finding none."""
    attributes = {"name": "snapkv-conformance", "tests": "1", "failures": "0", "errors": "1"}
    attributes["time"] = _seconds(0.0)
    root = ET.Element("testsuites", attributes)
    suite = ET.SubElement(root, "testsuite", {**attributes, "skipped": "0"})
    if adapter_argv is not None:
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(
            properties, "property", {"name": "adapter.argv", "value": json.dumps(adapter_argv)}
        )
    case = ET.SubElement(
        suite,
        "testcase",
        {"classname": "snapkv-conformance", "name": "snapkv-conformance run", "time": "0.000"},
    )
    first = message.splitlines()[0] if message else "the run stopped"
    error = ET.SubElement(case, "error", {"message": _xml_text(first), "type": "run-stopped"})
    error.text = _xml_text(message)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write_junit_error(path: str | Path, message: str, adapter_argv: Sequence[str] | None) -> None:
    write_output(path, junit_error_xml(message, adapter_argv))
