"""Stage 3: templates, lexicons, perturbations, suites, the runner, import/export."""

from formalize._config import VerifyConfig
from formalize._expand import Case, CompiledTemplate, TemplateSource
from formalize._formats import (
    export_adatest,
    export_capability_csv,
    export_hatecheck,
    export_native_cases,
    import_capability_csv,
    import_hatecheck,
    read_hatecheck_placeholders,
)
from formalize._groups import GroupVariantMaker, substitute_entity
from formalize._lexicons import (
    BUILTIN_LEXICON_DIR,
    LexiconSet,
    builtin_lexicons,
    read_lexicon_file,
    read_lexicon_yaml,
)
from formalize._perturb import PERTURBATIONS, Perturbation, make_perturbation
from formalize._report import VerifyResult, group_deviations
from formalize._runner import TemplateRunner, judge, predict
from formalize._spec import SuiteSpec
from formalize._suite import CompiledTest, Suite, dump_suite_yaml, load_suite
from formalize._template import (
    Slot,
    Text,
    indefinite_article,
    parse_template,
    render,
    tokenize,
)

__all__ = [
    "BUILTIN_LEXICON_DIR",
    "PERTURBATIONS",
    "Case",
    "CompiledTemplate",
    "CompiledTest",
    "GroupVariantMaker",
    "LexiconSet",
    "Perturbation",
    "Slot",
    "Suite",
    "SuiteSpec",
    "TemplateRunner",
    "TemplateSource",
    "Text",
    "VerifyConfig",
    "VerifyResult",
    "builtin_lexicons",
    "dump_suite_yaml",
    "export_adatest",
    "export_capability_csv",
    "export_hatecheck",
    "export_native_cases",
    "group_deviations",
    "import_capability_csv",
    "import_hatecheck",
    "indefinite_article",
    "judge",
    "load_suite",
    "make_perturbation",
    "parse_template",
    "predict",
    "read_hatecheck_placeholders",
    "read_lexicon_file",
    "read_lexicon_yaml",
    "render",
    "substitute_entity",
    "tokenize",
]
