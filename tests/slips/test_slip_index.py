"""The lookup table of the slip catalogue: serving one slip imports the module that defines it
(a catalogued mutant's, for the policy slips made from them), and the entry looked up is the
catalogue's own."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from conformance import slips
from conformance.slips.slip_index import FAMILY_OF


def test_the_table_names_every_slip_of_the_kit_s_own_and_its_family():
    own = {entry.name: entry.family for entry in slips.CATALOGUE if entry.mutant is None}
    assert own == FAMILY_OF, (
        "conformance/slips/slip_index.py is stale: FAMILY_OF must map every slip that is not a "
        "catalogued mutant to its family"
    )


_FRESH = textwrap.dedent(
    """
    import json, sys
    from conformance import slips

    found = slips.lookup(sys.argv[1])
    loaded = sorted(m for m in sys.modules if m.startswith("conformance.") or m == "numpy")
    print(json.dumps([found.name, loaded]))
    """
)

_EACH = textwrap.dedent(
    """
    import functools, json, sys
    from conformance import slips

    def described(entry):
        make = entry.make
        if isinstance(make, functools.partial):
            make = [make.func.__qualname__, [a.__qualname__ for a in make.args]]
        else:
            make = make.__qualname__
        return [entry.to_json(), make]

    names = json.loads(sys.stdin.read())
    early = {name: described(slips.lookup(name)) for name in names}  # before the catalogue
    built = "BY_NAME" in vars(slips)  # whether a lookup needed the whole catalogue
    late = {name: described(slips.BY_NAME[name]) for name in names}
    print(json.dumps([built, early == late, [n for n in names if early[n] != late[n]]]))
    """
)


def fresh(script: str, *args: str, stdin: str = "") -> list:
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        input=stdin.encode(),
        capture_output=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def test_looking_up_a_slip_of_the_kit_s_own_loads_its_module_and_no_catalogue():
    found, loaded = fresh(_FRESH, "positions-uint32")
    assert found == "positions-uint32"
    assert "numpy" not in loaded
    assert [m for m in loaded if m.startswith(("conformance.slips.", "conformance.mutants"))] == [
        "conformance.slips.numbers_slips",
        "conformance.slips.slip_adapter",
        "conformance.slips.slip_index",
    ]


def test_looking_up_a_policy_slip_loads_the_mutant_s_module_alone():
    found, loaded = fresh(_FRESH, "float32-accumulation")
    assert found == "float32-accumulation"
    family_modules = [m for m in loaded if m.rsplit(".", 1)[-1].endswith("_slips")]
    assert family_modules == ["conformance.slips.policy_slips"]
    catalogue = [m for m in loaded if m.startswith("conformance.mutants.")]
    assert catalogue == [
        "conformance.mutants._base",
        "conformance.mutants.model",
        "conformance.mutants.mutant_index",
        "conformance.mutants.summation",
    ]


def test_every_slip_looked_up_before_the_catalogue_is_the_catalogue_s_entry():
    names = [entry.name for entry in slips.CATALOGUE]
    built, same, differing = fresh(_EACH, stdin=json.dumps(names))
    assert not built, "a slip was found only by building the whole catalogue"
    assert differing == []
    assert same


def test_an_unknown_slip_still_lists_the_whole_catalogue():
    with pytest.raises(KeyError) as raised:
        slips.lookup("no-such-slip")
    message = raised.value.args[0]
    assert message.startswith("unknown slip 'no-such-slip'; the catalogue has: ")
    assert all(entry.name in message for entry in slips.CATALOGUE)
