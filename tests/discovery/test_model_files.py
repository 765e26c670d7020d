"""The digest of the files a task model reads (issue 19): a model retrained in place changes
its task-model hash, for skops files, hf folders and python modules."""

from __future__ import annotations

import os

from discovery import TaskModelConfig, task_model_hash
from discovery._config import EvaluationConfig, ReferenceConfig
from discovery._kinds import model_files_digest
from synth.core import LabelSpace


def _hash(spec: str) -> str:
    return task_model_hash(TaskModelConfig(name="m", spec=spec),
                           labels=LabelSpace(["negative", "positive"]),
                           reference=ReferenceConfig(), evaluation=EvaluationConfig())


def _rewrite(path, data: bytes) -> None:
    """Write ``data`` to ``path`` with a new mtime (a retrained file)."""
    st = path.stat() if path.exists() else None
    path.write_bytes(data)
    if st is not None:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_each_file_kind_changes_the_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTHCHECK_CACHE", str(tmp_path / "cache"))
    skops = tmp_path / "model.skops"
    folder = tmp_path / "clf"
    (folder / "sub").mkdir(parents=True)
    module = tmp_path / "mymodel_19.py"
    monkeypatch.syspath_prepend(str(tmp_path))
    cases = [(f"sklearn:{skops}", skops), (f"hf:{folder}", folder / "sub" / "weights.bin"),
             ("python:mymodel_19:predict", module)]
    for spec, path in cases:
        _rewrite(path, b"A")
        if path.suffix == ".bin":
            (folder / "config.json").write_text("{}")
        before = _hash(spec)
        assert model_files_digest(spec) is not None
        _rewrite(path, b"B")
        assert _hash(spec) != before, spec
        _rewrite(path, b"A")
        assert _hash(spec) == before, spec


def test_specs_without_user_files_keep_their_hashes(tmp_path):
    for spec in ("demo:sentiment", "fewshot:packaged:smollm2-135m-instruct",
                 "hatesonar:default", "hf:namespace/hub-id", f"sklearn:{tmp_path}/missing.skops"):
        assert model_files_digest(spec) is None, spec
    # their hashes do not depend on digests (no file to read). Changed on purpose (issues 24
    # and 25: the reference section they cover gained abstain and shots_from); were
    # 9b7933d5a39da8c2 and 6810d5c0d4dbc694.
    assert [_hash("demo:sentiment"), _hash("hf:namespace/hub-id")] == \
        ["e286b7e031defbfd", "13306c9496e79985"]


def test_digests_are_cached_by_path_size_and_mtime(tmp_path, monkeypatch):
    from discovery import _model_files

    monkeypatch.setenv("SYNTHCHECK_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "m.skops"
    _rewrite(path, b"A" * 10)
    first = model_files_digest(f"sklearn:{path}")
    assert len(list((tmp_path / "cache" / "file-digests").iterdir())) == 1
    monkeypatch.setattr(_model_files, "_MEMO", {})
    reads = []
    real_open = type(path).open
    monkeypatch.setattr(type(path), "open", lambda self, *a, **k: reads.append(self) or
                        real_open(self, *a, **k))
    assert model_files_digest(f"sklearn:{path}") == first  # from the cache folder
    assert path.resolve() not in reads
    _rewrite(path, b"A" * 10)  # same size, new mtime: read again
    assert model_files_digest(f"sklearn:{path}") == first
    assert path.resolve() in reads
