"""What a run tells people and machines: the terminal, the JSON report, JUnit XML, and the one
safe writer of every output file.

Invariant: reads results only; every value from an adapter is shown capped and escaped.
"""
