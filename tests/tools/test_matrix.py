"""The conformance matrix: two ports over a small suite, its Markdown and HTML, and the CLI."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from conformance.spec import resources
from conformance.suite.vectors import load_suite
from conformance.tools import matrix
from conformance.tools.matrix import Port
from tests.support.paths import TESTS
from tests.support.runner_support import (
    REFERENCE_ARGV,
    broken,
    mutant_argv,
    plain_vector,
    trigger_vector,
    write_suite,
)
from tests.support.small_suite import IDS, write_small_suite

REFERENCE = shlex.join(REFERENCE_ARGV)
TIES = shlex.join(mutant_argv("ties-to-higher-position"))


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    return write_small_suite(tmp_path_factory.mktemp("suite"))


@pytest.fixture(scope="module")
def two_ports(suite) -> matrix.Matrix:
    ports = [matrix.Port.parse(f"reference={REFERENCE}"), matrix.Port.parse(f"ties={TIES}")]
    return matrix.run_matrix(load_suite([suite]), ports, timeout=10)


def test_port_parse():
    assert matrix.Port.parse("rust=./target/adapter --fast") == matrix.Port(
        "rust", ("./target/adapter", "--fast")
    )
    assert matrix.Port.parse("c = 'my adapter' x").argv == ("my adapter", "x")
    for bad in ("no-equals", "=cmd", "name=", "name='unclosed"):
        with pytest.raises(ValueError):
            matrix.Port.parse(bad)


def test_verdicts_and_pass_counts(two_ports):
    reference, ties = two_ports.columns
    assert [reference.verdict(i) for i in IDS] == ["pass"] * 4
    assert [ties.verdict(i) for i in IDS] == ["pass", "pass", "wrong-victims", "wrong-victims"]
    assert (reference.passed(), ties.passed()) == (4, 2)
    assert reference.implementation == ("snapkv-conformance reference", "python", "0.1.0")
    assert ties.implementation[0] == "mutant:ties-to-higher-position"
    assert not two_ports.all_pass


def test_markdown(two_ports):
    text = matrix.to_markdown(two_ports)
    lines = text.splitlines()
    assert "| reference | snapkv-conformance reference | python | 0.1.0 | 4/4 |" in lines
    assert "| ties | mutant:ties-to-higher-position | python | 0.1.0 | 2/4 |" in lines
    assert "| vector | reference | ties |" in lines
    assert "| `tiny/ties` | pass | **wrong-victims** |" in lines
    assert "| `tiny/refusal` | pass | pass |" in lines
    # Each theme opens with its own row: how many of its vectors each port passed.
    assert "| **tiny/** (4 vectors) | **4/4** | **2/4** |" in lines
    assert lines.index("| **tiny/** (4 vectors) | **4/4** | **2/4** |") < lines.index(
        "| `tiny/refusal` | pass | pass |"
    )
    # The pass counts come before the table, and each failure is listed with its message.
    assert text.index("2/4") < text.index("| vector |")
    failures = [line for line in lines if line.startswith("- **ties**: tiny/ties: call 3 (evict)")]
    assert len(failures) == 1 and "wrong-victims" in failures[0]


def test_html_is_self_contained(two_ports):
    page = matrix.to_html(two_ports)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<style>" in page
    for external in ("<script", "<link", "src=", "http://", "https://", "@import", "url("):
        assert external not in page
    assert re.search(
        r'<td class="fail" title="tiny/ties: call 3 \(evict\)[^"]*">wrong-victims', page
    )
    assert '<td class="num all">4/4</td>' in page and '<td class="num">2/4</td>' in page
    assert (
        '<tr class="theme"><th>tiny/ (4 vectors)</th><th class="num">4/4</th>'
        '<th class="num">2/4</th></tr>'
    ) in page


def test_themes_keep_first_appearance_order():
    ids = ["ties/a", "null/b", "ties/c", "ring/d", "null/e"]
    fake = SimpleNamespace(items=[SimpleNamespace(id=i) for i in ids])
    grouped = [(theme, [v.id for v in vectors]) for theme, vectors in matrix.themes(fake)]
    assert grouped == [
        ("ties", ["ties/a", "ties/c"]),
        ("null", ["null/b", "null/e"]),
        ("ring", ["ring/d"]),
    ]


def test_everything_from_the_ports_is_escaped(suite, tmp_path):
    hostile = tmp_path / "hostile.py"
    hostile.write_text(
        textwrap.dedent(
            """
            import sys
            from conformance.adapter.server import serve
            name = {"name": "<script>alert('x')</script>", "language": "a|b", "version": "1&2"}
            sys.exit(serve(sys.stdin.buffer, sys.stdout.buffer, implementation=name))
            """
        )
    )
    port = matrix.Port("<b>port|name</b>", (sys.executable, str(hostile)))
    result = matrix.run_matrix(load_suite([suite]), [port], timeout=10)
    page = matrix.to_html(result)
    assert "<script>" not in page and "<b>port" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "1&amp;2" in page and "&lt;b&gt;port|name&lt;/b&gt;" in page
    # Inert in Markdown too: a wiki or MkDocs renders inline HTML, so none may come through.
    markdown = matrix.to_markdown(result)
    assert "| a\\|b | 1&amp;2 | 4/4 |" in markdown
    assert "&lt;b&gt;port\\|name&lt;/b&gt;" in markdown
    assert "<b>port" not in markdown and "<script>" not in markdown


def test_a_port_that_cannot_start_is_a_column_of_not_run(suite, tmp_path):
    ports = [matrix.Port("ghost", (str(tmp_path / "no-such-adapter"),))]
    result = matrix.run_matrix(load_suite([suite]), ports, timeout=5)
    (column,) = result.columns
    assert column.start_error and column.passed() == 0
    assert {column.verdict(i) for i in IDS} == {matrix.NOT_RUN}
    assert "did not start" in matrix.to_markdown(result)
    assert not result.all_pass


def test_output_paths():
    assert matrix.output_paths("out/table") == (Path("out/table.md"), Path("out/table.html"))
    assert matrix.output_paths("table.html") == (Path("table.md"), Path("table.html"))
    assert matrix.output_paths("v1.2") == (Path("v1.2.md"), Path("v1.2.html"))


def test_cli_exit_codes_and_files(suite, tmp_path):
    out = tmp_path / "report" / "matrix"
    failing = cli(
        str(suite), "--adapter", f"ref={REFERENCE}", "--adapter", f"ties={TIES}", "--out", str(out)
    )
    assert failing.returncode == 1, failing.stderr
    assert "ties: 2/4 passed" in failing.stdout
    assert out.with_name("matrix.md").is_file() and out.with_name("matrix.html").is_file()
    passing = cli(
        str(suite),
        "--adapter",
        f"a={REFERENCE}",
        "--adapter",
        f"b={REFERENCE}",
        "--jobs",
        "2",
        "--out",
        str(tmp_path / "ok"),
    )
    assert passing.returncode == 0, passing.stderr
    assert "| a | snapkv-conformance reference" in (tmp_path / "ok.md").read_text()


@pytest.mark.parametrize(
    "args",
    [
        ["--adapter", "no-equals-sign"],
        ["--adapter", f"x={REFERENCE}", "--adapter", f"x={REFERENCE}"],
        ["--adapter", f"x={REFERENCE}", "/no/such/vectors"],
        ["--adapter", f"x={REFERENCE}", "--timeout", "0"],
        [],
    ],
)
def test_cli_usage_errors(args, tmp_path):
    result = cli(*args, "--out", str(tmp_path / "m"))
    assert result.returncode == 2
    assert not (tmp_path / "m.md").exists()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance", "matrix", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_hostile_port_text_is_written_and_printed_escaped(tmp_path):
    suite = write_suite(tmp_path / "suite", [plain_vector("m/a"), trigger_vector("m/t")])
    hostile = shlex.join(broken("hostile_text"))
    out = tmp_path / "matrix"
    argv = [sys.executable, "-m", "conformance", "matrix", str(suite), "--adapter"]
    done = subprocess.run(
        [*argv, f"bad={hostile}", "--out", str(out)],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert b"Traceback" not in done.stderr
    for raw in (b"\x1b", b"\x00", b"\x07"):
        assert raw not in done.stdout
    assert b"hostile \\e[2J" in done.stdout
    for path in (out.with_name("matrix.md"), out.with_name("matrix.html")):
        text = path.read_text(encoding="utf-8")
        assert "\x1b" not in text and "\x00" not in text
        assert "\\ud800" in text


def test_html_puts_failures_before_the_table_and_renders_markdown_marks(two_ports):
    """The page opens with what a reader needs: pass counts, then failures (and triage), then
    the long table; the kit's Markdown marks become HTML, never literal backticks."""
    page = matrix.to_html(two_ports)
    assert page.index("2/4") < page.index("<h2>Failures</h2>") < page.index("<th>vector</th>")
    marked = matrix._html_marked("`np.sum` over **the ring** axis, *numbers* a*b*c <b>x</b>")
    assert marked == (
        "<code>np.sum</code> over <b>the ring</b> axis, <em>numbers</em> a*b*c &lt;b&gt;x&lt;/b&gt;"
    )
    assert matrix._html_marked("`<script>`") == "<code>&lt;script&gt;</code>"


