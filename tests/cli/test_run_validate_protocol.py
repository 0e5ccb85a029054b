"""``run --validate-protocol``: every answer is also checked against the shipped schemas.

The broken adapter ``extra_answer_field`` adds a field protocol v1 does not define to every
evict answer. The checker's shape rules ignore unknown fields, so a plain run passes it; the
response schema is closed, so with the option each vector fails as a protocol-error that names
the schema and the field.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.runner_support import REFERENCE_ARGV, broken
from tests.support.small_suite import write_small_suite


def run(tmp_path: Path, argv: list[str], *options: str) -> tuple[int, dict, str]:
    suite = write_small_suite(tmp_path / "vectors")
    report = tmp_path / "report.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance",
            "run",
            str(suite),
            "--adapter",
            " ".join(argv),
            "--report",
            str(report),
            *options,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.returncode, json.loads(report.read_text()), done.stdout


def verdicts(report: dict) -> dict[str, str]:
    return {vector["id"]: vector["verdict"] for vector in report["results"]}


def test_without_the_option_unknown_answer_fields_pass(tmp_path: Path) -> None:
    status, report, _ = run(tmp_path, broken("extra_answer_field"))
    assert status == 0
    assert set(verdicts(report).values()) == {"pass"}


def test_with_the_option_an_answer_breaking_the_schema_is_a_protocol_error(
    tmp_path: Path,
) -> None:
    status, report, stdout = run(tmp_path, broken("extra_answer_field"), "--validate-protocol")
    assert status == 1
    assert set(verdicts(report).values()) == {"protocol-error"}
    assert "does not validate against schema/protocol/response.schema.json" in stdout
    assert '"note"' in stdout


def test_the_reference_validates(tmp_path: Path) -> None:
    status, report, _ = run(tmp_path, REFERENCE_ARGV, "--validate-protocol")
    assert status == 0
    assert set(verdicts(report).values()) == {"pass"}
