"""hatesonar (PyPI ``hatesonar==0.1.0``): a 1 MB ONNX hate/offensive/neither classifier, as a
task model (``hatesonar:default``, or ``hatesonar:<file.onnx>`` for another model file of the
same shape).

The model's text normaliser (ONNX ``StringNormalizer``) asks for the ``en_US.UTF-8`` locale,
which minimal systems and containers often lack; onnxruntime then refuses to load it. Where
that locale is missing, the model is loaded with the normaliser set to ``C.UTF-8`` (the same
lower-casing of English text), so it runs without installing a language pack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: The model's classes, in its output order.
HATESONAR_CLASSES = ("hate_speech", "offensive_language", "neither")
#: The locale used where ``en_US.UTF-8`` is missing.
FALLBACK_LOCALE = "C.UTF-8"


#: Built-in label maps for the two tasks hatesonar fits, used when no ``label_map`` is given:
#: HateCheck's labels (only hate speech is hateful; offensive language is not hate) and a
#: toxicity task's (hate speech and offensive language are both toxic).
DEFAULT_LABEL_MAPS: dict[frozenset[str], dict[str, str]] = {
    frozenset({"hateful", "non-hateful"}): {
        "hate_speech": "hateful", "offensive_language": "non-hateful", "neither": "non-hateful"},
    frozenset({"toxic", "non-toxic"}): {
        "hate_speech": "toxic", "offensive_language": "toxic", "neither": "non-toxic"},
}


def hatesonar_session(model_file: str | Path | None = None) -> Any:
    """An onnxruntime session of the hatesonar model (the packaged one by default).

    Raises:
        ModelNotAvailable: hatesonar/onnxruntime is not installed, or the file is missing.
    """
    from synth.core import ModelNotAvailable

    try:
        import onnxruntime as ort
        from hatesonar.api import DEFAULT_MODEL_FILE
    except ImportError as exc:
        raise ModelNotAvailable(f"hatesonar is not installed ({exc.name} missing)",
                                where="hatesonar:", fix="pip install 'synthcheck[hatesonar]' "
                                "(hatesonar==0.1.0, onnxruntime)") from None
    path = Path(model_file) if model_file else Path(DEFAULT_MODEL_FILE)
    if not path.is_file():
        raise ModelNotAvailable("hatesonar model file not found", where=f"hatesonar:{path}",
                                fix="use hatesonar:default, or the path of an .onnx file")
    quiet = ort.SessionOptions()
    quiet.log_severity_level = 4  # a missing locale is handled below, not logged
    try:
        return ort.InferenceSession(str(path), quiet, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own Fail type
        if "locale" not in str(exc):
            raise
    import onnx

    model = onnx.load(str(path))
    for node in model.graph.node:
        if node.op_type == "StringNormalizer":
            kept = [a for a in node.attribute if a.name != "locale"]
            del node.attribute[:]
            node.attribute.extend(kept)
            node.attribute.append(onnx.helper.make_attribute("locale", FALLBACK_LOCALE))
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def check_hatesonar(rest: str, labels: Sequence[str], *, where: str,
                    label_map: Mapping[str, str] | None = None) -> None:
    """What loading ``hatesonar:<rest>`` would refuse, without loading the model: the
    packages, the model file, and its classes against the task's ``labels`` (with
    ``label_map``, or the built-in map for the task's labels).

    Raises:
        ModelNotAvailable: hatesonar/onnxruntime is not installed, or the file is missing.
        ConfigError: the classes do not map onto the task's labels.
    """
    import importlib.util

    from discovery._scorers import LabelMapper
    from synth.core import ModelNotAvailable

    lacking = [m for m in ("onnxruntime", "hatesonar") if importlib.util.find_spec(m) is None]
    if lacking:
        raise ModelNotAvailable(f"hatesonar is not installed ({lacking[0]} missing)",
                                where=f"{where}: hatesonar:{rest}",
                                fix="pip install 'synthcheck[hatesonar]' "
                                    "(hatesonar==0.1.0, onnxruntime)")
    if rest != "default" and not Path(rest).is_file():
        raise ModelNotAvailable("hatesonar model file not found",
                                where=f"{where}: hatesonar:{rest}",
                                fix="use hatesonar:default, or the path of an .onnx file")
    if label_map is None:
        label_map = DEFAULT_LABEL_MAPS.get(frozenset(labels))
    LabelMapper(list(HATESONAR_CLASSES), list(labels), label_map, f"{where}: hatesonar:{rest}")


class HateSonarScorer:
    """The hatesonar classifier over the task's labels (its classes mapped by ``label_map``,
    several classes may share one label: their probabilities add up). Without a
    ``label_map``, tasks labelled ``hateful``/``non-hateful`` or ``toxic``/``non-toxic`` use
    :data:`DEFAULT_LABEL_MAPS`, and a task labelled with the model's own classes needs none."""

    def __init__(self, labels: Sequence[str], *, label_map: Mapping[str, str] | None = None,
                 name: str = "hatesonar", batch_size: int = 256,
                 model_file: str | Path | None = None) -> None:
        from discovery._scorers import LabelMapper

        self.labels = list(labels)
        self.name = name
        self.batch_size = batch_size
        self.session = hatesonar_session(model_file)
        if label_map is None:
            label_map = DEFAULT_LABEL_MAPS.get(frozenset(self.labels))
        self.mapper = LabelMapper(list(HATESONAR_CLASSES), self.labels, label_map,
                                  f"hatesonar:{model_file or 'default'}")

    def predict_proba(self, texts: Sequence[str]) -> list[dict[str, float]]:
        """``{label: probability}`` per text, in input order."""
        import numpy as np

        from discovery._scorers import join_pairs
        from synth.core import length_sorted_batches

        texts = join_pairs(texts)
        matrix = np.zeros((len(texts), len(HATESONAR_CLASSES)))
        for idx in length_sorted_batches([len(t) for t in texts], self.batch_size):
            chunk = np.array([texts[i] for i in idx], dtype=object)
            _, probs = self.session.run(None, {"text": chunk})
            matrix[idx] = [[float(row[k]) for k in range(len(HATESONAR_CLASSES))]
                           for row in probs]
        return self.mapper(matrix) if texts else []


def _load_hatesonar(rest: str, labels: Sequence[str], *, label_map: Mapping[str, str] | None,
                    name: str, batch_size: int = 256, **_: Any) -> HateSonarScorer:
    """The ``hatesonar:`` scheme: ``default`` (the packaged model) or an ``.onnx`` path."""
    model_file = None if rest == "default" else rest
    return HateSonarScorer(labels, label_map=label_map, name=name, batch_size=batch_size,
                           model_file=model_file)
