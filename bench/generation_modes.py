"""Generation modes and references side by side, measured as a person would: a blind audit.

For each generation mode (a generator and a prompt: SynthEval's continuation of 5 query words,
an instruction that uses the query words, or an instruction conditioned on a label drawn per
prompt, with or without the quality filter), the script generates a corpus with the real
stage-1 code (``synth.run_generation``, seeded, sharded), scores it with the demo task model
and every reference, and ranks the hard subset by ``p_wrong`` as ``synthcheck score`` does
(the margin filter, and for a reference with a "no label applies" answer, its abstentions
kept out). It prints, per mode:

- prompts, kept sentences, and the generator's CPU-seconds per prompt and per kept sentence
  (``time.process_time``: all threads of this process, so a busy machine inflates both
  modes alike), with the ratio to the first mode's;
- per reference: CPU-seconds per scored sentence, the share it abstains on, and (with
  ``--labels``) the blind-audited precision of its top 60 hard sentences;
- (with ``--labels``) the share of a fixed random sample of the corpus that carries the
  task's signal (the labeller gave it a task label, not "none"), and the share the
  labeller read as garbled; for a label-conditioned mode, how often the labeller's label is
  the one the prompt asked for.

Intervals are 95% Wilson intervals. The audit protocol (``bench/audit/PROTOCOL.md``):
``--audit DIR`` writes, per mode, one text file of sentences to label (a seeded random sample
of the corpus and the top 60 of each reference's hard subset, shuffled together, texts
only, one per line) to ``DIR/inbox/gen-<mode>.txt`` and the private key (line -> sample
kind, reference, sentence id, rank) to ``runs/keys/gen-<mode>.json``; labellers who never
see a score write ``DIR/labels/gen-<mode>.jsonl``, one ``{"line", "text", "label",
"garbled"}`` per line; ``--labels DIR`` reads them back.

Usage::

    python bench/generation_modes.py --n 640 --audit /work/audit   # corpora, scores, files
    python bench/generation_modes.py --n 640 --labels bench/audit  # the audited table
    python bench/generation_modes.py --small      # CI: tiny random LLM, numbers mean nothing
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SMOLLM2 = "packaged:smollm2-135m-instruct"
QWEN = "packaged:qwen2.5-1.5b-instruct"
GEMMA = "packaged:gemma3-270m"
INSTRUCTION = "Write one sentence from a movie review that uses these words: {query}"
LABELLED = ("Write one {label} sentence from a movie review that uses these words: {query}")
# attribute-conditioned continuation (a control prefix, as CTRL / SuperGen prompts): the kept
# sentence is still the query plus its continuation
CONT_LABELLED = "A {label} movie review.\n\n{query}"
FILTER = {"drop_garbled": True, "near_duplicate": 0.7}

# Every mode states its whole prompt and filter, so it does not depend on the default config.
CONTINUATION = {"style": "continuation", "template": "{query}", "labels": []}
NO_FILTER = {"drop_garbled": False, "near_duplicate": None}
SAMPLING = {"temperature": 1.0, "top_p": 1.0}
"""The sampling every mode starts from, whatever configs/sentiment.yaml says."""
# the label-conditioned continuation with the filter (the default config's mode)
CONT_LABEL = {"prompt": {"style": "continuation", "template": CONT_LABELLED,
                         "labels": ["negative", "positive"]}, "segment": FILTER}
# name -> (generator spec, generator overrides)
MODES: dict[str, tuple[str, dict[str, Any]]] = {
    "smollm2-cont": (SMOLLM2, {"prompt": CONTINUATION, "segment": NO_FILTER}),
    "smollm2-instr": (SMOLLM2, {"prompt": {"style": "chat", "template": INSTRUCTION,
                                           "labels": []}, "segment": NO_FILTER}),
    "smollm2-label": (SMOLLM2, {"prompt": {"style": "chat", "template": LABELLED,
                                           "labels": ["negative", "positive"]},
                                "segment": FILTER}),
    "smollm2-cont-label": (SMOLLM2, CONT_LABEL),
    # nucleus sampling (the product's own words) and a lower temperature, on the default mode
    "smollm2-cont-label-p09": (SMOLLM2, {**CONT_LABEL, "sampling": {"top_p": 0.9}}),
    "smollm2-cont-label-p08": (SMOLLM2, {**CONT_LABEL, "sampling": {"top_p": 0.8}}),
    "smollm2-cont-label-t07": (SMOLLM2, {**CONT_LABEL, "sampling": {"temperature": 0.7}}),
    "qwen-cont": (QWEN, {"prompt": CONTINUATION, "segment": NO_FILTER}),
    "qwen-instr": (QWEN, {"prompt": {"style": "chat", "template": INSTRUCTION, "labels": []},
                          "segment": NO_FILTER}),
    "qwen-label": (QWEN, {"prompt": {"style": "chat", "template": LABELLED,
                                     "labels": ["negative", "positive"]},
                          "segment": FILTER}),
}
NEUTRAL_PROMPT = ("Question: Find the sentiment of this text. Answer with positive, negative "
                  "or neutral: {text}\nAnswer:")
NEUTRAL_SHOTS = [
    ("a gorgeous, witty and deeply moving film that stays with you.", "positive"),
    ("the film opens in forty theaters on friday and runs two hours.", "neutral"),
    ("the plot is a mess and the jokes fall flat for two long hours.", "negative"),
    ("she moved to chicago with her family in 1998.", "neutral"),
    ("the performances are wonderful and the story is told with real heart.", "positive"),
    ("a dull, lifeless sequel that wastes its talented cast.", "negative"),
]
# name -> (model, abstain word or None, calibration)
REFERENCES: dict[str, tuple[str, str | None, str]] = {
    "gemma-cal": (GEMMA, None, "contextual"),
    "gemma-neutral": (GEMMA, "neutral", "contextual"),
    "qwen-neutral": (QWEN, "neutral", "none"),
    "gemma-cal-rev": (GEMMA, None, "contextual"),
}
# a reference's own shots (default: the config's), e.g. the same shots in reverse order: a
# second prompt whose verdict must agree with the first (a prompt ensemble of two)
REF_SHOTS: dict[str, str] = {"gemma-cal-rev": "reversed"}
TOP = 60
RANDOM = 60
MIN_MARGIN = 0.2
# Two references that must agree: a sentence is judged only where both judge it (neither
# abstains, both margins >= MIN_MARGIN) and both pick the same label; ranked by the first.
AGREE = (("gemma-cal", "qwen-neutral"), ("gemma-cal", "gemma-cal-rev"))
"""Pairs of references whose agreement is a row of its own (when both ran)."""


def agree_name(pair: tuple[str, str]) -> str:
    return f"agree({pair[0]},{pair[1]})"


def _cpu() -> float:
    return time.process_time()


def wilson(k: int, n: int) -> tuple[float, float]:
    from discovery._precision import _wilson

    return _wilson(k, n)


def mode_config(base: Any, mode: str, n: int, small: bool) -> Any:
    """The run config of ``mode``: the base config with the mode's generator settings."""
    spec, over = MODES[mode]
    gen = base.generator.model_dump(mode="json")
    gen["model"] = spec
    # Every mode was measured at SynthEval's temperature 1.0 (the committed labels read those
    # corpora); a mode's own sampling overrides it (smollm2-cont-label-t07 is today's default).
    gen["sampling"] = {**gen["sampling"], **SAMPLING}
    for key, value in over.items():
        gen[key] = {**gen[key], **value} if isinstance(value, dict) else value
    gen["n"] = n
    if small:
        gen["shard_size"], gen["batch_size"] = 8, 8
        gen["sampling"] = {**gen["sampling"], "max_new_tokens": 12}
        gen["segment"] = {**gen["segment"], "min_words": 1, "drop_truncated": False,
                          "drop_garbled": False}
        gen["device"] = "cpu"
    return base.model_copy(update={"generator": type(base.generator).model_validate(gen)})


