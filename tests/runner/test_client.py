"""The runner's client (:mod:`conformance.runner.client`): what it keeps of an adapter's hello."""

from __future__ import annotations

from conformance.runner.client import Handshake


def test_spec_3_2_the_report_s_adapter_is_what_the_hello_answer_said():
    """SPEC.md §3.2: the answer to hello names the implementation (name, language, version),
    the protocol and the capabilities; the report's ``adapter`` keeps them under those names
    (schema/report.schema.json)."""
    handshake = Handshake("port", "c", "1.0", 1, ("scores",))
    assert handshake.to_json() == {
        "implementation": {"name": "port", "language": "c", "version": "1.0"},
        "protocol": 1,
        "capabilities": ["scores"],
    }
