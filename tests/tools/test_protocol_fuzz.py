"""The protocol fuzzer draws no line it cannot build."""

from __future__ import annotations

import itertools
import json

from conformance.adapter.server import Session
from conformance.tools import protocol_fuzz
from conformance.tools.protocol_fuzz import IDS, OPS, UNKNOWN_OPS, Plan


def test_a_line_without_members_is_the_empty_object_whatever_else_was_drawn() -> None:
    """Left-over 3: an id drawn "missing", an op drawn "missing" and no extra field leave no
    member; the decoy, the rotation and the escape used to take a modulo by zero."""
    session = Session()
    op = len(OPS) + UNKNOWN_OPS.index("missing")
    for decoy, order, escape, spacing in itertools.product(range(5), range(4), range(4), range(5)):
        plan = Plan(op, IDS.index("missing"), 0, 0, (), decoy, 0, order, escape, spacing, False)
        line = protocol_fuzz._line(plan, 2, session)
        assert json.loads(line) == {}, line
