"""Fixtures shared by every test folder: the tiny Llama folder and the mini-run config.

Helpers (not fixtures) live in importable modules, never in a conftest.py: import them as
``tests.<folder>.<module>`` (pyproject's pytest ``pythonpath = ["."]`` puts the checkout on
the path), e.g. ``from tests.synth.fakes import FakeBackend``. ``from conftest import ...``
and ``sys.path.insert`` are refused by tests/test_layout.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.synth.synth_fixtures import build_tiny_llama
from tests.synthcheck.runbuilder import TINY_DOCS

TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def task_models_on_path() -> Iterator[None]:
    """tests/synthcheck and tests/discovery on ``sys.path`` for a test module (undone after
    it), as a user's ``PYTHONPATH``: its configs name toy task models there by bare module name
    (``python:toy_models:...``, ``python:runbuilder:...``, ``python:discovery_fixtures:...``).
    Use it with ``pytestmark = pytest.mark.usefixtures("task_models_on_path")``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(TESTS / "discovery"))
        patch.syspath_prepend(str(TESTS / "synthcheck"))
        yield


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised 2-layer Llama and its tokenizer, saved once per session (built
    with a fixed seed: the same weights every time). Read it, never write into it."""
    return build_tiny_llama(tmp_path_factory.mktemp("tiny"))


def mini_run(tmp_path: Path, tiny_dir: Path) -> dict[str, Any]:
    """The mini run's config sections: the tiny corpus (written to ``tmp_path/docs.txt``), a
    faked generator, the toy keyword task model, the tiny Llama as reference, and small
    ranking and mining settings."""
    (tmp_path / "docs.txt").write_text("\n".join(TINY_DOCS) + "\n")
    return {
        "name": "mini",
        "corpus": {"source": str(tmp_path / "docs.txt")},
        "queries": {"k": 3},
        "generator": {"model": "hf:unused", "n": 24, "shard_size": 8, "batch_size": 4,
                      "segment": {"min_words": 3, "max_words": 40}},
        "task_models": [{"name": "toy", "spec": "python:toy_models:keyword_sentiment"}],
        "reference": {"model": f"hf:{tiny_dir}", "calibration": "contextual", "device": "cpu"},
        "ranking": {"top_fraction": 0.5, "min_reference_margin": 0.0},
        "mining": {"min_support": 2},
    }


@pytest.fixture
def mini_config(tmp_path: Path, tiny_dir: Path) -> Callable[..., Path]:
    """``mini_config(**sections)`` writes the mini run's config to ``tmp_path/c.yaml`` and
    returns its path; each keyword replaces that whole section (in place, keeping the order)
    or adds it after the others. The generator is named ``hf:unused``: fake it (see
    ``tests.synthcheck.runbuilder.fake_generator``), and put tests/synthcheck on ``sys.path``
    for the ``python:toy_models`` task model (``monkeypatch.syspath_prepend``)."""

    def write(**sections: Any) -> Path:
        cfg = mini_run(tmp_path, tiny_dir)
        cfg.update(sections)
        path = tmp_path / "c.yaml"
        path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        return path

    return write
