"""Run directories and their manifest (provenance of every output)."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from synth._errors import RunDirError
from synth._io import write_json_atomic

MANIFEST = "manifest.json"


def package_version() -> str:
    """Return the installed synthcheck version (or ``0+unknown``)."""
    try:
        return metadata.version("synthcheck")
    except metadata.PackageNotFoundError:
        return "0+unknown"


@lru_cache(maxsize=1)
def git_commit() -> str:
    """Return the git commit of the synthcheck source tree (``unknown`` outside a checkout)."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = out.stdout.strip()
    if out.returncode != 0 or not commit:
        return "unknown"
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=here, capture_output=True,
        text=True, timeout=5, check=False,
    ).stdout.strip()
    return commit + ("-dirty" if dirty else "")


def provenance(config_hash: str) -> dict[str, str]:
    """Return the fields every output records: config hash, package version, git commit."""
    return {"config_hash": config_hash, "version": package_version(), "git_commit": git_commit()}


class RunDir:
    """One run's output directory: ``manifest.json`` plus each stage's files.

    The manifest holds the resolved config, its hash, the package version, the git commit
    and a status per stage. A run directory belongs to one config: opening it with another
    config hash is refused (unless ``allow_new`` and the directory is empty of results).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def exists(self) -> bool:
        """True if the directory holds a manifest."""
        return self.manifest_path.is_file()

    def read_manifest(self) -> dict[str, Any]:
        """Return the manifest, or raise RunDirError if it is missing or unreadable."""
        if not self.manifest_path.is_file():
            raise RunDirError("no manifest.json in the run directory", where=str(self.path),
                              fix="run `synthcheck generate` (or `discover`) with --run first")
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise RunDirError(f"manifest.json is not valid JSON: {exc.msg}",
                              where=str(self.manifest_path),
                              fix="restore it or start a new run directory") from None
        return data

    def open(self, config: dict[str, Any], config_hash: str, *, stage: str,
             stage_hash: str | None = None) -> dict[str, Any]:
        """Create or check the manifest, recording ``config`` and its hash; return it.

        ``stage_hash`` covers what changes ``stage``'s outputs (defaults to ``config_hash``).

        Raises:
            RunDirError: the directory already holds ``stage`` outputs of another stage hash.
        """
        stage_hash = stage_hash or config_hash
        self.path.mkdir(parents=True, exist_ok=True)
        if self.exists():
            manifest = self.read_manifest()
            old = manifest.get("stage_hashes", {}).get(stage)
            if old is not None and old != stage_hash:
                raise RunDirError(
                    f"run directory belongs to another config (stage '{stage}' was run with "
                    f"config hash {old}, this config has {stage_hash})",
                    where=str(self.path),
                    fix="use a new --run directory, or undo the config change",
                )
        else:
            manifest = {"created": datetime.now(UTC).isoformat(timespec="seconds"),
                        "stages": {}, "stage_hashes": {}}
        before = json.dumps(manifest, sort_keys=True)
        manifest.setdefault("stage_hashes", {})[stage] = stage_hash
        manifest["config"] = config
        manifest.update(provenance(config_hash))
        if json.dumps(manifest, sort_keys=True) != before:  # a no-op rerun leaves it untouched
            write_json_atomic(self.manifest_path, manifest)
        return manifest

    def reset_stage(self, stage: str) -> None:
        """Forget ``stage``'s hash and status (before redoing it with a new config)."""
        manifest = self.read_manifest()
        manifest.get("stage_hashes", {}).pop(stage, None)
        manifest.get("stages", {}).pop(stage, None)
        write_json_atomic(self.manifest_path, manifest)

    def set_stage(self, stage: str, status: str, **info: Any) -> None:
        """Record ``stage``'s status (``running``/``complete``) and extra info in the manifest."""
        manifest = self.read_manifest()
        entry = {"status": status, **info}
        manifest.setdefault("stages", {})[stage] = entry
        write_json_atomic(self.manifest_path, manifest)

    def stage_status(self, stage: str) -> dict[str, Any] | None:
        """Return the manifest entry of ``stage`` or None."""
        if not self.exists():
            return None
        return self.read_manifest().get("stages", {}).get(stage)
