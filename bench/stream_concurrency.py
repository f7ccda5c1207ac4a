"""Streamed chat completions through POST /v1/run: time to first byte against the provider
direct, events relayed a second, and how many concurrent streams a server configuration holds
while GET /v1/whoami from another key stays answered.

Starts, on a throwaway PostgreSQL database and Redis database 7:
  - the sandbox provider on its own (``gunicorn sandbox.wsgi``, enough threads for every stream);
  - the gateway as ``make serve`` runs it (gunicorn gthread, --preload), once per configuration
    in STREAM_CONFIGS (``workers x threads``, default "2x8 2x128"), with the seed catalog
    and live keys served by the sandbox.
Then, for each configuration:
  1. time to first event and to the last, direct and through the gateway (one stream at a time,
     STREAM_SAMPLES of them, no pacing), and events relayed a second;
  2. STREAM_COUNT concurrent streams (default 200, spread over ten keys, each paced by the
     sandbox at STREAM_CHUNK_DELAY_MS between events, their callers arriving over the first
     STREAM_RAMP_SECONDS, default 5) kept open for STREAM_SECONDS, while
     another process asks GET /v1/whoami every 20 ms: streams completed and failed, and the
     whoami p50/p99;
  3. check_ledger.
Prints figures; asserts nothing.

Environment: BENCH_DATABASE_ADMIN_URL, BENCH_REDIS_URL (default redis://127.0.0.1:6379/7),
STREAM_CONFIGS, STREAM_COUNT, STREAM_SECONDS (default 20), STREAM_CHUNK_DELAY_MS (default 100),
STREAM_SAMPLES (default 50), STREAM_RAMP_SECONDS; and any gateway setting (DATABASE_POOL,
UPSTREAM_POOL_SIZE, ...), passed to the gateway.
"""

import asyncio
import json
import multiprocessing
import os
import time

import harness

DB_NAME = "gw_bench_streams"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/7")
GATEWAY_PORT, UPSTREAM_PORT = 9111, 9112
CONFIGS = os.environ.get("STREAM_CONFIGS", "2x8 2x128").split()
STREAMS = int(os.environ.get("STREAM_COUNT", "200"))
SECONDS = float(os.environ.get("STREAM_SECONDS", "20"))
CHUNK_DELAY_MS = int(os.environ.get("STREAM_CHUNK_DELAY_MS", "100"))
SAMPLES = int(os.environ.get("STREAM_SAMPLES", "50"))
RAMP_SECONDS = float(os.environ.get("STREAM_RAMP_SECONDS", "5"))
KEYS = 10
FAILURE_SHOWN: list = []
CHAT = "/api/paas/v4/chat/completions"
BODY = {
    "model": "glm-4.5",
    "messages": [{"role": "user", "content": "Describe how a gateway relays a stream of tokens"}],
    "max_tokens": 2000,
    "stream": True,
}

SETUP = f"""
from credits.services.accounts import account_for_user
from credits.services.ledger import credits_grant
from gateway.services import api_key_create, user_get_or_create

for number in range({KEYS + 1}):
    user, _ = user_get_or_create(email=f"streams{{number}}@example.com")
    credits_grant(account=account_for_user(user=user), amount_micros=10_000_000_000, reason="bench")
    print(api_key_create(mode="live", user=user, name="bench")[1])
"""


def environment(database_url: str) -> dict:
    return harness.gateway_environment(
        database_url,
        redis_url=REDIS_URL,
        gateway_port=GATEWAY_PORT,
        sandbox_port=UPSTREAM_PORT,
        # As `make serve` runs it unless the environment says otherwise.
        **{
            name: os.environ[name]
            for name in ("DATABASE_POOL", "DATABASE_CONN_MAX_AGE", "DATABASE_POOL_MAX_SIZE")
            if name in os.environ
        },
    )


