"""Tests of conformance.explain."""
