"""Which few-shot reference is clearly stronger than the task model: candidates side by side.

For each domain (movies: the packaged Rotten Tomatoes held-out split, the default config's
evaluation data; tweets: the packaged tweets as complaint vs other, configs/complaint.yaml;
drugs: the drug reviews' test file, configs/drugs.yaml, 3 classes),
every candidate reference scores the same stratified held-out sample, and the table gives:

- held-out accuracy, beside the majority baseline and the task model's (the demo TF-IDF +
  logistic regression model of the domain, trained on the other side of the split);
- the hard-subset precision of ranking the task model's outputs against that reference
  (``abs_top`` and ``p_wrong``, top ``--top-fraction`` of the sample), with the 95% Wilson
  interval and n (:func:`discovery.hard_subset_precision`): the share of the hard subset on
  which the task model is really wrong;
- CPU-seconds per 100 held-out sentences (``time.process_time``, all threads), plus the
  one-time cost (kNN anchors) apart.

Candidates (each from the same raw label log-probabilities where they share a prompt):

- ``<llm> k4``: the config's prompt and shots, contextual calibration (the default kind; the
  drug reviews' config draws its 6 shots from the labelled rows, ``reference.shots_from``);
- ``<llm> k0``: the config's prompt with no shot at all;
- ``<llm> lab<k>``: ``--lab-k`` shots drawn from the user's labelled rows as
  ``reference.shots_from`` draws them (:func:`discovery.draw_shots`: stratified by label,
  seeded, short rows; from the rows :func:`discovery.labelled_rows` gives the labelled
  finders, never one of the held-out sample's);
- ``<llm> k16``: 16 shots (8 per label) drawn with a seed from the train side;
- ``<llm> ens3``: three disjoint 8-shot sets, calibrated each, log-probs averaged
  (a shot-set ensemble in the manner of Ask Me Anything, Arora et al. 2022);
- ``<llm> knn``: kNN prompting (Xu et al., ICLR 2023): the LLM's next-token distribution
  after the 4-shot prompt, over a truncated vocabulary (the ``--vocab`` most likely
  single-token words of a few anchors, plus the label words, plus the rest of the mass),
  for ``--anchors`` labeled train examples; a held-out sentence takes the label vote of its
  ``--knn-k`` nearest anchors by KL divergence;
- ``both k4``, ``both ens3``: SmolLM2 and gemma3 averaged after calibration.

Usage::

    python bench/reference.py                   # both domains, n=500, both LLMs
    python bench/reference.py --small           # CI: tiny random LLM, 24 sentences, seconds

The small mode builds a tiny random Llama (no download) so the whole path runs in CI; its
numbers mean nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DOMAINS = {
    "movies": {"config": "configs/sentiment.yaml", "split": "rotten_tomatoes",
               "demo": "sentiment"},
    "tweets": {"config": "configs/complaint.yaml", "split": "complaint", "demo": "complaint"},
    "drugs": {"config": "configs/drugs.yaml", "split": "drugreviews", "demo": "drugs"},
}
KINDS = ("k4", "k0", "lab", "k16", "ens3", "knn")
LLMS = {"smollm2": "packaged:smollm2-135m-instruct", "gemma3": "packaged:gemma3-270m"}


def _cpu() -> float:
    return time.process_time()


def draw_shots(train: Any, labels: Sequence[str], per_label: int, seed: int, *,
               skip: Collection[str] = frozenset(), min_words: int = 4, max_words: int = 30
               ) -> list[tuple[str, str]]:
    """``per_label`` short train examples per label, seeded, labels interleaved."""
    rng = np.random.default_rng(seed)
    by: dict[str, list[str]] = {lab: [] for lab in labels}
    for t, lab in zip(train.texts, train.labels, strict=True):
        if t not in skip and min_words <= len(t.split()) <= max_words and "\n" not in t:
            by[lab].append(t)
    picks = {lab: [by[lab][i] for i in rng.choice(len(by[lab]), per_label, replace=False)]
             for lab in labels}
    return [(picks[lab][i], lab) for i in range(per_label) for lab in labels]


def with_shots(ref_cfg: Any, shots: list[tuple[str, str]]) -> Any:
    from discovery import Shot

    return ref_cfg.model_copy(update={"shots": [Shot(text=t, label=lab) for t, lab in shots],
                                      "k": None})


class Scored:
    """One prompt's calibrated log-probs on the held-out set and its CPU-seconds."""

    def __init__(self, logp: np.ndarray, cpu: float) -> None:
        self.logp, self.cpu = logp, cpu


