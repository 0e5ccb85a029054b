"""Tests of conformance.mutants."""
