"""Tests of the command line: conformance.cli and its commands."""
