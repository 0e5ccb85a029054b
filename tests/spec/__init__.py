"""Tests of conformance.spec."""
