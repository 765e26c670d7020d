"""hatesonar as a task model: loads without the en_US.UTF-8 locale, maps its classes."""

from __future__ import annotations

import pytest

from discovery import load_task_scorer
from synth.core import ConfigError

pytest.importorskip("hatesonar")
pytest.importorskip("onnxruntime")


def test_hatesonar_scores_and_maps_classes():
    from discovery._hatesonar import hatesonar_session

    raw = hatesonar_session().run(None, {"text": __import__("numpy").array(
        ["I hate women.", "I love my friends."], dtype=object)})[1]
    tox = load_task_scorer("hatesonar:default", ["non-toxic", "toxic"])
    hate = load_task_scorer("hatesonar:default", ["hateful", "non-hateful"])
    t, h = tox.predict_proba(["I hate women.", "I love my friends."]), \
        hate.predict_proba(["I hate women.", "I love my friends."])
    for k in range(2):
        assert t[k]["toxic"] == pytest.approx(raw[k][0] + raw[k][1])  # hate + offensive
        assert h[k]["hateful"] == pytest.approx(raw[k][0])  # hate only
        assert t[k]["toxic"] + t[k]["non-toxic"] == pytest.approx(1.0)
    assert t[0]["toxic"] > 0.9 and h[0]["hateful"] > 0.5
    assert t[1]["toxic"] < t[0]["toxic"]


def test_hatesonar_needs_a_label_map_for_other_labels():
    with pytest.raises(ConfigError, match=r"task model labels \['hate_speech', "
                                          r"'offensive_language', 'neither'\] do not match"):
        load_task_scorer("hatesonar:default", ["negative", "positive"])
