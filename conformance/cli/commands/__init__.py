"""One module per subcommand, each with ``HELP``, ``configure(parser)`` and ``run(args)``.

A command's ``run`` imports what it needs inside itself, which is why the commands hold most of
the kit's function-local imports: ``snapkv-conformance --help`` and each command load only the
layers that command uses, so ``run`` starts without numpy, the catalogue or jsonschema and loads
the triage only when a vector failed (the run-path contract in ``pyproject.toml``). Anywhere
else in the package an import inside a function says why it is there.
"""
