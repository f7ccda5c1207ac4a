"""Isolation from slow providers: 200 calls in flight to a provider that answers in 5 s, while
GET /v1/whoami from another key and charged runs to a fast provider go on.

Starts, on a throwaway PostgreSQL database and Redis database 8:
  - the sandbox provider on its own (``gunicorn sandbox.wsgi``, enough threads for every call),
    which answers the slow calls after ``sandbox_delay_ms`` (SLOW_DELAY_MS, default 5000);
  - the gateway as ``make serve`` runs it (gunicorn gthread, --preload, the settings' defaults),
    once per configuration in SLOW_CONFIGS (``workers x threads``, default "2x8 2x256").
Then, for each configuration:
  1. baseline: FAST_CONCURRENCY (default 8) clients send charged runs to a fast endpoint for
     SLOW_SECONDS (default 20) while another process asks GET /v1/whoami every 20 ms;
  2. the same, with SLOW_CALLS (default 200) calls kept in flight to the slow provider, spread
     over SLOW_KEYS keys (default 4, so that no key passes CALLS_IN_FLIGHT_PER_KEY), their
     callers arriving over the first SLOW_DELAY_MS: slow calls answered and refused, fast runs
     a second against the baseline, whoami p50/p99;
  3. one greedy key asking for SLOW_CALLS slow calls at once: how many are served, how many
     refused at once (429), and how fast the refusals come;
  4. check_ledger, and that the charges equal the charged answers times their price.
Prints figures; asserts nothing.

Environment: BENCH_DATABASE_ADMIN_URL, BENCH_REDIS_URL (default redis://127.0.0.1:6379/8),
SLOW_CONFIGS, SLOW_CALLS, SLOW_KEYS, SLOW_DELAY_MS, SLOW_SECONDS, FAST_CONCURRENCY, and any
gateway setting (DATABASE_POOL, CALLS_IN_FLIGHT_PER_KEY, ...), passed to the gateway.
"""

import asyncio
import json
import multiprocessing
import os
import time
from collections import Counter

import harness
from stream_concurrency import whoami_probe

DB_NAME = "gw_bench_slow"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/8")
GATEWAY_PORT, UPSTREAM_PORT = 9121, 9122
CONFIGS = os.environ.get("SLOW_CONFIGS", "2x8 2x256").split()
SLOW_CALLS = int(os.environ.get("SLOW_CALLS", "200"))
SLOW_KEYS = int(os.environ.get("SLOW_KEYS", "4"))
SLOW_DELAY_MS = int(os.environ.get("SLOW_DELAY_MS", "5000"))
SECONDS = float(os.environ.get("SLOW_SECONDS", "20"))
FAST_CONCURRENCY = int(os.environ.get("FAST_CONCURRENCY", "8"))
SPELLCHECK = {"api": "brave-search", "path": "/res/v1/spellcheck/search"}
FAST = {**SPELLCHECK, "query": {"q": "helo wrld"}}
SLOW = {**SPELLCHECK, "query": {"q": "slow wrld", "sandbox_delay_ms": SLOW_DELAY_MS}}

SETUP = f"""
from credits.services.accounts import account_for_user
from credits.services.ledger import credits_grant
from gateway.services import api_key_create, user_get_or_create

for number in range({SLOW_KEYS + 3}):
    user, _ = user_get_or_create(email=f"slow{{number}}@example.com")
    credits_grant(account=account_for_user(user=user), amount_micros=10_000_000_000, reason="bench")
    print(api_key_create(mode="live", user=user, name="bench")[1])
"""

CHARGES = """
from django.db.models import Sum
from credits.models import LedgerEntry
charges = LedgerEntry.objects.filter(type="api_call")
print(charges.count(), -(charges.aggregate(total=Sum("amount_micros"))["total"] or 0))
"""


def run_request(payload: dict, key: str) -> bytes:
    content = json.dumps(payload).encode()
    head = (
        "POST /v1/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {key}\r\nContent-Length: {len(content)}\r\n\r\n"
    )
    return head.encode() + content


async def exchange(reader, writer, request: bytes) -> tuple[int, dict]:
    """One request on a keep-alive connection: (status, the JSON body)."""
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = next(
        int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length")
    )
    body = await reader.readexactly(length)
    return status, json.loads(body) if body else {}


async def caller(
    request: bytes, deadline: float, tally: Counter, charges: list, start_after: float = 0
) -> None:
    """Send ``request`` again and again until ``deadline``, on one connection, from
    ``start_after`` seconds on."""
    await asyncio.sleep(start_after)
    reader, writer = await asyncio.open_connection("127.0.0.1", GATEWAY_PORT)
    try:
        while time.monotonic() < deadline:
            try:
                status, body = await exchange(reader, writer, request)
            except (OSError, asyncio.IncompleteReadError):
                tally["broken"] += 1
                writer.close()
                reader, writer = await asyncio.open_connection("127.0.0.1", GATEWAY_PORT)
                continue
            tally[status] += 1
            if status == 200 and body.get("billing", {}).get("charged"):
                charges.append(round(body["priceCents"] * 10_000))
            if status in (429, 503):
                await asyncio.sleep(1)  # as Retry-After says
    finally:
        writer.close()