@dataclass
class ModeResult:
    name: str
    prompts: int
    records: list[dict[str, Any]]
    gen_cpu: float
    dropped: dict[str, int]
    task_probs: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    labels: list[str] = field(default_factory=list)
    refs: dict[str, dict[str, Any]] = field(default_factory=dict)


def generate(cfg: Any, run_dir: Path, backend: Any) -> tuple[list[dict[str, Any]], float,
                                                                dict[str, int]]:
    """Generate (or reuse) the corpus of ``cfg`` in ``run_dir``; its records, the
    generation's CPU-seconds (as recorded, summed over shards) and drop counts."""
    from synth import iter_corpus, run_generation

    start = _cpu()
    run_generation(cfg, run_dir, resume=True, backend=backend, progress=False)
    spent = _cpu() - start
    stats = json.loads((run_dir / "corpus" / "stats.json").read_text())
    cost_file = run_dir / "gen_cpu.json"
    if spent > 1.0 or not cost_file.exists():  # generated now: record its CPU time
        cost_file.write_text(json.dumps({"cpu_s": spent}))
    gen_cpu = json.loads(cost_file.read_text())["cpu_s"]
    return list(iter_corpus(run_dir)), gen_cpu, dict(stats.get("dropped", {}))


def reference_scores(texts: Sequence[str], labels: Sequence[str], ref_name: str,
                     backend: Any, cache: Path | None) -> dict[str, Any]:
    """Probabilities over the task's labels, an abstain mask and CPU-seconds of one
    reference on ``texts`` (cached in ``cache`` by the texts' hash)."""
    import hashlib

    from discovery import FewShotReference, ReferenceConfig, Shot

    _, abstain, calibration = REFERENCES[ref_name]
    recipe = repr((REFERENCES[ref_name], NEUTRAL_PROMPT, NEUTRAL_SHOTS, "v2")) + (
        REF_SHOTS.get(ref_name, ""))
    key = hashlib.sha256(("\n".join(texts) + recipe).encode()).hexdigest()[:16]
    if cache is not None and cache.exists():
        hit = np.load(cache)
        if str(hit["key"]) == key:
            return {"probs": hit["probs"], "abstain": hit["abstain"], "cpu": float(hit["cpu"]),
                    "p_abstain": hit["p_abstain"]}
    words = {lab: f" {lab}" for lab in labels}
    if abstain is None:
        cfg = ReferenceConfig(model="unused", calibration=calibration,  # type: ignore[arg-type]
                          label_words=words)
        if REF_SHOTS.get(ref_name) == "reversed":
            cfg = cfg.model_copy(update={"shots": list(reversed(cfg.shots))})
        names = list(labels)
    else:
        names = [*labels, abstain]
        words[abstain] = f" {abstain}"
        cfg = ReferenceConfig(model="unused", prompt=NEUTRAL_PROMPT,
                              calibration="none",
                              label_words=words,
                              shots=[Shot(text=t, label=lab) for t, lab in NEUTRAL_SHOTS])
    ref = FewShotReference(backend, cfg, names)
    start = _cpu()
    if abstain is None:
        probs = np.array([[row[n] for n in names] for row in ref.predict_proba_set(list(texts))])
        p_abstain = np.zeros(len(texts))
    else:  # as reference.abstain reads it: the abstain answer uncalibrated over all the
        # answer words, the task labels calibrated among themselves
        from discovery._calibration import fit_calibration

        raw = ref.raw_logprobs(list(texts))
        full = np.exp(raw - raw.max(axis=1, keepdims=True))
        p_abstain = full[:, -1] / full.sum(axis=1)
        cal = fit_calibration(calibration, "logprob", len(labels),  # type: ignore[arg-type]
                              content_free=lambda: ref.raw_logprobs(cfg.content_free)[:, :-1])
        probs = cal.predict_proba(raw[:, :-1])
    cpu = _cpu() - start
    out: dict[str, Any] = {"probs": probs, "abstain": p_abstain >= 0.5, "cpu": cpu,
                           "p_abstain": p_abstain}
    if cache is not None:
        np.savez(cache, key=np.array(key), probs=probs, abstain=out["abstain"],
                 cpu=np.array(cpu), p_abstain=p_abstain)
    return out


