"""bench/audit_run.py refuses labels that are not of the run's corpus, naming file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth.core import read_jsonl, write_jsonl

# bench/'s scripts import their helpers by bare name (`_shares`), as they do run from bench/:
# import the script with bench/ on the path for the import only.
with pytest.MonkeyPatch.context() as _bench_path:
    _bench_path.syspath_prepend(str(Path(__file__).resolve().parents[2] / "bench"))
    import audit_run


@pytest.mark.parametrize(("change", "says"), [
    ({"text": "a sentence the run never wrote"}, "is not the run's sentence (the corpus "
                                                 "changed): relabel it"),
    ({"id": "q99999999"}, "id 'q99999999' is not a sentence of the run"),
])
def test_labels_of_another_corpus_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              change: dict[str, str], says: str) -> None:
    run, labels, _ = audit_run.small_run(tmp_path)
    rows = read_jsonl(labels)
    rows[2] = {**rows[2], **change}
    write_jsonl(labels, rows)
    with pytest.raises(SystemExit) as exc:
        audit_run.main(["--run", str(run), "--labels", str(labels)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"error: {labels}, line 3: " in err
    assert says in err


def test_the_hard_subset_is_read_in_its_own_order(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run, labels, _ = audit_run.small_run(tmp_path)
    hard = read_jsonl(run / "hard.jsonl")
    gold = {r["id"]: r["label"] for r in read_jsonl(labels)}
    # the first 10 made errors, the other 10 not: precision at 10 is 1.0, over all 0.5
    for n, h in enumerate(hard):
        other = "positive" if h["task_label"] == "negative" else "negative"
        gold[h["id"]] = other if n < 10 else h["task_label"]
    write_jsonl(labels, [{**r, "label": gold[r["id"]]} for r in read_jsonl(labels)])
    audit_run.main(["--run", str(run), "--labels", str(labels)])
    out = capsys.readouterr().out
    assert "   10  1.00 [0.72, 1.00] (10/10)" in out
    assert "  all  0.50 [0.30, 0.70] (10/20)" in out
