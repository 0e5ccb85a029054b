"""The conformance matrix: several ports over one suite, as a Markdown table and an HTML page.

:func:`run_matrix` runs the suite, vectors and protocol checks, against each port in turn
(through the one :class:`conformance.runner.run.Run`, so every verdict is the one
``snapkv-conformance run`` would give) and :func:`to_markdown` / :func:`to_html` lay the
verdicts out as items against ports, with each port's pass count and its implementation's name,
language and version from the handshake at the top. The HTML page is self-contained (inline CSS, no
scripts, no external assets) and every piece of text in it is escaped, since adapter names and
failure messages come from the ports.

A port whose adapter cannot start gets a column of ``not-run`` cells and its start error; the
other ports still run.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conformance import __version__
from conformance.report.outputs import write_text
from conformance.runner.client import Handshake
from conformance.runner.results import VectorResult
from conformance.runner.run import Explanation, Run
from conformance.spec.text import escape
from conformance.suite.protocol_checks import ProtocolCheck
from conformance.suite.vectors import Vector
from conformance.transport.failures import AdapterStartError
from conformance.transport.process import CommandError, StartError, split_command
from conformance.transport.session import ANSWER_TIMEOUT

#: A row of the matrix: a vector or a protocol check (both have an id and a description).
Item = Vector | ProtocolCheck

#: The cell of a port that never ran the vector (its adapter did not start).
NOT_RUN = "not-run"


@dataclass(frozen=True)
class Port:
    """A named adapter command, as given by ``--adapter NAME=CMD``."""

    name: str
    argv: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> Port:
        """``NAME=CMD``, CMD split like a POSIX shell (the transport's one splitter); raise
        ValueError saying what is wrong."""
        name, sep, command = text.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ValueError(f"expected NAME=CMD, got {text!r}")
        try:
            argv = split_command(command, name)
        except CommandError as error:
            raise ValueError(str(error)) from None
        return cls(name, tuple(argv))


@dataclass
class Column:
    """One port's results: a verdict per vector id, or the reason it did not run."""

    port: Port
    handshake: Handshake | None = None
    start_error: str | None = None
    results: dict[str, VectorResult] = field(default_factory=dict)
    triage: Explanation | None = None
    #: Why a failing port has no triage ("" when it has one, or passed).
    triage_note: str = ""

    def verdict(self, vector_id: str) -> str:
        result = self.results.get(vector_id)
        return NOT_RUN if result is None else result.verdict

    def passed(self) -> int:
        return sum(result.passed for result in self.results.values())

    @property
    def implementation(self) -> tuple[str, str, str]:
        """(name, language, version) from the handshake; dashes when there was none."""
        if self.handshake is None:
            return ("-", "-", "-")
        return (self.handshake.name, self.handshake.language, self.handshake.version)


@dataclass
class Matrix:
    vectors: list[Vector]
    columns: list[Column]
    checks: list[ProtocolCheck] = field(default_factory=list)
    #: Stopped by a signal: the columns are the ports that finished.
    interrupted: bool = False

    @property
    def items(self) -> list[Item]:
        """The rows: the vectors, then the protocol checks."""
        return [*self.vectors, *self.checks]

    @property
    def all_pass(self) -> bool:
        return all(column.passed() == len(self.items) for column in self.columns)


Progress = Callable[[Port], Callable[[VectorResult, int, int], None] | None]


def run_matrix(
    vectors: Sequence[Vector],
    ports: Sequence[Port],
    *,
    checks: Sequence[ProtocolCheck] = (),
    jobs: int = 1,
    timeout: float = ANSWER_TIMEOUT,
    progress: Progress | None = None,
) -> Matrix:
    """Run ``vectors`` and ``checks`` against every port, one port after another.

    ``progress(port)`` may return a per-item progress callback for that port's run.
    """
    columns = list(
        run_columns(vectors, ports, checks=checks, jobs=jobs, timeout=timeout, progress=progress)
    )
    return Matrix(list(vectors), columns, list(checks))


def run_columns(
    vectors: Sequence[Vector],
    ports: Sequence[Port],
    *,
    checks: Sequence[ProtocolCheck] = (),
    jobs: int = 1,
    timeout: float = ANSWER_TIMEOUT,
    progress: Progress | None = None,
) -> Iterator[Column]:
    """Each port's column of :func:`run_matrix`, as soon as its port is done, so that a front
    end interrupted while a later port runs still has the finished ones to write. A port
    interrupted during its triage is given without it (its run is finished); one interrupted
    during its run is not given."""
    for port in ports:
        column = Column(port)
        try:
            run = Run(
                list(vectors),
                list(checks),
                list(port.argv),
                jobs=jobs,
                timeout=timeout,
                progress=progress(port) if progress is not None else None,
                triage=True,
            ).execute()
        except (AdapterStartError, StartError, OSError) as error:
            column.start_error = str(error)
            yield column
            continue
        column.handshake = run.handshake
        column.results = {result.vector_id: result for result in run.results}
        column.triage, column.triage_note = run.triage, run.no_triage
        yield column  # the caller keeps it, even when the triage was interrupted
        if run.stopped is not None:  # the interruption goes on from here
            raise run.stopped


def summary_lines(matrix: Matrix) -> list[str]:
    """One line per port: ``name: passed/total (implementation)``, for the terminal."""
    total = len(matrix.items)
    lines = []
    for column in matrix.columns:
        name, language, version = column.implementation
        what = (
            column.start_error.splitlines()[0]
            if column.start_error
            else (f"{name} ({language}) {version}")
        )
        line = f"{column.port.name}: {column.passed()}/{total} passed - {what}"
        lines.append(escape(line, one_line=True))
    return lines


# -- Markdown ----------------------------------------------------------------------------------


def themes(matrix: Matrix) -> list[tuple[str, list[Item]]]:
    """The items grouped by theme (an id's first segment: ``protocol`` for the checks), themes
    in order of first appearance, items in matrix order within each."""
    grouped: dict[str, list[Item]] = {}
    for item in matrix.items:
        grouped.setdefault(item.id.split("/", 1)[0], []).append(item)
    return list(grouped.items())


def _theme_size(items: Sequence[Item]) -> str:
    """``4 vectors``, or ``40 checks`` for the protocol checks."""
    checks = all(isinstance(item, ProtocolCheck) for item in items)
    return f"{len(items)} {'checks' if checks else 'vectors'}"


def _scope(matrix: Matrix) -> str:
    """``154 vectors and 40 protocol checks`` (or only the vectors)."""
    scope = f"{len(matrix.vectors)} vectors"
    return scope + (f" and {len(matrix.checks)} protocol checks" if matrix.checks else "")


def _theme_count(column: Column, vectors: Sequence[Item]) -> str:
    passed = sum(column.verdict(vector.id) == "pass" for vector in vectors)
    return f"{passed}/{len(vectors)}"


#: Characters that mean something to Markdown (or to the HTML it may hold), and their escape.
_MARKDOWN = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        **{char: "\\" + char for char in "\\|`*_[]"},
    }
)


