"""The documentation site (``mkdocs.yml``, pages under ``docs/``): its generated parts and how
the repository's own Markdown files are published in it.

- :mod:`.pages`: the generated blocks, where each one lives and how they are written and
  checked (``python -m conformance.docs [--check]``);
- :mod:`.manual`: the command-line reference, from the argparse parsers of ``conformance/cli/``
  and the options of the pytest plugin;
- :mod:`.report_format`: the JSON report's fields, from ``schema/report.schema.json``;
- :mod:`.exit_statuses`: the exit statuses, from ``conformance/spec/errors.py``;
- :mod:`.suite_listing`: every vector and protocol check with what it catches, from
  ``vectors/``;
- :mod:`.examples`: real runs of held-out ports, for README's first run and the triage page;
- :mod:`.nav`: every page of the site in the nav of ``mkdocs.yml``, and every entry a page
  (checked with the blocks);
- :mod:`.published`: the files outside ``docs/`` the site publishes (SPEC.md, ARCHITECTURE.md,
  the adapters' and the suite's READMEs) and the links between them, for
  :mod:`.mkdocs_hooks`, the hooks ``mkdocs.yml`` names.

Invariant: the top layer beside ``__main__``; it reads the kit (parsers, schemas, suite files,
source) and writes only the generated blocks of the pages, only in a checkout. Nothing else
imports it. The site's build needs the ``docs`` extra; the generator does not.
"""
