"""What the mpp rail adds over POST /v1/run for the same endpoint.

Starts, on a throwaway PostgreSQL database and Redis database 6:
  - the sandbox provider on its own (``gunicorn sandbox.wsgi``), whose /sandbox/_ping stands in
    for a provider;
  - the local Tempo chain (``python -m sandbox.tempo``) as MPP_RPC_URL;
  - the gateway as ``make serve`` runs it, with the rails on.
Then measures, at concurrency 1 (MPP_OVERHEAD_CALLS calls each, default 200), p50/p99 of:
  1. POST /v1/run (a gateway key, prepaid credits);
  2. the mpp rail's unpaid 402 (the offers and an HMAC-bound challenge, from settings alone);
  3. a paid mpp request (challenge checks, the RPC's chain id, the SDK's validation, the claim,
     the provider, then the SDK's settlement: the replay-store insert, the broadcast and the
     receipt's check).
Credentials are signed by the official pympp client before the clock starts (signing is the
payer's cost; a signed transfer is valid for a minute, so they are signed in batches).
Prints figures; asserts nothing.

Environment: BENCH_DATABASE_ADMIN_URL, BENCH_REDIS_URL (default redis://127.0.0.1:6379/6),
MPP_OVERHEAD_CALLS.
"""

import json
import os
import subprocess
import sys

import harness
import requests
from rail_overhead import PAY_TO, SETUP, UPSTREAM_PORT, row, timed
from run_overhead import environment, manage, redis_flush

DB_NAME = "gw_bench_mpp"
# The provider is rail_overhead's (SETUP names its port): the two never run at once.
GATEWAY_PORT, CHAIN_PORT = 9121, 9123
CALLS = int(os.environ.get("MPP_OVERHEAD_CALLS", "200"))
BATCH = 50  # credentials signed at once, well inside a signed transfer's minute


def mpp_environment(database_url: str) -> dict:
    base = f"http://127.0.0.1:{GATEWAY_PORT}"
    return {
        **environment(database_url),
        "GATEWAY_BASE_URL": base,
        "MPP_URL": f"{base}/rails/mpp",
        "RAIL_PAY_TO": PAY_TO,
        "MPP_RPC_URL": f"http://127.0.0.1:{CHAIN_PORT}",
        "RAIL_RATE_LIMIT_PER_MINUTE": "10000000",
    }


def credentials(session: requests.Session, url: str, chain_url: str, count: int) -> list[dict]:
    """``count`` Authorization headers, each paying a challenge of its own."""
    sys.path.insert(0, str(harness.ROOT))
    from tests.rails.mpp_payers import MppPayer

    payer = MppPayer(chain_url)
    return [
        {"Authorization": payer.authorization(session.get(url, timeout=30))} for _ in range(count)
    ]


def main():
    harness.argument_parser(__doc__).parse_args()
    with harness.throwaway_database(DB_NAME) as database_url:
        measure(database_url)


def measure(database_url: str) -> None:
    env = mpp_environment(database_url)
    redis_flush()
    manage("migrate", "--noinput", "-v", "0", env=env)
    secret = manage("shell", "-c", SETUP, env=env, capture=True).stdout.strip().splitlines()[-1]
    sandbox_env = {name: value for name, value in env.items() if name != "DJANGO_SETTINGS_MODULE"}
    chain = subprocess.Popen(
        [sys.executable, "-m", "sandbox.tempo", "--port", str(CHAIN_PORT), "--quiet"],
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
        chain.terminate()
        chain.wait()
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
    mpp_url = f"{env['MPP_URL']}/bench/_ping"
    run_body = json.dumps({"api": "bench", "path": "/_ping"})
    run_headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}

    def run(_):
        return session.post(f"{base}/v1/run", data=run_body, headers=run_headers).status_code

    for _ in range(50):  # warm every worker, connection and event loop
        run(0)
        session.get(mpp_url)
    for headers in credentials(session, mpp_url, env["MPP_RPC_URL"], 20):
        session.get(mpp_url, headers=headers)

    through_run, run_failed = timed(run, CALLS)
    unpaid, _ = timed(lambda _: 200 if session.get(mpp_url).status_code == 402 else 0, CALLS)
    paid, paid_failed = [], 0
    for start in range(0, CALLS, BATCH):
        batch = credentials(session, mpp_url, env["MPP_RPC_URL"], min(BATCH, CALLS - start))
        elapsed, failed = timed(
            lambda i, batch=batch: session.get(mpp_url, headers=batch[i]).status_code, len(batch)
        )
        paid += elapsed
        paid_failed += failed

    print(f"\nConcurrency 1, {CALLS} calls each (ms)          p50      p99")
    row("POST /v1/run (prepaid credits)", through_run, run_failed)
    row("mpp rail, unpaid: the 402", unpaid)
    row("mpp rail, paid (validate + settle)", paid, paid_failed)
    print(
        "  mpp over /v1/run (p50)             "
        f"{harness.percentile(paid, 50) - harness.percentile(through_run, 50):8.2f}"
    )


if __name__ == "__main__":
    main()
