"""The explorer as a person uses it: ``countercase explore`` served on the small real project,
driven in a real headless Chromium (Debian's package, installed by ``.ci/run``) with Playwright.
A screenshot of each step is kept under ``artifacts/explorer/``."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from countercase.perturb.tree import TreeModel

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "explorer"
# the flags a sandboxed, offline root session needs (../shared/ENVIRONMENT.md)
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _browser_or_skip():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not Path(CHROMIUM).exists():
        why = "Chromium (Debian's chromium) and playwright are needed for the browser tests"
        if os.environ.get("CI"):
            pytest.fail(why + ": .ci/run installs them")
        pytest.skip(why)
    return sync_playwright


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(project, tmp_path_factory):
    port = _free_port()
    log = tmp_path_factory.mktemp("explore") / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "countercase.cli", "explore", "--root", str(project),
             "--port", str(port)], stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):  # the JVM, the indexes and the chunks open before it listens
        if process.poll() is not None:
            pytest.fail(f"countercase explore exited {process.returncode}: {log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(url, timeout=2)
            break
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    else:
        process.kill()
        pytest.fail(f"countercase explore did not answer: {log.read_text()[-2000:]}")
    yield url, log
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture(scope="module")
def page(server):
    sync_playwright = _browser_or_skip()
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
        found = context.new_page()
        found.set_default_timeout(60_000)
        found.goto(server[0])
        yield found
        browser.close()


def shot(page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def nodes(page) -> list[str]:
    return page.locator("g.cc-node").evaluate_all("gs => gs.map(g => g.dataset.node)")


def message(page) -> str:
    return page.locator(".cc-message").first.inner_text()


def test_load_build_open_edit_and_export(page, server, tmp_path):
    shot(page, "01-open")
    page.get_by_placeholder("AILA_Q30 or C12").fill("AILA_Q30")
    page.get_by_role("button", name="Load case").click()
    page.get_by_text("loaded AILA_Q30").wait_for()
    assert page.locator("tr.cc-review").count() > 0  # low-confidence values flagged
    shot(page, "02-loaded")

    page.get_by_role("button", name="Build tree").click()
    page.get_by_text("built the tree of AILA_Q30").wait_for()
    page.locator("g.cc-node[data-node='n0.1']").wait_for()
    built = nodes(page)
    assert built[0] == "n0" and len(built) > 1
    assert page.locator("g.cc-bar").count() >= 1  # sensitivity per fact type
    shot(page, "03-tree")

    page.locator("g.cc-node[data-node='n0.1'] circle").click()
    page.get_by_text("n0.1 against its parent n0").wait_for()
    rows = page.locator(".cc-diff tr[data-doc]")
    statuses = rows.evaluate_all("rs => rs.map(r => r.className)")
    assert statuses and set(statuses) <= {"cc-stable", "cc-dropped", "cc-new"}
    for row in page.locator(".cc-diff tr.cc-dropped").all():
        assert "not retrieved after the fact change" in row.inner_text()
    for row in page.locator(".cc-diff tr.cc-new").all():
        assert "newly applicable" in row.inner_text()
    assert page.locator(".cc-result").count() > 0
    page.locator(".cc-result details summary").first.click()  # the explanation opens
    # waited for, not counted at once: on a loaded machine the click can land before the
    # results are drawn again (seen once in the whole suite on 2 busy cores)
    page.locator(".cc-result details[open] li").first.wait_for()
    shot(page, "04-node-diff")

    outcome = page.get_by_label("Outcome")
    current = outcome.input_value()
    outcome.select_option("Allowed" if current != "Allowed" else "Dismissed")
    page.get_by_label("Describe the edit (optional)").fill("the outcome flipped by hand")
    page.get_by_role("button", name="Add the edit as a child node").click()
    page.get_by_text("added n0.1.1").wait_for()
    page.get_by_text("n0.1.1 against its parent n0.1").wait_for()
    assert "n0.1.1" in nodes(page)
    shot(page, "05-edited")

    with page.expect_download() as got:
        page.get_by_role("button", name="Download tree JSON").click()
    path = tmp_path / "tree.json"
    got.value.save_as(path)
    tree = TreeModel.model_validate_json(path.read_text(encoding="utf-8"))
    assert [n.node_id for n in tree.nodes] == nodes(page)
    with page.expect_download() as got:
        page.get_by_role("button", name="Download Markdown report").click()
    path = tmp_path / "tree.md"
    got.value.save_as(path)
    report = path.read_text(encoding="utf-8")
    assert "## n0.1.1" in report and "the outcome flipped by hand" in report


def test_bad_input_is_a_message_and_the_tree_stays(page, server):
    before = nodes(page)
    assert before, "runs after the first test has built a tree"
    page.get_by_label("Ages (years)").fill("seventeen")
    page.get_by_role("button", name="Add the edit as a child node").click()
    page.get_by_text("ages: 'seventeen' is not a number").wait_for()
    assert nodes(page) == before
    page.get_by_placeholder("AILA_Q30 or C12").fill("AILA_Q99")
    page.get_by_role("button", name="Load case").click()
    page.get_by_text("no AILA query 'AILA_Q99'").wait_for()
    assert nodes(page) == before
    page.get_by_label("Case from").select_option(label="pasted text")
    page.get_by_role("button", name="Load case").click()
    page.get_by_text("empty text").wait_for()
    assert nodes(page) == before
    shot(page, "06-bad-input")
    assert "Traceback" not in page.content() and "Traceback" not in server[1].read_text()


def test_a_result_opens_its_source_and_an_unknown_one_is_named(server):
    url = server[0]
    text = urllib.request.urlopen(f"{url}/source/C1").read().decode()
    assert len(text) > 1000
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(f"{url}/source/C9999")
    body = error.value.read().decode()
    assert error.value.code == 404 and "C9999" in body and "Traceback" not in body
    assert json.loads(json.dumps(body))  # a plain line
