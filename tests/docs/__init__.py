"""Tests of the documentation site: conformance.docs, its generated blocks and its hooks."""
