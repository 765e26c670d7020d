"""What each type a ``.skops`` file asks to be trusted is, and which of them can run code.

skops loads only the types it trusts; a file that holds others is refused, and the user
may list them (``--trusted-types``, a task model's ``trusted_types``). A list pasted blind
is the attack: ``builtins.max,functools.partial,posix.system`` lets a 28 KB file run a
shell command as soon as the model scores a text. So each refused type is described, a
type that can run code is never suggested, and one is accepted only with the explicit
``--allow-unsafe-types`` (``allow_unsafe_types: true``). Nothing here imports the modules a
file names: importing can itself run code.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from synth.core import ConfigError, DataError

CODE_MODULES = frozenset({
    "os", "posix", "nt", "subprocess", "sys", "shutil", "socket", "importlib", "pickle",
    "marshal", "ctypes", "pty", "runpy", "code", "codeop", "multiprocessing", "threading",
    "signal", "io", "pathlib", "tempfile", "webbrowser", "urllib", "http", "ftplib",
    "smtplib", "asyncio", "types", "inspect", "gc", "dill", "joblib",
    "cloudpickle", "shelve", "glob", "fileinput", "platform", "sysconfig", "pdb", "bdb",
    "trace", "timeit", "cProfile", "profile", "operator", "_operator", "functools",
    "_functools", "copyreg", "_pickle", "_posixsubprocess", "_io", "_thread", "sqlite3",
})
"""Modules whose functions reach the system or call other callables (``functools.partial``,
``operator.methodcaller``): any of their types can run code when the model is used."""

CODE_BUILTINS = frozenset({
    "eval", "exec", "compile", "__import__", "open", "getattr", "setattr", "delattr",
    "globals", "locals", "vars", "input", "breakpoint", "exit", "quit", "help", "print",
    "memoryview", "type", "object", "super", "classmethod", "staticmethod", "property",
    "map", "filter", "max", "min", "sorted", "iter", "next", "callable", "hasattr", "dir",
    "id", "hash", "issubclass", "isinstance", "format", "__build_class__", "reversed",
})
"""Built-ins that run code, touch files or call a function they are given (``max`` and
``sorted`` call their ``key``: ``partial(max, key=posix.system)`` runs a shell command)."""

DATA_BUILTINS = frozenset({"int", "float", "str", "bool", "bytes", "complex", "list",
                           "tuple", "dict", "set", "frozenset", "slice", "range", "len",
                           "abs", "round", "sum"})
"""Built-ins that only make or measure values."""


def describe_type(name: str) -> tuple[bool, str]:
    """``(can run code, what it is)`` for a fully qualified type name from a skops file."""
    module, _, attr = name.rpartition(".")
    root = module.split(".")[0]
    if module == "builtins":
        if attr in DATA_BUILTINS:
            return False, f"the built-in {attr}(), which only makes or measures a value"
        return True, (f"the built-in {attr}(), which can run code, read files or call a "
                      "function it is given")
    if root in CODE_MODULES or name in {"numpy.load", "numpy.fromfile", "numpy.save"}:
        return True, (f"{attr} from Python's {module} module, which can run commands, reach "
                      "files or call any function it is given")
    if root in {"sklearn", "numpy", "scipy"}:
        return False, f"{attr} from {root} (installed here), a data or estimator type"
    if importlib.util.find_spec(root) is None:
        return False, (f"{attr} from {module}, a module not installed here (loading would "
                       "fail); unknown code")
    return False, (f"{attr} from {module}, third-party code synthcheck cannot check: trust "
                   "it only if you know what it does")


def code_types(names: Sequence[str]) -> list[str]:
    """The names among ``names`` that can run code (see :func:`describe_type`)."""
    return [n for n in names if describe_type(n)[0]]


def refusal(refused: Sequence[str], where: str) -> DataError:
    """The error for a skops file holding ``refused`` untrusted types: each one described;
    ``--trusted-types`` suggested only when none of them can run code."""
    lines = "; ".join(f"{n} is {describe_type(n)[1]}" for n in refused)
    unsafe = code_types(refused)
    if unsafe:
        fix = (f"do not load it: {', '.join(unsafe)} can run code on this machine as soon as "
               "the model is used (a safe model file never needs them). Only for a file you "
               "made yourself: list the types under trusted_types and set "
               "allow_unsafe_types: true (verify: --trusted-types ... --allow-unsafe-types)")
    else:
        fix = ("if you trust this file, list these types under the task model's trusted_types "
               "(on the command line: verify --trusted-types " + ",".join(refused) + ")")
    return DataError(f"refusing to load untrusted types {list(refused)}: {lines}", where=where,
                     fix=fix)


def check_trusted_types(trusted: Sequence[str], allow_unsafe: bool, where: str) -> None:
    """Refuse a trusted-types list that names a type able to run code, unless
    ``allow_unsafe`` (``--allow-unsafe-types``) says so.

    Raises:
        ConfigError: names each such type and what it is.
    """
    unsafe = code_types(trusted)
    if unsafe and not allow_unsafe:
        raise ConfigError(
            "trusted types that can run code: " + "; ".join(
                f"{n} is {describe_type(n)[1]}" for n in unsafe), where=where,
            fix="remove them (a safe model file never needs them); only for a file you made "
                "yourself, also set allow_unsafe_types: true (verify: --allow-unsafe-types)")
