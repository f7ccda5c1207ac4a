"""How to serve the MCP tool server: from the Django gateway itself (agents/, the SDK's pydantic
types for validation) or with the MCP SDK's own server (MCPServer, streamable HTTP, stateless,
JSON answers) in a separate async process that calls the gateway's /v1 routes.

Starts, on a throwaway PostgreSQL database (seed catalog, one user with a test key) and Redis
database 7:
  - the gateway as ``make serve`` runs it (gunicorn, 2 gthread workers of 128 threads, --preload),
    whose MCP_URL is /mcp;
  - the SDK's server in its own process (uvicorn, one event loop) on another port, with the same
    tools forwarding the caller's bearer key to /v1/details, /v1/credits/balance and /v1/run.
Then, for each, measures with the same raw JSON-RPC POSTs:
  1. latency at concurrency 1 (MCP_BENCH_CALLS calls each, default 300) of initialize,
     tools/list and tools/call details, balance and run (a test key: the sandbox, not charged):
     p50 and p95;
  2. tools/call details a second at concurrency 8 for MCP_BENCH_SECONDS (default 10);
  3. the resident memory of the serving processes.
Prints figures; asserts nothing. Both servers and the load share the machine's cores.

Environment: BENCH_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres),
BENCH_REDIS_URL (default redis://127.0.0.1:6379/7), MCP_BENCH_CALLS, MCP_BENCH_SECONDS.
"""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import harness
import requests

DB_NAME = "gw_bench_mcp"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/7")
GATEWAY_PORT, SDK_PORT = 9111, 9112
CALLS = int(os.environ.get("MCP_BENCH_CALLS", "300"))
SECONDS = int(os.environ.get("MCP_BENCH_SECONDS", "10"))
CONCURRENCY = 8
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
DETAILS = {"api": "hunter", "path": "/v2/domain-search"}
RUN = {"api": "hunter", "path": "/v2/domain-search", "query": {"domain": "stripe.com", "limit": 3}}


def sdk_server(port: int, gateway: str) -> None:
    """The alternative: the SDK's MCPServer in this process, its tools calling the gateway."""
    import logging

    import httpx2
    import uvicorn
    from mcp.server.mcpserver import Context, MCPServer

    # Logging every request would slow this side down: the gateway logs at WARNING too.
    for name in ("httpx2", "mcp", "uvicorn"):
        logging.getLogger(name).setLevel(logging.WARNING)
    server = MCPServer("api-gateway")
    client = httpx2.AsyncClient(base_url=gateway, timeout=60)

    async def forward(ctx: Context, method: str, path: str, payload=None) -> dict:
        headers = {"Authorization": ctx.request_context.request.headers["authorization"]}
        answer = await client.request(method, path, json=payload, headers=headers)
        return answer.json()

    @server.tool()
    async def details(api: str, path: str, ctx: Context) -> dict:
        """One endpoint's parameters and price."""
        return await forward(ctx, "POST", "/v1/details", {"api": api, "path": path})

    @server.tool()
    async def balance(ctx: Context) -> dict:
        """The credit balance."""
        return await forward(ctx, "GET", "/v1/credits/balance")

    @server.tool()
    async def run(api: str, path: str, query: dict, ctx: Context) -> dict:
        """Call an endpoint."""
        return await forward(ctx, "POST", "/v1/run", {"api": api, "path": path, "query": query})

    app = server.streamable_http_app(stateless_http=True, json_response=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def environment(database_url: str) -> dict:
    from cryptography.fernet import Fernet

    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "gateway.settings",
        "DEBUG": "False",
        "SECRET_KEY": "bench-" + "x" * 40,
        "CATALOG_SECRET_KEY": Fernet.generate_key().decode(),
        "DATABASE_URL": database_url,
        "REDIS_URL": REDIS_URL,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "GATEWAY_BASE_URL": f"http://127.0.0.1:{GATEWAY_PORT}",
        "UPSTREAM_ALLOW_PRIVATE_NETWORKS": "True",
        "RATE_LIMIT_PER_MINUTE": "10000000",
        "LOG_LEVEL": "WARNING",
    }


def provision() -> str:
    """The seed catalog and a user with credits; returns the user's test key."""
    from django.core.management import call_command

    from credits.services.accounts import account_for_user
    from credits.services.ledger import credits_grant
    from gateway.models import ApiKey, User
    from gateway.services import api_key_create

    call_command("load_catalog", verbosity=0)
    user = User.objects.create_user(email="bench@example.com", password="bench-password-1")
    credits_grant(account=account_for_user(user=user), amount_micros=10**9, reason="bench")
    _, test_key = api_key_create(mode=ApiKey.Mode.TEST, user=user, name="bench")
    return test_key


