"""Every check of a suite's labels, in one place: gold labels against the suite's labels, the
suite's labels against the task's, and the task models' labels against the suite's."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from formalize._schema import read_suite_yaml, suite_where, validate_suite
from formalize._spec import SuiteSpec
from formalize.types import TEST_TYPES
from synth.core import DataError, LabelSpace, TemplateError, did_you_mean, node_line


def check_gold_label(label: str | None, labels: LabelSpace, where: str) -> None:
    """Refuse a gold label that is not one of the suite's labels (None: no label, fine).

    Raises:
        TemplateError: naming the label, the suite's labels and ``where``.
    """
    if label is not None and label not in labels:
        raise TemplateError(
            f"label {label!r} is not one of the suite's labels ({', '.join(labels)})",
            where=where, fix=did_you_mean(label, labels.list))


def label_uses(spec: SuiteSpec) -> Iterator[tuple[int, tuple[int | str, ...], str, str]]:
    """Yield (test index, field path, gold label, test name) for every gold label."""
    for i, test in enumerate(spec.tests):
        for fld, lab in TEST_TYPES.get(test.type).label_uses(test):
            yield i, fld, lab, test.name


def check_spec_labels(spec: SuiteSpec, task_labels: Iterable[str], *, source: str = "<suite>",
                      node: yaml.Node | None = None, task_source: str = "the task") -> None:
    """Refuse a suite spec whose labels are not the task's (the same names, in any order).

    Reads only the spec and its YAML nodes (for line numbers), never lexicons or texts.

    Args:
        spec: the validated suite.
        task_labels: the task's labels (a ``LabelSpace`` or the run config's ``task.labels``).
        source: the suite's file name, for the message.
        node: the suite's YAML node, for line numbers (optional).
        task_source: where the task labels come from, for the message.

    Raises:
        TemplateError: a gold label (or a suite label) is not one of the task's labels
            (naming the test and line that uses it), or the suite lacks a task label.
    """
    task = LabelSpace.of(task_labels)
    listed = ", ".join(task)
    extra = task.unknown(spec.labels)
    missing = task.missing(spec.labels)
    if extra:
        for i, fld, lab, test in label_uses(spec):
            if lab in extra:
                raise TemplateError(
                    f"label {lab!r} is not one of the task's labels ({listed}) from "
                    f"{task_source}", where=suite_where(source, node, "tests", i, *fld, test=test),
                    fix=did_you_mean(lab, task.list) + "; or run the suite with a config of "
                    "its own task")
        raise TemplateError(
            f"the suite's label {extra[0]!r} is not one of the task's labels ({listed}) "
            f"from {task_source}", where=_labels_where(source, node),
            fix=f"write labels: [{listed}] in the suite")
    if missing:
        raise TemplateError(
            f"the suite lacks the task's label {missing[0]!r} (task labels: {listed}, "
            f"from {task_source})", where=_labels_where(source, node),
            fix=f"write labels: [{listed}] in the suite (the models score every label)")


def _labels_where(source: str, node: yaml.Node | None) -> str:
    line = node_line(node, ("labels",)) if node is not None else None
    return f"{source}, labels" + (f", line {line}" if line else "")


def check_suite_labels(path: str | Path, task_labels: Iterable[str], *,
                       task_source: str = "the task") -> None:
    """Check a suite file's labels against the task's (see :meth:`Suite.check_labels`)
    without reading its lexicons, texts files or run corpora: cheap enough for the start of
    a pipeline, before anything is generated or scored (the suite may read a corpus that the
    pipeline has yet to write).

    Raises:
        TemplateError: malformed YAML, a schema error, or labels that are not the task's.
    """
    path = Path(path)
    data, node = read_suite_yaml(path)
    check_spec_labels(validate_suite(data, str(path), node), task_labels, source=str(path),
                      node=node, task_source=task_source)


def check_model_labels(models: Mapping[str, Any], labels: Sequence[str], source: str) -> None:
    """Refuse a task model whose labels are not the suite's (in any order).

    Raises:
        DataError: naming the model and both label lists.
    """
    space = LabelSpace.of(labels)
    for name, scorer in models.items():
        if not space.same_set(scorer.labels):
            raise DataError(
                f"model {name!r} has labels {list(scorer.labels)}, the suite has {list(labels)}",
                where=source,
                fix="use a model of the suite's task, or map its labels onto the suite's")