def score_prompt(backend: Any, ref_cfg: Any, labels: Sequence[str], texts: Sequence[str]
                 ) -> Scored:
    """Raw label log-probs of ``texts`` under ``ref_cfg``'s prompt, contextually calibrated."""
    from discovery import FewShotReference

    ref = FewShotReference(backend, ref_cfg, labels)
    start = _cpu()
    raw = ref.raw_logprobs(list(texts))
    cal = ref.fit_calibration()
    return Scored(cal.transform(raw), _cpu() - start)


def answer_vocabulary(backend: Any, ref_cfg: Any, labels: Sequence[str], probe: Sequence[str],
                      size: int) -> dict[str, str]:
    """The ``size`` most likely next words after the prompt on the ``probe`` texts (single
    tokens that start with a space and are alphabetic, so none merges with the prompt's end),
    plus the label words: the truncated vocabulary of the kNN features."""
    import torch

    from discovery import FewShotReference

    ref = FewShotReference(backend, ref_cfg, labels)
    tok, model = backend.tokenizer, backend.model
    total = None
    with torch.inference_mode():
        for text in probe:
            ids = tok(ref.prompt_for(text), return_tensors="pt")["input_ids"]
            p = torch.softmax(model(input_ids=ids, logits_to_keep=1).logits[0, -1].float(), -1)
            total = p if total is None else total + p
    assert total is not None
    words: dict[str, str] = {lab: ref_cfg.label_words[lab] for lab in labels}
    for idx in torch.argsort(total, descending=True).tolist():
        text = tok.decode([idx])
        if len(text) > 1 and text[0] == " " and text[1:].isalpha() \
                and tok(text, add_special_tokens=False)["input_ids"] == [idx] \
                and text not in words.values():
            words[f"v:{idx}"] = text
            if len(words) >= size + len(labels):
                break
    return words


def knn_features(backend: Any, ref_cfg: Any, words: dict[str, str], texts: Sequence[str]
                 ) -> np.ndarray:
    """Log-probabilities of the truncated vocabulary after the prompt, one row per text, with
    a last column for the rest of the probability mass (a distribution over V + 1 outcomes)."""
    from discovery import FewShotReference

    cfg = ref_cfg.model_copy(update={"label_words": words})
    ref = FewShotReference(backend, cfg, list(words))
    logp = ref.raw_logprobs(list(texts))
    rest = np.log(np.clip(1.0 - np.exp(logp).sum(axis=1), 1e-12, None))
    return np.column_stack([logp, rest])


def knn_predict(anchor_feats: np.ndarray, anchor_labels: Sequence[str], feats: np.ndarray,
                labels: Sequence[str], k: int) -> np.ndarray:
    """Label probabilities by the vote of the k nearest anchors (KL(anchor || text))."""
    pa = np.exp(anchor_feats)
    # KL(a || t) = sum pa (log pa - log pt)
    ent = (pa * anchor_feats).sum(axis=1)                     # anchors
    dist = ent[None, :] - feats @ pa.T                         # texts x anchors
    near = np.argsort(dist, axis=1)[:, :k]
    idx = np.array([list(labels).index(lab) for lab in anchor_labels])
    votes = np.zeros((len(feats), len(labels)))
    for j in range(k):
        votes[np.arange(len(feats)), idx[near[:, j]]] += 1.0
    # add-half smoothing: a 5-0 vote is not certainty
    probs = (votes + 0.5) / (k + 0.5 * len(labels))
    return np.log(probs)


