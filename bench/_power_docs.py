"""The tables of bench/discovery_power.py, rendered from its JSON result, and the blocks of
docs/discovery.md and README.md they fill (between ``<!-- discovery_power:NAME -->`` and
``<!-- /discovery_power:NAME -->``). tests/bench/test_planted.py checks the docs match the
committed result.

    python bench/_power_docs.py            # rewrite them from the committed JSON result
    python bench/_power_docs.py --check    # exit 1 when a block differs
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _planted import KINDS  # noqa: E402

RESULT = ROOT / "bench" / "results" / "discovery_power.json"
HELDOUT = ROOT / "bench" / "results" / "discovery_power_heldout.json"
"""Seeds run after the committed result's (its seeds not read while designing): pooled with
it in the ``pooled`` block."""
DOCS = {"docs/discovery.md": ("kinds", "seeds", "peers", "pooled"), "README.md": ("readme",)}
ARMS = ("corpus only", "with labelled data")


def _interval(found: int, n: int) -> str:
    from discovery._stats import wilson_interval

    lo, hi = wilson_interval(np.array([found]), np.array([n]))
    return f"[{float(lo[0]):.2f}, {float(hi[0]):.2f}]"


def tally(results: dict[str, Any], arm: str) -> dict[str, Any]:
    """Per kind (and effect): planted and found in ``arm``; per seed: the found share."""
    kinds: dict[str, list[int]] = {}
    per_seed = []
    for entry in results["seeds"]:
        row = entry["arms"].get(arm)
        if not row or "missing" in row:
            continue
        found = 0
        for s in entry["slices"]:
            hit = int(row["slices"][s["name"]]["found"])
            found += hit
            for key in (s["kind"], f"effect: {s['effect'].partition(':')[0]}"):
                kinds.setdefault(key, [0, 0])
                kinds[key][0] += hit
                kinds[key][1] += 1
        per_seed.append(found / len(entry["slices"]))
    return {"kinds": kinds, "per_seed": per_seed}


def _cell(found: int, n: int) -> str:
    return f"{found}/{n} ({found / n:.0%}) {_interval(found, n)}" if n else "-"


def kinds_table(results: dict[str, Any]) -> str:
    """Found in the top 10, per kind and arm: found/planted (share) [Wilson 95%]; then the
    effects and overall, with the per-seed mean, standard deviation and range."""
    arms = [a for a in ARMS if any(a in e["arms"] for e in results["seeds"])]
    tallies = {a: tally(results, a) for a in arms}
    head = ["kind", *(f"{a}: found/planted [95% CI]" for a in arms)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    keys = [k for k in KINDS if any(k in t["kinds"] for t in tallies.values())]
    keys += sorted({k for t in tallies.values() for k in t["kinds"] if k.startswith("effect")})
    for key in keys:
        cells = []
        for a in arms:
            f, n = tallies[a]["kinds"].get(key, (0, 0))
            cells.append(_cell(f, n) if n or tallies[a]["per_seed"] else "n/a")
        lines.append("| " + " | ".join([key, *cells]) + " |")
    total = []
    for a in arms:
        t = tallies[a]
        if not t["per_seed"]:
            total.append(results["arms"].get(a, "n/a") if isinstance(results["arms"].get(a), str)
                         else "n/a")
            continue
        kinds = {k: v for k, v in t["kinds"].items() if not k.startswith("effect")}
        f, n = sum(v[0] for v in kinds.values()), sum(v[1] for v in kinds.values())
        ps = np.array(t["per_seed"])
        sd = float(ps.std(ddof=1)) if len(ps) > 1 else 0.0
        total.append(f"**{_cell(f, n)}**; per seed {ps.mean():.0%} ± {sd:.0%} "
                     f"({ps.min():.0%}-{ps.max():.0%}, {len(ps)} seeds)")
    lines.append("| " + " | ".join(["**all kinds**", *total]) + " |")
    return "\n".join(lines)


def _found(m: dict[str, Any]) -> str:
    if m["found"]:
        return f"yes #{m['best_rank']}" + ("*" if m.get("confirmed") else "")
    return "no" + (f" (#{m['first_rank']})" if m.get("first_rank") else "")


def seeds_table(results: dict[str, Any]) -> str:
    """Every planted slice: its counts and, per arm, ``yes #rank`` (``*``: confirmed by focus
    rounds) or ``no`` (with the rank of the first finding that finds it further down)."""
    arms = [a for a in ARMS if any(a in e["arms"] for e in results["seeds"])]
    head = ["seed", "slice (effect)", "corpus members/changed", "labelled members/errors",
            *arms]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for entry in results["seeds"]:
        for s in entry["slices"]:
            cells = [str(entry["seed"]), s["label"],
                     f"{s['corpus_members']}/{s['corpus_changed']}",
                     f"{s['labelled_members']}/{s['labelled_errors']}"]
            for a in arms:
                row = entry["arms"].get(a)
                cells.append("n/a" if not row or "missing" in row
                             else _found(row["slices"][s["name"]]))
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def peers_table(results: dict[str, Any]) -> str:
    """The peers and ``discover`` on one planted model: found/total and per slice."""
    peers = results.get("peers")
    if not peers:
        return "(the peers did not run)"
    entry = next(e for e in results["seeds"] if e["seed"] == peers["seed"])
    slices = entry["slices"]
    head = ["method", "found", *(s["label"] for s in slices)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rows = [(f"`discover` ({a})", r) for a, r in entry["arms"].items()]
    rows += [(name, r) for name, r in peers["methods"].items()]
    for name, r in rows:
        if "missing" in r:
            lines.append("| " + " | ".join([name, r["missing"], *[""] * len(slices)]) + " |")
            continue
        got = [r["slices"][s["name"]] for s in slices]
        lines.append("| " + " | ".join([name, f"{sum(m['found'] for m in got)}/{len(got)}",
                                        *(_found(m) for m in got)]) + " |")
    for name, note in (("Domino", "0/5"), ("Giskard scan", "0/5")):
        lines.append("| " + " | ".join([f"{name} (not rerun)", note,
                                        "measured in turn 4 on another planted model (5 "
                                        "slices; /work/shared/DESIGN.md)",
                                        *[""] * (len(slices) - 1)]) + " |")
    return "\n".join(lines)


def readme_block(results: dict[str, Any]) -> str:
    """The README's summary: the kinds table and the peers' found/total."""
    peers = results.get("peers")
    line = ""
    if peers:
        entry = next(e for e in results["seeds"] if e["seed"] == peers["seed"])
        n = len(entry["slices"])
        parts = [f"`discover` {a} {sum(m['found'] for m in r['slices'].values())}/{n}"
                 for a, r in entry["arms"].items() if "missing" not in r]
        parts += [f"{name} {sum(m['found'] for m in r['slices'].values())}/{n}"
                  for name, r in peers["methods"].items()]
        line = (f"\n\nOn seed {peers['seed']}'s planted model, side by side in the same run "
                f"(the peers on the {results['labelled']['rows']} labelled rows): "
                + "; ".join(parts) + ".")
    return (f"Measured {results['date']} over {len(results['seeds'])} seeds "
            f"(`{results['command']}`; corpus of {results['corpus']} sentences, "
            + ("focus rounds off" if "focus.enabled=false" in results.get("overrides", [])
               else f"default focus budget {results['focus_budget']}")
            + "); found in the top 10 findings:\n\n"
            + kinds_table(results) + line)


def pooled_block(results: dict[str, Any], heldout: dict[str, Any] | None) -> str:
    """The kinds table over the committed result's seeds and the held-out result's (seeds
    in both counted once, from the committed result)."""
    if not heldout:
        return "No held-out result (bench/results/discovery_power_heldout.json)."
    have = {e["seed"] for e in results["seeds"]}
    more = [e for e in heldout["seeds"] if e["seed"] not in have]
    seeds = sorted([*have, *(e["seed"] for e in more)])
    return (f"Pooled: the committed result's seeds and the held-out result's "
            f"(`{heldout['command']}`, {heldout['date']}), {len(seeds)} seeds "
            f"({seeds[0]}-{seeds[-1]}):\n\n"
            + kinds_table({**results, "seeds": [*results["seeds"], *more]}))


def load_heldout() -> dict[str, Any] | None:
    return json.loads(HELDOUT.read_text(encoding="utf-8")) if HELDOUT.is_file() else None


def render(results: dict[str, Any], heldout: dict[str, Any] | None = None) -> dict[str, str]:
    """Every block, by name (``pooled`` with ``heldout``, the held-out result)."""
    return {"kinds": kinds_table(results), "seeds": seeds_table(results),
            "peers": peers_table(results), "readme": readme_block(results),
            "pooled": pooled_block(results, heldout)}


def _span(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- discovery_power:{name} -->\n)(.*?)(\n<!-- /discovery_power:"
                      rf"{name} -->)", re.DOTALL)


def block_in(text: str, name: str) -> str | None:
    """The text of block ``name`` in ``text`` (None: no such block)."""
    m = _span(name).search(text)
    return m.group(2) if m else None


def update(text: str, blocks: dict[str, str], names: tuple[str, ...]) -> str:
    for name in names:
        if block_in(text, name) is None:
            raise SystemExit(f"error: no <!-- discovery_power:{name} --> block: add the two "
                             f"marker lines where the table goes")
        text = _span(name).sub(lambda m, b=blocks[name]: m.group(1) + b + m.group(3), text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--result", default=str(RESULT))
    ap.add_argument("--check", action="store_true", help="exit 1 when a block differs")
    args = ap.parse_args(argv)
    blocks = render(json.loads(Path(args.result).read_text(encoding="utf-8")), load_heldout())
    stale = []
    for doc, names in DOCS.items():
        path = ROOT / doc
        text = path.read_text(encoding="utf-8")
        new = update(text, blocks, names)
        if new != text:
            stale.append(doc)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    print(("stale: " if args.check else "updated: ") + (", ".join(stale) or "none"))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
