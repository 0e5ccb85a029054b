"""Explaining failures: the scores diagnosis, what a vector pins, and triage (which catalogued
mistake answers as the port did), with what that rests on: the in-process replay of a
catalogued mistake (:mod:`.play`), the kill matrix (:mod:`.kill_matrix`) and the shipped one
(:mod:`.known_kills`).

Invariant: pure over values; may replay in process, never starts a process.
"""