def _md(text: str) -> str:
    """Text from a port, inert in Markdown: one line, control characters escaped, and every
    character Markdown or inline HTML would act on escaped, so that an adapter's name cannot
    open a tag, a link (``javascript:``) or a table cell when a wiki or MkDocs renders the
    file."""
    return escape(" ".join(str(text).split()), one_line=True).translate(_MARKDOWN)


def _md_kit(text: str) -> str:
    """The kit's own text (a triage line) for Markdown: its marks (`` `code` ``) kept, what
    could break the line or the page (newlines, pipes, inline HTML) escaped."""
    flat = escape(" ".join(str(text).split()), one_line=True)
    return flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def _triage_line(column: Column) -> str:
    """The triage's headline of a failing port, why it has none, or ``""``."""
    return column.triage.headline() if column.triage is not None else column.triage_note


def _stopped(matrix: Matrix) -> str:
    """The note of an interrupted matrix (the kit's own words, safe in Markdown and HTML)."""
    if not matrix.interrupted:
        return ""
    return " Interrupted: only the ports listed ran; the others did not."


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def to_markdown(matrix: Matrix) -> str:
    """The matrix as GitHub-flavoured Markdown: ports and pass counts, each failing port's
    triage and failures, then the table of vectors against ports."""
    total = len(matrix.items)
    lines = [
        "# SnapKV conformance matrix",
        "",
        f"{_scope(matrix)} against {len(matrix.columns)} port(s), "
        f"judged by snapkv-conformance {__version__}.{_stopped(matrix)}",
        "",
        _md_row(["port", "implementation", "language", "version", "passed"]),
        _md_row(["---"] * 4 + ["---:"]),
    ]
    for column in matrix.columns:
        name, language, version = column.implementation
        if column.start_error:
            name = f"did not start: {column.start_error.splitlines()[0]}"
        cells = [column.port.name, name, language, version, f"{column.passed()}/{total}"]
        lines.append(_md_row([_md(cell) for cell in cells]))
    triaged = [column for column in matrix.columns if _triage_line(column)]
    if triaged:
        lines += ["", "## Triage", ""]
        for column in triaged:
            headline = _md_kit(_triage_line(column))
            lines.append(f"- **{_md(column.port.name)}**: {headline}")
    failures = _failures(matrix)
    if failures:
        lines += ["", "## Failures", ""]
        lines += [f"- **{_md(port)}**: {_md(result.describe())}" for port, result in failures]
    lines += ["", _md_row(["vector", *(_md(c.port.name) for c in matrix.columns)])]
    lines.append(_md_row(["---"] * (len(matrix.columns) + 1)))
    for theme, vectors in themes(matrix):
        counts = [f"**{_theme_count(column, vectors)}**" for column in matrix.columns]
        lines.append(_md_row([f"**{_md(theme)}/** ({_theme_size(vectors)})", *counts]))
        for vector in vectors:
            cells = []
            for column in matrix.columns:
                verdict = column.verdict(vector.id)
                cells.append(verdict if verdict == "pass" else f"**{verdict}**")
            lines.append(_md_row([f"`{_md(vector.id)}`", *cells]))
    return "\n".join(lines) + "\n"


