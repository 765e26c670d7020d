"""Planted-slice benchmark: does discovery find failures planted at random in a task model?

In the style of Domino's dcbench (slice discovery, precision@k): failures are planted in a task
model the pipeline really runs (the demo TF-IDF + logistic-regression pipeline, wrapped: see
``bench/_planted.py``), the whole ``discover`` pipeline runs with that model at the default
config (its default focus budget), and the benchmark scores its top 10 findings.

Per seed, one planted model, its slices drawn at random by counting the base corpus (printed
with their counts): a word in each frequency band (frequent, medium, rare), a two-word phrase,
a category of related words (a k-means cluster of the corpus's rare words in the packaged
MiniLM encoder's space: no hand-made list) and two structural slices drawn from questions,
digits, negation, quotes, first person and long sentences. Each slice's effect is drawn too: a
flip of the model's top label, or one label forced. The slices are disjoint. Every seed runs
two arms: the corpus only, and with the labelled data the config names (where this version
can read it: ``labelled.data``; else the arm is n/a).

The peers run on the first seed's planted model in the same run, on the labelled rows that
arm reads: a per-word Fisher test on the model's errors (with and without "?" as a token) and
SliceLine (default alpha, and alpha 0.999); ``bench/_peers.py``.

The corpus and the reference's scores depend only on the config: they are made once in the
base run (``--run``) and copied into every seed and arm, which recompute only what the
planted model changes. Results go to ``--out`` (default ``bench/results/discovery_power.json``);
``python bench/_power_docs.py`` writes the tables in docs/discovery.md and README.md from it.

    nice python bench/discovery_power.py --run runs/demo --work runs/power \
        --seeds 0 1 2 3 4 5 6 7 8 9 10                          # the committed result
    python bench/discovery_power.py --small                     # CI: a floor, not a shape
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _planted import (  # noqa: E402
    Slice,
    choose_slices,
    match,
    read_findings,
    write_model_module,
)

RESULT = ROOT / "bench" / "results" / "discovery_power.json"
SMALL_BASE = ["generator.n=32", "generator.shard_size=16", "evaluation.size=40"]
SMALL_ROW = ["focus.budget=2", "focus.candidates=2"]
# negation: a 32-prompt corpus at temperature 0.7 may hold no sentence of 30 words, and first
# person takes half its sentences, leaving the frequent word too few of its own
SMALL_PLAN = [("frequent", "flip"), ("structure: negation", "flip")]
# The small corpus's frequent band: a word in 5-30% of its ~30 sentences, at least 3.
SMALL_BANDS = {"frequent": ((0.05, 0.30), (3, 3))}
SMALL_LABELLED = 300  # labelled rows the peers read in the small mode
STAGES_OFF = ("slices.semantic.enabled=false", "slices.metadata.enabled=false",
              "slices.occlusion.enabled=false", "focus.enabled=false", "labelled.data=null")
COPIED = ("corpus", "scores", "manifest.json")  # what an arm reuses of the base run
CORPUS, LABELLED = "corpus only", "with labelled data"


def field_exists(model: Any, dotted: str) -> bool:
    """Does the pydantic ``model`` class have the (nested) field ``dotted``."""
    for part in dotted.split("."):
        fields = getattr(model, "model_fields", None)
        if not fields or part not in fields:
            return False
        ann = fields[part].annotation
        model = next((a for a in (ann, *getattr(ann, "__args__", ()))
                      if hasattr(a, "model_fields")), None)
    return True


def usable(override: str) -> bool:
    from synthcheck._config import RunConfig

    return field_exists(RunConfig, override.partition("=")[0])


def arms(cfg: Any) -> dict[str, list[str] | None]:
    """Each arm's overrides: the corpus only (labelled data off), and with labelled data
    (the config's own ``labelled.data``, else the evaluation data); None: this version
    cannot read labelled data."""
    if not usable("labelled.data=null"):
        return {CORPUS: [], LABELLED: None}
    return {CORPUS: ["labelled.data=null"],
            LABELLED: [] if cfg.labelled.data else ["labelled.data=evaluation"]}


def copy_base(base: Path, dest: Path) -> None:
    """Copy the base run into ``dest`` (once): its corpus, its scores with their caches
    (the reference's raw scores, on the corpus and held out) and its manifest; none of its
    later outputs, so every finding read is this arm's own."""
    if dest.is_dir():
        return
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in COPIED:
        if (base / name).is_dir():
            shutil.copytree(base / name, tmp / name)
        elif (base / name).is_file():
            shutil.copy2(base / name, tmp / name)
    tmp.rename(dest)


def prepare_base(src: Path, base: Path, config: str, overrides: list[str]) -> None:
    """Make ``base``, the run every arm copies: ``src``'s corpus, scores and manifest
    (generated first when ``src`` has no corpus), brought current for ``config`` with the
    finding stages, focus and labelled data off (so the reference's corpus and held-out
    scores are computed once, here)."""
    from synth import has_corpus
    from synthcheck._config import load_run_config
    from synthcheck._pipeline import discover

    if src.resolve() != base.resolve():
        if has_corpus(src):
            copy_base(src, base)
        else:
            print(f"base run: no corpus in {src}: generating one into {base}", flush=True)
    cfg = load_run_config(config, [*overrides, "suite=null",
                                   *(o for o in STAGES_OFF if usable(o))])
    start = time.perf_counter()
    discover(cfg, base, progress=False, log=lambda _: None)
    print(f"base run {base}: current for {config} in {time.perf_counter() - start:.0f}s",
          flush=True)


def run_arm(name: str, overrides: list[str], *, base: Path, run: Path, config: str,
            row_overrides: list[str], spec: str, slices: Sequence[Slice],
            id_text: dict[str, str]) -> dict[str, Any]:
    """Run ``discover`` for one arm in its own copy of the base run; score its findings."""
    from synthcheck._config import load_run_config
    from synthcheck._pipeline import discover

    copy_base(base, run)
    cfg = load_run_config(config, [*row_overrides, "suite=null",
                                   f"task_models=[{{name: planted, spec: '{spec}'}}]",
                                   *overrides])
    start = time.perf_counter()
    discover(cfg, run, progress=False, log=lambda _: None)
    seconds = time.perf_counter() - start
    source, findings = read_findings(run, id_text)
    data = _data_of(run)
    return {
        "arm": name, "overrides": overrides, "seconds": round(seconds, 1),
        "findings_source": source, "findings": len(findings),
        "top10": [{"name": f.name, "kind": f.kind, "data": data.get(f.rank, "corpus")}
                  for f in findings[:10]],
        "replicated": replicated(run),
        "slices": {s.name: match(findings, s) for s in slices},
    }


def replicated(run: Path) -> list[str]:
    """The slices confirmed by replication on the focus rounds' new sentences (a finding's
    own row, or one folded under another finding's ``also``), in rank order."""
    from synth.core import iter_jsonl

    path = run / "findings.jsonl"
    if not path.is_file():
        return []
    out: list[str] = []
    for r in sorted(iter_jsonl(path), key=lambda r: r["rank"]):
        for x in [r, *(r.get("also") or [])]:
            if x.get("confirmed_by") == "replication":
                out.append(str(x["name"]))
    return out


def _data_of(run: Path) -> dict[int, str]:
    """Each finding's rank -> its ``data`` (corpus or labelled)."""
    from synth.core import iter_jsonl

    path = run / "findings.jsonl"
    if not path.is_file():
        return {}
    return {int(r["rank"]): str(r.get("data", "corpus")) for r in iter_jsonl(path)}


def labelled_set(cfg: Any, small: bool) -> tuple[list[str], list[str], str]:
    """The labelled rows the "with labelled data" arm reads (texts, gold labels, what they
    are): ``discovery.labelled_rows`` where this version has it, else the evaluation data's
    held-out rows less the evaluation sample (the rows that arm would read)."""
    import discovery

    if hasattr(discovery, "labelled_rows") and getattr(cfg, "labelled", None) is not None \
            and cfg.labelled.data:
        rows = discovery.labelled_rows(cfg.task.label_space, cfg.labelled, cfg.evaluation,
                                       cfg.corpus)
        texts, golds = list(rows.data.texts), list(rows.data.labels)
        what = f"discovery.labelled_rows: {rows.info}"
    else:
        from collections import Counter

        from discovery._data import packaged_split
        from discovery._evaluate import load_evaluation_set

        ev = cfg.evaluation.resolved(cfg.corpus)
        name = ev.data.partition(":")[2]
        _, pool = packaged_split(name, seed=ev.split_seed, holdout_fraction=ev.holdout_fraction)
        sample = Counter(zip(load_evaluation_set(cfg.task.label_space, cfg.evaluation,
                                                 corpus=cfg.corpus).texts, pool.labels,
                             strict=False))
        texts, golds = [], []
        for t, g in zip(pool.texts, pool.labels, strict=True):
            if sample[(t, g)] > 0:
                sample[(t, g)] -= 1
                continue
            texts.append(t)
            golds.append(g)
        what = f"{ev.data} held-out rows less the evaluation sample of {ev.size}"
    if small:
        texts, golds = texts[:SMALL_LABELLED], golds[:SMALL_LABELLED]
    return texts, golds, what


def cached_embedder(folder: Path) -> Callable[[list[str]], Any]:
    """The packaged MiniLM encoder's embeddings of words, cached in ``folder`` by content."""
    import numpy as np

    def embed(words: list[str]) -> Any:
        key = hashlib.sha256("\n".join(words).encode()).hexdigest()[:16]
        path = folder / f"words-{key}.npy"
        if path.is_file():
            return np.load(path)
        from discovery import SentenceEmbedder

        vectors = SentenceEmbedder().embed(words)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npy")
        np.save(tmp, vectors)
        tmp.replace(path)  # atomic: processes sharing the cache never read half a file
        return vectors
    return embed


def top_labels(scorer: Any, texts: Sequence[str]) -> list[str]:
    return [max(p, key=p.get) for p in scorer.predict_proba(list(texts))]


def plant(seed: int, texts: list[str], labels: list[str], base_top: list[str], *,
          embed: Callable[[list[str]], Any], small: bool, work: Path, base_spec: str,
          labelled: tuple[list[str], list[str]]) -> tuple[list[Slice], str, list[dict[str, Any]]]:
    """The slices of ``seed``, the planted model's spec, and each slice's counts (members and
    changed sentences in the corpus and in the labelled rows)."""
    from _planted import PlantedModel

    slices = choose_slices(texts, seed=seed, labels=labels, base_top=base_top,
                           plan=SMALL_PLAN if small else None, embed=embed,
                           bands=SMALL_BANDS if small else None)
    digest = hashlib.sha256(json.dumps([s.label() for s in slices]).encode()).hexdigest()
    module = f"planted_{digest[:12]}"  # one module per planted set
    spec = write_model_module(work / "models", module, slices, labels, base=base_spec)
    model = PlantedModel(slices, labels=labels, base=base_spec)
    lab_texts, lab_gold = labelled
    lab_top = top_labels(model, lab_texts)

    def changed(s: Slice, top: str) -> bool:
        return s.effect == "flip" or top != s.effect.partition(":")[2]

    info = []
    for s in slices:
        own = [i for i, t in enumerate(texts) if model.slice_of(t) is s]
        lab = [i for i, t in enumerate(lab_texts) if model.slice_of(t) is s]
        info.append({
            "name": s.name, "label": s.label(), "kind": s.report_kind, "effect": s.effect,
            "terms": list(s.terms), "corpus_members": len(own),
            "corpus_changed": sum(changed(s, base_top[i]) for i in own),
            "labelled_members": len(lab),
            "labelled_errors": sum(lab_top[i] != lab_gold[i] for i in lab)})
    return slices, spec, info


def run_peers(slices: Sequence[Slice], spec_model: Any, texts: list[str], golds: list[str]
              ) -> dict[str, Any]:
    """Every peer on the labelled rows with the planted model; found per slice."""
    from _peers import run_peers as peers

    predicted = top_labels(spec_model, texts)
    out = {}
    for name, (findings, info) in peers(texts, golds, predicted).items():
        out[name] = {**info, "top10": [f.name for f in findings[:10]],
                     "slices": {s.name: match(findings, s) for s in slices}}
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", default=None, help="the base run directory (default: WORK/base)")
    ap.add_argument("--config", default=str(ROOT / "configs" / "sentiment.yaml"))
    ap.add_argument("-P", dest="overrides", action="append", default=[],
                    help="a config override for the base run and every arm (e.g. "
                         "generator.n=256: a smaller corpus than the default)")
    ap.add_argument("--seeds", type=int, nargs="+", default=None,
                    help="planted models, one per seed (default: 0 1 2 3 4 5; --small: 0)")
    ap.add_argument("--arms", nargs="+", default=None, choices=[CORPUS, LABELLED],
                    help="run only these arms")
    ap.add_argument("--no-peers", action="store_true", help="skip the peers")
    ap.add_argument("--work", default=None, help="scratch run directories "
                    "(default: runs/discovery_power, --small: /tmp/discovery_power_small)")
    ap.add_argument("--small", action="store_true",
                    help="CI's small mode: a 32-prompt corpus, a frequent word and negated "
                         "sentences, a tiny focus budget, 300 labelled rows")
    ap.add_argument("--fresh", action="store_true", help="delete the seeds' run directories")
    ap.add_argument("--merge", nargs="+", default=None, metavar="JSON",
                    help="combine the seeds of these result files (runs of the same config, "
                         "e.g. seeds split over processes) into --out, and stop")
    ap.add_argument("--out", default=None,
                    help=f"write the results as JSON here (default: {RESULT.relative_to(ROOT)}; "
                         f"--small: nowhere)")
    args = ap.parse_args(argv)
    if args.merge:
        return merge([Path(p) for p in args.merge], Path(args.out or RESULT))

    from discovery import load_task_scorer, read_corpus
    from synth.core import git_commit
    from synthcheck._config import load_run_config

    work = Path(args.work or ("/tmp/discovery_power_small" if args.small
                              else ROOT / "runs" / "discovery_power"))
    if args.fresh:
        for old in work.glob("seed-*"):
            shutil.rmtree(old)
    base_overrides = [*(SMALL_BASE if args.small else []), *args.overrides]
    base = work / "base"
    prepare_base(Path(args.run) if args.run else base, base, args.config, base_overrides)
    ids, texts = read_corpus(base)
    id_text = dict(zip(ids, texts, strict=True))
    row_overrides = [*base_overrides, *(SMALL_ROW if args.small else [])]
    cfg = load_run_config(args.config, row_overrides)
    labels = cfg.task.label_space.list
    base_spec = cfg.task_models[0].spec
    base_top = top_labels(load_task_scorer(base_spec, labels), texts)
    arm_overrides = arms(cfg)
    wanted = args.arms or [CORPUS, LABELLED]
    with_cfg = load_run_config(args.config, [*row_overrides, *(arm_overrides[LABELLED] or [])])
    lab_texts, lab_gold, lab_what = labelled_set(with_cfg, args.small)
    embed = cached_embedder(work / "cache")
    seeds = args.seeds or ([0] if args.small else [0, 1, 2, 3, 4, 5])
    out_path = None if args.small and not args.out else Path(args.out or RESULT)
    results: dict[str, Any] = {
        "command": "python bench/discovery_power.py " + " ".join(argv or sys.argv[1:]),
        "date": datetime.date.today().isoformat(), "git_commit": git_commit(),
        "config": str(Path(args.config).resolve().relative_to(ROOT))
        if Path(args.config).resolve().is_relative_to(ROOT) else args.config,
        "overrides": base_overrides, "corpus": len(texts),
        "focus_budget": cfg.focus.budget, "labelled": {"rows": len(lab_texts), "what": lab_what},
        "arms": {a: (o if o is not None else "n/a (this version reads no labelled data)")
                 for a, o in arm_overrides.items()},
        "seeds": [], "peers": None}
    print(f"corpus: {len(texts)} sentences ({base}); labelled rows: {len(lab_texts)} "
          f"({lab_what})", flush=True)
    for seed in seeds:
        slices, spec, info = plant(seed, texts, labels, base_top, embed=embed,
                                   small=args.small, work=work, base_spec=base_spec,
                                   labelled=(lab_texts, lab_gold))
        sys.path.insert(0, str(work / "models"))
        print(f"seed {seed}: planted slices (corpus members/changed, labelled members/errors):")
        for s in info:
            print(f"  {s['name']:<24}{s['corpus_members']:>5}/{s['corpus_changed']:<5}"
                  f"{s['labelled_members']:>5}/{s['labelled_errors']:<5}{s['label']}")
        entry: dict[str, Any] = {"seed": seed, "spec": spec, "slices": info, "arms": {}}
        for arm in wanted:
            overrides = arm_overrides[arm]
            if overrides is None:
                entry["arms"][arm] = {"arm": arm, "missing": results["arms"][arm]}
                continue
            row = run_arm(arm, overrides, base=base,
                          run=work / f"seed-{seed}" / arm.replace(" ", "-"),
                          config=args.config, row_overrides=row_overrides, spec=spec,
                          slices=slices, id_text=id_text)
            entry["arms"][arm] = row
            found = sum(m["found"] for m in row["slices"].values())
            print(f"seed {seed}, {arm}: {found}/{len(slices)} found in the top 10 "
                  f"({row['findings_source']}; {row['seconds']:.0f}s)", flush=True)
        results["seeds"].append(entry)
        if seed == seeds[0] and not args.no_peers:  # the peers: on the same planted model
            from discovery import load_task_scorer as load

            model = load(spec, labels)
            results["peers"] = {"seed": seed, "methods": run_peers(
                slices, model, lab_texts, lab_gold)}
        if out_path:  # after every seed, so a cut-short sweep keeps what it measured
            _write(out_path, results)
    from _power_docs import render

    print()
    for block in render(results).values():
        print(block)
        print()
    if out_path:
        _write(out_path, results)
    return results


def merge(paths: Sequence[Path], out: Path) -> dict[str, Any]:
    """One result from several runs of the same config and corpus: every seed (in seed
    order), the peers of the run that has them, each run's command."""
    parts = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    same = ("config", "overrides", "corpus", "focus_budget", "labelled", "arms")
    for p, r in zip(paths[1:], parts[1:], strict=True):
        differ = [k for k in same if r.get(k) != parts[0].get(k)]
        if differ:
            raise SystemExit(f"error: {p} differs from {paths[0]} in {differ}: merge only "
                             f"runs of the same config and corpus")
    results = {**parts[0], "command": " && ".join(r["command"] for r in parts),
               "seeds": sorted((e for r in parts for e in r["seeds"]), key=lambda e: e["seed"]),
               "peers": next((r["peers"] for r in parts if r.get("peers")), None)}
    _write(out, results)
    print(f"merged {len(results['seeds'])} seeds into {out}")
    return results


def _write(path: Path, results: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