def row(name: str, logp: np.ndarray, cpu: float, setup: float, ctx: dict[str, Any]
        ) -> dict[str, Any]:
    from discovery._precision import accuracy, hard_subset_precision

    probs = np.exp(logp)
    probs = probs / probs.sum(axis=1, keepdims=True)
    out = {"candidate": name, "accuracy": accuracy(probs, ctx["golds"], ctx["labels"]),
           "cpu100": 100.0 * cpu / len(ctx["golds"]), "setup": setup}
    for metric in ("abs_top", "p_wrong"):
        out[metric] = hard_subset_precision(ctx["task"], probs, ctx["golds"], ctx["labels"],
                                            metric=metric, top_fraction=ctx["top_fraction"])
    return out


def run_domain(domain: str, args: argparse.Namespace,
               backends: dict[str, Callable[[Sequence[str]], Any]]) -> list[dict[str, Any]]:
    from discovery import (
        EvaluationConfig,
        LabelledConfig,
        labelled_rows,
        load_task_scorer,
    )
    from discovery._data import packaged_split
    from discovery._demo import ensure_demo_model
    from discovery._evaluate import load_evaluation_set
    from discovery._precision import accuracy, majority_accuracy
    from synth.core import LabelSpace
    from synthcheck import load_run_config

    spec = DOMAINS[domain]
    # shots a config draws from its labelled rows (reference.shots_from) stay out of this
    # held-out sample: the config's evaluation sample is the bench's
    cfg = load_run_config(ROOT / spec["config"], [f"evaluation.size={args.size}"])
    labels = list(cfg.task.labels)
    ev = EvaluationConfig(data=f"packaged:{spec['split']}", size=args.size)
    held = load_evaluation_set(LabelSpace.of(labels), ev)
    train, _ = packaged_split(spec["split"], seed=ev.split_seed,
                              holdout_fraction=ev.holdout_fraction)
    if args.small:
        task_probs = np.full((len(held), len(labels)), 1.0 / len(labels))
        task_probs[np.arange(len(held)), np.arange(len(held)) % len(labels)] = 0.8
        task_probs /= task_probs.sum(axis=1, keepdims=True)
    else:
        ensure_demo_model(spec["demo"])
        task = load_task_scorer(f"demo:{spec['demo']}", labels)
        task_probs = np.array([[r[lab] for lab in labels] for r in task.predict_proba(held.texts)])
    ctx = {"golds": held.labels, "labels": labels, "task": task_probs,
           "top_fraction": args.top_fraction}
    print(f"\n## {domain}: {len(held)} held-out ({held.counts()}), majority "
          f"{majority_accuracy(held.labels):.3f}, task model demo:{spec['demo']} "
          f"{accuracy(task_probs, held.labels, labels):.3f}", flush=True)
    base = cfg.reference
    k4 = base.model_copy(update={"k": None})
    longest = 120 if domain == "drugs" else 30  # the reviews are long: few fit in 30 words
    shots16 = draw_shots(train, labels, 8, seed=1, max_words=longest)
    used = {t for t, _ in shots16}
    sets = []
    for s in range(3):
        shot_set = draw_shots(train, labels, 4, seed=10 + s, skip=used, max_words=longest)
        used |= {t for t, _ in shot_set}
        sets.append(shot_set)
    anchors = train.stratified_sample(args.anchors, seed=7)
    lab_rows = labelled_rows(LabelSpace.of(labels),
                             LabelledConfig(data=f"packaged:{spec['split']}"), ev).data
    from discovery import draw_shots as draw_labelled_shots

    shots_lab = [(s.text, s.label)
                 for s in draw_labelled_shots(lab_rows, labels, args.lab_k, seed=0)]
    assert not {t for t, _ in shots_lab} & set(held.texts)
    rows: list[dict[str, Any]] = []
    kept: dict[str, dict[str, Scored]] = {}
    for llm in args.llms:
        kinds = [k for k in KINDS if f"{llm}:{k}" in args.candidates]
        if not kinds:
            continue
        backend = backends[llm]([*held.texts, *anchors.texts, *(t for t, _ in shots16),
                                 *(t for t, _ in shots_lab), base.prompt,
                                 *base.label_words.values()])
        print(f"[{domain}] {llm} ...", flush=True)
        scored: dict[str, Scored] = {}

        def done(kind: str, sc: Scored, llm: str = llm,
                 scored: dict[str, Scored] = scored) -> None:
            scored[kind] = sc
            rows.append(row(f"{llm} {kind}", sc.logp, sc.cpu, 0.0, ctx))
            print(_fmt(rows[-1]), flush=True)

        if "k4" in kinds:
            done("k4", score_prompt(backend, k4, labels, held.texts))
        if "k0" in kinds:
            done("k0", score_prompt(backend, with_shots(base, []), labels, held.texts))
        if "lab" in kinds:
            done(f"lab{args.lab_k}", score_prompt(backend, with_shots(base, shots_lab), labels,
                                                  held.texts))
        if "k16" in kinds:
            done("k16", score_prompt(backend, with_shots(base, shots16), labels, held.texts))
        if "knn" in kinds:
            start = _cpu()
            words = answer_vocabulary(backend, k4, labels, anchors.texts[:8], args.vocab)
            anchor_feats = knn_features(backend, k4, words, anchors.texts)
            setup = _cpu() - start
            start = _cpu()
            feats = knn_features(backend, k4, words, held.texts)
            cpu = _cpu() - start
            logp = knn_predict(anchor_feats, anchors.labels, feats, labels, args.knn_k)
            rows.append(row(f"{llm} knn{args.anchors}", logp, cpu, setup, ctx))
            print(_fmt(rows[-1]), flush=True)
        if "ens3" in kinds:
            members = [score_prompt(backend, with_shots(base, s), labels, held.texts)
                       for s in sets]
            done("ens3", Scored(np.mean([m.logp for m in members], axis=0),
                                sum(m.cpu for m in members)))
        kept[llm] = scored
    if len(kept) == 2:
        a, b = list(kept.values())
        for kind in ("k4", "ens3"):
            if kind in a and kind in b:
                rows.append(row(f"both {kind}", (a[kind].logp + b[kind].logp) / 2,
                                a[kind].cpu + b[kind].cpu, 0.0, ctx))
                print(_fmt(rows[-1]), flush=True)
    return rows


