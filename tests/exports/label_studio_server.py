"""A real Label Studio server on 127.0.0.1 for the round-trip test (and for capturing the
fixtures in tests/formalize/review/data/): start it from its own venv, drive it through its
REST API as a reviewer would through the page, stop it. Every wait is bounded."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

USER, PASSWORD, TOKEN = "reviewer@example.org", "synthcheck-test", "synthchecktoken0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LabelStudio:
    """``label-studio start`` on 127.0.0.1 with a fresh data folder; ``with`` stops it."""

    def __init__(self, exe: Path, data_dir: Path, *, port: int | None = None,
                 start_timeout: float = 420.0) -> None:
        self.exe, self.data_dir = exe, data_dir
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LabelStudio:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "LABEL_STUDIO_BASE_DATA_DIR": str(self.data_dir),
               "LABEL_STUDIO_USERNAME": USER, "LABEL_STUDIO_PASSWORD": PASSWORD,
               "LABEL_STUDIO_USER_TOKEN": TOKEN,
               "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
               "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
               "LATEST_VERSION_CHECK": "false", "COLLECT_ANALYTICS": "false"}
        log = (self.data_dir / "server.log").open("wb")
        self.proc = subprocess.Popen(
            [str(self.exe), "start", "--no-browser", "--host", "127.0.0.1", "--port",
             str(self.port)], env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"label-studio exited ({self.proc.returncode}); see "
                                   f"{self.data_dir / 'server.log'}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=5) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(2)
        self.__exit__()
        raise TimeoutError(f"label-studio did not answer within {self.start_timeout:.0f} s")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)

    def api(self, method: str, path: str, body: Any = None, *, raw: bool = False) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": f"Token {TOKEN}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                payload = r.read()
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"{method} {path}: {exc.code} {exc.read()[:500]!r}") from None
        return payload if raw else json.loads(payload or b"null")

    # -- what a reviewer does ---------------------------------------------------------------
    def project(self, title: str, config: str, tasks: list[dict[str, Any]]) -> int:
        """Create a project with the labeling config (Label Studio validates it against the
        tasks) and import the tasks; returns its id."""
        pid = int(self.api("POST", "/api/projects", {"title": title,
                                                     "label_config": config})["id"])
        self.api("POST", f"/api/projects/{pid}/import", tasks)
        return pid

    def tasks(self, pid: int) -> list[dict[str, Any]]:
        out = self.api("GET", f"/api/tasks?project={pid}&page_size=1000&fields=all")
        return list(out["tasks"] if isinstance(out, dict) else out)

    def annotate(self, task_id: int, answers: dict[str, str]) -> dict[str, Any]:
        """Submit one annotation: a choice per control name (``label``, ``tag``), or text
        for ``note``."""
        result = []
        for name, value in answers.items():
            if name == "note":
                result.append({"from_name": name, "to_name": "text", "type": "textarea",
                               "value": {"text": [value]}})
            else:
                result.append({"from_name": name, "to_name": "text", "type": "choices",
                               "value": {"choices": [value]}})
        return dict(self.api("POST", f"/api/tasks/{task_id}/annotations",
                             {"result": result, "lead_time": 4.2}))

    def update(self, annotation_id: int, answers: dict[str, str]) -> dict[str, Any]:
        result = [{"from_name": n, "to_name": "text", "type": "choices",
                   "value": {"choices": [v]}} for n, v in answers.items()]
        return dict(self.api("PATCH", f"/api/annotations/{annotation_id}", {"result": result}))

    def export(self, pid: int, kind: str = "JSON") -> Any:
        """The project's export (``JSON`` or ``JSON_MIN``), as Label Studio writes it."""
        return json.loads(self.api("GET", f"/api/projects/{pid}/export?exportType={kind}",
                                   raw=True))