def hard_top(task: np.ndarray, ref: dict[str, Any], k: int, threshold: float = 0.5
             ) -> list[int]:
    """The top ``k`` of the hard subset as ``synthcheck score`` ranks it: the task model
    fails by the run's one rule (``discovery.judge``: the reference's top label differs,
    its margin is at least ``ranking.min_reference_margin``, and for a reference with an
    abstain answer, that answer is not above 0.5), ordered by ``p_wrong``."""
    from discovery import JudgeRule
    from discovery._ranking import DivergenceRanker

    if len(task) == 0:
        return []
    has_abstain = bool(np.any(ref["p_abstain"] > 0))
    rule = JudgeRule(min_margin=MIN_MARGIN,
                     abstain_threshold=threshold if has_abstain else None)
    ranker = DivergenceRanker("p_wrong", top_fraction=1.0).fit(
        task, ref["probs"], abstain=ref["p_abstain"] if has_abstain else None, rule=rule)
    return [int(i) for i in ranker.hard_indices_[:k]]


def agreement(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """The :data:`AGREE` pseudo-reference: ``first``'s probabilities, abstaining (p 1.0)
    wherever either reference would not judge or the two top labels differ."""
    def judged(ref: dict[str, Any]) -> np.ndarray:
        top2 = np.sort(ref["probs"], axis=1)[:, -2:]
        return (top2[:, 1] - top2[:, 0] >= MIN_MARGIN) & (ref["p_abstain"] <= 0.5)

    same = first["probs"].argmax(axis=1) == second["probs"].argmax(axis=1)
    keep = judged(first) & judged(second) & same
    return {"probs": first["probs"], "p_abstain": np.where(keep, 0.0, 1.0),
            "abstain": ~keep, "cpu": first["cpu"] + second["cpu"]}


def write_audit(mode: ModeResult, audit: Path, keys: Path, seed: int = 0,
                whole: bool = False) -> Path:
    """Write the mode's blind audit file (texts only, shuffled) and its private key;
    ``whole``: every sentence of the corpus (so any ranking can be read off the labels)."""
    from synth.core._seeds import derive_rng

    n = len(mode.records)
    sample = random_sample(mode, seed)
    entries: dict[int, list[dict[str, Any]]] = {i: [] for i in range(n)} if whole else {}
    for i in sample:
        entries.setdefault(i, []).append({"kind": "random"})
    for ref_name, ref in mode.refs.items():
        for rank, i in enumerate(ref["top"], start=1):
            entries.setdefault(i, []).append({"kind": "top", "reference": ref_name,
                                              "rank": rank})
    order = sorted(entries)
    derive_rng(seed, "audit-shuffle", mode.name).shuffle(order)
    labels = mode.labels
    key = []
    for line, i in enumerate(order, start=1):
        rec = mode.records[i]
        key.append({"line": line, "id": rec["id"], "text": rec["text"],
                    "condition": rec.get("condition"),
                    "task_label": labels[int(mode.task_probs[i].argmax())] if labels else None,
                    "samples": entries[i]})
    (audit / "inbox").mkdir(parents=True, exist_ok=True)
    keys.mkdir(parents=True, exist_ok=True)
    path = audit / "inbox" / f"gen-{mode.name}.txt"
    path.write_text("".join(rec["text"].replace("\n", " ") + "\n" for rec in key),
                    encoding="utf-8")
    (keys / f"gen-{mode.name}.json").write_text(
        json.dumps({"mode": mode.name, "whole": whole, "lines": key}, indent=1) + "\n",
        encoding="utf-8")
    return path


DEPTHS = (10, 20, 30, 60)


def audited(mode: ModeResult, labels_dir: Path, keys: Path) -> dict[str, Any] | None:
    """What the labels of ``gen-<mode>`` say (None when not labelled yet): ``signal`` and
    ``garbled`` as [n, k] over the random sample (``corpus_*``: over every labelled line),
    ``asked`` [n, k] for label-conditioned rows, and per reference of ``mode`` and depth d in
    DEPTHS, ``top[ref][d]`` = [n labelled, real errors] among its top d (a real error: the
    labeller's label is a task label other than the task model's; "none" never is)."""
    from synth.core import read_jsonl

    lab_path = labels_dir / f"gen-{mode.name}.jsonl"
    key_path = keys / f"gen-{mode.name}.json"
    if not lab_path.exists() or not key_path.exists():
        return None
    meta = json.loads(key_path.read_text())
    key = {row["line"]: row for row in meta["lines"]}
    by_id: dict[str, tuple[str, bool]] = {}
    for row in read_jsonl(lab_path):
        k = key[int(row["line"])]
        if row["text"].strip() != k["text"].strip():
            raise SystemExit(f"labels of gen-{mode.name}: line {row['line']} text differs "
                             f"from the key ({lab_path})")
        by_id[k["id"]] = (row["label"], bool(row.get("garbled", False)))
    out: dict[str, Any] = {"signal": [0, 0], "garbled": [0, 0], "corpus_signal": [0, 0],
                           "corpus_garbled": [0, 0], "asked": [0, 0], "top": {},
                           "by_id": by_id}

    def add(name: str, hit: bool) -> None:
        out[name][0] += 1
        out[name][1] += int(hit)

    sample = set(random_sample(mode))
    for i, rec in enumerate(mode.records):
        if rec["id"] not in by_id:
            continue
        label, garbled = by_id[rec["id"]]
        add("corpus_signal", label != "none")
        add("corpus_garbled", garbled)
        if rec.get("condition") is not None:
            add("asked", label == rec["condition"])
        if i in sample:
            add("signal", label != "none")
            add("garbled", garbled)
    labels = next(iter(mode.refs.values()))["labels"] if mode.refs else []
    for ref_name, ref in mode.refs.items():
        # the sentences this reference judges (what enters any failure count)
        from discovery._judge import reference_margin

        judged = ~ref["abstain"] & (reference_margin(ref["probs"]) >= MIN_MARGIN)
        sig = [0, 0]
        for i, rec in enumerate(mode.records):
            if judged[i] and rec["id"] in by_id:
                sig[0] += 1
                sig[1] += int(by_id[rec["id"]][0] != "none")
        out.setdefault("judged_signal", {})[ref_name] = sig
        for d in DEPTHS:
            n = k = 0
            for i in ref["top"][:d]:
                got = by_id.get(mode.records[i]["id"])
                if got is None:
                    continue
                n += 1
                task_label = labels[int(mode.task_probs[i].argmax())]
                k += int(got[0] != "none" and got[0] != task_label)
            if n:
                out["top"].setdefault(ref_name, {})[d] = [n, k]
        # what the top's non-errors are: no signal at all, or the task model was right
        miss = {"no signal": 0, "task right": 0}
        for i in ref["top"][:TOP]:
            got = by_id.get(mode.records[i]["id"])
            if got is not None and got[0] == "none":
                miss["no signal"] += 1
            elif got is not None and got[0] == labels[int(mode.task_probs[i].argmax())]:
                miss["task right"] += 1
        out.setdefault("misses", {})[ref_name] = miss
    return out


THRESHOLDS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)


