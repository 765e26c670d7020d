"""Integration: the packaged SmolLM2 reference and the demo task model on 16 sentences."""

from __future__ import annotations

import numpy as np
import pytest

from discovery import MiningConfig, RankingConfig, load_task_scorer, mine_run, rank_run, score_run
from synth.core import read_jsonl, write_jsonl
from tests.discovery.discovery_fixtures import sections

pytestmark = pytest.mark.integration

SENTENCES = [
    "a wonderful , moving film with a great cast .",
    "a dull , lifeless mess that never works .",
    "not bad at all , actually quite charming .",
    "the worst movie i have seen this year .",
    "i loved every minute of it .",
    "it is not a good film , and not a funny one either .",
    "the acting is superb and the story is sharp .",
    "boring , predictable and far too long .",
    "not bad for a sequel , and the jokes land .",
    "a beautiful and heartfelt story about family .",
    "the plot makes no sense and the dialogue is awful .",
    "never boring , always surprising .",
    "an instant classic that i will watch again .",
    "a waste of time and talent .",
    "it never fails to entertain .",
    "hardly the disaster critics made it out to be .",
]


@pytest.fixture(scope="module")
def smollm2():
    from synth.engines import HFBackend, load_hf_causal_lm

    model, tokenizer = load_hf_causal_lm("packaged:smollm2-135m-instruct", device="cpu")
    return HFBackend(model, tokenizer, batch_size=16)


def test_cached_prefix_equals_full_forward_on_smollm2(smollm2):
    import torch

    from discovery import FewShotReference, ReferenceConfig
    from synth.engines._hf_scoring import build_rows

    ref = FewShotReference(smollm2, ReferenceConfig(), ["negative", "positive"])
    texts = [" " + s for s in SENTENCES[:3]]
    words = {"negative": " negative", "positive": " positive"}
    got = smollm2.label_logprobs(ref.prefix, texts, words, ref.suffix)
    tok, model = smollm2.tokenizer, smollm2.model
    prefix_ids = tok(ref.prefix)["input_ids"]
    for text, row in zip(texts, build_rows(tok, texts, words, ref.suffix), strict=True):
        ids = torch.tensor([prefix_ids + list(row.ids)])
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=ids).logits[0, -1].float(), -1)
        want = np.array([float(logp[tok_id]) for _, ((_, tok_id),) in row.reads])
        have = np.array([got[texts.index(text)][lab] for lab, _ in row.reads])
        p_want, p_have = np.exp(want) / np.exp(want).sum(), np.exp(have) / np.exp(have).sum()
        assert np.abs(p_want - p_have).max() <= 1e-4


def test_score_rank_mine_with_packaged_models(tmp_path, smollm2):
    from discovery import FewShotReference

    write_jsonl(tmp_path / "corpus" / "shard-00000.jsonl",
                [{"id": f"s{i:02d}", "text": t} for i, t in enumerate(SENTENCES)])
    cfg = sections(ranking=RankingConfig(top_k=4), mining=MiningConfig(min_support=2))
    labels = cfg.labels.list
    demo = load_task_scorer("demo:sentiment", labels, name="demo")
    reference = FewShotReference(smollm2, cfg.reference, labels)
    score_run(tmp_path, **cfg.score, task_scorers={"demo": demo},
              reference_scorer=reference, progress=False)
    task = read_jsonl(tmp_path / "scores" / "task-demo.jsonl")
    ref = read_jsonl(tmp_path / "scores" / "reference.jsonl")
    assert len(task) == len(ref) == 16
    assert task[0]["probs"]["positive"] > 0.5 > task[1]["probs"]["positive"]
    assert ref[0]["probs"]["positive"] > ref[1]["probs"]["positive"]
    for rec in ref:
        assert sum(rec["probs"].values()) == pytest.approx(1.0)
        assert all(v < 0 for v in rec["logprobs"].values())
    rank_run(tmp_path, **cfg.rank)
    hard = read_jsonl(tmp_path / "hard.jsonl")
    divs = [r["divergence"] for r in hard]
    assert len(hard) == 4 and divs == sorted(divs, reverse=True)
    mine_run(tmp_path, **cfg.mine)
    rows = read_jsonl(tmp_path / "ngrams.jsonl")
    assert all(r["hard_count"] >= 2 for r in rows)
