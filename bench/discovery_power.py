"""Planted-slice benchmark: does discovery find failures planted in the default corpus?

In the style of Domino's dcbench (slice discovery, precision@k): failures are planted in a
task model the pipeline really runs, the whole discovery pipeline (``synthcheck discover``'s
stages: score, rank, mine, the newer finding stages where they exist, focus, evaluate) runs
on the default corpus with that model, and the benchmark scores what it reports.

Planted slices, chosen by counting the base corpus (printed with their counts; one of each
kind, seeded, distinct words): single words in three frequency bands (``frequent``: in 3-10%
of sentences, ``medium``: 0.6-1.5%, ``rare``: seen 2 or 3 times), a two-word phrase of
content words (4-12 sentences), a group of related words each seen 1-3 times (the topic
among family/jobs/countries/food/animals with the most such words) and a structural slice
(sentences of at least 30 words). The slices are disjoint (a rare or group word in no
other slice's sentence; a bigger band's word or the phrase with at least 3 sentences of its
own), as dcbench plants one slice per model. The planted task model (``bench/_planted.py``,
``PlantedModel``, loaded through a ``python:`` task-model spec) is the demo model with its
top label flipped on every sentence of any planted slice, and the demo model elsewhere.

Ground truth. Corpus sentences have no gold label, so "the planted model fails here" is
defined as "it disagrees with the unplanted demo model", which is known exactly: a sentence
is a planted failure if and only if it is a member of a planted slice. (Where the demo model
is itself wrong, a flip makes the planted model right against a gold label: about 23% of
planted flips, the demo model's held-out error rate. Slice discovery is about the flips.)

Per planted slice and configuration:

- found in the top 10 findings: a finding's terms name the slice (hold the word or phrase
  as whole words; for a group, at least two of its words), or at least 3 of its example
  sentences are given and at least half of its first 10 are slice members (the only way to
  find the structural slice);
- precision@10: the share of slice members among the best-matching top-10 finding's first
  10 example sentences (the first finding naming the slice, else the most precise one).

Per configuration: slices found (of those planted), hard-subset precision on the corpus
(the share of hard sentences that are planted failures: a lower bound, as the demo model's
own errors are failures too but unknown on corpus sentences), the pipeline's own held-out
hard-subset precision (``eval.json``, gold labels: planted flips and the demo model's real
errors both count) with its Wilson interval, where the findings were read from
(``findings.jsonl`` when the run writes one, else focus rows then mined n-grams), and the
seconds the pipeline took.

Configurations: the defaults at 1x and 2x the focus budget (``focus.budget``: sentences
generated per candidate; the corpus is the same), then one row per part switched off by a
config override: the reference (the plain 4-shot SmolLM2 reference, when the default is
another), the ranking metric (the other one of abs_top / p_wrong), semantic slices,
metadata slices, occlusion, occlusion's centring on the sentence and its word groups, the
no-signal drop (``ranking.min_reference_margin: 0``), focus rounds' paired test, focus
rounds' candidate choice (``ucb`` instead of ``balanced``), focus rounds.
A row whose config field does not exist in this version prints ``n/a (field
missing)``; one the default already has off, ``n/a (off by default)``.

Each configuration runs in its own copy of the base run directory, so the corpus and the
reference's cached scores are reused and only what the planted model changes is recomputed.

    python bench/discovery_power.py --run runs/demo --out bench/power.json   # full size
    python bench/discovery_power.py --small                                  # CI's small mode

Without ``--small`` and with no corpus in ``--run``, the base run is generated and scored
with ``--config`` first (what ``make demo`` does). ``--small`` generates a 32-prompt corpus,
plants two slices (a frequent word and long sentences) and runs two configurations with a
tiny focus budget.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

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

WEAK_REFERENCE = "packaged:smollm2-135m-instruct"  # the plain few-shot reference (4 shots)
SMALL_BASE = ["generator.n=32", "generator.shard_size=16", "evaluation.size=40"]
SMALL_ROW = ["focus.budget=2", "focus.candidates=2"]
# Parts switched off for the ablation rows (a row whose field this version lacks is n/a).
SWITCHES: dict[str, str] = {
    "no semantic slices": "slices.semantic.enabled=false",
    "no metadata slices": "slices.metadata.enabled=false",
    "no occlusion": "slices.occlusion.enabled=false",
    "occlusion: no centring": "slices.occlusion.centre=false",
    "occlusion: no word groups": "slices.occlusion.groups=false",
    "keep no-signal sentences": "ranking.min_reference_margin=0",
    "focus: no paired test": "focus.paired=false",
    "focus: select ucb": "focus.select=ucb",
    "no focus": "focus.enabled=false",
}
STAGES_OFF = ("no semantic slices", "no metadata slices", "no occlusion", "no focus")
COPIED = ("corpus", "scores", "manifest.json")  # what a configuration reuses of the base run


@dataclass
class Row:
    """One configuration: a name and its ``-P`` overrides, or why it cannot run here."""

    name: str
    overrides: list[str]
    missing: str | None = None


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


def switch_off(row: str) -> str | None:
    """The override of the ablation ``row`` (a key of ``SWITCHES``), or None where this
    version lacks its field."""
    from synthcheck._config import RunConfig

    override = SWITCHES[row]
    return override if field_exists(RunConfig, override.partition("=")[0]) else None


def rows_for(cfg: Any, *, small: bool, budgets: Sequence[float]) -> list[Row]:
    """The configurations to run: the defaults at each focus budget, then the ablations."""

    out = [Row(f"default {b:g}x budget", [f"focus.budget={max(1, round(cfg.focus.budget * b))}"])
           for b in budgets]
    if small:  # one ablation row: the switch path runs too
        return [*out, Row("no focus", ["focus.enabled=false"])]
    from discovery import ReferenceConfig
    from synth.core import output_dump

    plain = ReferenceConfig(model=WEAK_REFERENCE, calibration="contextual")
    same = output_dump(cfg.reference) == output_dump(plain)
    out.append(Row("reference: plain SmolLM2",
                   [f"reference={{model: {WEAK_REFERENCE}, calibration: contextual}}"],
                   "n/a (already the default)" if same else None))
    other = "abs_top" if cfg.ranking.metric != "abs_top" else "p_wrong"
    out.append(Row(f"ranking: {other} (default {cfg.ranking.metric})",
                   [f"ranking.metric={other}"]))
    for part in SWITCHES:
        usable = switch_off(part)
        if usable is None:
            out.append(Row(part, [], "n/a (field missing)"))
            continue
        key, _, value = usable.partition("=")
        current: Any = cfg
        for name in key.split("."):
            current = getattr(current, name)
        off = current == yaml.safe_load(value)
        out.append(Row(part, [usable], "n/a (off by default)" if off else None))
    return out


def copy_base(base: Path, dest: Path) -> None:
    """Copy the base run into ``dest`` (once): its corpus, its scores with their caches
    (the reference's raw scores, on the corpus and held out) and its manifest; none of its
    later outputs, so every finding read is this configuration's own."""
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


def run_row(row: Row, *, base: Path, work: Path, config: str, base_overrides: list[str],
            spec: str, slices: Sequence[Slice], id_text: dict[str, str]) -> dict[str, Any]:
    """Run the pipeline for one configuration in its own copy of the base run; score it."""
    from synthcheck._config import load_run_config
    from synthcheck._pipeline import discover

    run = work / "rows" / "".join(c if c.isalnum() else "-" for c in row.name)
    copy_base(base, run)
    cfg = load_run_config(config, [*base_overrides, "suite=null",
                                   f"task_models=[{{name: planted, spec: '{spec}'}}]",
                                   *row.overrides])
    start = time.perf_counter()
    result = discover(cfg, run, progress=False, log=lambda _: None)
    seconds = time.perf_counter() - start
    source, findings = read_findings(run, id_text)
    hard = [r["id"] for r in _jsonl(run / "hard.jsonl")]
    planted_hard = sum(any(s.member(id_text[i]) for s in slices) for i in hard)
    held = {}
    if (run / "eval.json").is_file():
        held = json.loads((run / "eval.json").read_text()).get("hard_subset_precision") or {}
    return {
        "name": row.name, "overrides": row.overrides, "seconds": round(seconds, 1),
        "stage_seconds": result.seconds, "findings_source": source,
        "findings": len(findings), "top10": [f.name for f in findings[:10]],
        "slices": {s.name: match(findings, s) for s in slices},
        "hard": len(hard), "hard_planted": planted_hard,
        "held_out_precision": {k: held.get(k) for k in ("estimate", "low", "high", "n",
                                                         "metric")} if held else None,
    }


def _jsonl(path: Path) -> list[dict[str, Any]]:
    from synth.core import iter_jsonl

    return list(iter_jsonl(path)) if path.is_file() else []


def prepare_base(src: Path, base: Path, config: str, overrides: list[str]) -> None:
    """Make ``base``, the run every configuration copies: ``src``'s corpus, scores and
    manifest (generated first, without focus rounds, when ``src`` has no corpus), brought
    current for ``config`` with the finding stages and focus off (so the reference's corpus
    and held-out scores under the current defaults are computed once, here)."""
    from synth import has_corpus
    from synthcheck._config import load_run_config
    from synthcheck._pipeline import discover

    if src.resolve() != base.resolve():
        if has_corpus(src):
            copy_base(src, base)
        else:
            print(f"base run: no corpus in {src}: generating one into {base}", flush=True)
    off = [o for o in map(switch_off, STAGES_OFF) if o]
    cfg = load_run_config(config, [*overrides, "suite=null", *off])
    start = time.perf_counter()
    discover(cfg, base, progress=False, log=lambda _: None)
    print(f"base run {base}: current for {config} in {time.perf_counter() - start:.0f}s",
          flush=True)


def table(results: dict[str, Any]) -> str:
    """The planted-slice table (Markdown): a row per configuration; per slice ``yes #r``
    (found, the best-matching finding's rank; ``*`` when focus rounds confirmed that
    finding on new sentences) or ``no`` and that finding's precision@10;
    then slices found, hard-subset precision (planted, on the corpus), held-out precision,
    where the findings came from and seconds."""
    slices = results["slices"]
    head = (["config"] + [s["label"] for s in slices]
            + ["found", "hard planted", "held-out precision", "findings", "seconds"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results["rows"]:
        if "missing" in r:
            lines.append("| " + " | ".join([r["name"], r["missing"]] + [""] * (len(head) - 2))
                         + " |")
            continue
        cells = [r["name"]]
        for s in slices:
            m = r["slices"][s["name"]]
            p = "-" if m["precision_at_10"] is None else f"{m['precision_at_10']:.2f}"
            star = "*" if m.get("confirmed") else ""
            cells.append(f"{'yes #' + str(m['best_rank']) + star if m['found'] else 'no'} "
                         f"p@10 {p}")
        found = sum(m["found"] for m in r["slices"].values())
        cells.append(f"{found}/{len(slices)}")
        share = r["hard_planted"] / r["hard"] if r["hard"] else 0.0
        cells.append(f"{share:.2f} ({r['hard_planted']}/{r['hard']})")
        h = r["held_out_precision"]
        cells.append("-" if not h or h.get("estimate") is None else
                     f"{h['estimate']:.2f} [{h['low']:.2f}, {h['high']:.2f}] n={h['n']}")
        cells.append(r["findings_source"])
        cells.append(f"{r['seconds']:.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", default=None,
                    help="the base run directory (default: runs/demo; --small: WORK/base)")
    ap.add_argument("--config", default=str(ROOT / "configs" / "sentiment.yaml"))
    ap.add_argument("--budgets", type=float, nargs="+", default=None,
                    help="focus budgets, as multiples of the config's focus.budget "
                         "(default: 1 2; --small: 1)")
    ap.add_argument("--rows", nargs="*", default=None,
                    help="run only the configurations whose names start with these, in "
                         "this order")
    ap.add_argument("--seed", type=int, default=0, help="seeds the choice of planted words")
    ap.add_argument("--work", default=None, help="scratch run directories "
                    "(default: /tmp/discovery_power, --small: /tmp/discovery_power_small)")
    ap.add_argument("--small", action="store_true",
                    help="CI's small mode: a 32-prompt corpus, two slices, tiny focus budget")
    ap.add_argument("--fresh", action="store_true", help="delete the scratch rows first")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)

    from discovery import read_corpus
    from synthcheck._config import load_run_config

    work = Path(args.work or ("/tmp/discovery_power_small" if args.small
                              else "/tmp/discovery_power"))
    if args.fresh:
        shutil.rmtree(work / "rows", ignore_errors=True)
    base_overrides = SMALL_BASE if args.small else []
    src = Path(args.run) if args.run else (work / "base" if args.small else ROOT / "runs/demo")
    base = work / "base"
    prepare_base(src, base, args.config, base_overrides)
    ids, texts = read_corpus(base)
    id_text = dict(zip(ids, texts, strict=True))
    row_overrides = [*base_overrides, *(SMALL_ROW if args.small else [])]
    cfg = load_run_config(args.config, row_overrides)
    kinds = ("frequent", "long") if args.small else (
        "frequent", "medium", "rare", "phrase", "group", "long")
    slices = choose_slices(texts, seed=args.seed, kinds=kinds)
    counts = {s.name: sum(s.member(t) for t in texts) for s in slices}
    print(f"corpus: {len(texts)} sentences ({base})")
    print("planted slices (sentences in the corpus):")
    for s in slices:
        print(f"  {s.name:<16}{counts[s.name]:>5}  {s.label()}")
    labels = cfg.task.label_space.list
    digest = hashlib.sha256(json.dumps([s.label() for s in slices]).encode()).hexdigest()
    module = f"planted_{digest[:12]}"  # one module per planted set
    spec = write_model_module(work / "models", module, slices, labels,
                              base=cfg.task_models[0].spec)
    sys.path.insert(0, str(work / "models"))
    budgets = args.budgets or ([1.0] if args.small else [1.0, 2.0])
    rows = rows_for(cfg, small=args.small, budgets=budgets)
    if args.rows:  # in the order given (the most telling first, for a cut-short run)
        picked = [r for p in args.rows for r in rows if r.name.startswith(p)]
        rows = list({r.name: r for r in picked}.values())
    results: dict[str, Any] = {
        "corpus": len(texts), "base": str(src), "spec": spec,
        "slices": [{"name": s.name, "label": s.label(), "kind": s.kind,
                    "terms": list(s.terms), "corpus_members": counts[s.name]} for s in slices],
        "rows": []}
    for row in rows:
        if row.missing:
            print(f"{row.name}: {row.missing}", flush=True)
            results["rows"].append({"name": row.name, "missing": row.missing})
            continue
        out = run_row(row, base=base, work=work, config=args.config,
                      base_overrides=row_overrides,
                      spec=spec, slices=slices, id_text=id_text)
        results["rows"].append(out)
        found = sum(m["found"] for m in out["slices"].values())
        print(f"{row.name}: {found}/{len(slices)} found in the top 10 "
              f"({out['findings_source']}; {out['seconds']:.0f}s)", flush=True)
        if args.out:  # after every row, so a cut-short sweep keeps what it measured
            Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print()
    print(table(results))
    for r in results["rows"]:
        if "top10" in r:
            print(f"top 10 ({r['name']}): " + " / ".join(r["top10"]))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return results


if __name__ == "__main__":
    main()
