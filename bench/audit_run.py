"""A whole run's corpus, blind-labelled: how much of it carries the task's signal, and how many
of its hard sentences are real task-model errors (issue 24, items 3 and 4).

`bench/generation_modes.py` labels 128-prompt corpora per generation mode; this script reads
labels of **the run itself** (``make demo``'s ``runs/demo``, and a run at the former default
temperature: every one of their sentences was labelled blind, `bench/audit/PROTOCOL.md`), so
the top 60 of its hard subset are the run's own top 60, not the whole hard subset of a small
corpus. It prints, with 95% Wilson intervals and n:

- the signal share (a task label, not ``none``) and the garbled share, over every labelled
  sentence and over a seeded random 60;
- the hard subset's precision at depths 10, 30, 60 and all (``hard.jsonl``'s order), and
  what its non-errors are (no label applies / the task model is right);
- the signal share of the sentences the reference judges, by its margin: what a stricter
  ``ranking.min_reference_margin`` would leave in the failure counts;
- with ``--second``, a second labeller's labels of some of the same sentences: agreement and
  Cohen's kappa.

Labels are JSON Lines ``{"id", "text", "label", "garbled"}`` (``label`` a task label or
``none``). A label whose id is not in the run, or whose text is not the run's sentence, is
refused: the corpus changed, so relabel it.

Usage::

    python bench/audit_run.py --run runs/demo --labels bench/audit/labels/demo-run.jsonl
    # the former default, temperature 1.0 (synthcheck discover --config configs/sentiment.yaml
    # --run runs/demo-t10 -P generator.sampling.temperature=1.0), a second labeller on a quarter
    python bench/audit_run.py --run runs/demo-t10 --labels bench/audit/labels/demo-run-t10.jsonl \\
        --second bench/audit/labels/demo-run-t10-second.jsonl
    python bench/audit_run.py --small      # a tiny made-up run (numbers mean nothing)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _shares import share as _iv

NONE = "none"
DEPTHS = (10, 30, 60)
RANDOM = 60
MARGINS = (0.0, 0.2, 0.3, 0.4, 0.5)


def _refuse(message: str) -> None:
    print(message, file=sys.stderr)
    raise SystemExit(2)


def read_labels(path: Path, texts: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """``id -> label row`` of ``path``, each checked against the run's sentence ``texts``.

    Raises:
        SystemExit: (status 2) a row names an id the run lacks, or its text differs.
    """
    from synth.core import iter_jsonl_numbered

    out: dict[str, dict[str, Any]] = {}
    for line, row in iter_jsonl_numbered(path):
        sid = str(row.get("id"))
        if sid not in texts:
            _refuse(f"error: {path}, line {line}: id {sid!r} is not a sentence of the run; "
                    f"label the run's own corpus")
        if " ".join(str(row.get("text", "")).split()) != " ".join(texts[sid].split()):
            _refuse(f"error: {path}, line {line}: the text of {sid} is not the run's "
                    f"sentence (the corpus changed): relabel it")
        out[sid] = row
    return out


def corpus_table(ids: Sequence[str], lab: Mapping[str, Mapping[str, Any]], seed: int) -> None:
    """Signal and garbled shares, over every labelled sentence and a seeded random 60."""
    done = [i for i in ids if i in lab]
    pick = np.random.default_rng(seed).permutation(len(done))[:RANDOM]
    print("sample             signal share               garbled")
    for name, rows in (("every labelled", done), (f"random {len(pick)}", [done[j] for j in pick])):
        sig = sum(lab[i]["label"] != NONE for i in rows)
        garbled = sum(bool(lab[i].get("garbled")) for i in rows)
        print(f"{name:18s} {_iv(sig, len(rows)):26s} {_iv(garbled, len(rows))}")


def hard_table(hard: Sequence[Mapping[str, Any]], lab: Mapping[str, Mapping[str, Any]]) -> None:
    """Precision of the hard subset, in its own order, at each depth."""
    rows = [h for h in hard if h["id"] in lab]
    print(f"\nhard subset ({len(rows)} of {len(hard)} labelled), in hard.jsonl's order")
    print("depth  precision (real task-model errors)   no label applies  task model right")
    for depth in (*(d for d in DEPTHS if d < len(rows)), len(rows)):
        top = rows[:depth]
        errors = sum(lab[h["id"]]["label"] not in (NONE, h["task_label"]) for h in top)
        none = sum(lab[h["id"]]["label"] == NONE for h in top)
        name = "all" if depth == len(rows) else str(depth)
        print(f"{name:>5s}  {_iv(errors, len(top)):37s} {none:16d} "
              f"{len(top) - errors - none:16d}")


def margin_table(reference: Sequence[Mapping[str, Any]], lab: Mapping[str, Mapping[str, Any]]
                 ) -> None:
    """Signal share of the sentences whose reference margin is at least each threshold."""
    print("\nreference margin >=  sentences  signal share")
    margin = {}
    for r in reference:
        p = sorted(r["probs"].values())
        margin[r["id"]] = p[-1] - p[-2]
    for t in MARGINS:
        kept = [i for i, m in margin.items() if m >= t and i in lab]
        sig = sum(lab[i]["label"] != NONE for i in kept)
        print(f"{t:19.1f}  {len(kept):9d}  {_iv(sig, len(kept))}")


def agreement(first: Mapping[str, Mapping[str, Any]], second: Mapping[str, Mapping[str, Any]]
              ) -> None:
    from sklearn.metrics import cohen_kappa_score

    both = [i for i in second if i in first]
    a = [first[i]["label"] for i in both]
    b = [second[i]["label"] for i in both]
    same = sum(x == y for x, y in zip(a, b, strict=True))
    kappa = cohen_kappa_score(a, b) if len(set(a) | set(b)) > 1 else float("nan")
    print(f"\ntwo labellers on {len(both)} sentences: agree {_iv(same, len(both))}, "
          f"Cohen's kappa {kappa:.2f}")


def small_run(root: Path) -> tuple[Path, Path, Path]:
    """A made-up run of 80 sentences (corpus shard, reference scores, hard subset) and two
    label files: what ``--small`` reads."""
    from synth.core import write_jsonl

    rng = np.random.default_rng(0)
    run = root / "run"
    (run / "corpus").mkdir(parents=True)
    (run / "scores").mkdir()
    labels = ["negative", "positive"]
    ids = [f"q{i:08d}" for i in range(80)]
    texts = {i: f"sentence {n} of a made-up corpus" for n, i in enumerate(ids)}
    write_jsonl(run / "corpus" / "shard-00000.jsonl",
                [{"id": i, "text": texts[i]} for i in ids])
    p = rng.random(80)
    write_jsonl(run / "scores" / "reference.jsonl",
                [{"id": i, "probs": {"negative": 1 - q, "positive": q}} for i, q in zip(ids, p,
                                                                                      strict=True)])
    write_jsonl(run / "hard.jsonl", [{"id": ids[j], "text": texts[ids[j]],
                                      "task_label": labels[int(p[j] < 0.5)]}
                                     for j in np.argsort(-np.abs(p - 0.5))[:20]])
    gold = [str(rng.choice([*labels, NONE])) for _ in ids]
    first, second = root / "labels.jsonl", root / "second.jsonl"
    write_jsonl(first, [{"id": i, "text": texts[i], "label": g, "garbled": bool(n % 3 == 0)}
                        for n, (i, g) in enumerate(zip(ids, gold, strict=True))])
    write_jsonl(second, [{"id": i, "text": texts[i], "label": g if n % 5 else NONE,
                          "garbled": False}
                         for n, (i, g) in enumerate(zip(ids[:40], gold[:40], strict=True))])
    return run, first, second


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", type=Path, help="the run directory (e.g. runs/demo)")
    ap.add_argument("--labels", type=Path, help="blind labels of the run's sentences")
    ap.add_argument("--second", type=Path, default=None,
                    help="a second labeller's labels of some of them (agreement)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random 60")
    ap.add_argument("--small", action="store_true", help="CI mode: a tiny made-up run")
    args = ap.parse_args(argv)

    from discovery._data import read_corpus
    from synth.core import read_jsonl

    if args.small:
        args.run, args.labels, args.second = small_run(Path(tempfile.mkdtemp(prefix="audit-")))
    if args.run is None or args.labels is None:
        ap.error("give --run and --labels (or --small)")
    ids, texts = read_corpus(args.run)
    by_id = dict(zip(ids, texts, strict=True))
    lab = read_labels(args.labels, by_id)
    print(f"run {args.run}: {len(ids)} sentences, {len(lab)} labelled blind ({args.labels})\n")
    corpus_table(ids, lab, args.seed)
    hard_table(read_jsonl(args.run / "hard.jsonl"), lab)
    margin_table(read_jsonl(args.run / "scores" / "reference.jsonl"), lab)
    if args.second is not None:
        agreement(lab, read_labels(args.second, by_id))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
