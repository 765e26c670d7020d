"""Sentence pairs at the adapters: HF natively, scikit-learn joined, callables as tuples."""

from __future__ import annotations

import pytest

from discovery import load_task_scorer
from discovery._scorers import PAIR_SEPARATOR, CallableScorer, SklearnScorer, join_pairs
from tests.discovery.discovery_fixtures import make_tokenizer

LABELS = ["negative", "positive"]
PAIRS = [("a great film", "not bad"), ("ok", "a dull mess that never works")]


def test_hf_scores_pairs_with_the_tokenizers_pair_encoding(tmp_path):
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    tok = make_tokenizer()
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                     num_labels=2, id2label={0: "negative", 1: "positive"},
                     label2id={"negative": 0, "positive": 1}, pad_token_id=tok.pad_token_id)
    model = BertForSequenceClassification(cfg)
    model.save_pretrained(tmp_path / "m")
    tok.save_pretrained(tmp_path / "m")
    got = load_task_scorer(f"hf:{tmp_path / 'm'}", LABELS, max_length=32).predict_proba(PAIRS)
    for (a, b), row in zip(PAIRS, got, strict=True):
        enc = tok([a], [b], return_tensors="pt")
        with torch.inference_mode():
            want = torch.softmax(model.eval()(**enc).logits.float(), dim=-1)[0].tolist()
        assert [row["negative"], row["positive"]] == pytest.approx(want, abs=1e-5)


def test_sklearn_gets_joined_pairs_and_callables_get_tuples():
    seen: list[object] = []

    class Est:
        classes_ = ["negative", "positive"]

        def predict_proba(self, texts):
            seen.extend(texts)
            return [[0.25, 0.75] if "great" in t else [0.5, 0.5] for t in texts]

    rows = SklearnScorer(Est(), LABELS).predict_proba(PAIRS)
    # Batched longest first (length_sorted_batches); the rows come back in input order.
    assert seen == [f"ok{PAIR_SEPARATOR}a dull mess that never works",
                    f"a great film{PAIR_SEPARATOR}not bad"] == join_pairs(PAIRS)[::-1]
    assert rows == [{"negative": 0.25, "positive": 0.75}, {"negative": 0.5, "positive": 0.5}]
    got: list[object] = []
    CallableScorer(lambda xs: got.extend(xs) or [{"negative": 0.5, "positive": 0.5}
                                                 for _ in xs], LABELS).predict_proba(PAIRS)
    assert got == PAIRS


class RecordingBackend:
    """A backend that records what each text of a prompt is and answers by a keyword."""

    def __init__(self) -> None:
        self.prefixes: list[str] = []
        self.texts: list[str] = []

    def label_logprobs(self, prefix, texts, label_continuations, suffix=""):
        self.prefixes.append(prefix)
        self.texts.extend(texts)
        # "entailment" when the premise's disease is in the hypothesis line, else not.
        rows = []
        for t in texts:
            lines = dict(line.split(": ", 1) for line in t.strip().splitlines() if ": " in line)
            hit = any(w in lines.get("Hypothesis", "").lower()
                      for w in lines.get("Premise", "").lower().replace(".", "").split()
                      if len(w) > 5)
            rows.append({lab: (-0.1 if (lab == "entailment") == hit else -3.0)
                         for lab in label_continuations})
        return rows


def nli_reference(backend):
    from discovery import ReferenceConfig
    from discovery._reference import FewShotReference

    cfg = ReferenceConfig(prompt="{text}\nRelation:", shots=[], calibration="none",
                          label_words={"entailment": " entailment",
                                       "not_entailment": " neutral"})
    return FewShotReference(backend, cfg, ["not_entailment", "entailment"], name="fs")


def test_fewshot_prompt_shows_both_fields_under_their_names():
    backend = RecordingBackend()
    ref = nli_reference(backend)
    pair = ("She has had asthma since childhood.", "She has asthma.")
    assert ref.prompt_for(pair) == ("First: She has had asthma since childhood.\n"
                                    "Second: She has asthma.\nRelation:")
    ref.pair_fields = ("premise", "hypothesis")
    got = ref.predict_proba([pair, "a plain text"])
    assert backend.texts == ["Premise: She has had asthma since childhood.\n"
                             "Hypothesis: She has asthma.", "a plain text"]
    assert got[0]["entailment"] > 0.9


def test_verify_names_the_fields_from_the_suites_text_fields(tmp_path):
    from formalize import VerifyConfig, load_suite
    from synthcheck._verify import run_verify

    suite = load_suite("configs/suites/nli_contrast.yaml")
    backend = RecordingBackend()
    result, _ = run_verify(suite, {"fs": nli_reference(backend)}, VerifyConfig(),
                           tmp_path / "out", "h", None, progress=False)
    assert backend.texts and all(t.startswith("Premise: ") and "\nHypothesis: " in t
                                 for t in backend.texts)
    # The premise is never substituted: every prompt's premise is one of the originals.
    items = suite.test("disease substitution").spec.items
    premises = {t.split("\n")[0].removeprefix("Premise: ") for t in backend.texts}
    assert premises == {dict(it.fields)["premise"] for it in items}
    assert result.summary.query("level == 'test'").iloc[0].n == 24
