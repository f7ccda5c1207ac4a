"""Chaos: 10,000 mixed calls through POST /v1/run while providers fail, stall and reset and
Redis stops and comes back, then the books.

Starts, on a throwaway PostgreSQL database and a Redis of its own (redis-server on a free port,
without persistence, so the restarted one is empty):
  - the sandbox on its own (gunicorn sandbox.wsgi, one gthread worker of 128 threads: each
    injected timeout holds one for 65 s) as the provider of every API of the seed catalog;
  - the gateway as `make serve` runs it (gunicorn, 2 gthread workers of 256 threads, --preload),
    live keys answered by the sandbox and charged, provider calls cut at 2 s
    (UPSTREAM_TIMEOUT_CAP_SECONDS) so that a timeout costs 2 s of a gateway thread, not 30.
Then sends CHAOS_CALLS requests (default 10,000) from CHAOS_CLIENTS threads (default 24), a
shuffled mix (CHAOS_SEED) of:
  fixed        Brave's spellcheck, $0.001 a call, live key
  per-result   Hunter's domain search with limit 1 to 10, $0.0025 a result, live key
  per-token    a Zhipu GLM chat completion, priced by the tokens it reports, live key
  test-key     Hunter's email verifier with the test key (never charged)
  slow         the spellcheck with the provider answering after 0.2 to 1.5 s
  fault-4xx    the provider answers 400, 404 or 429 (kept as the status; not charged)
  fault-5xx    the provider answers 500 or 503 (502; not charged)
  reset        the provider resets the connection (502)
  timeout      the provider never answers in time (504)
  badjson      the provider answers 200 with truncated JSON (502)
  idempotent   a charged call with an Idempotency-Key, then the same again: the retry is
               replayed and not charged
The faults go to the three endpoints in turn (two GETs and a POST). Redis is killed after a
third of the calls and started again after two thirds.

Prints the answers by kind and status (and any unexpected), throughput and latency p50/p99
by phase (Redis up, down, back) and by kind, the Redis lines of the gateway's log,
check_ledger, and the drift between the charges booked and the prices of the charged 200
answers. Asserts nothing.

Environment: BENCH_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres),
CHAOS_CALLS, CHAOS_CLIENTS, CHAOS_SEED.
"""

import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import harness
import requests

DB_NAME = "gw_bench_chaos"
GATEWAY_PORT, SANDBOX_PORT = 9141, 9142
CALLS = int(os.environ.get("CHAOS_CALLS", "10000"))
CLIENTS = int(os.environ.get("CHAOS_CLIENTS", "24"))
SEED = int(os.environ.get("CHAOS_SEED", "7"))
UPSTREAM_CAP_SECONDS = 2
CLIENT_TIMEOUT_SECONDS = 120

# Relative weights of the kinds in the mix; an idempotent pair counts as two calls.
WEIGHTS = {
    "fixed": 20,
    "per-result": 14,
    "per-token": 8,
    "test-key": 14,
    "slow": 8,
    "fault-4xx": 6,
    "fault-5xx": 6,
    "reset": 4,
    "timeout": 1,
    "badjson": 4,
    "idempotent": 15,
}
CHARGED_KINDS = {"fixed", "per-result", "per-token", "slow", "idempotent"}

SPELLCHECK = {"api": "brave-search", "path": "/res/v1/spellcheck/search"}
DOMAIN_SEARCH = {"api": "hunter", "path": "/v2/domain-search"}
CHAT = {"api": "zhipu-glm", "path": "/api/paas/v4/chat/completions"}
EMAIL_VERIFIER = {"api": "hunter", "path": "/v2/email-verifier"}

SETUP = """
from credits.services.accounts import account_for_user
from credits.services.ledger import credits_grant
from gateway.models import ApiKey
from gateway.services import api_key_create, user_get_or_create

user, _ = user_get_or_create(email="chaos@example.com")
credits_grant(account=account_for_user(user=user), amount_micros=1_000_000_000, reason="chaos")
print(api_key_create(mode=ApiKey.Mode.LIVE, user=user, name="live")[1])
print(api_key_create(mode=ApiKey.Mode.TEST, user=user, name="test")[1])
"""