def stream_request(path: str, body: dict, key: str | None) -> bytes:
    content = json.dumps(body).encode()
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    if key:
        lines.append(f"Authorization: Bearer {key}")
    lines += [f"Content-Length: {len(content)}", "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + content


async def one_stream(port: int, request: bytes) -> tuple[bool, float, float, int]:
    """(ended with [DONE], seconds to the first event, seconds to the end, events). The first
    answer that does not end with [DONE] is printed."""
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    first, received = None, b""
    try:
        while chunk := await reader.read(65536):
            if first is None and b"data: " in chunk:
                first = time.perf_counter() - started
            received += chunk
    finally:
        writer.close()
    done = b"data: [DONE]" in received
    if not done and not FAILURE_SHOWN:
        FAILURE_SHOWN.append(True)
        print(f"  first failed stream: {received[:300]!r}")
    return done, first or 0.0, time.perf_counter() - started, received.count(b"data: ")


def whoami_probe(port: int, key: str, seconds: float, results) -> None:
    import http.client

    latencies, failures = [], 0
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.perf_counter()
        try:
            connection.request("GET", "/v1/whoami", headers={"Authorization": f"Bearer {key}"})
            response = connection.getresponse()
            response.read()
            failures += response.status != 200
        except (OSError, http.client.HTTPException):
            failures += 1
            connection.close()
        latencies.append((time.perf_counter() - started) * 1000)
        time.sleep(0.02)
    results.put((latencies, failures))


async def held_streams(keys: list[str], seconds: float) -> dict:
    body = {**BODY, "sandbox_chunk_delay_ms": CHUNK_DELAY_MS}
    counts = {"completed": 0, "failed": 0, "events": 0}
    deadline = time.monotonic() + seconds

    async def client(number: int) -> None:
        request = stream_request(
            "/v1/run",
            {"api": "zhipu-glm", "path": CHAT, "body": body},
            keys[number % len(keys)],
        )
        # Spread over the first RAMP_SECONDS, as callers arrive; started all at once, every
        # stream would begin and settle in the same instant, round after round.
        await asyncio.sleep(RAMP_SECONDS * number / STREAMS)
        while time.monotonic() < deadline:
            try:
                done, _, _, events = await one_stream(GATEWAY_PORT, request)
            except OSError:
                done, events = False, 0
            counts["completed" if done else "failed"] += 1
            counts["events"] += events

    await asyncio.gather(*(client(number) for number in range(STREAMS)))
    return counts


def sequential(port: int, path: str, body: dict, key: str | None) -> list[tuple]:
    request = stream_request(path, body, key)
    return [asyncio.run(one_stream(port, request)) for _ in range(SAMPLES)]


def measure_config(config: str, env: dict, keys: list[str], probe_key: str) -> None:
    workers, threads = (int(part) for part in config.split("x"))
    with harness.gunicorn_serving(GATEWAY_PORT, env, workers=workers, threads=threads):
        print(f"\n== gateway: {workers} gthread workers x {threads} threads")
        direct = sequential(UPSTREAM_PORT, f"/sandbox/zhipu-glm{CHAT}", BODY, None)
        through = sequential(
            GATEWAY_PORT, "/v1/run", {"api": "zhipu-glm", "path": CHAT, "body": BODY}, keys[0]
        )
        for name, samples in (("direct", direct), ("through /v1/run", through)):
            firsts = [sample[1] * 1000 for sample in samples]
            lasts = [sample[2] * 1000 for sample in samples]
            rate = sum(sample[3] for sample in samples) / sum(sample[2] for sample in samples)
            print(
                f"  {name:16} first event p50 {harness.percentile(firsts, 50):6.2f} ms "
                f"p99 {harness.percentile(firsts, 99):6.2f} ms; whole stream p50 "
                f"{harness.percentile(lasts, 50):6.2f} ms; {rate:8.0f} events/s"
            )

        results = multiprocessing.Queue()
        probe = multiprocessing.Process(
            target=whoami_probe, args=(GATEWAY_PORT, probe_key, SECONDS, results)
        )
        probe.start()
        started = time.monotonic()
        counts = asyncio.run(held_streams(keys, SECONDS))
        elapsed = time.monotonic() - started
        latencies, failures = results.get()
        probe.join()
        print(
            f"  {STREAMS} concurrent streams for {SECONDS:g} s: {counts['completed']} completed, "
            f"{counts['failed']} failed, {counts['events'] / elapsed:.0f} events/s relayed"
        )
        print(
            f"  GET /v1/whoami meanwhile: {len(latencies)} calls, {failures} failed, "
            f"p50 {harness.percentile(latencies, 50):.1f} ms, "
            f"p99 {harness.percentile(latencies, 99):.1f} ms"
        )
    ledger = harness.manage("check_ledger", env=env, capture=True).stdout.strip()
    print("  " + ledger.splitlines()[-1])


def main():
    harness.argument_parser(__doc__).parse_args()
    with harness.throwaway_database(DB_NAME) as database_url:
        env = environment(database_url)
        import redis

        redis.Redis.from_url(REDIS_URL).flushdb()
        harness.manage("migrate", "--noinput", "-v", "0", env=env)
        harness.manage("load_catalog", "-v", "0", env=env)
        output = harness.manage("shell", "-c", SETUP, env=env, capture=True).stdout.split()
        keys = [word for word in output if word.startswith("gw_live_")]
        probe_key, keys = keys[-1], keys[:-1]
        sandbox_env = {
            name: value for name, value in env.items() if name != "DJANGO_SETTINGS_MODULE"
        }
        with harness.gunicorn_serving(
            UPSTREAM_PORT,
            sandbox_env,
            workers=2,
            threads=STREAMS,
            app="sandbox.wsgi",
            ready_path="/sandbox/_ping",
        ):
            for config in CONFIGS:
                measure_config(config, env, keys, probe_key)


if __name__ == "__main__":
    main()
