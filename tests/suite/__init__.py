"""Tests of conformance.suite."""