def _failures(matrix: Matrix) -> list[tuple[str, VectorResult]]:
    return [
        (column.port.name, column.results[vector.id])
        for column in matrix.columns
        for vector in matrix.items
        if vector.id in column.results and not column.results[vector.id].passed
    ]


# -- HTML --------------------------------------------------------------------------------------

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
thead th { background: #f3f3f3; position: sticky; top: 0; }
td.id { font-family: ui-monospace, monospace; }
td.num { text-align: right; }
code { font-family: ui-monospace, monospace; background: #f3f3f3; padding: 0 0.2em; }
.pass { background: #e3f6e3; color: #165c16; }
.fail { background: #fbe3e3; color: #8a1616; font-weight: bold; }
.not-run { background: #eee; color: #666; }
.all { color: #165c16; font-weight: bold; }
li { margin: 0.3em 0; }
tr.theme th { background: #f8f8f8; }
"""


def _cell_class(verdict: str) -> str:
    if verdict == "pass":
        return "pass"
    return "not-run" if verdict == NOT_RUN else "fail"


def _html(text: str) -> str:
    """Text for HTML: control characters and lone surrogates escaped, then markup."""
    return html.escape(escape(str(text)))


#: Markdown's inline marks as the kit's texts use them: `code`, **bold** and *emphasis*.
_MARKS = (
    (re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
    (re.compile(r"\*\*([^*]+)\*\*"), r"<b>\1</b>"),
    (re.compile(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])"), r"<em>\1</em>"),
)


def _html_marked(text: str) -> str:
    """Text as :func:`_html` makes it, with Markdown's inline marks (triage lines and failure
    messages use them) rendered as HTML rather than shown literally. The marks are matched
    in the escaped text, so nothing from a port can open a tag of its own."""
    marked = _html(text)
    for pattern, replacement in _MARKS:
        marked = pattern.sub(replacement, marked)
    return marked


def _html_row(matrix: Matrix, vector: Item) -> str:
    e = _html
    row = [f'<tr><td class="id" title="{e(vector.description)}">{e(vector.id)}</td>']
    for column in matrix.columns:
        verdict = column.verdict(vector.id)
        result = column.results.get(vector.id)
        title = e(result.describe()) if result is not None and not result.passed else ""
        attr = f' title="{title}"' if title else ""
        row.append(f'<td class="{_cell_class(verdict)}"{attr}>{e(verdict)}</td>')
    return "".join(row) + "</tr>"


def to_html(matrix: Matrix) -> str:
    """The matrix as one self-contained HTML page (inline CSS, every text escaped): the ports
    and their pass counts, then each failing port's triage and failures, then the table of
    vectors against ports."""
    e = _html
    total = len(matrix.items)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        "<title>SnapKV conformance matrix</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<h1>SnapKV conformance matrix</h1>",
        f"<p>{_scope(matrix)} against {len(matrix.columns)} port(s), judged by "
        f"snapkv-conformance {e(__version__)}.{_stopped(matrix)}</p>",
        "<table>",
        "<thead><tr><th>port</th><th>implementation</th><th>language</th><th>version</th>"
        "<th>passed</th></tr></thead>",
        "<tbody>",
    ]
    for column in matrix.columns:
        name, language, version = column.implementation
        if column.start_error:
            name = f"did not start: {column.start_error.splitlines()[0]}"
        passed = column.passed()
        css = ' class="num all"' if passed == total else ' class="num"'
        out.append(
            f"<tr><td>{e(column.port.name)}</td><td>{e(name)}</td><td>{e(language)}</td>"
            f"<td>{e(version)}</td><td{css}>{passed}/{total}</td></tr>"
        )
    out += ["</tbody>", "</table>"]
    triaged = [column for column in matrix.columns if _triage_line(column)]
    if triaged:
        out += ["<h2>Triage</h2>", "<ul>"]
        for column in triaged:
            headline = _html_marked(_triage_line(column))
            out.append(f"<li><b>{e(column.port.name)}</b>: {headline}</li>")
        out.append("</ul>")
    failures = _failures(matrix)
    if failures:
        out += ["<h2>Failures</h2>", "<ul>"]
        out += [
            f"<li><b>{e(port)}</b>: {_html_marked(result.describe())}</li>"
            for port, result in failures
        ]
        out.append("</ul>")
    out += ["<table>", "<thead><tr><th>vector</th>"]
    out += [f"<th>{e(column.port.name)}</th>" for column in matrix.columns]
    out += ["</tr></thead>", "<tbody>"]
    for theme, vectors in themes(matrix):
        row = [f'<tr class="theme"><th>{e(theme)}/ ({_theme_size(vectors)})</th>']
        row += [f'<th class="num">{_theme_count(c, vectors)}</th>' for c in matrix.columns]
        out.append("".join(row) + "</tr>")
        out += [_html_row(matrix, vector) for vector in vectors]
    out += ["</tbody>", "</table>"]
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


def output_paths(out: str | Path) -> tuple[Path, Path]:
    """``FILE.md`` and ``FILE.html`` for ``--out FILE`` (a given .md/.html suffix is dropped)."""
    path = Path(out)
    if path.suffix.lower() in (".md", ".html", ".htm"):
        path = path.with_suffix("")
    return path.with_name(path.name + ".md"), path.with_name(path.name + ".html")


def write_matrix(matrix: Matrix, out: str | Path) -> tuple[Path, Path]:
    """Write the Markdown and HTML files (each whole or not at all, creating missing parent
    directories); return their paths. Raises OSError."""

    markdown, page = output_paths(out)
    write_text(markdown, to_markdown(matrix))
    write_text(page, to_html(matrix))
    return markdown, page
