"""What a pay-per-call rail adds over POST /v1/run for the same endpoint.

Starts, on a throwaway PostgreSQL database and Redis database 6:
  - the sandbox provider on its own (``gunicorn sandbox.wsgi``), whose /sandbox/_ping stands in
    for a provider;
  - the local facilitator double (``python -m sandbox.facilitator``: the x402 SDK's facilitator
    over an in-memory chain), as the x402 and the np facilitator;
  - the gateway as ``make serve`` runs it, with the rails on.
Then measures, at concurrency 1 (RAIL_OVERHEAD_CALLS calls each, default 300), p50/p99 of:
  1. POST /v1/run (a gateway key, prepaid credits);
  2. the x402 rail's unpaid 402 (the offers and challenge, built from settings);
  3. a paid x402 request (verify, claim, provider, settle: two facilitator round trips);
  4. a paid np request (verify, claim, provider; settlement waits for its batch);
and then how fast ``settle_np_batches`` settles the np payments, and check_ledger. Payments are
signed by the official x402 client before the clock starts (signing is the payer's cost).
Prints figures; asserts nothing.

Environment: BENCH_DATABASE_ADMIN_URL, BENCH_REDIS_URL (default redis://127.0.0.1:6379/6),
RAIL_OVERHEAD_CALLS.
"""

import json
import os
import subprocess
import sys
import time

import harness
import requests
from run_overhead import environment, manage, redis_flush, setup_code

DB_NAME = "gw_bench_rails"
GATEWAY_PORT, UPSTREAM_PORT, FACILITATOR_PORT = 9111, 9112, 9113
CALLS = int(os.environ.get("RAIL_OVERHEAD_CALLS", "300"))
PRICE_MICROS = 1_000
PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
NETWORKS = ("eip155:8453", "eip155:137")

SETUP = setup_code(UPSTREAM_PORT)


def rails_environment(database_url: str) -> dict:
    facilitator = f"http://127.0.0.1:{FACILITATOR_PORT}"
    base = f"http://127.0.0.1:{GATEWAY_PORT}"
    return {
        **environment(database_url),
        "GATEWAY_BASE_URL": base,
        "X402_URL": f"{base}/rails/x402",
        "NP_URL": f"{base}/rails/np",
        "MPP_URL": f"{base}/rails/mpp",
        "RAIL_PAY_TO": PAY_TO,
        "X402_NETWORKS": ",".join(NETWORKS),
        "NP_NETWORK": NETWORKS[0],
        "X402_FACILITATOR_URL": facilitator,
        "NP_FACILITATOR_URL": facilitator,
        "RAIL_RATE_LIMIT_PER_MINUTE": "10000000",
    }


def signed_payments(session: requests.Session, url: str, count: int) -> list[dict]:
    """``count`` payments for ``url`` signed by fresh wallets with the official client."""
    from eth_account import Account
    from x402 import x402ClientSync
    from x402.http import x402HTTPClientSync
    from x402.mechanisms.evm.exact import register_exact_evm_client
    from x402.mechanisms.evm.signers import EthAccountSigner

    challenge = session.get(url, timeout=30)
    client = x402ClientSync()
    register_exact_evm_client(client, EthAccountSigner(Account.create()))
    http = x402HTTPClientSync(client)
    return [
        http.handle_402_response(dict(challenge.headers), challenge.content, url)[0]
        for _ in range(count)
    ]


def timed(call, count: int) -> tuple[list[float], int]:
    elapsed, failures = [], 0
    for index in range(count):
        started = time.perf_counter()
        status = call(index)
        elapsed.append((time.perf_counter() - started) * 1000)
        if status != 200:
            failures += 1
    return elapsed, failures


def row(label: str, values: list[float], failures: int = 0) -> None:
    print(
        f"  {label:34} {harness.percentile(values, 50):8.2f} {harness.percentile(values, 99):8.2f}"
        + (f"   ({failures} failed)" if failures else "")
    )


def main():
    harness.argument_parser(__doc__).parse_args()
    with harness.throwaway_database(DB_NAME) as database_url:
        measure(database_url)


def measure(database_url: str) -> None:
    env = rails_environment(database_url)
    redis_flush()
    manage("migrate", "--noinput", "-v", "0", env=env)
    secret = manage("shell", "-c", SETUP, env=env, capture=True).stdout.strip().splitlines()[-1]
    sandbox_env = {name: value for name, value in env.items() if name != "DJANGO_SETTINGS_MODULE"}
    facilitator = subprocess.Popen(
        [sys.executable, "-m", "sandbox.facilitator", "--port", str(FACILITATOR_PORT), "--quiet"]
        + [argument for network in NETWORKS for argument in ("--network", network)],
        cwd=harness.ROOT,
        stdout=subprocess.DEVNULL,
    )
    try:
        with (
            harness.gunicorn_serving(
                UPSTREAM_PORT,
                sandbox_env,
                workers=1,
                app="sandbox.wsgi",
                ready_path="/sandbox/_ping",
            ),
            harness.gunicorn_serving(GATEWAY_PORT, env, workers=2),
        ):
            run_figures(env, secret)
    finally:
        facilitator.terminate()
        facilitator.wait()
    check = subprocess.run(
        [sys.executable, "manage.py", "check_ledger"],
        cwd=harness.ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    print(f"\ncheck_ledger: {(check.stdout + check.stderr).strip()}")


def run_figures(env: dict, secret: str) -> None:
    base = env["GATEWAY_BASE_URL"]
    session = requests.Session()
    x402_url, np_url = f"{env['X402_URL']}/bench/_ping", f"{env['NP_URL']}/bench/_ping"
    run_body = json.dumps({"api": "bench", "path": "/_ping"})
    run_headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}

    def run(_):
        return session.post(f"{base}/v1/run", data=run_body, headers=run_headers).status_code

    for _ in range(50):  # warm every worker and connection
        run(0)
        session.get(x402_url)
    x402_payments = signed_payments(session, x402_url, CALLS + 20)
    np_payments = signed_payments(session, np_url, CALLS + 20)
    for index in range(20):
        session.get(x402_url, headers=x402_payments[CALLS + index])
        session.get(np_url, headers=np_payments[CALLS + index])

    through_run, run_failed = timed(run, CALLS)
    unpaid, _ = timed(lambda _: 200 if session.get(x402_url).status_code == 402 else 0, CALLS)
    paid_x402, x402_failed = timed(
        lambda i: session.get(x402_url, headers=x402_payments[i]).status_code, CALLS
    )
    paid_np, np_failed = timed(
        lambda i: session.get(np_url, headers=np_payments[i]).status_code, CALLS
    )

    print(f"\nConcurrency 1, {CALLS} calls each (ms)          p50      p99")
    row("POST /v1/run (prepaid credits)", through_run, run_failed)
    row("x402 rail, unpaid: the 402", unpaid)
    row("x402 rail, paid (verify + settle)", paid_x402, x402_failed)
    row("np rail, paid (verify; batched)", paid_np, np_failed)
    print(
        "  x402 over /v1/run (p50)            "
        f"{harness.percentile(paid_x402, 50) - harness.percentile(through_run, 50):8.2f}"
    )
    print(
        "  np over /v1/run (p50)              "
        f"{harness.percentile(paid_np, 50) - harness.percentile(through_run, 50):8.2f}"
    )

    started = time.perf_counter()
    settled = manage("settle_np_batches", env=env, capture=True).stdout.strip()
    seconds = time.perf_counter() - started
    print(f"\nsettle_np_batches: {settled} in {seconds:.2f} s (a process start included)")


if __name__ == "__main__":
    main()
