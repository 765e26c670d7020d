"""Task-model adapters and load_task_scorer: label mapping, batching, bad input."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from discovery import FewShotReference, ReferenceConfig, load_task_scorer
from synth.core import ConfigError, DataError, ModelNotAvailable
from tests.discovery.discovery_fixtures import make_tokenizer

LABELS = ["negative", "positive"]
TEXTS = ["a great film", "a dull , lifeless mess that never works at all .", "not bad", "ok"]


def _tiny_bert_dir(tmp_path, id2label):
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    tok = make_tokenizer()
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                     num_labels=len(id2label), id2label=id2label,
                     label2id={v: k for k, v in id2label.items()}, pad_token_id=tok.pad_token_id)
    BertForSequenceClassification(cfg).save_pretrained(tmp_path / "bert")
    tok.save_pretrained(tmp_path / "bert")
    return tmp_path / "bert"


def test_hf_classifier_batched_equals_one_by_one(tmp_path):
    path = _tiny_bert_dir(tmp_path, {0: "NEGATIVE", 1: "POSITIVE"})
    scorer = load_task_scorer(f"hf:{path}", LABELS, batch_size=3, max_length=8)
    batched = scorer.predict_proba(TEXTS)
    single = [scorer.predict_proba([t])[0] for t in TEXTS]
    assert [list(r) for r in batched] == [LABELS] * len(TEXTS)
    for b, s in zip(batched, single, strict=True):
        assert b == pytest.approx(s, abs=1e-5)
        assert sum(b.values()) == pytest.approx(1.0)


def test_hf_generic_labels_need_a_label_map(tmp_path):
    path = _tiny_bert_dir(tmp_path, {0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(ConfigError, match=r"task model labels \['LABEL_0', 'LABEL_1'\] do not "
                                          r"match the task's labels"):
        load_task_scorer(f"hf:{path}", LABELS)
    scorer = load_task_scorer(f"hf:{path}", LABELS, label_map={"1": "negative", "0": "positive"})
    swapped = load_task_scorer(f"hf:{path}", LABELS,
                               label_map={"LABEL_0": "negative", "LABEL_1": "positive"})
    a, b = scorer.predict_proba(TEXTS[:1])[0], swapped.predict_proba(TEXTS[:1])[0]
    assert a["negative"] == pytest.approx(b["positive"])


def _sk_pipeline(classes):
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    texts = ["great fun", "lovely film", "dull mess", "boring film"]
    return make_pipeline(CountVectorizer(), LogisticRegression()).fit(
        texts, [classes[1], classes[1], classes[0], classes[0]])


def test_sklearn_scorer_maps_classes(tmp_path):
    import skops.io as sio

    sio.dump(_sk_pipeline([0, 1]), tmp_path / "m.skops")
    with pytest.raises(ConfigError, match=r"task model labels \['0', '1'\] do not match"):
        load_task_scorer(f"sklearn:{tmp_path / 'm.skops'}", LABELS)
    scorer = load_task_scorer(f"sklearn:{tmp_path / 'm.skops'}", LABELS,
                              label_map={"0": "negative", "1": "positive"})
    out = scorer.predict_proba(["great fun", "dull mess"])
    assert out[0]["positive"] > 0.5 > out[1]["positive"]


def _lower(x):
    return x


def test_skops_untrusted_types_are_refused_not_loaded(tmp_path, monkeypatch):
    import skops.io as sio
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    pipe = make_pipeline(FunctionTransformer(_lower), _sk_pipeline(LABELS))
    sio.dump(pipe, tmp_path / "evil.skops")
    loaded = []
    monkeypatch.setattr(sio, "load", lambda *a, **k: loaded.append(1))
    with pytest.raises(DataError,
                       match=r"refusing to load untrusted types \[.*_lower.*third-party code"):
        load_task_scorer(f"sklearn:{tmp_path / 'evil.skops'}", LABELS)
    assert not loaded


def test_python_callable_and_object(tmp_path, monkeypatch):
    (tmp_path / "toyscorer.py").write_text(
        "def predict(texts):\n"
        "    return [{'pos': 0.9, 'neg': 0.1} if 'great' in t else {'pos': 0.2, 'neg': 0.8}"
        " for t in texts]\n"
        "class Model:\n"
        "    def predict_proba(self, texts):\n"
        "        return [{'negative': 0.5, 'positive': 0.5} for t in texts]\n"
        "def broken(texts):\n"
        "    return [{'negative': 1.0}]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=r"task model labels \['pos', 'neg'\] do not match"):
        load_task_scorer("python:toyscorer:predict", LABELS).predict_proba(["great"])
    scorer = load_task_scorer("python:toyscorer:predict", LABELS,
                              label_map={"pos": "positive", "neg": "negative"}, batch_size=1)
    assert scorer.predict_proba(["great", "bad"]) == [
        {"negative": 0.1, "positive": 0.9}, {"negative": 0.8, "positive": 0.2}]
    assert load_task_scorer("python:toyscorer:Model", LABELS).predict_proba(["x"]) == [
        {"negative": 0.5, "positive": 0.5}]
    with pytest.raises(DataError, match="the callable returned 1 results for 2 texts"):
        load_task_scorer("python:toyscorer:broken", LABELS).predict_proba(["a", "b"])


@pytest.fixture
def bare_sys_path(monkeypatch):
    """sys.path as the console script sees it: no '' and no cwd entry (restored after)."""
    cwd = os.getcwd()
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", cwd)])
    return sys.path


def test_python_module_in_cwd_is_found(tmp_path, monkeypatch, bare_sys_path):
    (tmp_path / "toy_sentiment_cwd.py").write_text(
        "from toy_helper_cwd import WORD\n"
        "def predict(texts):\n"
        "    return [{'negative': 0.0, 'positive': 1.0} if WORD in t else\n"
        "            {'negative': 1.0, 'positive': 0.0} for t in texts]\n")
    (tmp_path / "toy_helper_cwd.py").write_text("WORD = 'great'\n")
    for mod in ("toy_sentiment_cwd", "toy_helper_cwd"):
        monkeypatch.delitem(sys.modules, mod, raising=False)
    monkeypatch.chdir(tmp_path)
    scorer = load_task_scorer("python:toy_sentiment_cwd:predict", LABELS)
    assert scorer.predict_proba(["great", "bad"]) == [
        {"negative": 0.0, "positive": 1.0}, {"negative": 1.0, "positive": 0.0}]
    assert str(tmp_path) in sys.path and sys.path[0] != str(tmp_path)


def test_python_importable_module_wins_over_cwd(tmp_path, monkeypatch, bare_sys_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "toy_shadow_mod.py").write_text(
        "def predict(texts):\n    return [{'negative': 0.25, 'positive': 0.75} for t in texts]\n")
    (tmp_path / "toy_shadow_mod.py").write_text("raise RuntimeError('the cwd copy was used')\n")
    monkeypatch.delitem(sys.modules, "toy_shadow_mod", raising=False)
    bare_sys_path[:0] = [str(tmp_path / "lib")]  # the patched list: restored after
    monkeypatch.chdir(tmp_path)
    scorer = load_task_scorer("python:toy_shadow_mod:predict", LABELS)
    assert scorer.predict_proba(["x"]) == [{"negative": 0.25, "positive": 0.75}]
    assert str(tmp_path) not in sys.path


def test_python_module_missing_everywhere(tmp_path, monkeypatch, bare_sys_path):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelNotAvailable) as info:
        load_task_scorer("python:toy_nowhere_mod:predict", LABELS)
    msg = str(info.value)
    assert "cannot find module 'toy_nowhere_mod'" in msg
    assert "sys.path" in msg and f"current directory ({tmp_path})" in msg
    assert "PYTHONPATH=." in msg and "pip install" in msg
    assert "python:toy_nowhere_mod:predict" in msg
    assert str(tmp_path) not in sys.path


def test_python_module_in_cwd_with_missing_dependency(tmp_path, monkeypatch, bare_sys_path):
    (tmp_path / "toy_needs_dep.py").write_text("import toy_absent_dependency\n")
    monkeypatch.delitem(sys.modules, "toy_needs_dep", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelNotAvailable, match=r"toy_absent_dependency is not installed.*"
                                                r"pip install toy_absent_dependency"):
        load_task_scorer("python:toy_needs_dep:predict", LABELS)


def test_unknown_scheme_did_you_mean():
    with pytest.raises(ConfigError, match=r"unknown task-model scheme 'sklean'.*did you mean "
                                          r"'sklearn'"):
        load_task_scorer("sklean:model.skops", LABELS)
    with pytest.raises(ConfigError, match="bad task model spec 'model.skops'"):
        load_task_scorer("model.skops", LABELS)


def test_fewshot_task_model_uses_the_reference_prompt(monkeypatch, tiny_llama, tiny_tokenizer):
    import synth.engines
    from synth.engines import HFBackend

    seen = {}

    def fake_make_backend(spec, **kwargs):
        seen["spec"] = spec
        return HFBackend(tiny_llama, tiny_tokenizer)

    monkeypatch.setattr(synth.engines, "make_backend", fake_make_backend)
    scorer = load_task_scorer("fewshot:hf:/some/llm", LABELS,
                              reference=ReferenceConfig(calibration="none", k=2))
    assert isinstance(scorer, FewShotReference) and seen["spec"] == "hf:/some/llm"
    out = scorer.predict_proba(TEXTS)
    assert all(sum(r.values()) == pytest.approx(1.0) for r in out)


def test_reference_prompt_layout(tiny_llama, tiny_tokenizer):
    from synth.engines import HFBackend

    ref = FewShotReference(HFBackend(tiny_llama, tiny_tokenizer), ReferenceConfig(k=1), LABELS)
    assert ref.prompt_for("so good") == (
        "Question: Find the sentiment of this text. Answer with positive or negative: "
        "a gorgeous, witty and deeply moving film that stays with you.\nAnswer: positive\n\n"
        "Question: Find the sentiment of this text. Answer with positive or negative: "
        "so good\nAnswer:")
    assert not ref.prefix.endswith(" ")  # the space travels with the text
    raw = ref.raw_logprobs(TEXTS)
    probs = ref.calibrated(raw)
    assert raw.shape == (4, 2) and np.allclose(probs.sum(axis=1), 1.0)


class _AlignRecorder:
    """A Backend that records the keywords ``label_logprobs`` gets (no ``align`` unless
    asked: backends written before the option take none)."""

    def __init__(self):
        self.kwargs = []

    def label_logprobs(self, prefix, texts, words, suffix="", **kwargs):
        self.kwargs.append(kwargs)
        return [{w: -1.0 for w in words} for _ in texts]


@pytest.mark.parametrize(("backend", "align", "want"), [
    ("hf", "auto", 0), ("hf", 0, 0), ("hf", 32, 32),
    ("vllm", "auto", 32), ("vllm", 0, 0), ("vllm", 48, 48),
])
def test_the_reference_passes_the_resolved_prefix_alignment(backend, align, want):
    from synth.engines import PrefixAlignment

    rec = _AlignRecorder()
    cfg = ReferenceConfig(backend=backend, align_prefix=align, shot_separator="\n--\n")
    FewShotReference(rec, cfg, LABELS).raw_logprobs(["so good"])
    assert rec.kwargs == [{"align": PrefixAlignment(want, "\n--\n")} if want else {}]
    assert cfg.prefix_alignment == want


def test_a_negative_prefix_alignment_is_refused():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="align_prefix must be 'auto' or a number of "
                                              "tokens from 0 to 4,096"):
        ReferenceConfig(align_prefix=-1)


def test_reference_label_words_must_match_task_labels(tiny_llama, tiny_tokenizer):
    with pytest.raises(ConfigError, match=r"reference label words name \['bad', 'good'\], but "
                                          r"the task's labels are"):
        FewShotReference(None, ReferenceConfig(label_words={"good": " good", "bad": " bad"},
                                               shots=[]), LABELS)
    with pytest.raises(ConfigError, match="label word '' of label 'positive' tokenizes to "
                                          "nothing"):
        FewShotReference(None, ReferenceConfig(label_words={"negative": " no",
                                                            "positive": ""}), LABELS)
    # the same checks without a backend (what `check_stage2` and a `fewshot:` spec's check run)
    with pytest.raises(ConfigError, match=r"shot label 'meh' is not a task label "
                                          r"\(reference.shots\[0\].label\)"):
        FewShotReference.check(ReferenceConfig(shots=[{"text": "x", "label": "meh"}],
                                               calibration="none"), LABELS)


def test_batch_calibrated_fewshot_scores_do_not_depend_on_batch_size(tiny_llama, tiny_tokenizer):
    from synth.engines import HFBackend

    texts = TEXTS * 5
    cfg = ReferenceConfig(calibration="batch", k=2)
    small = FewShotReference(HFBackend(tiny_llama, tiny_tokenizer, batch_size=2), cfg, LABELS)
    large = FewShotReference(HFBackend(tiny_llama, tiny_tokenizer, batch_size=64), cfg, LABELS)
    a, b = small.predict_proba_set(texts), large.predict_proba_set(texts)
    for x, y in zip(a, b, strict=True):
        assert x == pytest.approx(y, abs=1e-6)
    # Piecewise texts are refused rather than calibrated on whichever piece came first.
    with pytest.raises(ConfigError, match="batch calibration is fitted on the whole set"):
        small.predict_proba(texts[:2])


def test_hf_task_model_goes_through_the_model_resolver(tmp_path, monkeypatch):
    home = tmp_path / "home"
    path = _tiny_bert_dir(home, {0: "NEGATIVE", 1: "POSITIVE"})
    monkeypatch.setenv("HOME", str(home))
    scorer = load_task_scorer("hf:~/bert", LABELS)  # ~ is expanded
    assert len(scorer.predict_proba(TEXTS)) == len(TEXTS)
    assert load_task_scorer(f"hf:{path}", LABELS).model is scorer.model  # loaded once
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelNotAvailable, match=r"model folder not found: ~/missing"):
        load_task_scorer("hf:~/missing", LABELS)
