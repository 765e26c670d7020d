"""Stage 3: templates, lexicons, perturbations, suites and their registered test types, the
runner and its verify result, import/export formats, and review/propose."""

from formalize import review
from formalize._artifacts import (
    DECISIONS as DECISIONS_FILE,
)
from formalize._artifacts import (
    VERIFY,
    VERIFY_CASES,
    VERIFY_EXAMPLES,
    VERIFY_FILLS,
    VERIFY_GROUPS,
    VERIFY_SUMMARY,
    VERIFY_SUMMARY_CSV,
)
from formalize._config import VerifyConfig
from formalize._expand import Case, CompiledTemplate, TemplateSource
from formalize._groups import (
    GroupVariantMaker,
    RunCorpusMissing,
    read_run_texts,
    substitute_entity,
)
from formalize._labels import check_spec_labels, check_suite_labels
from formalize._lexicons import (
    BUILTIN_LEXICON_DIR,
    LexiconSet,
    PairedLexicon,
    builtin_lexicons,
    builtin_pairs,
    read_lexicon_file,
    read_lexicon_yaml,
)
from formalize._perturb import PERTURBATIONS, Perturbation, make_perturbation
from formalize._result import VerifyResult, group_deviations, summary_tests
from formalize._run_outputs import RunOutputs, read_summary_json
from formalize._runner import TemplateRunner, TestSample, judge, predict, sampling_plan
from formalize._spec import RunTexts, SuiteSpec
from formalize._suite import MAX_CASES, Suite, dump_suite_yaml, load_suite
from formalize._template import (
    Slot,
    Text,
    indefinite_article,
    parse_template,
    render,
    tokenize,
)
from formalize.formats import FORMATS, Exported, Format, export_formats, import_formats
from formalize.formats.adatest import export_adatest, import_adatest
from formalize.formats.capability_csv import export_capability_csv, import_capability_csv
from formalize.formats.hatecheck import (
    export_hatecheck,
    import_hatecheck,
    read_hatecheck_placeholders,
)
from formalize.formats.native_cases import export_native_cases
from formalize.review import *  # noqa: F403 - review's public names are formalize's too
from formalize.review import TAGS as REVIEW_TAGS
from formalize.types import TEST_TYPES, CompiledTest, TestSpecBase

__all__ = [
    "DECISIONS_FILE",
    "VERIFY",
    "VERIFY_CASES",
    "VERIFY_EXAMPLES",
    "VERIFY_FILLS",
    "VERIFY_GROUPS",
    "VERIFY_SUMMARY",
    "VERIFY_SUMMARY_CSV",
    "REVIEW_TAGS",
    "RunOutputs",
    "BUILTIN_LEXICON_DIR",
    "PERTURBATIONS",
    "Case",
    "CompiledTemplate",
    "CompiledTest",
    "Exported",
    "FORMATS",
    "Format",
    "TEST_TYPES",
    "TestSpecBase",
    "GroupVariantMaker",
    "LexiconSet",
    "Perturbation",
    "Slot",
    "Suite",
    "RunTexts",
    "SuiteSpec",
    "TemplateRunner",
    "TestSample",
    "TemplateSource",
    "Text",
    "VerifyConfig",
    "VerifyResult",
    "PairedLexicon",
    "builtin_lexicons",
    "builtin_pairs",
    "check_spec_labels",
    "check_suite_labels",
    "dump_suite_yaml",
    "export_adatest",
    "import_adatest",
    "export_formats",
    "export_capability_csv",
    "export_hatecheck",
    "export_native_cases",
    "group_deviations",
    "import_formats",
    "import_capability_csv",
    "import_hatecheck",
    "indefinite_article",
    "judge",
    "load_suite",
    "MAX_CASES",
    "RunCorpusMissing",
    "make_perturbation",
    "parse_template",
    "predict",
    "sampling_plan",
    "read_hatecheck_placeholders",
    "read_lexicon_file",
    "read_summary_json",
    "read_lexicon_yaml",
    "read_run_texts",
    "render",
    "substitute_entity",
    "summary_tests",
    "tokenize",
]
__all__ += review.__all__  # kept once, in formalize.review
