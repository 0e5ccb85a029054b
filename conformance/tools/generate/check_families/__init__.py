"""The protocol checks' drafts, one module per family in the order of SPEC.md §3, collected by
:func:`conformance.tools.generate.checks.drafts`: :mod:`.hello` (the handshake), :mod:`.ids`,
:mod:`.grammar` (UTF-8, JSON's grammar, one value per line), :mod:`.lines` (line ends, blank
lines, the end of input), :mod:`.limits`, :mod:`.fields` (ops, required, unknown and repeated
members, params' names) and :mod:`.state` (the order of judgement, what refusals and inert
requests leave behind, scores, bye). Every draft lists the SPEC.md sentences it pins.
"""
