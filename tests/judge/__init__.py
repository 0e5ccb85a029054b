"""Tests of conformance.judge."""
