"""The review log (append-only decisions, latest wins, cut-off last line) and the review
session behind notebooks/review.ipynb, including its ipywidgets UI and the fallback."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from formalize import REVIEW_TAGS, ReviewLog, ReviewLogWarning, ReviewSession, tagged_sentences
from synth.core import DataError, RunDirError, write_json_atomic, write_jsonl

HARD = [
    ("h1", "I was blown away by this movie.", 0.8, 0.1, 0.9),
    ("h2", "I can't say I don't love this book.", 0.7, 0.2, 0.9),
    ("h3", "I was blown away by this film.", 0.6, 0.2, 0.8),
    ("h4", "The plot was fine but forgettable.", 0.3, 0.6, 0.3),
]


def make_run(path: Path) -> Path:
    """A minimal reviewable run: manifest, one corpus shard, hard.jsonl, ngrams.jsonl."""
    write_json_atomic(path / "manifest.json", {
        "config": {"task": {"labels": ["negative", "positive"]}}, "config_hash": "abc"})
    corpus = [{"id": i, "text": t, "query": "", "raw": t, "shard": 0, "seed": k}
              for k, (i, t, *_) in enumerate(HARD)]
    corpus.append({"id": "c9", "text": "A corpus-only sentence.", "query": "", "raw": "",
                   "shard": 0, "seed": 9})
    write_jsonl(path / "corpus" / "shard-00000.jsonl", corpus)
    write_jsonl(path / "hard.jsonl", [
        {"id": i, "text": t, "divergence": d, "task_label": "negative",
         "reference_label": "positive" if r > 0.5 else "negative", "rank": k + 1,
         "task_probs": {"negative": 1 - p, "positive": p},
         "reference_probs": {"negative": 1 - r, "positive": r}}
        for k, (i, t, d, p, r) in enumerate(HARD)])
    write_jsonl(path / "ngrams.jsonl", [
        {"ngram": "blown away", "hard_count": 2, "corpus_count": 2, "z": 2.0,
         "examples": ["h1", "h3"]},
        {"ngram": "love this", "hard_count": 1, "corpus_count": 1, "z": 1.0, "examples": ["h2"]}])
    return path


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return make_run(tmp_path / "run")


def test_tag_appends_at_once_and_latest_wins(run: Path) -> None:
    log = ReviewLog(run, annotator="ann")
    rec = log.tag("h1", "task-model error", hypothesis=" 'blown away' read as negative ")
    assert rec["hypothesis"] == "'blown away' read as negative"
    assert rec["annotator"] == "ann" and rec["config_hash"] == "abc" and "git_commit" in rec
    lines = (run / "review" / "decisions.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["id"] == "h1"
    log.tag("h2", "Task model error", note="double negation")  # case and spacing normalised
    log.tag("h1", "ambiguous")
    fresh = ReviewLog(run)  # a new kernel reads the same file
    current = fresh.load()
    assert list(current) == ["h1", "h2"]
    assert current["h1"]["tag"] == "ambiguous" and current["h2"]["tag"] == "task-model error"
    assert current["h2"]["note"] == "double negation"
    assert len(fresh.records()) == 3


def test_hypotheses_group_current_decisions(run: Path) -> None:
    log = ReviewLog(run)
    log.tag("h1", "task-model error", hypothesis="blown away")
    log.tag("h3", "task-model error", hypothesis="blown away")
    log.tag("h2", "task-model error", hypothesis="double negation")
    log.tag("h2", "task-model error")  # the latest decision has no hypothesis
    assert log.hypotheses() == {"blown away": ["h1", "h3"]}


def test_unknown_tag_is_a_clear_error(run: Path) -> None:
    with pytest.raises(DataError, match=r"unknown review tag 'task error'.*use one of: "
                                        r"task-model error, reference error"):
        ReviewLog(run).tag("h1", "task error")
    assert not (run / "review" / "decisions.jsonl").exists()


def test_unknown_id_is_refused_with_did_you_mean(run: Path) -> None:
    with pytest.raises(DataError, match=r"unknown sentence id 'h11'.*did you mean 'h1'"):
        ReviewLog(run).tag("h11", "ambiguous")
    ReviewLog(run).tag("c9", "not a pattern")  # corpus ids outside the hard subset are fine


def test_mistyped_id_suggests_the_nearest_few_by_edit_distance(tmp_path: Path) -> None:
    # 207 ids q00000000..q00000206 and a digit left out of q00000051: the nearest three by
    # edit distance, not difflib's q00000251-like pick, and not the whole list.
    ids = [f"q{i:08d}" for i in range(207)]
    write_jsonl(tmp_path / "hard.jsonl", [{"id": i, "text": f"t {i}"} for i in ids])
    with pytest.raises(DataError) as err:
        ReviewLog(tmp_path).tag("q0000051", "ambiguous")
    assert str(err.value) == (
        f"unknown sentence id 'q0000051' ({tmp_path}): tag an id from hard.jsonl or the "
        "corpus; did you mean 'q00000051', 'q00000151' or 'q00000001'? (of 207 ids in the run)")


def test_cut_off_last_line_is_skipped_with_a_warning(run: Path) -> None:
    log = ReviewLog(run)
    log.tag("h1", "task-model error")
    log.tag("h2", "reference error")
    path = run / "review" / "decisions.jsonl"
    with path.open("a") as handle:
        handle.write('{"id": "h3", "tag": "ambig')  # a write cut off mid-line
    with pytest.warns(ReviewLogWarning) as caught:
        current = ReviewLog(run).load()
    assert [str(w.message) for w in caught] == [
        f"skipped line 3 of {path}: line is not valid JSON: Unterminated string starting at "
        "(a write cut off mid-line; the decisions before it are kept)"]
    assert list(current) == ["h1", "h2"]


def test_append_after_a_cut_off_line_moves_it_aside(run: Path) -> None:
    path = run / "review" / "decisions.jsonl"
    ReviewLog(run).tag("h1", "task-model error")
    with path.open("a") as handle:
        handle.write('{"id": "h3", "ta')
    with pytest.warns(ReviewLogWarning, match="moved a cut-off last line"):
        ReviewLog(run).tag("h2", "ambiguous")
    assert path.with_name("decisions.jsonl.torn").read_text() == '{"id": "h3", "ta\n'
    assert list(ReviewLog(run).load()) == ["h1", "h2"]  # no warning: the log is whole again


def test_bad_line_in_the_middle_is_a_data_error(run: Path) -> None:
    path = run / "review" / "decisions.jsonl"
    ReviewLog(run).tag("h1", "task-model error")
    good = path.read_text()
    path.write_text(good + "not json\n" + good.replace("h1", "h2"))
    with pytest.raises(DataError) as err:
        ReviewLog(run).load()
    assert str(err.value) == (f"bad decision record: line is not valid JSON: Expecting value "
                              f"({path}, line 2): fix or delete that line (the log is plain "
                              "JSON Lines)")


def test_record_without_a_known_tag_in_the_middle_is_a_data_error(run: Path) -> None:
    path = run / "review" / "decisions.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text('{"id": "h1", "tag": "maybe"}\n{"id": "h2", "tag": "ambiguous"}\n')
    with pytest.raises(DataError) as err:
        ReviewLog(run).load()
    assert str(err.value) == (f"bad decision record: lacks an 'id' or a known 'tag' ({path}, "
                              "line 1): fix or delete that line (the log is plain JSON Lines)")


def test_tagged_sentences_take_text_and_reference_label(run: Path) -> None:
    log = ReviewLog(run)
    log.tag("h1", "task-model error", hypothesis="blown away")
    log.tag("h2", "reference error")
    log.tag("c9", "task-model error", hypothesis="other")
    got = tagged_sentences(run)
    assert [(s["id"], s["label"]) for s in got] == [("h1", "positive"), ("c9", None)]
    assert got[1]["text"] == "A corpus-only sentence."
    assert [s["id"] for s in tagged_sentences(run, hypothesis="blown away")] == ["h1"]
    assert [s["id"] for s in tagged_sentences(run, tag="reference error")] == ["h2"]


def test_session_tables(run: Path) -> None:
    session = ReviewSession(run)
    session.tag("h3", "task-model error", hypothesis="blown away")
    table = session.hard_table()
    assert list(table["id"]) == ["h1", "h2", "h3", "h4"]
    assert table.loc[2, "tag"] == "task-model error"
    by_p = session.hard_table(sort_by="task p(positive)", ascending=False)
    assert list(by_p["id"])[:1] == ["h4"]
    with pytest.raises(DataError, match=r"cannot sort by 'divergance'.*did you mean 'divergence'"):
        session.hard_table(sort_by="divergance")
    sents = session.sentences("Blown Away")
    assert list(sents["id"]) == ["h1", "h3"]
    assert sents.loc[0, "task p(positive)"] == pytest.approx(0.1)
    assert sents.loc[0, "reference p(positive)"] == pytest.approx(0.9)
    assert list(session.ngram_table()["ngram"]) == ["blown away", "love this"]
    assert list(session.decisions()["id"]) == ["h3"]


def test_session_needs_a_manifest(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="no manifest.json in the run directory"):
        ReviewSession(tmp_path)


def test_widget_tags_on_change_and_restores(run: Path) -> None:
    pytest.importorskip("ipywidgets")
    ui = ReviewSession(run).widget()
    assert ui is not None
    ui.ngram.value = "blown away"
    assert set(ui.tag_widgets) == {"h1", "h3"}
    ui.hypothesis.value = "'blown away' read as negative"
    ui.tag_widgets["h1"].value = "task-model error"
    assert "saved: h1 = task-model error" in ui.status.value
    current = ReviewLog(run).load()
    assert current["h1"]["hypothesis"] == "'blown away' read as negative"
    again = ReviewSession(run).widget()
    assert again is not None
    again.ngram.value = "blown away"
    assert again.tag_widgets["h1"].value == "task-model error"
    assert again.tag_widgets["h3"].value == ""
    assert again.hypothesis.value == "'blown away' read as negative"
    assert len(ReviewLog(run).records()) == 1  # restoring appended nothing


def test_widget_falls_back_without_ipywidgets(run: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import ipywidgets -> ImportError
    session = ReviewSession(run)
    assert session.widget() is None
    assert "ipywidgets is not installed" in capsys.readouterr().out
    session.tag("h2", "task-model error")
    assert ReviewLog(run).load()["h2"]["tag"] == "task-model error"


def test_tags_are_the_four_documented_ones() -> None:
    assert REVIEW_TAGS == ("task-model error", "reference error", "ambiguous", "not a pattern")


def test_session_run_dir_from_env_and_from_the_notebooks_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_run(tmp_path / "runs" / "demo")
    make_run(tmp_path / "runs" / "other")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")  # where Jupyter starts a notebook's kernel
    monkeypatch.delenv("SYNTHCHECK_RUN", raising=False)
    assert ReviewSession().run.path == tmp_path / "runs" / "demo"  # the default, one level up
    monkeypatch.setenv("SYNTHCHECK_RUN", "runs/other")
    assert ReviewSession().run.path == tmp_path / "runs" / "other"
    assert ReviewSession(None).run.path == tmp_path / "runs" / "other"
    monkeypatch.chdir(tmp_path)
    assert ReviewSession("runs/demo").run.path == tmp_path / "runs" / "demo"  # RUN wins
    assert ReviewSession(tmp_path / "runs" / "demo").run.path == tmp_path / "runs" / "demo"


def test_session_without_a_run_says_how_to_choose_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    monkeypatch.setenv("SYNTHCHECK_RUN", "runs/missing")
    looked = re.escape(f"(runs/missing, looked up in {tmp_path / 'notebooks'} and {tmp_path})")
    with pytest.raises(RunDirError, match=r"no manifest\.json in the run directory " + looked
                       + r": set RUN in the notebook's first cell or start Jupyter with "
                         r"SYNTHCHECK_RUN=<run directory>; run `synthcheck generate`"):
        ReviewSession()
    with pytest.raises(RunDirError, match=r"no manifest\.json in the run directory " + looked
                       + r": run `synthcheck generate`"):
        ReviewSession("runs/missing")  # RUN was set: no hint about choosing one


def test_decisions_show_missing_fields_as_empty(run: Path) -> None:
    session = ReviewSession(run)
    session.tag("h4", "ambiguous")
    row = session.decisions().iloc[0]
    assert (row["id"], row["tag"], row["hypothesis"], row["note"], row["annotator"]) == (
        "h4", "ambiguous", "", "", "")
    assert row["text"] == "The plot was fine but forgettable."