def test_the_matrix_runs_the_protocol_checks_and_fails_a_lax_protocol_layer(suite, tmp_path):
    """The matrix runs the suite ``run`` runs, protocol checks included: a port whose hello
    accepts ``"protocol": true`` passes every vector and still does not pass the matrix."""
    from conformance.suite.stream import load_checks

    checks = [check for check in load_checks([resources.suite_dir()]) if "hello" in check.id]
    lax = Port("lax", (sys.executable, str(TESTS / "lax_adapters" / "lax.py"), "hello-loose"))
    result = matrix.run_matrix(load_suite([suite]), [lax], checks=checks, timeout=10)
    (column,) = result.columns
    assert all(column.verdict(vector.id) == "pass" for vector in result.vectors)
    assert column.verdict("protocol/hello-protocol-true") != "pass"
    assert not result.all_pass
    page = matrix.to_markdown(result)
    assert f"{len(result.vectors)} vectors and {len(checks)} protocol checks against 1 port" in page
    assert f"| **protocol/** ({len(checks)} checks) |" in page


def test_markdown_holds_no_live_html_or_links_from_a_port():
    """Hostile round 2, case 15: a port's name with a script, an event handler and a
    ``javascript:`` link stays text in the Markdown page."""
    name = "<img src=x onerror=alert(1)> [click](javascript:alert(1)) <script>x</script>"
    column = matrix.Column(matrix.Port(name, ("x",)), start_error="did not start")
    page = matrix.to_markdown(matrix.Matrix([], [column]))
    assert "<img" not in page and "<script" not in page
    assert not re.search(r"(?<!\\)\]\(", page)  # no link: every ] before ( is escaped
    assert "&lt;img src=x onerror=alert(1)&gt; \\[click\\](javascript:alert(1))" in page
