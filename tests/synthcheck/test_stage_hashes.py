"""The default config's stage hashes are what they were before the stages took typed
sections (a refactor that changed one would make every existing run redo its work)."""

from __future__ import annotations

from pathlib import Path

import pytest

from discovery import reference_hash, task_model_hash
from formalize import load_suite
from synth import generation_config_hash
from synthcheck import load_run_config
from synthcheck._pipeline import evaluate_stage_hash, verify_stage_hash

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def cfg(monkeypatch):
    monkeypatch.chdir(ROOT)  # the config names its suite relative to the repository root
    return load_run_config(ROOT / "configs" / "sentiment.yaml")


def test_default_config_hashes_are_unchanged(cfg):
    labels = cfg.task.label_space
    # Changed on purpose: by issue 9 (hashed per-prompt seeds, corpus.encoding) and issue 10
    # (`dtype: auto` resolved before hashing; inverse-CDF sampling). Was 7f30c544e8cf86c7. The other
    # stages' hashes are as before the refactor. Changed on purpose (issue 13): the segment
    # section has `drop_truncated` (rows cut by max_new_tokens are dropped); was
    # b38a046a8e2b64e7 / 6aa02d8284315778.
    from synth.engines._models import generation_dtype

    # Changed on purpose (issue 24): the default prompt is the label-conditioned continuation
    # with the garbled/near-duplicate filter, and the generator has prompt.labels and those
    # filter fields. Was 7720e97af9d9a548 / 650de28f77c33a66. Changed on purpose (issue 24,
    # session 6): sampling temperature 0.7 (bench/audit/RESULTS.md, round 4). Was
    # ace432181828fa5b / 74d57ced1fdabbca.
    expected = {"bfloat16": "02d999054ab862b1", "float32": "eb86e1731eaab361"}
    assert generation_config_hash(cfg) == expected[generation_dtype("auto", "auto")]
    # Changed on purpose (issue 18): the default reference is gemma3-270m. Was
    # 1adf1c9d8644f9d9 (SmolLM2-135M). Changed on purpose (issues 24 and 25): the reference
    # section gains the abstain answer and shots drawn from labelled data. Was 821127cbbaa0eadd.
    assert reference_hash(cfg.reference, labels) == "1435d42251b9aa00"
    assert task_model_hash(cfg.task_models[0], labels=labels, reference=cfg.reference,
                           evaluation=cfg.evaluation) == "9dc1a6c8d4dc0787"  # 6685e10fca2b2f8d
    # Changed on purpose (issue 11): the evaluate stage also measures the hard-subset rule's
    # precision on held-out data, so its hash covers the ranking section; and (issue 13)
    # evaluation.size is a stratified seeded sample, and the hash covers the fields and
    # encoding the held-out file is read with. Was 954af790ad2112ee.
    # Changed on purpose (issue 18): gemma3-270m reference, ranking.metric p_wrong with
    # min_reference_margin 0.2, evaluation.size 1000. Was 63bf21df790d0186.
    # Changed on purpose (issue 25): ranking.require_disagreement is gone (the hard subset
    # holds only failures by the one judging rule). Was 961ef94d6352c69f.
    # Changed on purpose (issues 24, 25): the reference's hash, the one judging rule and the
    # labelled stage. Were 47790687edf8b28e (evaluate) and 403a1d76286bbf16 (verify).
    assert evaluate_stage_hash(cfg) == "61b5efb9524f05b9"
    # Changed on purpose (issue 12): the suite fingerprint digests every available lexicon,
    # and built-in ones were added (TIME_ENTITY, the paired TIME_ENTITY_S/L, FIRST_NAME,
    # CITY, COUNTRY); the suite's cases are unchanged.
    # Changed on purpose (issue 17): the suite's draws come from derive_rng streams (its
    # fingerprint names the scheme); sampled fills and perturbations changed. Was
    # e2ff728c92db663a.
    assert verify_stage_hash(cfg, load_suite(cfg.suite)) == "36d3160706efd422"


def test_runtime_fields_do_not_change_the_hashes_but_output_fields_do(cfg):
    faster = load_run_config(ROOT / "configs" / "sentiment.yaml",
                             ["reference.batch_size=7", "reference.device=cpu",
                              "verify.batch_size=3"])
    assert evaluate_stage_hash(faster) == evaluate_stage_hash(cfg)
    suite = load_suite(cfg.suite)
    assert verify_stage_hash(faster, suite) == verify_stage_hash(cfg, suite)
    other = load_run_config(ROOT / "configs" / "sentiment.yaml", ["reference.k=1"])
    assert evaluate_stage_hash(other) != evaluate_stage_hash(cfg)
    metric = load_run_config(ROOT / "configs" / "sentiment.yaml", ["ranking.metric=abs_top"])
    assert evaluate_stage_hash(metric) != evaluate_stage_hash(cfg)


def test_prefix_alignment_is_hashed_resolved_and_only_when_it_pads(cfg):
    """``align_prefix`` enters the hashes as the resolved multiple, and not at all when 0:
    HF configs (default ``auto`` -> 0) keep the hashes they had before the option."""
    labels = cfg.task.label_space

    def ref_hash(*overrides):
        c = load_run_config(ROOT / "configs" / "sentiment.yaml", list(overrides))
        return reference_hash(c.reference, labels)

    assert cfg.reference.align_prefix == "auto" and cfg.reference.prefix_alignment == 0
    assert ref_hash("reference.align_prefix=0") == ref_hash() == "1435d42251b9aa00"
    assert ref_hash("reference.align_prefix=32") != ref_hash()
    vllm_auto = ref_hash("reference.backend=vllm")
    assert vllm_auto == ref_hash("reference.backend=vllm", "reference.align_prefix=32")
    assert vllm_auto != ref_hash("reference.backend=vllm", "reference.align_prefix=0")
    assert ref_hash("reference.backend=vllm", "reference.align_prefix=64") != vllm_auto
