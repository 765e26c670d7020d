"""Test types: one class per type (its spec model, count, expand, judge, aggregate), registered
by name in ``TEST_TYPES``. A new test type is one module plus one registry entry::

    TEST_TYPES.register("mytype", "mypackage.mymodule:MyType")

after which a suite may write ``type: mytype``.
"""

from formalize.types._base import CompiledTest
from formalize.types._fields import LabelRule, RunTexts, SourcedSpec, TestSpecBase
from synth.core import Registry

#: The built-in test types, in the order the docs list them.
_BUILTIN = {
    "mft": "formalize.types.mft:MFT",
    "inv": "formalize.types.inv:INV",
    "dir": "formalize.types.dir:DIR",
    "group": "formalize.types.group:Group",
    "contrast": "formalize.types.contrast:Contrast",
}

#: Test type name (a suite's ``type:``) -> its :class:`CompiledTest` subclass.
TEST_TYPES: Registry[type[CompiledTest]] = Registry("test type", _BUILTIN)


def builtin_type_names() -> list[str]:
    """The built-in test types, in the order the docs list them."""
    return list(_BUILTIN)


__all__ = [
    "TEST_TYPES",
    "CompiledTest",
    "LabelRule",
    "RunTexts",
    "SourcedSpec",
    "TestSpecBase",
    "builtin_type_names",
]