CHARGES = """
from django.db.models import Sum
from credits.models import LedgerEntry
charges = LedgerEntry.objects.filter(type="api_call")
print(charges.count(), -(charges.aggregate(total=Sum("amount_micros"))["total"] or 0))
"""


@dataclass
class Request:
    kind: str
    body: dict
    key: str  # "live" or "test"
    expected: int
    idempotency_key: str | None = None


@dataclass
class Answer:
    kind: str
    status: int | str
    expected: int
    seconds: float
    finished: float
    charged_micros: int = 0
    replayed: bool = False
    detail: str = ""  # the start of an unexpected answer's body


@dataclass
class Tally:
    answers: list[Answer] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, answer: Answer) -> None:
        with self.lock:
            self.answers.append(answer)

    def __len__(self) -> int:
        return len(self.answers)


def fault_target(index: int, query: dict) -> dict:
    """The index-th of the three endpoints, carrying the fault knobs in its query."""
    target = index % 3
    if target == 0:
        return {**SPELLCHECK, "query": {"q": "helo wrld", **query}}
    if target == 1:
        return {**DOMAIN_SEARCH, "query": {"domain": "stripe.com", "limit": 2, **query}}
    return {**CHAT, "query": query, "body": chat_body(index)}


def chat_body(index: int) -> dict:
    return {
        "model": "glm-4.5",
        "messages": [{"role": "user", "content": f"Summarise ticket {index} in one line."}],
        "max_tokens": 64,
    }


def tasks(rng: random.Random) -> list[list[Request]]:
    """The shuffled mix: each task is one request, or an idempotent call and its retry."""
    kinds = list(WEIGHTS)
    planned: list[list[Request]] = []
    calls = 0
    index = 0
    while calls < CALLS:
        kind = rng.choices(kinds, weights=[WEIGHTS[name] for name in kinds])[0]
        if kind == "idempotent" and calls + 2 > CALLS:
            continue
        index += 1
        planned.append(plan(kind, index, rng))
        calls += len(planned[-1])
    return planned


def plan(kind: str, index: int, rng: random.Random) -> list[Request]:
    if kind == "fixed":
        return [Request(kind, {**SPELLCHECK, "query": {"q": f"helo wrld {index}"}}, "live", 200)]
    if kind == "per-result":
        query = {"domain": f"company{index % 50}.com", "limit": rng.randint(1, 10)}
        return [Request(kind, {**DOMAIN_SEARCH, "query": query}, "live", 200)]
    if kind == "per-token":
        return [Request(kind, {**CHAT, "body": chat_body(index)}, "live", 200)]
    if kind == "test-key":
        query = {"email": f"person{index}@stripe.com"}
        return [Request(kind, {**EMAIL_VERIFIER, "query": query}, "test", 200)]
    if kind == "slow":
        query = {"q": f"slow {index}", "sandbox_delay_ms": rng.randint(200, 1500)}
        return [Request(kind, {**SPELLCHECK, "query": query}, "live", 200)]
    if kind == "fault-4xx":
        status = rng.choice([400, 404, 429])
        return [Request(kind, fault_target(index, {"sandbox_fault": str(status)}), "live", status)]
    if kind == "fault-5xx":
        status = rng.choice([500, 503])
        return [Request(kind, fault_target(index, {"sandbox_fault": str(status)}), "live", 502)]
    if kind in ("reset", "badjson"):
        return [Request(kind, fault_target(index, {"sandbox_fault": kind}), "live", 502)]
    if kind == "timeout":
        return [Request(kind, fault_target(index, {"sandbox_fault": "timeout"}), "live", 504)]
    body = {**SPELLCHECK, "query": {"q": f"idempotent {index}"}}
    key = f"chaos-{SEED}-{index}"
    return [
        Request(kind, body, "live", 200, idempotency_key=key),
        Request(f"{kind} retry", body, "live", 200, idempotency_key=key),
    ]


