"""``bench`` names a differing answer by the id of the request it answers, the one numbering a
porter sees in the request stream and in both answers."""

from __future__ import annotations

import json
import re

from conformance.adapter.server import Session
from conformance.spec.protocol import decode
from conformance.tools import bench


def test_a_differing_answer_is_named_by_the_id_of_the_request_it_answers() -> None:
    """The reference's answers to a workload's stream (its own session, in process), one
    evict's victims changed in the port's copy: the message names that evict's request id,
    read from the stream's own request line, and both answers shown carry it."""
    workload = bench.Workload("t", budget=4, recent_window=1, obs_window=2, pool_kernel=3, steps=9)
    requests = [decode(line) for line in workload.stream().splitlines()]
    session = Session()
    answers = [session.handle(request) for request in requests]
    # What time_adapter keeps: every answer after hello's, one per line; bye answered too.
    reference = [json.dumps(answer, separators=(",", ":")) for answer in answers[1:]]
    evicts = [i for i, request in enumerate(requests) if request["op"] == "evict"]
    changed = evicts[-1]  # a late one: an off-by-one in the numbering shows
    wanted_id = requests[changed]["id"]
    assert answers[changed]["victims"], "the workload's last evict must evict something"
    port = list(reference)
    port[changed - 1] = json.dumps({**answers[changed], "victims": [10**6]})

    said = bench.agreement("\n".join(reference).encode() + b"\n", "\n".join(port).encode() + b"\n")

    assert said.startswith(f"the answer to request id {wanted_id} differs: "), said
    shown_ids = re.findall(r'"id": ?(\d+)', said)
    assert shown_ids == [str(wanted_id), str(wanted_id)], said
