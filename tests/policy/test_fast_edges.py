"""The fast path (:func:`conformance.policy.fast.fast_policy`) where the property tests' small
cases never reach: thousands of candidates, attention of the wrong length, arrays that grow.

Each test names the SPEC.md rule it pins; the expected values are derived by sorting or come from
the reference, never from the code under test.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from conformance.policy import reference
from conformance.policy.fast import fast_policy
from tests.support.runner_support import params

#: Parameters the reference accepts (odd poolKernel, SPEC.md §2.1).
ACCEPTED_PARAMS = params(2, 1, 2, 1)


# -- the fast path (policy/fast.py, SPEC.md §2.4) --------------------------------------------------


def test_spec_2_4_the_fast_path_evicts_the_lowest_pooled_scores_among_thousands():
    """SPEC.md §2.4: evict removes the ``excess`` candidates of lowest (pooled score, position).
    5,000 candidates of distinct scores and 1,666 victims: a size where numpy's partition leaves
    the entries after the one it was asked to place in no particular order, so a threshold read
    one place off is wrong. The victims are derived here by sorting, not by the policy."""
    weights = np.random.default_rng(217).random(5000).astype(np.float32)
    # one ring slot and a pooling kernel of 1: each candidate's pooled score is its weight
    policy = fast_policy({"budget": 3335, "recentWindow": 1, "obsWindow": 1, "poolKernel": 1})
    for position in range(5000):
        policy.step(position, None)
    policy.step(5000, [float(weight) for weight in weights])  # 5001 kept, 5000 candidates
    ranked = sorted(range(5000), key=lambda i: (float(weights[i]), i))
    assert policy.evict() == sorted(ranked[:1666])


@pytest.mark.parametrize(
    ("before", "attn"),
    [([], [1]), ([[]], [0.5, 1]), ([[]], [0.5, None])],
    ids=["one-weight-with-none-kept", "an-extra-integer", "an-extra-null"],
)
def test_spec_2_3_the_fast_path_refuses_attention_of_the_wrong_length_as_the_reference_does(
    before, attn
):
    """SPEC.md §2.3: ``attn`` has one weight per kept position, else ``invalid-attention``;
    the fast path refuses with the reference's kind and words, whatever the list holds (here
    floats enough for the kept positions plus one value that is not a float)."""
    refusals = []
    for make in (reference.new_policy, fast_policy):
        policy = make(ACCEPTED_PARAMS, 0)
        for position, weights in enumerate(before):
            policy.step(position, weights)
        with pytest.raises(reference.PolicyError) as caught:
            policy.step(len(before), attn)
        refusals.append((caught.value.kind, caught.value.message))
    assert refusals[0][0] == "invalid-attention"
    assert refusals[1] == refusals[0]


def test_spec_3_2_the_fast_path_s_positions_stay_integers_as_its_arrays_grow():
    """SPEC.md §3.2: victims are a list of integers. Past the fast path's first 16 rows its
    arrays grow; 40 entries of equal (zero) score, budget 20, one protected: the victims are
    positions 0 to 19 (SPEC.md §2.4, the lower position first), each a Python int, so the
    answer writes ``0``, never ``0.0``."""
    policy = fast_policy({"budget": 20, "recentWindow": 1, "obsWindow": 2, "poolKernel": 1})
    for position in range(40):
        policy.step(position, None)
    victims = policy.evict()
    assert json.dumps(victims) == json.dumps(list(range(20)))
    assert json.dumps(policy.kept) == json.dumps(list(range(20, 40)))
