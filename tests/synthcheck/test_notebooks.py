"""notebooks/review.ipynb and notebooks/formalize.ipynb, executed headless with nbclient in a
fresh kernel against a small run built in the test (tests/synthcheck/runbuilder.py).

The kernel is this interpreter (a kernelspec written into a temporary JUPYTER_PATH), so the
notebooks import the same synthcheck as the tests. They pick the run up from
``$SYNTHCHECK_RUN``, as a headless run documented in docs/notebooks.md does; test-only steps
(tagging through the widget, killing the kernel) are cells inserted next to a cell id.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from formalize import ReviewLog, load_suite  # noqa: E402
from synth.core import read_jsonl  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
from tests.synthcheck import runbuilder  # noqa: E402  (the shared synthetic run)

NOTEBOOKS = ROOT / "notebooks"
KERNEL = "synthcheck-test"
DOUBLE_NEGATION = ["q00000040", "q00000041", "q00000042"]  # "I can't say I don't love this X."
BLOWN_AWAY = ["q00000045", "q00000046", "q00000047", "q00000048", "q00000049"]


# -- helpers ---------------------------------------------------------------------------
@pytest.fixture
def kernel_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A kernelspec for this interpreter, private Jupyter/IPython dirs, and the kernel's env."""
    spec = tmp_path / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "synthcheck tests", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))  # no user startup files
    path = os.pathsep.join([str(ROOT / "tests" / "synthcheck"), str(ROOT),
                            os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNTHCHECK_")}
    env.update(PYTHONPATH=path, MPLBACKEND="Agg")
    return env


def execute(name: str, env: dict[str, str], *, insert: dict[str, str] | None = None,
            first: str | None = None, dead: bool = False, cwd: Path = NOTEBOOKS) -> Any:
    """Execute notebooks/<name>.ipynb in a fresh kernel (cwd notebooks/, as Jupyter does, or
    ``cwd``).

    ``insert`` maps a cell id to code run right after that cell; ``first`` is code run
    before every cell; ``dead`` expects the kernel to die in the last cell.
    """
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    ids = [c.get("id") for c in nb.cells]
    for after, source in (insert or {}).items():
        at = ids.index(after) + 1
        nb.cells.insert(at, nbformat.v4.new_code_cell(source, id=f"test-{after}"))
        ids.insert(at, f"test-{after}")
    if first is not None:
        nb.cells.insert(0, nbformat.v4.new_code_cell(first, id="test-first"))
    client = nbclient.NotebookClient(nb, kernel_name=KERNEL, timeout=120,
                                     resources={"metadata": {"path": str(cwd)}})
    if dead:
        with pytest.raises(nbclient.exceptions.DeadKernelError):
            client.execute(env=env)
    else:
        client.execute(env=env)
    return nb


def outputs(nb: Any, cell_id: str) -> list[Any]:
    return next(c for c in nb.cells if c.get("id") == cell_id).outputs


def text(nb: Any, cell_id: str) -> str:
    """Printed text and plain results of a cell."""
    parts = []
    for out in outputs(nb, cell_id):
        if out.output_type == "stream":
            parts.append(out.text)
        elif "data" in out:
            parts.append(out.data.get("text/plain", ""))
    return "".join(parts)


class _Table(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None


def table(nb: Any, cell_id: str) -> list[dict[str, str]]:
    """The DataFrame a cell displayed (its HTML), as rows of column -> shown text."""
    html = next(o.data["text/html"] for o in outputs(nb, cell_id)
                if "data" in o and "text/html" in o.data)
    parser = _Table()
    parser.feed(html)
    header, *rows = parser.rows
    return [dict(zip(header[1:], row[1:], strict=True)) for row in rows]  # drop the index


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return runbuilder.build_run(tmp_path / "run", verify=False)


# -- review.ipynb ----------------------------------------------------------------------
def test_review_notebook_shows_the_runs_tables(run: Path, kernel_env: dict[str, str]) -> None:
    nb = execute("review", {**kernel_env, "SYNTHCHECK_RUN": str(run)})
    assert text(nb, "setup").startswith(f"{run}: 10 hard sentences, 0 decision(s) so far")

    hard = list(read_jsonl(run / "hard.jsonl"))
    shown = table(nb, "hard-table")
    assert [r["id"] for r in shown] == [r["id"] for r in hard] == runbuilder.hard_ids(run)
    assert [int(r["rank"]) for r in shown] == list(range(1, 11))
    for row, rec in zip(shown, hard, strict=True):
        assert row["text"] == rec["text"]
        assert (row["task_label"], row["reference_label"]) == ("negative", "positive")
        assert float(row["divergence"]) == pytest.approx(rec["divergence"], abs=1e-6)
        assert float(row["task p(positive)"]) == pytest.approx(rec["task_probs"]["positive"],
                                                               abs=1e-6)
        assert float(row["reference p(positive)"]) == pytest.approx(
            rec["reference_probs"]["positive"], abs=1e-6)
        assert row["tag"] == ""
    assert {r["id"] for r in shown} == set(DOUBLE_NEGATION + ["q00000043", "q00000044"]
                                           + BLOWN_AWAY)

    grams = list(read_jsonl(run / "ngrams.jsonl"))[:30]
    shown_grams = table(nb, "ngram-table")
    assert [r["ngram"] for r in shown_grams] == [g["ngram"] for g in grams]
    assert [int(r["hard_count"]) for r in shown_grams] == [g["hard_count"] for g in grams]
    assert "examples" not in shown_grams[0]
    top = grams[0]["ngram"]
    assert top == "away by this"

    # the widget renders as a widget view (with a text repr for frontends without widgets)
    (view,) = outputs(nb, "widget")
    assert "application/vnd.jupyter.widget-view+json" in view.data
    assert view.data["text/plain"].startswith("VBox(")

    sentences = table(nb, "ngram-sentences")
    assert [r["id"] for r in sentences] == [i for i in runbuilder.hard_ids(run) if i in BLOWN_AWAY]
    assert all(top in r["text"].lower() for r in sentences)
    assert all(float(r["task p(positive)"]) < 0.5 < float(r["reference p(positive)"])
               for r in sentences)
    assert table(nb, "decisions") == []
    assert text(nb, "hypotheses") == "{}"
    assert not (run / "review" / "decisions.jsonl").exists()  # showing writes nothing


TAG_WITH_WIDGET = """
ui.ngram.value = "blown away by"
ui.hypothesis.value = "'blown away' read as negative"
ui.tag_widgets["q00000045"].value = "task-model error"
ui.tag_widgets["q00000049"].value = "task-model error"
ui.tag_widgets["q00000046"].value = "ambiguous"
print(sorted(ui.tag_widgets))
"""
TAG_FROM_CODE = """
tag("q00000042", "task-model error", hypothesis="double negation")
tag("q00000046", "not a pattern")  # the latest decision wins
"""
PROBE_WIDGET = """
import json
ui.ngram.value = "blown away by"
print(json.dumps({"tags": {i: w.value for i, w in ui.tag_widgets.items()},
                  "hypothesis": ui.hypothesis.value}))
"""
EXPECTED = {"q00000045": ("task-model error", "'blown away' read as negative"),
            "q00000049": ("task-model error", "'blown away' read as negative"),
            "q00000046": ("not a pattern", ""),
            "q00000042": ("task-model error", "double negation")}


def _decisions(nb: Any) -> dict[str, tuple[str, str]]:
    return {r["id"]: (r["tag"], r["hypothesis"]) for r in table(nb, "decisions")}


def test_review_decisions_survive_a_kernel_restart(run: Path,
                                                   kernel_env: dict[str, str]) -> None:
    env = {**kernel_env, "SYNTHCHECK_RUN": str(run)}
    # 1: tag through the widget's menus and with tag(); then the kernel dies (no clean exit)
    nb = execute("review", env, insert={"widget": TAG_WITH_WIDGET,
                                        "tag-from-code": TAG_FROM_CODE,
                                        "hypotheses": "import os\nos._exit(1)"}, dead=True)
    assert text(nb, "test-widget") == str(sorted(BLOWN_AWAY)) + "\n"
    assert _decisions(nb) == EXPECTED
    assert ast.literal_eval(text(nb, "hypotheses")) == {
        "'blown away' read as negative": ["q00000045", "q00000049"],
        "double negation": ["q00000042"]}

    # everything acknowledged is on disk: one line per decision, in order
    log = ReviewLog(run)
    assert [(r["id"], r["tag"]) for r in log.records()] == [
        ("q00000045", "task-model error"), ("q00000049", "task-model error"),
        ("q00000046", "ambiguous"), ("q00000042", "task-model error"),
        ("q00000046", "not a pattern")]
    assert {i: (d["tag"], d["hypothesis"] or "") for i, d in log.load().items()} == EXPECTED
    assert all(r["config_hash"] == "feedc0de12345678" for r in log.records())

    # 2: a fresh kernel runs the unmodified cells and restores every decision
    nb = execute("review", env, insert={"widget": PROBE_WIDGET})
    assert text(nb, "setup").startswith(f"{run}: 10 hard sentences, 4 decision(s) so far")
    assert _decisions(nb) == EXPECTED
    tags = {r["id"]: r["tag"] for r in table(nb, "hard-table")}
    assert {i: t for i, t in tags.items() if t} == {i: t for i, (t, _) in EXPECTED.items()}
    probe = json.loads(text(nb, "test-widget"))
    assert probe == {"tags": {"q00000049": "task-model error", "q00000045": "task-model error",
                              "q00000047": "", "q00000048": "",
                              "q00000046": "not a pattern"},
                     "hypothesis": "'blown away' read as negative"}
    assert len(ReviewLog(run).records()) == 5  # restoring appended nothing


def test_review_notebook_falls_back_without_ipywidgets(run: Path,
                                                       kernel_env: dict[str, str]) -> None:
    no_widgets = "import sys\nsys.modules['ipywidgets'] = None  # import ipywidgets fails"
    nb = execute("review", {**kernel_env, "SYNTHCHECK_RUN": str(run)}, first=no_widgets,
                 insert={"tag-from-code": TAG_FROM_CODE})
    widget_out = outputs(nb, "widget")
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                   for o in widget_out)
    assert "ipywidgets is not installed: use session.hard_table()" in text(nb, "widget")
    assert len(table(nb, "hard-table")) == 10 and len(table(nb, "ngram-table")) > 0
    assert [r["id"] for r in table(nb, "ngram-sentences")] == [
        i for i in runbuilder.hard_ids(run) if i in BLOWN_AWAY]
    assert _decisions(nb) == {"q00000042": ("task-model error", "double negation"),
                              "q00000046": ("not a pattern", "")}
    assert list(ReviewLog(run).load()) == ["q00000042", "q00000046"]


def test_review_notebook_names_the_missing_run(tmp_path: Path,
                                               kernel_env: dict[str, str]) -> None:
    env = {**kernel_env, "SYNTHCHECK_RUN": str(tmp_path / "nowhere")}
    with pytest.raises(nbclient.exceptions.CellExecutionError,
                       match=r"no manifest\.json in the run directory.*SYNTHCHECK_RUN"):
        execute("review", env)


# -- formalize.ipynb -------------------------------------------------------------------
@pytest.fixture
def tagged_run(run: Path) -> Path:
    log = ReviewLog(run)
    for sid in DOUBLE_NEGATION:
        log.tag(sid, "task-model error", hypothesis="double negation")
    log.tag("q00000045", "reference error")
    return run


def test_formalize_notebook_drafts_runs_and_appends(tagged_run: Path, tmp_path: Path,
                                                    kernel_env: dict[str, str]) -> None:
    from formalize import append_tests

    suite_path = tmp_path / "mine.yaml"
    append_tests(suite_path, [{"name": "existing", "type": "mft", "capability": "Vocabulary",
                               "template": "This {NOUN} is great.", "label": "positive"}],
                 labels=runbuilder.LABELS)
    before = suite_path.read_bytes()
    env = {**kernel_env, "SYNTHCHECK_RUN": str(tagged_run), "SYNTHCHECK_SUITE": str(suite_path)}

    # without SYNTHCHECK_ACCEPT it drafts and tries, and leaves the suite alone
    nb = execute("formalize", env)
    assert text(nb, "setup").startswith(
        f"{tagged_run}: drafting from 'task-model error' decisions; accepted drafts go to "
        f"{suite_path}")
    drafts = text(nb, "drafts")
    assert drafts.startswith("3 tagged sentence(s)\n")
    assert ("  1. covers 3  (83 cases, label positive)  I can't say I don't love this {NOUN}.\n"
            in drafts)
    assert text(nb, "scorers") == "task models: keyword\n"
    tried = text(nb, "try")
    assert tried.startswith("I can't say I don't love this {NOUN}.\nsuite draft: 83 cases")
    assert "draft                         mft          83  100.0%" in tried  # keyword fails all
    failed = table(nb, "failed-cases")
    assert len(failed) == 10
    assert {(r["model"], r["label"], r["pred"]) for r in failed} == {
        ("keyword", "positive", "negative")}
    assert all(r["text"].startswith("I can't say I don't love this ") for r in failed)
    assert text(nb, "accept").startswith(f"not appended to {suite_path}")
    assert suite_path.read_bytes() == before

    # with SYNTHCHECK_ACCEPT=1 the first draft is appended; the suite loads with both tests
    nb = execute("formalize", {**env, "SYNTHCHECK_ACCEPT": "1"})
    assert text(nb, "accept").startswith(f"{suite_path}: 2 test(s); run it with")
    suite = load_suite(suite_path)
    assert [t.name for t in suite.tests] == [
        "existing", "proposed: I can't say I don't love this {NOUN}."]
    new = suite.tests[1].spec
    assert (new.type, new.templates, new.label, new.capability) == (
        "mft", ["I can't say I don't love this {NOUN}."], "positive", "Discovered")
    assert "q00000040, q00000041, q00000042" in new.description


def test_formalize_notebook_default_suite_is_in_the_run(tagged_run: Path,
                                                        kernel_env: dict[str, str]) -> None:
    env = {**kernel_env, "SYNTHCHECK_RUN": str(tagged_run), "SYNTHCHECK_ACCEPT": "1"}
    execute("formalize", env)
    suite = load_suite(tagged_run / "review" / "proposed.yaml")
    assert suite.labels == runbuilder.LABELS
    assert [t.spec.templates for t in suite.tests] == [["I can't say I don't love this {NOUN}."]]


@pytest.mark.parametrize("start", ["root", "notebooks"])
def test_formalize_notebook_finds_a_relative_model_path_from_root_or_notebooks(
        tmp_path: Path, kernel_env: dict[str, str], start: str) -> None:
    # The user's layout: PROJECT/runs/r made from PROJECT with `sklearn:models/m.skops`
    # (relative, as the guide writes it); the kernel starts in PROJECT or PROJECT/notebooks.
    import skops.io as sio
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    project = tmp_path / "project"
    (project / "notebooks").mkdir(parents=True)
    (project / "models").mkdir()
    texts = ["I love this", "great fun", "awful mess", "I hate this", "so good", "so bad"]
    pipe = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(
        texts, ["positive", "positive", "negative", "negative", "positive", "negative"])
    sio.dump(pipe, project / "models" / "m.skops")
    run = runbuilder.build_run(project / "runs" / "r", verify=False)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["config"]["task_models"] = [{"name": "mine", "spec": "sklearn:models/m.skops"}]
    (run / "manifest.json").write_text(json.dumps(manifest))
    log = ReviewLog(run)
    for sid in DOUBLE_NEGATION:
        log.tag(sid, "task-model error", hypothesis="double negation")
    env = {**kernel_env, "SYNTHCHECK_RUN": "runs/r"}
    nb = execute("formalize", env, cwd=project if start == "root" else project / "notebooks")
    assert text(nb, "scorers") == "task models: mine\n"
    assert text(nb, "try").startswith("I can't say I don't love this {NOUN}.\nsuite draft: "
                                      "83 cases")
