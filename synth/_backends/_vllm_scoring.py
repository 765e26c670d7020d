"""Label log-probabilities with vLLM's offline API (``LLM.generate`` with logprobs).

Prompts go in as token ids (``{"prompt_token_ids": [...]}``), tokenized exactly as the
transformers path does (prefix alone, then ``text + suffix + label``), so both backends score
the same tokens, and vLLM's prefix caching (``LLM(..., enable_prefix_caching=True)``) reuses
the shared few-shot prefix across requests.

Pass 1: one request per text with ``max_tokens=1``, ``logprobs=K`` and ``allowed_token_ids``
set to the single-token labels' ids, so the sampled token is always a label. A label token
that is still missing from the returned top-K (vLLM returns the top-K of the unrestricted
distribution plus the sampled token) goes to pass 2.

Pass 2 (multi-token labels, and labels missing from pass 1): one request over
``prompt + label tokens`` with ``prompt_logprobs``; vLLM always includes each prompt token's
own log-probability there, so the label's tokens are read exactly and summed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from synth._backends._hf_scoring import build_rows
from synth._errors import ConfigError, ModelNotAvailable

_INSTALL = "pip install 'synthcheck[vllm]' (vLLM needs a CUDA GPU)"


def _sampling_params(**kwargs: Any) -> Any:
    try:
        from vllm import SamplingParams
    except ImportError:
        raise ModelNotAvailable("vLLM is not installed", where="backend: vllm",
                                fix=_INSTALL) from None
    return SamplingParams(**kwargs)


def _logprob_value(entry: Any) -> float:
    """Read a float from a vLLM ``Logprob`` (or a bare float, as some versions return)."""
    return float(getattr(entry, "logprob", entry))


def vllm_label_logprobs(
    llm: Any,
    prefix: str,
    texts: Sequence[str],
    label_continuations: Mapping[str, str],
    suffix: str = "",
    *,
    top_logprobs: int = 20,
    progress: bool = False,
) -> list[dict[str, float]]:
    """Log-probability of each label's continuation after ``prefix + text + suffix``.

    Args:
        llm: a ``vllm.LLM`` (built with ``enable_prefix_caching=True`` for speed).
        prefix: the shared few-shot prefix.
        texts: texts to score (results keep this order).
        label_continuations: label name -> continuation, e.g. ``{"positive": " positive"}``.
        suffix: text after each input, e.g. ``"\\nAnswer:"``.
        top_logprobs: K, how many top log-probabilities to request in pass 1.
        progress: let vLLM show its progress bar.

    Returns:
        One ``{label: log-probability}`` dict per text; multi-token labels sum their tokens.

    Raises:
        ConfigError: a label continuation tokenizes to nothing.
        ModelNotAvailable: vLLM is not installed.
    """
    if not texts:
        return []
    tokenizer = llm.get_tokenizer()
    prefix_ids = list(tokenizer(prefix)["input_ids"]) if prefix else []
    rows = build_rows(tokenizer, texts, label_continuations, suffix)
    if not prefix_ids and any(len(r.ids) == 0 for r in rows):
        raise ConfigError("the prompt before a label is empty", where="reference.prompt",
                          fix="give the reference a non-empty prompt or suffix")
    results: list[dict[str, float]] = [{} for _ in texts]
    # Pass-2 work: (text index, label, full prompt ids, [(index in prompt, token id), ...]).
    exact: list[tuple[int, str, list[int], list[tuple[int, int]]]] = []
    single_rows = []
    for row in rows:
        ids = prefix_ids + list(row.ids)
        if len(row.reads) == 1 and len(row.reads[0][1]) > 1:
            label, reads = row.reads[0]
            last_tok = reads[-1][1]
            exact.append((row.text_index, label, ids + [last_tok],
                          [(len(prefix_ids) + pos + 1, tok) for pos, tok in reads]))
        else:
            single_rows.append((row, ids))

    if single_rows:
        label_ids = sorted({reads[0][1] for row, _ in single_rows for _, reads in row.reads})
        params = _sampling_params(max_tokens=1, temperature=0.0, logprobs=top_logprobs,
                                  allowed_token_ids=label_ids)
        outputs = llm.generate([{"prompt_token_ids": ids} for _, ids in single_rows], params,
                               use_tqdm=progress)
        for (row, ids), out in zip(single_rows, outputs, strict=True):
            top = out.outputs[0].logprobs[0]
            for label, reads in row.reads:
                (pos, tok), = reads
                if tok in top:
                    results[row.text_index][label] = _logprob_value(top[tok])
                else:
                    exact.append((row.text_index, label, ids + [tok],
                                  [(len(prefix_ids) + pos + 1, tok)]))

    if exact:
        params = _sampling_params(max_tokens=1, temperature=0.0, prompt_logprobs=1)
        outputs = llm.generate([{"prompt_token_ids": ids} for _, _, ids, _ in exact], params,
                               use_tqdm=progress)
        for (text_index, label, _, reads), out in zip(exact, outputs, strict=True):
            plp = out.prompt_logprobs
            results[text_index][label] = sum(_logprob_value(plp[i][tok]) for i, tok in reads)

    labels = list(label_continuations)
    return [{lab: res[lab] for lab in labels} for res in results]
