"""`synthcheck import`: turn another tool's test files into a suite YAML."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path
from typing import Any

from synthcheck._cli_common import positive_int


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from formalize import import_formats

    p = sub.add_parser(
        "import", help=f"import tests as a suite YAML: {', '.join(import_formats())}",
        description="Build a suite YAML from another tool's files. The suite is checked "
                    "(schema, templates, lexicons, labels) before it is written, so a bad import "
                    "never replaces a good file. A suite over its case limit is written with a "
                    "warning that says which --sample N brings it under the limit.")
    p.add_argument("--format", required=True, choices=import_formats(),
                   help="format of the file to import")
    p.add_argument("--in", dest="inp", required=True,
                   help="hatecheck: test_suite_cases.csv or its folder; capability-csv: the CSV")
    p.add_argument("--placeholders", default=None,
                   help="hatecheck: template_placeholders.csv (default: next to the cases file)")
    p.add_argument("--labels", default=None,
                   help="comma-separated label names (capability-csv: names for 0, 1, ...)")
    p.add_argument("--lexicon-file", dest="lexicon_files", action="append", default=[],
                   metavar="PATH",
                   help="capability-csv: a YAML file of lexicons (NAME: [values]) for slots "
                        "the built-in lexicons lack; repeat for several (later files win). The "
                        "suite refers to it by a path relative to the suite file")
    p.add_argument("--encoding", default="utf-8",
                   help="text encoding of the CSV files (default: utf-8; a UTF-8 byte order "
                        "mark is skipped)")
    p.add_argument("--sample", type=positive_int, default=None, metavar="N",
                   help="write 'sample: N' on every imported test with templates (N seeded "
                        "fills per test instead of the full product)")
    p.add_argument("--suite-name", "--name", dest="name", default=None, metavar="SUITE",
                   help="name of the written SUITE (default: the output file's stem)")
    p.add_argument("--out", required=True, help="suite YAML to write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from formalize import FORMATS, Suite, dump_suite_yaml
    from synth.core import ConfigError, write_text_atomic

    out = Path(args.out)
    name = args.name or out.stem
    labels = [s.strip() for s in args.labels.split(",")] if args.labels else None
    fmt = FORMATS.get(args.format)
    if args.lexicon_files and not fmt.takes_lexicon_files:
        takes = [n for n in FORMATS.names() if FORMATS.get(n).takes_lexicon_files]
        raise ConfigError(f"--lexicon-file applies to --format {' and '.join(takes)} only",
                          where="--lexicon-file",
                          fix="HateCheck imports take their lexicons from --placeholders")
    lexicon_files = [_relative_to_suite(p, out) for p in args.lexicon_files]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = fmt().import_(args.inp, name=name, labels=labels,
                             placeholders=args.placeholders, lexicon_files=lexicon_files,
                             encoding=check_encoding_flag(args.encoding))
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr)
    if args.sample is not None:
        for test in data["tests"]:
            if test.get("templates"):
                test["sample"] = args.sample
    # Check the result before writing, so a bad import never replaces a good file. The
    # --lexicon-file paths were named by the user here, so they may lie outside the suite's
    # folder; later commands read them only with --allow-outside-files (say so).
    outside = [p for p in lexicon_files if p.startswith("../")]
    suite = Suite.from_dict(data, source=str(out), base_dir=out.parent,
                            allow_outside_files=bool(outside))
    if outside:
        print(f"warning: {out} reads {', '.join(outside)} outside its folder: validate, "
              f"verify and export will need --allow-outside-files (or copy the file next "
              f"to the suite and pass that copy to --lexicon-file)", file=sys.stderr)
    write_text_atomic(out, dump_suite_yaml(data))
    total = sum(suite.counts().values())
    print(f"wrote {out}: {len(suite.tests)} tests, {total:,} cases")
    limit = suite.spec.max_cases
    if total > limit:
        print(_over_limit_warning(suite, out, total, limit, args.sample), file=sys.stderr)
    return 0


def check_encoding_flag(encoding: str) -> str:
    """``--encoding`` if Python knows it, else a ConfigError naming the flag."""
    from synth.core import ConfigError, check_encoding

    try:
        return check_encoding(encoding)
    except ValueError as exc:
        raise ConfigError(str(exc), where="--encoding",
                          fix="use a Python codec name such as utf-8, latin-1 or cp1252"
                          ) from None


def _relative_to_suite(path: str, out: Path) -> str:
    """A --lexicon-file path (relative to the current folder) as the suite will name it:
    relative to the suite file's folder, like every path in a suite."""
    from synth.core import ConfigError

    p = Path(path)
    if not p.is_file():
        raise ConfigError("lexicon file not found", where=f"--lexicon-file {path}",
                          fix="check the path (relative to the current folder)")
    return Path(os.path.relpath(p.resolve(), out.parent.resolve())).as_posix()


def _over_limit_warning(suite: Any, out: Path, total: int, limit: int,
                        sample: int | None) -> str:
    """The warning for an imported suite over its case limit, with the largest ``--sample N``
    that brings it under the limit (found on the counts, without expanding anything)."""
    counts = suite.counts()
    biggest = max(counts, key=lambda k: counts[k])
    head = (f"warning: {out} would expand to {total:,} cases, over the case limit of "
            f"{limit:,} (largest: test {biggest!r} with {counts[biggest]:,}), so export "
            f"refuses it as written (validate and verify sample each test over "
            f"verify.max_cases_per_test)")
    lo, hi = 0, max(counts.values())
    while lo < hi:  # the largest N with counts(N) under the limit (0: none)
        mid = (lo + hi + 1) // 2
        if sum(suite.counts(mid).values()) <= limit:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:
        return (f"{head}. Even one fill per test is over the limit: raise max_cases in the "
                f"suite (or pass --max-cases to validate/verify/export)")
    again = "again with a smaller --sample" if sample is not None else "with --sample N"
    return (f"{head}. Import {again} (--sample {lo:,} or less keeps it under the limit: "
            f"{sum(suite.counts(lo).values()):,} cases), add 'sample:' to its tests, or pass "
            f"--sample to validate/verify/export")
