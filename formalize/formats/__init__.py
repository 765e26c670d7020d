"""Export and import formats, registered by name in ``FORMATS`` (one module per format).

A new format is one module with a :class:`Format` subclass plus one registry entry::

    FORMATS.register("myformat", "mypackage.mymodule:MyFormat")
"""

from formalize.formats._base import Exported, Format
from synth.core import Registry

#: ``--format`` name -> its :class:`Format` subclass.
FORMATS: Registry[type[Format]] = Registry("format", {
    "suite-yaml": "formalize.formats.suite_yaml:SuiteYaml",
    "native-cases": "formalize.formats.native_cases:NativeCases",
    "hatecheck": "formalize.formats.hatecheck:HateCheck",
    "capability-csv": "formalize.formats.capability_csv:CapabilityCsv",
    "adatest": "formalize.formats.adatest:AdaTest",
    "hf": "formalize.formats.hf:HuggingFace",
    "checklist": "formalize.formats.checklist:CheckList",
})


def export_formats() -> list[str]:
    """The names of the formats that write suites, sorted."""
    return [n for n in FORMATS.names() if FORMATS.get(n).can_export()]


def import_formats() -> list[str]:
    """The names of the formats that read files into suites, sorted."""
    return [n for n in FORMATS.names() if FORMATS.get(n).can_import()]


__all__ = ["FORMATS", "Exported", "Format", "export_formats", "import_formats"]
