"""The slip catalogue (conformance.slips): every sentence has a slip, every entry is complete,
the policy mutants are filed, and the unchanged adapter is the reference adapter."""

from __future__ import annotations

import io
import json
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from conformance import mutants, slips
from conformance.slips import SlipAdapter
from conformance.slips._text import between_strings, lax_numbers, names, pieces
from conformance.slips.policy_slips import MUTANT_SENTENCES
from conformance.spec.resources import suite_dir
from conformance.spec.sentences import by_id, sentences
from conformance.suite.stream import load_checks
from conformance.suite.validation import reference_answers


def test_every_numbered_sentence_has_a_slip():
    have = slips.by_sentence()
    assert [s.id for s in sentences() if s.id not in have] == []


def test_every_slip_names_a_sentence_an_origin_and_what_it_does():
    known = by_id()
    assert len(slips.BY_NAME) == len(slips.CATALOGUE)
    for entry in slips.CATALOGUE:
        assert entry.sentence in known, entry.name
        assert len(entry.origin) > 20 and len(entry.doc) > 15, entry.name
        assert entry.family in slips.FAMILIES


def test_every_policy_mutant_is_filed_under_a_sentence_and_no_other_name_is():
    names_ = {m.name for m in mutants.CATALOGUE}
    assert set(MUTANT_SENTENCES) == names_
    filed = {entry.mutant for entry in slips.CATALOGUE if entry.mutant is not None}
    assert filed == names_


def test_the_unchanged_adapter_answers_every_check_as_the_reference_adapter():
    """The hooks unchanged are the reference's serve loop: a slip differs only by its own."""
    for check in load_checks([suite_dir()]):
        out = io.BytesIO()
        status = SlipAdapter().serve(io.BytesIO(check.payload), out)
        assert status == 0
        assert out.getvalue().splitlines() == reference_answers(check.payload), check.id


def test_a_served_slip_names_itself_in_hello():
    entry = slips.lookup("first-name-wins")
    out = io.BytesIO()
    entry.make(implementation=entry.implementation()).serve(
        io.BytesIO(b'{"id":1,"op":"hello","protocol":1}\n'), out
    )
    assert json.loads(out.getvalue())["implementation"]["name"] == "slip:first-name-wins"


def test_lookup_names_the_catalogue_when_the_name_is_unknown():
    try:
        slips.lookup("no-such-slip")
    except KeyError as error:
        assert "first-name-wins" in error.args[0]
    else:
        raise AssertionError("lookup accepted an unknown name")


NUMBERS = st.from_regex(r"\A-?(0|[1-9][0-9]{0,20})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?\Z")


@given(NUMBERS)
def test_lax_numbers_leaves_every_json_number_its_value(text):
    """The lax reader reads strict JSON exactly as the reference does: it may respell a number
    (1E+5 as 1e5) but never change its value, so the slip breaks only the number grammar."""
    rewritten = lax_numbers(f":{text},")[1:-1]
    assert Decimal(rewritten) == Decimal(text)
    assert json.loads(rewritten) == json.loads(text)


def test_lax_numbers_reads_what_a_lenient_reader_takes():
    assert lax_numbers(":+3,03,.5,3.,1.e5,-01") == ":3,3,0.5,3,1e5,-1"


def test_pieces_keep_strings_whole_escapes_included():
    text = '{"a\\"b":"c:d",1}'
    assert "".join(piece for _, piece in pieces(text)) == text
    assert [piece for inside, piece in pieces(text) if inside] == ['"a\\"b"', '"c:d"']
    assert between_strings(text, str.upper) == text
    assert names(text, lambda name: name.upper()) == '{"A\\"B":"c:d",1}'
