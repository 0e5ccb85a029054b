"""One module per ``snapkv-conformance`` subcommand: ``HELP``, ``configure(parser)``, ``run(args)``."""
