"""Tests of conformance.report."""
