"""The protocol and formats as data: limits, the one strict JSON codec, the protocol's
messages and rules, the shipped schemas, the kit's error types and exit statuses, and the one
way a value is shown to a person.

Invariant: imports nothing else of the kit, and no numpy (every other layer builds on it).
"""
