"""notebooks/review.ipynb in a real JupyterLab in a real browser: a lab server on 127.0.0.1,
headless Chromium driven by selenium opens the notebook, runs every cell from the Run menu,
picks an n-gram in the review widget and tags a sentence with its menu; the decision must
land in the run's review/decisions.jsonl. Skipped, with the reason, where JupyterLab,
selenium, chromium or chromedriver is missing (`make test` installs them)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
from tests.synthcheck import runbuilder  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


def _missing() -> str | None:
    import importlib.util

    for module, package in (("jupyterlab", "jupyterlab"), ("selenium", "selenium"),
                            ("ipywidgets", "ipywidgets")):
        if importlib.util.find_spec(module) is None:
            return f"needs {package} (pip install -e '.[browser]'; `make test` does)"
    if CHROMIUM is None or DRIVER is None:
        return "needs Debian's chromium and chromium-driver (apt-get install chromium " \
               "chromium-driver; `make test` does)"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def lab(tmp_path: Path):
    """A JupyterLab server on 127.0.0.1 serving a folder with notebooks/review.ipynb and a
    small run (SYNTHCHECK_RUN points the kernel at it); yields (url, run)."""
    root = tmp_path / "lab"
    (root / "notebooks").mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / "review.ipynb", root / "notebooks" / "review.ipynb")
    run = runbuilder.build_run(root / "runs" / "demo", verify=False)
    port, token = _free_port(), "synthcheck-test"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNTHCHECK_")}
    env.update(SYNTHCHECK_RUN=str(run), USER="browser-test", MPLBACKEND="Agg",
               JUPYTER_CONFIG_DIR=str(tmp_path / "jcfg"), JUPYTER_RUNTIME_DIR=str(tmp_path / "rt"),
               IPYTHONDIR=str(tmp_path / "ipy"),
               PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]
                                          ).rstrip(os.pathsep))
    log = (tmp_path / "lab.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail("jupyter lab exited: " + (tmp_path / "lab.log").read_text())
                time.sleep(0.5)
        yield f"{url}/lab/tree/notebooks/review.ipynb?token={token}", run
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def test_the_review_widget_tags_a_sentence_in_jupyterlab(lab) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select, WebDriverWait

    url, run = lab
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1800"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    try:
        wait = WebDriverWait(driver, 60)
        driver.get(url)
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, ".jp-Notebook .jp-Cell")))
        # Wait for the kernel (accepting the kernel dialog JupyterLab may show when the
        # notebook's kernelspec is not this environment's), then Run > Run All Cells.
        def kernel_ready(d):
            for button in d.find_elements(By.CSS_SELECTOR, ".jp-Dialog button.jp-mod-accept"):
                button.click()
            return ("Idle" in d.find_element(By.ID, "jp-main-statusbar").text
                    and not d.find_elements(By.CSS_SELECTOR, ".jp-Dialog"))
        wait.until(kernel_ready)
        run_menu = next(m for m in driver.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-item")
                        if m.text.strip() == "Run")
        run_menu.click()
        wait.until(lambda d: next(
            (m for m in d.find_elements(By.CSS_SELECTOR, "li.lm-Menu-item")
             if m.text.strip().startswith("Run All Cells")), None)).click()
        # The widget: its n-gram menu (an ipywidgets Dropdown is a <select>).
        ngram = wait.until(lambda d: next(
            (s for s in d.find_elements(By.CSS_SELECTOR, ".widget-dropdown select")
             if any("hard)" in o.text for o in s.find_elements(By.TAG_NAME, "option"))),
            None))
        Select(ngram).select_by_index(1)  # the top n-gram
        # Its sentences appear, each with a tag menu "(untagged)"; tag the first.
        menu = wait.until(lambda d: next(
            (s for s in d.find_elements(By.CSS_SELECTOR, ".widget-dropdown select")
             if any(o.text == "(untagged)" for o in s.find_elements(By.TAG_NAME, "option"))),
            None))
        Select(menu).select_by_visible_text("task-model error")
        decisions = run / "review" / "decisions.jsonl"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not decisions.is_file():
            time.sleep(0.5)
        records = [json.loads(x) for x in decisions.read_text().splitlines()]
        assert [(r["tag"], r["annotator"]) for r in records] == [
            ("task-model error", "browser-test")]
        wait.until(lambda d: f"saved: {records[0]['id']} = task-model error" in d.page_source)
    except Exception:
        out = Path(os.environ.get("SYNTHCHECK_BROWSER_DEBUG", "")) if os.environ.get(
            "SYNTHCHECK_BROWSER_DEBUG") else None
        if out is not None:  # what the browser showed, to debug a failure
            out.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(out / "lab.png"))
            (out / "lab.html").write_text(driver.page_source, encoding="utf-8")
        raise
    finally:
        driver.quit()
