"""Tests of conformance.adapter."""
