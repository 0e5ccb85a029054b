"""Whole-kit runs: the CLI, the plugin and the front ends end to end."""
