"""The lookup table of the catalogue: every mutant's family module, so that serving one mutant
imports that module alone, and the entry looked up is the catalogue's own."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from conformance import mutants
from conformance.mutants.mutant_index import FAMILY_OF


def test_the_table_names_every_catalogued_mutant_and_its_family_module():
    catalogued = {mutant.name: mutant.family for mutant in (*mutants.CATALOGUE, *mutants.PROTOCOL)}
    assert catalogued == FAMILY_OF, (
        "conformance/mutants/mutant_index.py is stale: FAMILY_OF must map every mutant of the "
        "catalogue to the module that defines it"
    )


_FRESH = textwrap.dedent(
    """
    import json, sys
    from conformance import mutants
    from conformance.mutants.mutant_index import FAMILY_OF

    first = sys.argv[1]
    entry = mutants.lookup(first)
    loaded = sorted(m for m in sys.modules if m.startswith("conformance.mutants."))
    # The rest looked up one by one, before the catalogue is built: each the catalogue's own.
    looked_up = {name: mutants.lookup(name) for name in FAMILY_OF}
    same = all(looked_up[name] is mutants.BY_NAME[name] for name in FAMILY_OF)
    print(json.dumps([entry.name, loaded, same, entry is mutants.BY_NAME[first]]))
    """
)


def looked_up_fresh(name: str) -> tuple[str, list[str], bool, bool]:
    """In a fresh interpreter: the name of what ``lookup(name)`` returned, the mutant modules
    loaded then, whether every mutant looked up before the catalogue was built is the entry
    the catalogue holds, and whether the first one is."""
    done = subprocess.run(
        [sys.executable, "-c", _FRESH, name], capture_output=True, timeout=120, check=True
    )
    found, loaded, every_same, first_same = json.loads(done.stdout)
    return found, loaded, every_same, first_same


def test_looking_up_a_mutant_loads_its_family_module_and_no_other():
    found, loaded, _, _ = looked_up_fresh("float32-accumulation")
    assert found == "float32-accumulation"
    family = ["conformance.mutants.summation"]
    assert [m for m in loaded if m.rsplit(".", 1)[-1] in (*mutants.FAMILIES, "protocol")] == family


def test_what_lookup_returns_before_the_catalogue_is_built_is_the_catalogue_s_entry():
    _, _, every_same, first_same = looked_up_fresh("first-name-wins")
    assert first_same
    assert every_same


def test_an_unknown_name_still_lists_the_whole_catalogue():
    with pytest.raises(KeyError) as raised:
        mutants.lookup("no-such-mutant")
    message = raised.value.args[0]
    assert message.startswith("unknown mutant 'no-such-mutant'; the catalogue has: ")
    assert all(name in message for name in mutants.names())
