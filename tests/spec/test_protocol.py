"""What the protocol module keeps of an adapter's words: capped, whatever it sends."""

from __future__ import annotations

from conformance.spec.protocol import parse_hello_answer, validate_message


def hello(implementation: dict[str, str], capabilities: list[str]) -> dict[str, object]:
    return {
        "id": 1,
        "ok": True,
        "protocol": 1,
        "implementation": implementation,
        "capabilities": capabilities,
    }


def test_a_hello_s_names_are_kept_capped() -> None:
    """A port naming itself with 10 MiB keeps a name a report header can hold."""
    huge = "n" * (10 << 20)
    read = parse_hello_answer(hello({"name": huge, "language": huge, "version": huge}, []))
    for value in read.implementation.values():
        assert len(value) < 300 and value.startswith("nnn") and "more characters)" in value


def test_a_million_capabilities_are_kept_capped_and_scores_is_never_lost() -> None:
    capabilities = [f"cap-{index}" for index in range(1_000_000)] + ["scores"]
    read = parse_hello_answer(hello({"name": "p", "language": "c", "version": "1"}, capabilities))
    assert len(read.capabilities) == 34
    assert read.capabilities[:2] == ("cap-0", "cap-1") and "scores" in read.capabilities
    assert read.capabilities[-1] == "... (999,968 more capabilities)"


def test_schema_messages_are_capped() -> None:
    """An answer with 500,000 extra members breaks the schema once; the message does not
    quote all 500,000 names."""
    answer = {"id": 3, "ok": True, **{f"extra{index}": 0 for index in range(500_000)}}
    problems = validate_message("response", answer, "step")
    assert problems and all(len(problem) < 1_200 for problem in problems)
    assert sum(map(len, problems)) < 5_000