def threshold_sweep(mode: ModeResult, ref: dict[str, Any], labels_dir: Path, keys: Path
                    ) -> list[tuple[float, int, list[int], list[int]]]:
    """For each abstain threshold t: (t, abstained, [judged, with signal], [top 20 labelled,
    real errors]) with the hard subset re-ranked as if ``reference.abstain.threshold`` were
    t (read off whole-corpus labels; chosen on these labels, so in-sample)."""
    lab = audited(mode, labels_dir, keys)
    if lab is None:
        return []
    by_id = lab["by_id"]
    rows = []
    for t in THRESHOLDS:
        scored = {**ref, "abstain": ref["p_abstain"] > t}
        from discovery._judge import reference_margin

        judged = ~scored["abstain"] & (reference_margin(ref["probs"]) >= MIN_MARGIN)
        sig = [0, 0]
        for i, rec in enumerate(mode.records):
            if judged[i] and rec["id"] in by_id:
                sig[0] += 1
                sig[1] += int(by_id[rec["id"]][0] != "none")
        top = [0, 0]
        for i in hard_top(mode.task_probs, scored, 20, threshold=t):
            got = by_id.get(mode.records[i]["id"])
            if got is not None:
                top[0] += 1
                top[1] += int(got[0] != "none"
                              and got[0] != mode.labels[int(mode.task_probs[i].argmax())])
        rows.append((t, int(scored["abstain"].sum()), sig, top))
    return rows


