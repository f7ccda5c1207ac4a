"""Browser tests: Debian's Chromium driven by Playwright's sync API against pytest-django's live
server, with the seed catalog served by the built-in sandbox (as tests/test_end_to_end.py does).

No browser is ever downloaded (`playwright install` never runs): Playwright launches
/usr/bin/chromium, which `make test` installs with apt-get when it is missing. A machine without it
fails these tests with a message that says so, rather than skipping them.

When a test fails, each browser it opened is photographed as it was, then on each main page, in
test-output/<test name>/ (git-ignored).
"""

import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command

from catalog import embeddings
from catalog.search import search_index_reset

CHROMIUM = Path("/usr/bin/chromium")
# Headless on a machine without a GPU, a user namespace sandbox or a network: background
# networking and component updates would call Google's servers, whose connections the closed
# network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
TIMEOUT_MS = 10_000
MAIN_PAGES = {
    "overview": "/",
    "keys": "/keys",
    "balance": "/balance",
    "usage": "/usage",
    "transactions": "/transactions",
    "catalog": "/catalog",
}

_reports = pytest.StashKey[dict]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test, so fixtures can tell whether it failed."""
    report = yield
    item.stash.setdefault(_reports, {})[report.when] = report
    return report


@pytest.fixture(scope="package")
def chromium():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"The browser tests need Debian's Chromium at {CHROMIUM}: run "
            "`make browser` (`make test` does when it is missing). Playwright's own browser "
            "downloads are not used.",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps its asyncio loop set as this thread's running loop, so Django
    # takes every ORM call the tests make here (fixtures, load_catalog, assertions) for one made
    # from async code and refuses it (SynchronousOnlyOperation). Nothing in these tests is async
    # and the live server answers from its own threads: allow it, for this package only.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
            )
            yield browser
            browser.close()


# The model's vectors of every text embedded so far in this test session. Each test starts from
# an empty database and loads the seed catalog again; computing the same 400 vectors again would
# cost some 12 s a test.
_vectors: dict[str, np.ndarray] = {}


@contextmanager
def _embeddings_remembered() -> Iterator[None]:
    compute = embeddings.texts_embed

    def texts_embed(texts: list[str], **options) -> np.ndarray:
        missing = [text for text in dict.fromkeys(texts) if text not in _vectors]
        if missing:
            _vectors.update(zip(missing, compute(missing, **options), strict=True))
        if not texts:
            return compute(texts)
        return np.stack([_vectors[text] for text in texts])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(embeddings, "texts_embed", texts_embed)
        yield


@pytest.fixture
def gateway(chromium, live_server, settings) -> Iterator[str]:
    """The live gateway with the seed catalog loaded; live keys are charged and served by the
    sandbox at the live server's own /sandbox."""
    settings.GATEWAY_BASE_URL = live_server.url
    settings.SANDBOX_BASE_URL = f"{live_server.url}/sandbox"
    settings.LIVE_CALLS_USE_SANDBOX = True
    with _embeddings_remembered():
        call_command("load_catalog", "--strict", verbosity=0)
    # The database is new but its catalog version numbers are not: forget the last test's index.
    search_index_reset()
    yield live_server.url
    search_index_reset()


@pytest.fixture
def open_browser(request, chromium, gateway) -> Iterator[Callable]:
    """open_browser(name, javascript=True) -> a page in a browser of its own (cookies, clipboard)
    on the gateway."""
    output = request.config.rootpath / "test-output" / re.sub(r"[^\w.-]+", "_", request.node.name)
    shutil.rmtree(output, ignore_errors=True)
    opened = []

    def open_browser(name: str, javascript: bool = True):
        context = chromium.new_context(
            base_url=gateway,
            viewport={"width": 1280, "height": 900},
            java_script_enabled=javascript,
        )
        context.set_default_timeout(TIMEOUT_MS)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=gateway)
        page = context.new_page()
        opened.append((name, context, page))
        return page

    yield open_browser
    report = request.node.stash.get(_reports, {}).get("call")
    if report is not None and report.failed:
        for name, _, page in opened:
            _photograph(page, name, output)
    for _, context, _ in opened:
        context.close()


def _photograph(page, name: str, output: Path) -> None:
    """The page as the failure left it, then each main page, as full-page PNGs."""
    output.mkdir(parents=True, exist_ok=True)
    shots = [(f"{name}-at-failure", None), *((f"{name}-{p}", url) for p, url in MAIN_PAGES.items())]
    for shot, url in shots:
        try:
            if url is not None:
                page.goto(url, timeout=5_000)
            page.screenshot(path=output / f"{shot}.png", full_page=True, timeout=5_000)
        except Exception as error:  # a failure must not hide the test's own
            (output / f"{shot}.txt").write_text(f"No screenshot: {error}\n")