def send(session: requests.Session, request: Request, keys: dict[str, str]) -> Answer:
    # A connection per call, as from many clients: gunicorn's workers each take the connections
    # they accept, so a few keep-alive connections could all land on one worker.
    headers = {"Authorization": f"Bearer {keys[request.key]}", "Connection": "close"}
    if request.idempotency_key:
        headers["Idempotency-Key"] = request.idempotency_key
    started = time.monotonic()
    try:
        response = session.post(
            f"http://127.0.0.1:{GATEWAY_PORT}/v1/run",
            json=request.body,
            headers=headers,
            timeout=CLIENT_TIMEOUT_SECONDS,
        )
    except requests.RequestException as error:
        finished = time.monotonic()
        return Answer(
            request.kind, error.__class__.__name__, request.expected, finished - started, finished
        )
    finished = time.monotonic()
    answer = Answer(
        request.kind, response.status_code, request.expected, finished - started, finished
    )
    if response.status_code != request.expected:
        answer.detail = response.text[:200]
    if response.status_code == 200:
        body = response.json()
        answer.replayed = response.headers.get("Idempotent-Replayed") == "true"
        if body["billing"]["charged"] and not answer.replayed:
            answer.charged_micros = round(body["priceCents"] * 10_000)
    return answer


class PrivateRedis:
    def __init__(self, directory: str):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.directory = directory
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                *["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"],
                *["--save", "", "--appendonly", "no", "--dir", self.directory],
            ],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                    connection.sendall(b"PING\r\n")
                    if connection.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise SystemExit(f"redis-server on {self.port} did not start")

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


def environment(database_url: str, redis_url: str) -> dict[str, str]:
    return harness.gateway_environment(
        database_url,
        redis_url=redis_url,
        gateway_port=GATEWAY_PORT,
        sandbox_port=SANDBOX_PORT,
        CACHE_KEY_PREFIX="gw-chaos",
        UPSTREAM_TIMEOUT_CAP_SECONDS=str(UPSTREAM_CAP_SECONDS),
    )


def manage(*args: str, env: dict[str, str]) -> str:
    return harness.manage(*args, env=env, capture=True).stdout


def run_mix(planned: list[list[Request]], keys: dict[str, str], redis: PrivateRedis) -> dict:
    tally = Tally()
    events: dict[str, float] = {}
    next_task = iter(planned)
    next_lock = threading.Lock()

    def client() -> None:
        with requests.Session() as session:
            while True:
                with next_lock:
                    task = next(next_task, None)
                if task is None:
                    return
                for request in task:
                    tally.add(send(session, request, keys))

    def chaos() -> None:
        while len(tally) < CALLS // 3:
            time.sleep(0.05)
        redis.kill()
        events["redis stopped"] = time.monotonic()
        while len(tally) < 2 * CALLS // 3:
            time.sleep(0.05)
        redis.start()
        events["redis started"] = time.monotonic()

    monkey = threading.Thread(target=chaos, daemon=True)
    started = time.monotonic()
    monkey.start()
    with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
        for _ in range(CLIENTS):
            pool.submit(client)
    events["started"], events["finished"] = started, time.monotonic()
    monkey.join(timeout=60)
    return {"answers": tally.answers, "events": events}