def random_sample(mode: ModeResult, seed: int = 0) -> list[int]:
    """The seeded random sample of the corpus (indices): ``derive_rng(seed, "audit-sample",
    mode)``, at most RANDOM sentences."""
    from synth.core._seeds import derive_rng

    n = len(mode.records)
    return sorted(derive_rng(seed, "audit-sample", mode.name).sample(range(n), min(RANDOM, n)))


def matmul_rate(dtype: str, size: int = 512, reps: int = 8) -> float:
    """This process's matmul rate in ``dtype`` (FLOP per CPU-second, all threads)."""
    import torch

    kind = getattr(torch, dtype)
    a, b = torch.randn(size, size, dtype=kind), torch.randn(size, size, dtype=kind)
    a @ b
    start = _cpu()
    for _ in range(reps):
        a @ b
    return 2.0 * size ** 3 * reps / max(_cpu() - start, 1e-9)


def cost_table(base: Any, modes: Sequence[str], refs: Sequence[str], n: int,
               small: bool, tiny: Any = None) -> None:
    """Generate ``n`` fresh prompts per mode and score ``n`` sentences per reference in this
    one process, timed in CPU-seconds (a busy machine inflates every row alike); print each
    row's cost per prompt or sentence, its ratio to the first row, and for generation the
    share of the arithmetic limit (2 x parameters FLOPs per token against this process's
    matmul rate in the generation dtype, per CPU-second)."""
    import tempfile

    from synth._generate import generator_backend, resolved_dtype
    from synth.engines import make_backend
    from synth.engines._models import clear_model_cache

    labels = list(base.task.labels)
    texts: list[str] = []
    print(f"{'generation':<15}{'dtype':>9}{'prompts':>8}{'kept':>6}{'tokens':>8}"
          f"{'CPU-s/prompt':>13}{'ratio':>7}{'limit%':>8}")
    first = None
    for m in modes:
        cfg = mode_config(base, m, n, small)
        dtype = resolved_dtype(cfg.generator)
        # as stage 1 builds it (the sentence-end early stop included)
        backend: Any = tiny if small else generator_backend(
            cfg.generator.model_copy(update={"device": "cpu"}))
        params = sum(p.numel() for p in backend.model.parameters())
        rate = matmul_rate(dtype)
        with tempfile.TemporaryDirectory() as tmp:
            start = _cpu()
            report = _run(cfg, Path(tmp), backend)
            cpu = _cpu() - start
            from synth import iter_corpus

            texts += [r["text"] for r in iter_corpus(tmp)]
        per = cpu / n
        first = first or per
        limit = 100.0 * 2 * params * report.tokens / max(cpu, 1e-9) / rate
        print(f"{m:<15}{dtype:>9}{n:>8}{report.kept:>6}{report.tokens:>8}{per:>13.3f}"
              f"{per / first:>7.2f}{limit:>7.1f}%")
        del backend
        clear_model_cache()
    texts = texts[:n] or ["a fine film."]
    print(f"{'reference':<15}{'sentences':>9}{'CPU-s/sentence':>15}{'ratio':>7}")
    first = None
    for ref_name in refs:
        backend = tiny if small else make_backend(REFERENCES[ref_name][0], backend="hf",
                                                  device="cpu", batch_size=32)
        scored = reference_scores(texts, labels, ref_name, backend, None)
        per = scored["cpu"] / len(texts)
        first = first or per
        print(f"{ref_name:<15}{len(texts):>9}{per:>15.4f}{per / first:>7.2f}")
        del backend
        clear_model_cache()


