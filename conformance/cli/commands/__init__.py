"""One module per subcommand, each with ``HELP``, ``configure(parser)`` and ``run(args)``."""