def report(answers: list[Answer], events: dict[str, float], logs: dict[str, Path]) -> None:
    wall = events["finished"] - events["started"]
    rate = len(answers) / wall
    print(f"\n{len(answers)} calls from {CLIENTS} clients in {wall:.1f} s: {rate:.0f}/s")
    by_kind: dict[str, Counter] = defaultdict(Counter)
    for answer in answers:
        by_kind[answer.kind][answer.status] += 1
    print("\nAnswers by kind (status x count)                   p50 ms   p99 ms")
    for kind in sorted(by_kind):
        seconds = [answer.seconds for answer in answers if answer.kind == kind]
        statuses = ", ".join(
            f"{status} x {n}" for status, n in sorted(by_kind[kind].items(), key=str)
        )
        print(
            f"  {kind:17} {statuses:32} {1000 * harness.percentile(seconds, 50):8.0f} "
            f"{1000 * harness.percentile(seconds, 99):8.0f}"
        )
    unexpected = [answer for answer in answers if answer.status != answer.expected]
    print(f"  unexpected answers: {len(unexpected)}")
    for answer in unexpected[:10]:
        print(f"    {answer.kind}: {answer.status}, expected {answer.expected}: {answer.detail}")
    replays = sum(answer.replayed for answer in answers if answer.kind == "idempotent retry")
    print(f"  idempotent retries replayed: {replays} of {by_kind['idempotent retry'].total()}")

    stopped = events.get("redis stopped", events["finished"])
    restarted = events.get("redis started", events["finished"])
    phases = {
        "all": (events["started"], events["finished"] + 1),
        "Redis up": (events["started"], stopped),
        "Redis down": (stopped, restarted),
        "Redis back": (restarted, events["finished"]),
    }
    print("\nBy phase                 calls   per s   p50 ms   p99 ms   server errors")
    for name, (begin, end) in phases.items():
        inside = [answer for answer in answers if begin <= answer.finished < end]
        if not inside:
            continue
        seconds = [answer.seconds for answer in inside]
        errors = sum(answer.status == 500 for answer in inside)
        print(
            f"  {name:20} {len(inside):7} {len(inside) / max(end - begin, 1e-9):7.0f} "
            f"{1000 * harness.percentile(seconds, 50):8.0f} "
            f"{1000 * harness.percentile(seconds, 99):8.0f} {errors:15}"
        )
    print(f"  Redis was down for {restarted - stopped:.1f} s")
    for name, path in logs.items():
        lines = [line.strip() for line in path.read_text().splitlines()]
        redis_lines = [line for line in lines if "Redis" in line]
        print(f"\nRedis lines in the {name}'s log: {len(redis_lines)}")
        for line in redis_lines:
            print(f"  {line[:160]}")
        # django.request logs every 5xx answer, the expected 502s and 504s included.
        errors = [line for line in lines if " ERROR " in line and "django.request" not in line]
        print(f"Other errors in the {name}'s log: {len(errors)}")
        for line in errors[:10]:
            print(f"  {line[:300]}")


def main() -> None:
    harness.argument_parser(__doc__).parse_args()
    planned = tasks(random.Random(SEED))
    with (
        tempfile.TemporaryDirectory(prefix="gw-chaos-") as scratch,
        harness.throwaway_database(DB_NAME) as database_url,
    ):
        redis = PrivateRedis(scratch)
        redis.start()
        try:
            measure(planned, database_url, redis, Path(scratch))
        finally:
            redis.kill()


def measure(planned, database_url: str, redis: PrivateRedis, scratch: Path) -> None:
    env = environment(database_url, redis.url)
    print(f"Database {database_url}, Redis {redis.url}")
    manage("migrate", "--noinput", "-v", "0", env=env)
    manage("load_catalog", "--strict", "-v", "0", env=env)
    live, test = manage("shell", "-v", "0", "-c", SETUP, env=env).split()[-2:]
    sandbox_env = {name: value for name, value in env.items() if name != "DJANGO_SETTINGS_MODULE"}
    logs = {"gateway": scratch / "gateway.log", "sandbox": scratch / "sandbox.log"}
    with (
        logs["sandbox"].open("w") as sandbox_log,
        logs["gateway"].open("w") as gateway_log,
        harness.gunicorn_serving(
            SANDBOX_PORT,
            sandbox_env,
            workers=1,
            threads=128,
            app="sandbox.wsgi",
            ready_path="/sandbox/_ping",
            stdout=sandbox_log,
            stderr=subprocess.STDOUT,
        ),
        harness.gunicorn_serving(
            GATEWAY_PORT, env, workers=2, stdout=gateway_log, stderr=subprocess.STDOUT
        ),
    ):
        outcome = run_mix(planned, {"live": live, "test": test}, redis)
    report(outcome["answers"], outcome["events"], logs)

    check = subprocess.run(
        [sys.executable, "manage.py", "check_ledger"],
        cwd=harness.ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    print(f"\ncheck_ledger: {(check.stdout + check.stderr).strip()}")
    count, total = map(int, manage("shell", "-v", "0", "-c", CHARGES, env=env).split()[-2:])
    charged = [answer for answer in outcome["answers"] if answer.charged_micros]
    answered = sum(answer.charged_micros for answer in charged)
    print(
        f"charges: {count} api_call entries totalling {total} micro-dollars; {len(charged)} "
        f"charged 200 answers priced {answered}; drift {total - answered}"
    )


if __name__ == "__main__":
    main()
