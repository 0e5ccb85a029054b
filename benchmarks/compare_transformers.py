"""Cross-check the recorder's numpy forward pass against transformers + torch.

    pip install torch transformers   # not part of any extra: torch is gigabytes
    python benchmarks/compare_transformers.py [--tokens N]

Loads the same GGUF file into transformers (which dequantizes it and undoes the Q/K row
permutation), runs the shipped text with a full cache in eager attention, and compares, token
by token, the attention row the recorder would record (the new token's attention averaged over
layers and heads, its attention to itself dropped, renormalised) and the greedy next token.
Prints the largest absolute difference between rows and the greedy agreement; exits 1 if
torch or transformers is missing.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.tools.record.model import encode, load_tokenizer, model_path
from conformance.tools.record.recorder import aggregate, run
from conformance.tools.record.texts import get_text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=300, help="tokens of the text to compare")
    args = parser.parse_args()
    missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
    if missing:
        print(
            f"compare_transformers: needs {' and '.join(missing)}: pip install torch transformers",
            file=sys.stderr,
        )
        return 1
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = model_path()
    text = get_text("alice").read()
    tokens = encode(text)[: args.tokens]
    hf_tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    hf_ids = hf_tokenizer(text, add_special_tokens=False)["input_ids"][: args.tokens]
    print(
        f"token ids identical to transformers' tokenizer: {hf_ids == tokens} "
        f"({len(tokens)} tokens; ours from {type(load_tokenizer()).__name__})"
    )
    model = AutoModelForCausalLM.from_pretrained(
        str(path.parent),
        gguf_file=path.name,
        dtype=torch.float32,
        attn_implementation="eager",
    )
    model.eval()
    with torch.no_grad():
        out = model(torch.tensor([tokens]), output_attentions=True)
    # attentions: one (1, heads, n, n) per layer -> (layers, heads, n, n)
    attention = torch.stack([a[0] for a in out.attentions]).numpy()
    hf_greedy = out.logits[0].argmax(-1).numpy()
    ours = run(tokens, None)
    worst, worst_at = 0.0, 0
    for t in range(1, len(tokens)):
        theirs, _ = aggregate(attention[:, :, t, : t + 1])
        row = ours.rows[t]
        assert row is not None
        diff = float(np.max(np.abs(theirs.astype(np.float64) - row.astype(np.float64))))
        if diff > worst:
            worst, worst_at = diff, t
    agree = int(np.sum(hf_greedy == np.asarray(ours.greedy)))
    print(f"largest absolute difference of an attention row: {worst:.3g} (token {worst_at})")
    print(f"greedy next token identical at {agree}/{len(tokens)} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
