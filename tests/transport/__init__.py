"""Tests of conformance.transport."""