def head_compare(backend: Any, ref_cfg: Any, labels: Sequence[str], texts: Sequence[str],
                 repeats: int = 2) -> dict[str, float]:
    """CPU-seconds of raw label scoring with the output head only where labels are read
    against the head at every read position of the batch (the former way), interleaved
    ``repeats`` times, and the largest log-prob difference between the two."""
    from discovery import FewShotReference
    from synth.engines import _hf_scoring

    ref = FewShotReference(backend, ref_cfg, labels)
    ref.raw_logprobs(list(texts[:2]))  # the prefix cache, outside the timings
    cpu = {True: 0.0, False: 0.0}
    out: dict[bool, np.ndarray] = {}
    try:
        for _ in range(repeats):
            for only in (True, False):
                _hf_scoring.HEAD_AT_READS_ONLY = only
                start = _cpu()
                out[only] = ref.raw_logprobs(list(texts))
                cpu[only] += _cpu() - start
    finally:
        _hf_scoring.HEAD_AT_READS_ONLY = True
    return {"reads_only": cpu[True] / repeats, "all_positions": cpu[False] / repeats,
            "max_abs_diff": float(np.abs(out[True] - out[False]).max())}


def _iv(p: dict[str, Any]) -> str:
    if not p["n"]:
        return "n/a"
    return f"{p['estimate']:.2f} [{p['low']:.2f}, {p['high']:.2f}]"


HEADER = (f"{'candidate':<14} {'accuracy':>8}  {'abs_top precision':<19} "
          f"{'p_wrong precision':<19} {'n':>4} {'CPU-s/100':>9} {'setup CPU-s':>11}")


def _fmt(r: dict[str, Any]) -> str:
    return (f"{r['candidate']:<14} {r['accuracy']:>8.3f}  {_iv(r['abs_top']):<19} "
            f"{_iv(r['p_wrong']):<19} {r['p_wrong']['n']:>4} {r['cpu100']:>9.1f} "
            f"{r['setup']:>11.1f}")


