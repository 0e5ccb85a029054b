"""Tests of conformance.runner."""
