"""Tests of conformance.policy."""