def _tiny_backend(texts: Sequence[str]) -> Any:
    """A tiny random Llama with a byte-level BPE tokenizer trained on ``texts`` (no
    download) behind HFBackend: the small mode's LLM."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from synth.engines import HFBackend

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<pad>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(list(texts) * 3, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<s>",
                                        eos_token="</s>")
    cfg = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=4096, eos_token_id=tokenizer.eos_token_id,
                      pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = LlamaForCausalLM(cfg).eval()
    return HFBackend(model, tokenizer, batch_size=8)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--domains", default="movies,tweets")
    ap.add_argument("--llms", default="smollm2,gemma3")
    ap.add_argument("--size", type=int, default=500, help="held-out sentences per domain")
    ap.add_argument("--anchors", type=int, default=256, help="kNN anchors (train side)")
    ap.add_argument("--knn-k", type=int, default=9)
    ap.add_argument("--lab-k", type=int, default=8,
                    help="shots drawn from the labelled rows (the lab kind)")
    ap.add_argument("--vocab", type=int, default=256, help="kNN truncated vocabulary")
    ap.add_argument("--top-fraction", type=float, default=0.2)
    ap.add_argument("--candidates", default=None,
                    help="LLM:KIND pairs to run, e.g. smollm2:k4,gemma3:knn (default: all "
                         f"kinds {','.join(KINDS)} of every --llms)")
    ap.add_argument("--head-compare", type=int, default=0, metavar="N",
                    help="only time the output head at the label reads vs at every read "
                         "position, on N movie held-out sentences per --llms")
    ap.add_argument("--small", action="store_true",
                    help="CI mode: a tiny random LLM, 24 sentences (numbers mean nothing)")
    args = ap.parse_args(argv)
    if args.small:
        args.size, args.anchors, args.vocab, args.knn_k, args.lab_k = 24, 16, 8, 3, 4
        args.llms = ["tiny"]
        args.candidates = None
        backends: dict[str, Callable[[Sequence[str]], Any]] = {"tiny": _tiny_backend}
    else:
        from synth.engines import make_backend

        args.llms = args.llms.split(",")
        cache: dict[str, Any] = {}

        def loader(name: str) -> Callable[[Sequence[str]], Any]:
            def load(texts: Sequence[str]) -> Any:
                if name not in cache:
                    cache[name] = make_backend(LLMS[name], batch_size=32)
                return cache[name]
            return load

        backends = {name: loader(name) for name in args.llms}
    if args.candidates is None:
        args.candidates = [f"{llm}:{k}" for llm in args.llms for k in KINDS]
    else:
        args.candidates = args.candidates.split(",")
    import torch

    print(f"torch threads {torch.get_num_threads()}; held-out {args.size} per domain; hard "
          f"subset = top {args.top_fraction:g} of it", flush=True)
    if args.head_compare or args.small:
        from discovery import EvaluationConfig
        from discovery._evaluate import load_evaluation_set
        from synth.core import LabelSpace
        from synthcheck import load_run_config

        cfg = load_run_config(ROOT / DOMAINS["movies"]["config"])
        n = args.head_compare or 16
        texts = load_evaluation_set(cfg.task.label_space, EvaluationConfig(size=n)).texts
        for llm in args.llms:
            got = head_compare(backends[llm]([*texts, cfg.reference.prompt]),
                               cfg.reference.model_copy(update={"k": None}),
                               list(LabelSpace.of(cfg.task.labels).list), texts)
            print(f"output head, {llm}, {n} sentences: at the label reads "
                  f"{got['reads_only']:.1f} CPU-s, at every read position "
                  f"{got['all_positions']:.1f} CPU-s (ratio "
                  f"{got['all_positions'] / max(got['reads_only'], 1e-9):.2f}); max |d "
                  f"log-prob| {got['max_abs_diff']:.2g}", flush=True)
        if not args.small:
            return 0
    for domain in args.domains.split(","):
        rows = run_domain(domain, args, backends)
        print(f"\n{domain} (n={args.size}):\n{HEADER}")
        for r in rows:
            print(_fmt(r))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
