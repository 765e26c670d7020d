"""Run directories and their manifest (provenance of every output)."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from synth.core._errors import RunDirError
from synth.core._io import write_json_atomic

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
        return self._record(config, config_hash, stage, stage_hash or config_hash, replace=False)

    def open_stage(self, config: dict[str, Any], stage: str, stage_hash: str) -> dict[str, Any]:
        """Like :meth:`open`, for a stage that is redone when its config changes: another
        recorded hash of ``stage`` is replaced (and the stage's status forgotten) instead of
        refused. The manifest keeps the config hash it has (a new one takes ``stage_hash``)."""
        return self._record(config, None, stage, stage_hash, replace=True)

    def _record(self, config: dict[str, Any], config_hash: str | None, stage: str,
                stage_hash: str, *, replace: bool) -> dict[str, Any]:
        self.path.mkdir(parents=True, exist_ok=True)
        if self.exists():
            manifest = self.read_manifest()
            old = manifest.get("stage_hashes", {}).get(stage)
            if old is not None and old != stage_hash:
                if not replace:
                    raise RunDirError(
                        f"run directory belongs to another config (stage '{stage}' was run "
                        f"with config hash {old}, this config has {stage_hash})",
                        where=str(self.path),
                        fix="use a new --run directory, or undo the config change",
                    )
                manifest["stage_hashes"].pop(stage)
                manifest.get("stages", {}).pop(stage, None)
        else:
            manifest = {"created": datetime.now(UTC).isoformat(timespec="seconds"),
                        "stages": {}, "stage_hashes": {}}
        before = json.dumps(manifest, sort_keys=True)
        manifest.setdefault("stage_hashes", {})[stage] = stage_hash
        manifest["config"] = config
        manifest.update(provenance(config_hash or manifest.get("config_hash") or stage_hash))
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

    def stage_hash(self, stage: str) -> str | None:
        """Return the hash ``stage`` was last opened with, or None (also without a manifest)."""
        return self._manifest_or_empty().get("stage_hashes", {}).get(stage)

    def is_current(self, stage: str, stage_hash: str, **info: Any) -> bool:
        """True if the manifest records ``stage`` complete with ``stage_hash`` (and each
        ``info`` value in the stage's entry); False without a manifest. Reads only."""
        manifest = self._manifest_or_empty()
        entry = manifest.get("stages", {}).get(stage) or {}
        return bool(manifest.get("stage_hashes", {}).get(stage) == stage_hash
                    and entry.get("status") == "complete"
                    and all(entry.get(k) == v for k, v in info.items()))

    def current_output(self, stage: str, stage_hash: str, path: str | Path,
                       **info: Any) -> dict[str, Any] | None:
        """Return the JSON object file ``path`` of ``stage`` if the stage is current
        (:meth:`is_current`) *and* the file's own provenance records ``stage_hash``; else None.

        Some commands rewrite a stage's file without touching the manifest; the hash the
        file records then differs, so the stage is not current.
        """
        path = Path(path)
        if not (self.is_current(stage, stage_hash, **info) and path.is_file()):
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        return data if isinstance(data, dict) and data.get("config_hash") == stage_hash else None

    def complete(self, stage: str, stage_hash: str, /, **info: Any) -> None:
        """Record ``stage`` complete with ``stage_hash`` and ``info`` (its manifest entry).
        The manifest is written only if this changes it."""
        manifest = self.read_manifest()
        before = json.dumps(manifest, sort_keys=True)
        manifest.setdefault("stage_hashes", {})[stage] = stage_hash
        manifest.setdefault("stages", {})[stage] = {"status": "complete", **info}
        if json.dumps(manifest, sort_keys=True) != before:
            write_json_atomic(self.manifest_path, manifest)

    def _manifest_or_empty(self) -> dict[str, Any]:
        return self.read_manifest() if self.exists() else {}
