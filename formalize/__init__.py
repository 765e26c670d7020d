"""Stage 3: templates, lexicons, perturbations, suites, the runner, import/export."""

__all__: list[str] = []
