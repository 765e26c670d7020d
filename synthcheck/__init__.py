"""synthcheck: find where text classifiers fail, and turn the findings into tests."""

from synthcheck._config import RunConfig, load_run_config

__all__ = ["RunConfig", "load_run_config"]
