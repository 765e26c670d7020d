"""synthcheck: find where text classifiers fail, and turn the findings into tests."""

from synthcheck._config import RunConfig, load_run_config
from synthcheck.stages._models import load_run_scorers

__all__ = ["RunConfig", "load_run_config", "load_run_scorers"]
