"""The JavaScript x402 payer (`js/pay.mjs`, the official `@x402/fetch` wrapper) for the tests.

`install_js_payer()` runs `npm ci` in `tests/rails/js/` once per test run; a conftest fixture
calls it. A failing install raises, so the test that needs the payer fails rather than skips.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

JS_DIR = Path(__file__).resolve().parent / "js"
NPM_TIMEOUT_SECONDS = 600

_install_lock = threading.Lock()
_installed = False


class JsPayerError(RuntimeError):
    pass


def install_js_payer() -> Path:
    """Install the payer's locked node packages (once per process); returns its directory."""
    global _installed
    with _install_lock:
        if not _installed:
            result = subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--prefer-offline"],
                cwd=JS_DIR,
                capture_output=True,
                text=True,
                timeout=NPM_TIMEOUT_SECONDS,
            )
            if result.returncode != 0:
                raise JsPayerError(
                    f"npm ci in {JS_DIR} failed ({result.returncode}):\n"
                    f"{result.stdout}\n{result.stderr}"
                )
            _installed = True
    return JS_DIR


def run_js_payer(
    url: str,
    method: str = "GET",
    body: Any = None,
    *,
    private_key: str | None = None,
    timeout: float = 60,
) -> dict[str, Any]:
    """Call `url` through the fetch wrapper, paying its 402; returns the printed
    `{status, body, paymentResponse, payer}`."""
    install_js_payer()
    args = ["node", str(JS_DIR / "pay.mjs"), url, method]
    if body is not None:
        args.append(json.dumps(body))
    env = dict(os.environ)
    if private_key:
        env["PRIVATE_KEY"] = private_key
    result = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)
    if result.returncode != 0:
        raise JsPayerError(f"pay.mjs failed ({result.returncode}): {result.stderr.strip()}")
    return json.loads(result.stdout.strip().splitlines()[-1])
