"""Explaining failures: the scores diagnosis, what a vector pins, and triage (which catalogued
mistake answers as the port did), with the shipped kill matrix.

Invariant: pure over values; may replay in process, never starts a process.
"""
