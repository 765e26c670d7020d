"""The project's one exception hierarchy.

Every error a user can cause derives from :class:`SynthcheckError`. The CLI prints
``error: <what> (<where>): <how to fix>`` and exits with status 2 for these, without a
traceback; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class SynthcheckError(Exception):
    """Base class of every user-facing error.

    Args:
        what: what went wrong, one sentence without a trailing period.
        where: the file, field, line or record it concerns (optional).
        fix: how to fix it (optional).
    """

    exit_code = 2

    def __init__(self, what: str, *, where: str | None = None, fix: str | None = None) -> None:
        self.what = what
        self.where = where
        self.fix = fix
        super().__init__(self.format())

    def format(self) -> str:
        """Return the message in the CLI's ``<what> (<where>): <how to fix>`` shape."""
        text = self.what
        if self.where:
            text += f" ({self.where})"
        if self.fix:
            text += f": {self.fix}"
        return text


class ConfigError(SynthcheckError):
    """A configuration file, field or override is invalid."""


class DataError(SynthcheckError):
    """An input data file (corpus, scores, records) is missing or malformed."""


class TemplateError(SynthcheckError):
    """A suite, template or lexicon is invalid."""


class ModelNotAvailable(SynthcheckError):
    """A model spec cannot be resolved on this machine (missing package or file)."""


class RunDirError(SynthcheckError):
    """A run directory belongs to another config, or cannot be resumed."""


class ConfigDeprecation(FutureWarning):
    """A config field that moved: still read (to the same effect), with this warning. The
    CLI prints it as ``warning: <field> is deprecated (<where>): <fix>``.

    Args:
        field: the old field's dotted path (e.g. ``generator.sampling.seed``).
        fix: where it lives now, e.g. "write `seed: 0` under generator: instead".
        where: the file (and line) or ``-P`` override it came from (default: the field).
    """

    def __init__(self, field: str, fix: str, where: str | None = None) -> None:
        self.field, self.fix, self.where = field, fix, where
        super().__init__(f"{field} is deprecated ({where or f'field {field!r}'}): {fix}")