class _Lazy:
    """A reference backend loaded on first use (cached scores need no model)."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self._backend: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._backend is None:
            from synth.engines import make_backend

            self._backend = make_backend(self.spec, backend="hf", device="cpu", batch_size=32)
        return getattr(self._backend, name)


def _run(cfg: Any, run_dir: Path, backend: Any) -> Any:
    from synth import run_generation

    return run_generation(cfg, run_dir, backend=backend, progress=False)


def _iv(k: int, n: int) -> str:
    if n == 0:
        return "-"
    lo, hi = wilson(k, n)
    return f"{k / n:.2f} [{lo:.2f}, {hi:.2f}] ({k}/{n})"


def _tiny_backend(texts: Sequence[str]) -> Any:
    """bench/reference.py's tiny random Llama, with a chat template (the small mode's LLM)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from reference import _tiny_backend as tiny

    backend = tiny(texts)
    backend.tokenizer.chat_template = (
        "{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}<s>assistant: {% endif %}")
    return backend


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modes", default="smollm2-cont,smollm2-label,qwen-instr,qwen-label")
    ap.add_argument("--refs", default="gemma-cal,gemma-neutral,qwen-neutral")
    ap.add_argument("--n", default="640",
                    help="prompts per mode: N, or MODE=N,... with a bare N as the default")
    ap.add_argument("--runs", default=str(ROOT / "runs" / "generation_modes"))
    ap.add_argument("--audit", default=None, help="write the blind audit files to DIR/inbox")
    ap.add_argument("--labels", default=None, help="read the blind labels from DIR/labels")
    ap.add_argument("--keys", default=str(ROOT / "runs" / "keys"))
    ap.add_argument("--audit-whole", action="store_true",
                    help="put every sentence of each corpus in its audit file (small corpora)")
    ap.add_argument("--small", action="store_true",
                    help="CI mode: a tiny random LLM, 16 prompts (numbers mean nothing)")
    ap.add_argument("--cost", type=int, default=0, metavar="N",
                    help="only the cost table: N fresh prompts per mode and N sentences per "
                         "reference, CPU-seconds side by side in this process")
    args = ap.parse_args(argv)

    from discovery import load_task_scorer
    from synth.engines._models import clear_model_cache
    from synthcheck import load_run_config

    base = load_run_config(ROOT / "configs" / "sentiment.yaml")
    labels = list(base.task.labels)
    modes = args.modes.split(",")
    refs = [x for x in args.refs.split(",") if x]
    runs = Path(args.runs)
    sizes = {k: int(v) for k, _, v in (x.partition("=") for x in args.n.split(",") if "=" in x)}
    default_n = next((int(x) for x in args.n.split(",") if "=" not in x), 640)
    if args.small:
        import tempfile

        modes, refs = ["smollm2-cont", "smollm2-label"], ["gemma-cal", "qwen-neutral"]
        default_n = 16
        runs = Path(tempfile.mkdtemp(prefix="genmodes-"))
        from synth import QuerySampler, load_seed_corpus

        sampler = QuerySampler(load_seed_corpus(base.corpus), base.queries, 0)
        tiny = _tiny_backend([q.text for q in sampler.queries(range(64))] + [INSTRUCTION])
    if args.cost or args.small:
        cost_table(base, modes, refs, 8 if args.small else args.cost, args.small,
                   tiny if args.small else None)
        if args.cost:
            return 0
    task = load_task_scorer("demo:sentiment", labels)
    results: list[ModeResult] = []
    by_model: dict[str, list[str]] = {}
    for m in modes:
        by_model.setdefault(MODES[m][0], []).append(m)
    # one model in memory at a time: each generator's modes, then each reference
    for names in by_model.values():
        # None: run_generation loads the generator only when a shard is left to write
        backend: Any = tiny if args.small else None
        for m in names:
            n = sizes.get(m, default_n)
            cfg = mode_config(base, m, n, args.small)
            recs, cpu, dropped = generate(cfg, runs / m, backend)
            results.append(ModeResult(m, n, recs, cpu, dropped))
            print(f"generated {m}: {len(recs)} sentences, {cpu:.1f} CPU-s", file=sys.stderr)
        del backend
        clear_model_cache()
    results.sort(key=lambda r: modes.index(r.name))
    for r in results:
        r.labels = labels
        r.task_probs = np.array([[p[lab] for lab in labels]
                                 for p in task.predict_proba([x["text"] for x in r.records])]
                                ).reshape(-1, len(labels))
    for ref_name in refs:
        spec = REFERENCES[ref_name][0]
        backend = tiny if args.small else _Lazy(spec)
        for r in results:
            texts = [x["text"] for x in r.records]
            cache = None if args.small else runs / r.name / f"ref-{ref_name}.npz"
            scored = reference_scores(texts, labels, ref_name, backend, cache)
            scored["top"] = hard_top(r.task_probs, scored, TOP)
            scored["labels"] = labels
            r.refs[ref_name] = scored
            print(f"scored {r.name} with {ref_name}: {scored['cpu']:.1f} CPU-s", file=sys.stderr)
        del backend
        clear_model_cache()
    for r in results:
        for pair in AGREE:
            if all(a in r.refs for a in pair):
                both = agreement(r.refs[pair[0]], r.refs[pair[1]])
                both["top"] = hard_top(r.task_probs, both, TOP)
                both["labels"] = labels
                r.refs[agree_name(pair)] = both

    W = max(20, *(len(r.name) + 2 for r in results))  # the mode column's width
    base_cost = results[0].gen_cpu / max(1, results[0].prompts)
    print(f"{'mode':<{W}}{'prompts':>8}{'kept':>6}{'CPU-s/prompt':>13}{'ratio':>7}"
          f"{'CPU-s/kept':>11}  dropped")
    for r in results:
        per = r.gen_cpu / max(1, r.prompts)
        drops = ", ".join(f"{k} {v}" for k, v in sorted(r.dropped.items()))
        print(f"{r.name:<{W}}{r.prompts:>8}{len(r.records):>6}{per:>13.3f}{per / base_cost:>7.2f}"
              f"{r.gen_cpu / max(1, len(r.records)):>11.3f}  {drops}")
    print()
    print(f"{'mode':<{W}}{'reference':<15}{'CPU-s/sent':>11}{'abstained':>10}  "
          f"{'task labels (hard top)':<24} top-60 precision (blind)")
    for r in results:
        for ref_name, ref in r.refs.items():
            per = ref["cpu"] / max(1, len(r.records))
            share = float(np.mean(ref["abstain"])) if len(r.records) else 0.0
            tops = r.task_probs[ref["top"]].argmax(axis=1) if ref["top"] else np.zeros(0, int)
            balance = ":".join(str(int((tops == j).sum())) for j in range(len(labels)))
            lab = audited(r, Path(args.labels) / "labels", Path(args.keys)) \
                if args.labels else None
            prec = "(not labelled)"
            if lab:
                js = lab["judged_signal"][ref_name]
                prec = f"judged: {js[0]}, with signal {_iv(js[1], js[0])}; "
                by_depth = lab["top"].get(ref_name, {})
                prec += "; ".join(f"top {d}: {_iv(by_depth[d][1], by_depth[d][0])}"
                                  for d in DEPTHS if d in by_depth)
                miss = lab["misses"][ref_name]
                prec += (f"; not errors: {miss['no signal']} without signal, "
                         f"{miss['task right']} the task model right")
            print(f"{r.name:<{W}}{ref_name:<15}{per:>11.3f}{share:>10.2f}  {balance:<24} {prec}")
    if args.labels:
        print()
        print(f"{'mode':<{W}}{'sample':<13}{'signal share':<28}{'garbled':<28}asked label")
        for r in results:
            lab = audited(r, Path(args.labels) / "labels", Path(args.keys))
            if lab is None:
                print(f"{r.name:<{W}}(not labelled)")
                continue
            asked = _iv(lab["asked"][1], lab["asked"][0]) if lab["asked"][0] else "-"
            rows = [("random", "signal", "garbled"),
                    ("labelled", "corpus_signal", "corpus_garbled")]
            for name, sig_key, garb_key in rows:
                sig, garb = lab[sig_key], lab[garb_key]
                print(f"{r.name:<{W}}{name:<13}{_iv(sig[1], sig[0]):<28}"
                      f"{_iv(garb[1], garb[0]):<28}{asked}")
    if args.labels:
        print()
        print("abstain threshold sweep (in-sample: chosen on these labels)")
        print(f"{'mode':<{W}}{'reference':<15}{'t':>5}{'abstained':>10}  "
              f"{'judged with signal':<30}top-20 precision")
        for r in results:
            for ref_name, ref in r.refs.items():
                if ref_name not in REFERENCES or REFERENCES[ref_name][1] is None:
                    continue
                for thr, ab, sig, top in threshold_sweep(
                        r, ref, Path(args.labels) / "labels", Path(args.keys)):
                    print(f"{r.name:<{W}}{ref_name:<15}{thr:>5.2f}{ab:>10}  "
                          f"{_iv(sig[1], sig[0]):<30}{_iv(top[1], top[0])}")
    if args.audit or args.small:
        audit = Path(args.audit) if args.audit else runs / "audit"
        keys = Path(args.keys) if args.audit else runs / "keys"
        for r in results:
            path = write_audit(r, audit, keys, whole=args.audit_whole)
            lines = len(path.read_text(encoding="utf-8").splitlines())
            print(f"audit file {path.name}: {lines} lines")
    if args.small:  # the labels path, with every line labelled "positive" by a stand-in
        from synth.core import write_jsonl

        (runs / "audit" / "labels").mkdir(parents=True, exist_ok=True)
        for r in results:
            texts = (runs / "audit" / "inbox" / f"gen-{r.name}.txt").read_text().splitlines()
            write_jsonl(runs / "audit" / "labels" / f"gen-{r.name}.jsonl",
                        [{"line": i, "text": t, "label": "positive", "garbled": False}
                         for i, t in enumerate(texts, start=1)])
            lab = audited(r, runs / "audit" / "labels", runs / "keys")
            assert lab is not None
            print(f"stand-in labels {r.name}: signal {_iv(lab['signal'][1], lab['signal'][0])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
