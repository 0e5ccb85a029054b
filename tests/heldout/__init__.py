"""Held-out wrong ports: SnapKV written from SPEC.md alone, each with one planted bug.

The triage's tests and its accuracy table run these as adapter processes; nothing in the
catalogue (conformance.mutants) is imported or copied here.
"""