async def load(fast_keys: list[str], slow_keys: list[str], seconds: float, charges: list):
    """(fast answers, slow answers, seconds until the last fast caller stopped): the fast rate is
    over the fast callers' own time, not over the slow calls still ending after it."""
    started = time.monotonic()
    deadline = started + seconds
    fast, slow = Counter(), Counter()
    fast_seconds = 0.0

    async def fast_callers() -> None:
        nonlocal fast_seconds
        await asyncio.gather(
            *(
                caller(
                    run_request(FAST, fast_keys[number % len(fast_keys)]), deadline, fast, charges
                )
                for number in range(FAST_CONCURRENCY)
            )
        )
        fast_seconds = time.monotonic() - started

    tasks = [fast_callers()]
    # The slow callers arrive over one provider delay: started all at once, every slow call
    # would begin and be charged in the same instant, round after round.
    tasks += [
        caller(
            run_request(SLOW, slow_keys[number % len(slow_keys)]),
            deadline,
            slow,
            charges,
            start_after=SLOW_DELAY_MS / 1000 * number / SLOW_CALLS,
        )
        for number in range(SLOW_CALLS if slow_keys else 0)
    ]
    await asyncio.gather(*tasks)
    return fast, slow, fast_seconds


def phase(name: str, probe_key: str, fast_keys, slow_keys, charges) -> float:
    results = multiprocessing.Queue()
    probe = multiprocessing.Process(
        target=whoami_probe, args=(GATEWAY_PORT, probe_key, SECONDS, results)
    )
    probe.start()
    fast, slow, fast_seconds = asyncio.run(load(fast_keys, slow_keys, SECONDS, charges))
    latencies, failures = results.get()
    probe.join()
    rate = fast[200] / fast_seconds
    print(f"  {name}:")
    print(f"    fast charged runs: {rate:.0f}/s ({dict(fast)})")
    if slow_keys:
        print(f"    slow calls ({SLOW_CALLS} in flight over {len(slow_keys)} keys): {dict(slow)}")
    print(
        f"    GET /v1/whoami: {len(latencies)} calls, {failures} failed, "
        f"p50 {harness.percentile(latencies, 50):.1f} ms, "
        f"p99 {harness.percentile(latencies, 99):.1f} ms"
    )
    return rate


async def greedy(key: str, charges: list) -> tuple[Counter, list[float]]:
    """SLOW_CALLS slow calls of one key at once, each on its own connection."""
    tally, refused_ms = Counter(), []

    async def one() -> None:
        started = time.perf_counter()
        reader, writer = await asyncio.open_connection("127.0.0.1", GATEWAY_PORT)
        try:
            status, body = await exchange(reader, writer, run_request(SLOW, key))
            if status == 200 and body.get("billing", {}).get("charged"):
                charges.append(round(body["priceCents"] * 10_000))
        except (OSError, asyncio.IncompleteReadError):
            status = "broken"
        finally:
            writer.close()
        tally[status] += 1
        if status == 429:
            refused_ms.append((time.perf_counter() - started) * 1000)

    await asyncio.gather(*(one() for _ in range(SLOW_CALLS)))
    return tally, refused_ms


def measure_config(config: str, env: dict, keys: list[str], charges: list[int]) -> None:
    """``charges`` collects the price of every charged answer, over every configuration."""
    workers, threads = (int(part) for part in config.split("x"))
    probe_key, greedy_key, fast_key, slow_keys = keys[0], keys[1], keys[2], keys[3:]
    with harness.gunicorn_serving(GATEWAY_PORT, env, workers=workers, threads=threads):
        print(f"\n== gateway: {workers} gthread workers x {threads} threads")
        baseline = phase("baseline, no slow calls", probe_key, [fast_key], [], charges)
        loaded = phase(
            f"{SLOW_CALLS} slow calls in flight", probe_key, [fast_key], slow_keys, charges
        )
        print(f"    fast runs kept {loaded / baseline:.0%} of their baseline throughput")
        tally, refused_ms = asyncio.run(greedy(greedy_key, charges))
        refusals = (
            f"refusals answered in p50 {harness.percentile(refused_ms, 50):.0f} ms, "
            f"p99 {harness.percentile(refused_ms, 99):.0f} ms"
            if refused_ms
            else "none refused"
        )
        print(f"  one key asking for {SLOW_CALLS} slow calls at once: {dict(tally)}; {refusals}")
    ledger = harness.manage("check_ledger", env=env, capture=True).stdout.strip()
    booked = harness.manage("shell", "-c", CHARGES, env=env, capture=True).stdout.split()
    count, total = map(int, booked[-2:])
    print(f"  {ledger.splitlines()[-1]}")
    print(
        f"  so far: {count} charges booked for {total} micro-dollars; {len(charges)} charged "
        f"answers seen for {sum(charges)}"
    )


def main():
    harness.argument_parser(__doc__).parse_args()
    with harness.throwaway_database(DB_NAME) as database_url:
        env = harness.gateway_environment(
            database_url, redis_url=REDIS_URL, gateway_port=GATEWAY_PORT, sandbox_port=UPSTREAM_PORT
        )
        import redis

        redis.Redis.from_url(REDIS_URL).flushdb()
        harness.manage("migrate", "--noinput", "-v", "0", env=env)
        harness.manage("load_catalog", "-v", "0", env=env)
        output = harness.manage("shell", "-c", SETUP, env=env, capture=True).stdout.split()
        keys = [word for word in output if word.startswith("gw_live_")]
        sandbox_env = {
            name: value for name, value in env.items() if name != "DJANGO_SETTINGS_MODULE"
        }
        with harness.gunicorn_serving(
            UPSTREAM_PORT,
            sandbox_env,
            workers=2,
            threads=SLOW_CALLS + 50,
            app="sandbox.wsgi",
            ready_path="/sandbox/_ping",
        ):
            charges: list[int] = []
            for config in CONFIGS:
                measure_config(config, env, keys, charges)


if __name__ == "__main__":
    main()
