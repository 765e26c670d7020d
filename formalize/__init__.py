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
from formalize._groups import GroupVariantMaker, read_run_texts, substitute_entity
from formalize._lexicons import (
    BUILTIN_LEXICON_DIR,
    LexiconSet,
    builtin_lexicons,
    read_lexicon_file,
    read_lexicon_yaml,
)
from formalize._perturb import PERTURBATIONS, Perturbation, make_perturbation
from formalize._propose import (
    TemplateDraft,
    append_tests,
    draft_suite,
    format_drafts,
    load_run_scorers,
    propose_templates,
    run_draft,
)
from formalize._report import VerifyResult, group_deviations, summary_tests
from formalize._review import TAGS as REVIEW_TAGS
from formalize._review import (
    ReviewLog,
    ReviewLogWarning,
    ReviewSession,
    ReviewWidget,
    tagged_sentences,
)
from formalize._run_outputs import RunOutputs, read_summary_json
from formalize._runner import TemplateRunner, judge, predict
from formalize._spec import RunTexts, SuiteSpec
from formalize._suite import (
    CompiledTest,
    Suite,
    check_suite_labels,
    dump_suite_yaml,
    load_suite,
)
from formalize._template import (
    Slot,
    Text,
    indefinite_article,
    parse_template,
    render,
    tokenize,
)

__all__ = [
    "REVIEW_TAGS",
    "ReviewLog",
    "ReviewLogWarning",
    "ReviewSession",
    "ReviewWidget",
    "RunOutputs",
    "TemplateDraft",
    "append_tests",
    "draft_suite",
    "format_drafts",
    "load_run_scorers",
    "propose_templates",
    "run_draft",
    "tagged_sentences",
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
    "RunTexts",
    "SuiteSpec",
    "TemplateRunner",
    "TemplateSource",
    "Text",
    "VerifyConfig",
    "VerifyResult",
    "builtin_lexicons",
    "check_suite_labels",
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
    "read_run_texts",
    "read_summary_json",
    "render",
    "substitute_entity",
    "summary_tests",
    "tokenize",
]
