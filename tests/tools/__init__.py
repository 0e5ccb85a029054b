"""Tests of conformance.tools."""
