"""`--trusted-types` that cannot be pasted blind (issue 28), with a real malicious skops file
built here: a pipeline whose first step is ``partial(max, key=posix.system)``, so scoring a
text runs it as a shell command. The refusal describes each type and never suggests one
that can run code; such a type is accepted only with ``--allow-unsafe-types``, and the
trust flags are refused where they do nothing."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
import yaml

HERE = Path(__file__).resolve().parent

from discovery import SklearnScorer, TaskModelConfig  # noqa: E402
from synth.core import ConfigError  # noqa: E402
from tests.synthcheck.test_cli_discovery import assert_user_error, cli  # noqa: E402

CODE_TYPES = "builtins.max,functools.partial,posix.system"


def _evil_skops(path: Path) -> Path:
    import posix

    import skops.io as sio
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer

    clf = LogisticRegression().fit(np.array([[0.0], [1.0]]), ["negative", "positive"])
    shell = FunctionTransformer(functools.partial(max, key=posix.system), validate=False,
                                check_inverse=False).fit(["x"])
    sio.dump(Pipeline([("evil", shell), ("clf", clf)]), path)
    assert sorted(sio.get_untrusted_types(file=path)) == CODE_TYPES.split(",")
    return path


@pytest.fixture()
def evil(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(the skops file, a suite whose case is `touch MARKER`, MARKER)."""
    marker = tmp_path / "pwned"
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump({
        "name": "s", "labels": ["negative", "positive"], "builtin_lexicons": False,
        "lexicons": {"P": [str(marker)]},
        "tests": [{"name": "t", "capability": "c", "type": "mft", "template": "touch {P}",
                   "label": "positive"}]}))
    return _evil_skops(tmp_path / "evil.skops"), suite, marker


def test_the_file_is_really_malicious(evil: tuple[Path, Path, Path]) -> None:
    path, _, marker = evil
    scorer = SklearnScorer.from_file(path, ["negative", "positive"],
                                     trusted_types=CODE_TYPES.split(","),
                                     allow_unsafe_types=True)
    with pytest.raises(ValueError):  # the shell ran; the pipeline then breaks
        scorer.predict_proba([f"touch {marker}"])
    assert marker.exists()


def test_refusal_describes_each_type_and_suggests_none_that_runs_code(
        evil: tuple[Path, Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    path, suite, marker = evil
    code, _, err = cli(["verify", "--suite", suite, "--model", f"sklearn:{path}",
                        "--run", tmp_path / "run"], capsys)
    assert_user_error(code, err, r"refusing to load untrusted types \['builtins.max', "
                                 r"'functools.partial', 'posix.system'\]: builtins.max is the "
                                 r"built-in max\(\), which can run code.*posix.system is system "
                                 r"from Python's posix module, which can run commands.*do not "
                                 r"load it: builtins.max, functools.partial, posix.system can "
                                 r"run code")
    assert "--trusted-types builtins" not in err and "--trusted-types posix" not in err
    # Pasted anyway: refused before the file is opened.
    code, _, err = cli(["verify", "--suite", suite, "--model", f"sklearn:{path}",
                        "--trusted-types", CODE_TYPES, "--run", tmp_path / "run"], capsys)
    assert_user_error(code, err, r"trusted types that can run code: builtins.max is .*"
                                 r"\(--trusted-types builtins.max,functools.partial,"
                                 r"posix.system\): remove them .* --allow-unsafe-types")
    assert not marker.exists() and not (tmp_path / "run").exists()


def test_trust_flags_are_refused_where_they_do_nothing(
        evil: tuple[Path, Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    _, suite, _ = evil
    code, _, err = cli(["verify", "--suite", suite, "--trusted-types", "mymod.f",
                        "--run", tmp_path / "run"], capsys)
    assert_user_error(code, err, r"--trusted-types does nothing here: it applies to a --model "
                                 r"sklearn:FILE.skops \(--trusted-types mymod.f\)")
    code, _, err = cli(["verify", "--suite", suite, "--model", "python:runbuilder:keyword_model",
                        "--trusted-types", "mymod.f", "--run", tmp_path / "run"], capsys)
    assert_user_error(code, err, r"--trusted-types does nothing here")
    code, _, err = cli(["verify", "--suite", suite, "--model", "python:runbuilder:keyword_model",
                        "--allow-unsafe-types", "--run", tmp_path / "run"], capsys)
    assert_user_error(code, err, r"--allow-unsafe-types does nothing without --trusted-types")
    assert not (tmp_path / "run").exists()


def test_config_trust_fields() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=r"trusted_types lists types that can run code: "
                                              r"posix.system is system from Python's posix"):
        TaskModelConfig(name="m", spec="sklearn:m.skops", trusted_types=["posix.system"])
    with pytest.raises(ValidationError, match=r"trusted_types only apply to a sklearn: .skops"):
        TaskModelConfig(name="m", spec="python:a:b", trusted_types=["a.b"])
    with pytest.raises(ValidationError, match=r"allow_unsafe_types does nothing without"):
        TaskModelConfig(name="m", spec="sklearn:m.skops", allow_unsafe_types=True)
    ok = TaskModelConfig(name="m", spec="sklearn:m.skops", trusted_types=["posix.system"],
                         allow_unsafe_types=True)
    assert ok.allow_unsafe_types


def test_a_type_that_cannot_run_code_is_still_suggested(tmp_path: Path) -> None:
    from discovery._skops_trust import refusal

    err = refusal(["mymodule.MyTransformer", "builtins.len"], "sklearn:m.skops")
    assert "mymodule.MyTransformer is MyTransformer from mymodule, a module not installed " \
           "here" in err.format()
    assert err.fix is not None and err.fix.endswith(
        "verify --trusted-types mymodule.MyTransformer,builtins.len)")
    with pytest.raises(ConfigError):
        from discovery import check_trusted_types

        check_trusted_types(["builtins.eval"], False, "--trusted-types builtins.eval")