def message(method: str, params: dict | None = None) -> bytes:
    body = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        body["params"] = params
    return json.dumps(body).encode()


INITIALIZE = message(
    "initialize",
    {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "b", "version": "1"},
    },
)
MESSAGES = {
    "initialize": INITIALIZE,
    "tools/list": message("tools/list"),
    "call details": message("tools/call", {"name": "details", "arguments": DETAILS}),
    "call balance": message("tools/call", {"name": "balance", "arguments": {}}),
    "call run": message("tools/call", {"name": "run", "arguments": RUN}),
}


def post(session: requests.Session, url: str, body: bytes) -> dict:
    response = session.post(url, data=body, timeout=60)
    response.raise_for_status()
    answer = response.json()
    if "error" in answer or answer.get("result", {}).get("isError"):
        raise SystemExit(f"{url} failed: {json.dumps(answer)[:300]}")
    return answer


def latencies(url: str, key: str) -> dict[str, tuple[float, float]]:
    session = requests.Session()
    session.headers.update({**HEADERS, "Authorization": f"Bearer {key}"})
    figures = {}
    for name, body in MESSAGES.items():
        for _ in range(10):  # warm every worker's caches
            post(session, url, body)
        samples = []
        for _ in range(CALLS):
            started = time.perf_counter()
            post(session, url, body)
            samples.append((time.perf_counter() - started) * 1000)
        figures[name] = (harness.percentile(samples, 50), harness.percentile(samples, 95))
    return figures


def throughput(url: str, key: str) -> float:
    done = [0] * CONCURRENCY
    stop = time.monotonic() + SECONDS

    def load(index: int) -> None:
        session = requests.Session()
        session.headers.update({**HEADERS, "Authorization": f"Bearer {key}"})
        while time.monotonic() < stop:
            post(session, url, MESSAGES["call details"])
            done[index] += 1

    threads = [threading.Thread(target=load, args=(index,)) for index in range(CONCURRENCY)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done) / SECONDS


def resident_mb(pid: int) -> float:
    """The process's and its children's resident memory."""
    pids = [pid, *_children(pid)]
    total_kb = 0
    for each in pids:
        status = Path(f"/proc/{each}/status").read_text()
        total_kb += int(
            next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1]
        )
    return total_kb / 1024


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in path.read_text().split()] if path.exists() else []


def _wait_for_port(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the SDK server exited with {process.returncode}")
        try:
            requests.get(f"http://127.0.0.1:{port}/", timeout=1)
            return
        except requests.ConnectionError:
            time.sleep(0.2)
    raise SystemExit("the SDK server did not start")


def main() -> None:
    harness.argument_parser(__doc__).parse_args()
    # The catalog's sandbox addresses, written when it loads, are the served gateway's.
    os.environ["GATEWAY_BASE_URL"] = f"http://127.0.0.1:{GATEWAY_PORT}"
    with harness.django_database(DB_NAME):
        key = provision()
        env = environment(os.environ["DATABASE_URL"])
        gateway = f"http://127.0.0.1:{GATEWAY_PORT}"
        with harness.gunicorn_serving(GATEWAY_PORT, env, workers=2) as served:
            sdk = subprocess.Popen(
                [sys.executable, __file__, "--sdk-server", str(SDK_PORT), gateway], env=env
            )
            try:
                _wait_for_port(SDK_PORT, sdk)
                django_url, sdk_url = f"{gateway}/mcp", f"http://127.0.0.1:{SDK_PORT}/mcp"
                results = {}
                for label, url in (("Django view", django_url), ("SDK server", sdk_url)):
                    results[label] = (latencies(url, key), throughput(url, key))
                memory = {
                    "Django view": resident_mb(served.pid),
                    "SDK server": resident_mb(sdk.pid),
                }
            finally:
                sdk.terminate()
                sdk.wait()
    print(f"MCP tool server: {CALLS} calls each at concurrency 1, ms p50 / p95")
    print(f"{'message':<16}{'Django view':>22}{'SDK server + /v1':>22}")
    for name in MESSAGES:
        cells = [
            f"{results[label][0][name][0]:.2f} / {results[label][0][name][1]:.2f}"
            for label in results
        ]
        print(f"{name:<16}{cells[0]:>22}{cells[1]:>22}")
    print(f"tools/call details a second at concurrency {CONCURRENCY} for {SECONDS} s:")
    for label, (_, rate) in results.items():
        print(f"  {label:<12} {rate:8.0f}/s")
    print("resident memory:")
    print(f"  gateway (master and 2 workers, serving /mcp too): {memory['Django view']:.0f} MB")
    print(f"  SDK server process, on top of the gateway:       {memory['SDK server']:.0f} MB")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--sdk-server":
        sdk_server(int(sys.argv[2]), sys.argv[3])
    else:
        main()
