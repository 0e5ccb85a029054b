"""The one run: the suite's vectors and protocol checks through the transport, each judged,
with the scores evidence a failure needs gathered from the adapter, kept with the run's facts
beside the judge's result, then triaged.

Invariant: no numpy (but the triage a failing run loads). ``run``, ``matrix`` and the pytest
plugin run the suite through :class:`.run.Run`, so a port fails the same items in each;
``mutants`` judges its in-process replays with the same checker
(:mod:`conformance.explain.kill_matrix`); ``fuzz`` and ``bench`` talk to adapters through the
same transport and client, but search and time rather than run the suite.
"""
