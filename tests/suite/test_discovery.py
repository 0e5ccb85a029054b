"""``conformance.suite.discovery.pick_one``: one id from an exact id or a ``-k`` pattern, with
a one-line refusal naming close ids or the several matched."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from conformance.suite.discovery import NoSuchItem, pick_one


@dataclass(frozen=True)
class Item:
    id: str


ITEMS = [Item(i) for i in ("ties/a", "ties/ab", "ties/abc", "order/x", "protocol/crlf")]


def test_an_exact_id_wins_over_the_longer_ids_it_is_part_of() -> None:
    assert pick_one(ITEMS, "ties/a") == Item("ties/a")


@pytest.mark.parametrize(("pattern", "found"), [("crlf", "protocol/crlf"), ("*/x", "order/x")])
def test_a_pattern_selecting_one_id_alone_names_it(pattern: str, found: str) -> None:
    assert pick_one(ITEMS, pattern) == Item(found)


def test_a_pattern_selecting_several_names_them_in_one_line() -> None:
    with pytest.raises(NoSuchItem) as raised:
        pick_one(ITEMS, "ties/*")
    assert str(raised.value) == (
        "'ties/*' matches 3 ids: ties/a, ties/ab, ties/abc; give one whole id"
    )


def test_a_pattern_selecting_many_names_the_first_five_and_counts_the_rest() -> None:
    many = [Item(f"random/n-{i}") for i in range(8)]
    with pytest.raises(NoSuchItem, match=r"matches 8 ids: random/n-0, .*, random/n-4 and 3 more;"):
        pick_one(many, "random/")


def test_an_id_that_names_nothing_says_which_are_close() -> None:
    with pytest.raises(NoSuchItem) as raised:
        pick_one(ITEMS, "protocol/crfl")
    assert str(raised.value) == (
        "no vector or protocol check has the id 'protocol/crfl'; close ids: protocol/crlf"
    )
    with pytest.raises(NoSuchItem, match=r"; no id is close to it$"):
        pick_one(ITEMS, "zzzz/qqqq")
