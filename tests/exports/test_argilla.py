"""The Argilla 2.8 SDK reads what `annotate export --format argilla` writes, and only its
submitted responses come back as decisions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formalize import ReviewLog
from synthcheck.cli import main
from tests.exports.conftest import run_tool
from tests.synthcheck.runbuilder import build_run

pytestmark = pytest.mark.exports

# The SDK checks its server when a Settings object is built; nothing here talks to one, so
# that check (and only it) is switched off. Everything else is the SDK's own code.
LOAD = r'''
import json, sys
import argilla._api._client as client
client.APIClient._validate_connection = lambda self: None
import argilla as rg
data = json.load(open(sys.argv[1]))
settings_file = sys.argv[2]
json.dump(data["settings"], open(settings_file, "w"))
settings = rg.Settings.from_json(settings_file)
records = [rg.Record.from_dict(r) for r in data["records"]]
user = "4c1d2a7e-0000-4000-8000-000000000001"
statuses = ["submitted", "draft", "discarded"]
out = []
for i, rec in enumerate(records):
    status = statuses[i % 3]
    rec.responses.add(rg.Response("label", sys.argv[3], user_id=user, status=status))
    d = rec.to_dict()
    # The SDK's to_dict() drops each response's status; the documented export keeps it.
    d["responses"] = {q: [{"value": r.value, "user_id": str(r.user_id), "status": r.status}
                          for r in rec.responses[q]] for q in d["responses"]}
    out.append(d)
json.dump(out, open(sys.argv[4], "w"))
print(json.dumps({"version": rg.__version__, "fields": [f.name for f in settings.fields],
                  "questions": [q.name for q in settings.questions],
                  "options": [list(q.labels) for q in settings.questions
                              if hasattr(q, "labels")],
                  "metadata": [m.name for m in settings.metadata], "records": len(records)}))
'''


@pytest.mark.parametrize("audit", [False, True], ids=["review", "audit"])
def test_argilla_loads_settings_and_records_and_only_submitted_come_back(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], audit: bool) -> None:
    run = build_run(tmp_path / "run", verify=False)
    out = tmp_path / "argilla.json"
    args = ["annotate", "export", "--run", str(run), "--format", "argilla", "--out", str(out)]
    assert main(args + (["--audit", "--audit-hard", "6", "--audit-control", "6"] if audit
                        else [])) == 0
    answered = tmp_path / "answered.json"
    got = run_tool(LOAD, out, tmp_path / "settings.json", "positive", answered)
    n = len(json.loads(out.read_text())["records"])
    assert got["version"] == "2.8.0"
    assert got["records"] == n == (12 if audit else 10)
    if audit:
        assert (got["fields"], got["questions"]) == (["text"], ["label"])
        assert got["options"] == [["negative", "positive", "no label applies"]]
    else:
        assert (got["fields"], got["questions"]) == (["text", "models"], ["label", "tag", "note"])
        assert got["options"][0] == ["negative", "positive"] and len(got["metadata"]) == 5
    capsys.readouterr()
    verb = ["annotate", "import", "--run", str(run), "--format", "argilla", "--in", str(answered)]
    assert main(verb + (["--audit"] if audit else [])) == 0
    submitted = len(range(0, n, 3))  # records 0, 3, 6, ...: drafts and discarded are not
    if audit:
        lines = (run / "review" / "audit.jsonl").read_text().splitlines()
        assert len(lines) == submitted
    else:
        printed = capsys.readouterr().out
        decided = ReviewLog(run).records()
        dropped = printed.count("agrees with both models")
        assert len(decided) + dropped == submitted and decided
        assert all(r["label"] == "positive" and r["annotator"].startswith("argilla:")
                   for r in decided)
    assert main(verb + (["--audit"] if audit else [])) == 0  # again: nothing new
    if audit:
        assert len((run / "review" / "audit.jsonl").read_text().splitlines()) == submitted
    else:
        assert len(ReviewLog(run).records()) == len(decided)
