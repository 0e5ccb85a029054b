"""Text for people: JSON's words, caps with a note, and escapes for a terminal."""

from __future__ import annotations

import json

import pytest

from conformance.spec.text import (
    capped,
    capped_list,
    catches_of,
    escape,
    json_document,
    json_text,
    split_description,
)


def strict_loads(text: str):
    def refuse(name: str):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        ([], "[]"),
        ({}, "{}"),
        ("a", '"a"'),
        ([1, None, {"k": [True]}], '[1, null, {"k": [true]}]'),
        (0.1, "0.1"),
        (float("inf"), "1e999"),
        (float("-inf"), "-1e999"),
        (b'{"id":\xff', '"{\\"id\\":\\xff"'),
    ],
)
def test_values_are_shown_in_json_words(value, shown):
    assert json_text(value) == shown


def test_shown_values_parse_back_as_json_when_not_capped():
    value = {"victims": [3, 1], "error": None, "ok": False, "s": 'é"\\'}
    assert strict_loads(json_text(value, None)) == value


def test_a_long_value_is_cut_with_a_note_of_what_was_cut():
    text = json_text(list(range(100)), 20)
    whole = json.dumps(list(range(100)), separators=(", ", ": "))
    assert text == f"{whole[:20]}... ({len(whole) - 20:,} more characters)"


def test_a_huge_value_is_shown_without_walking_all_of_it():
    text = json_text(list(range(10**6)), 30)
    assert text.startswith("[0, 1, 2, 3, 4, 5, 6, 7, 8, 9,")
    assert "(cut; more than" in text and len(text) < 100


def test_deep_nesting_is_shown_to_a_depth_and_never_overflows():
    value: list = []
    inner = value
    for _ in range(5000):
        inner.append([])
        inner = inner[0]
    text = json_text(value, None)
    assert text.startswith("[[[[") and "[...]" in text


def test_capped_text_and_lists_say_how_much_was_cut():
    assert capped("abc", 3) == "abc"
    assert capped("x" * 12_348, 3) == "xxx... (12,345 more characters)"
    assert capped_list([1, 2, 3, 4], 2) == [1, 2, "... (2 more items)"]
    assert capped_list([1, 2], 2) == [1, 2]


def test_control_characters_and_lone_surrogates_are_escaped():
    raw = "a\x1b[2Jb\x00c\x07d\x7fe\x9bf\ud800g\u202eh\ti\nj\rk"
    assert escape(raw) == "a\\e[2Jb\\x00c\\x07d\\x7fe\\x9bf\\ud800g\\u202eh\ti\nj\\rk"
    assert escape(raw, one_line=True).endswith("h\\ti\\nj\\rk")
    assert escape("plain é 漢字 🙂") == "plain é 漢字 🙂"
    escape(raw).encode("utf-8")  # no lone surrogate left: it encodes


def test_shown_values_are_terminal_safe():
    shown = json_text({"message": "\x1b]0;title\x07\ud800"})
    assert "\x1b" not in shown and "\x07" not in shown
    shown.encode("utf-8")


def test_documents_are_strict_json_whatever_the_values():
    value = {"a": [float("inf"), float("-inf"), float("nan")], "s": "x\ud800y\x1b", "n": 1.5}
    text = json_document(value)
    assert "Infinity" not in text and "NaN" not in text
    parsed = strict_loads(text.encode("utf-8").decode("utf-8"))
    assert parsed == {"a": [float("inf"), float("-inf"), None], "s": "x\ud800y\x1b", "n": 1.5}


def test_documents_keep_a_string_that_looks_like_the_marker():
    value = {"inf": float("inf"), "s": "snapkv-0+"}
    assert strict_loads(json_document(value))["s"] == "snapkv-0+"


def test_descriptions_split_at_catches():
    assert split_description("Pins ties. Catches: ties to the higher position.") == (
        "Pins ties.",
        "ties to the higher position.",
    )
    assert split_description("Pins nothing in particular.") == ("Pins nothing in particular.", None)
    assert catches_of("No marker.") == ""
    assert catches_of("A. Catches: B.") == "B."
