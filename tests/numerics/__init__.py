"""Tests of conformance.numerics."""
