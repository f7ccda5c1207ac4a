// How the client talks HTTP, against a local stand-in server: what it sends, retries after a
// 429, timeouts, and failures that never reach the gateway's envelope.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, beforeEach, test } from "node:test";

import { Gateway, GatewayError } from "../index.js";

const KEY = "gw_test_stand-in";
let server;
let baseUrl;
let received;
let answers;

// Each request takes the next planned answer: [status, headers, body]; "hang" never answers.
before(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      received.push({ method: request.method, url: request.url, headers: request.headers, body });
      const answer = answers.shift() ?? [200, {}, { success: true }];
      if (answer === "hang") return;
      const [status, headers, payload] = answer;
      const text = typeof payload === "string" ? payload : JSON.stringify(payload);
      response.writeHead(status, { "Content-Type": "application/json", ...headers });
      response.end(text);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${server.address().port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

beforeEach(() => {
  received = [];
  answers = [];
});

function restore(name, value) {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

function client(options = {}) {
  return new Gateway({ apiKey: KEY, baseUrl, ...options });
}

test("it sends the key, a JSON body and the idempotency key, and resolves to the answer", async () => {
  answers.push([200, {}, { success: true, priceCents: 1, data: { ok: 1 }, requestId: "run_1_a" }]);
  const request = { api: "hunter", path: "/v2/domain-search", query: { domain: "a.io" } };
  const result = await client().run(request, { idempotencyKey: "k-1" });
  assert.deepEqual(result.data, { ok: 1 });
  const [sent] = received;
  assert.equal(sent.method, "POST");
  assert.equal(sent.url, "/v1/run");
  assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
  assert.equal(sent.headers["content-type"], "application/json");
  assert.equal(sent.headers["idempotency-key"], "k-1");
  assert.deepEqual(JSON.parse(sent.body), request);
});

test("query strings carry only the parameters given", async () => {
  await client().listEndpoints({ limit: 5, offset: undefined, verified: true, isPayable: null });
  await client().usage();
  assert.deepEqual(
    received.map((request) => request.url),
    ["/v1/list-endpoints?limit=5&verified=true", "/v1/credits/usage"],
  );
});

test("the key and address come from the environment, and a missing key is refused", () => {
  const saved = { key: process.env.GATEWAY_API_KEY, url: process.env.GATEWAY_BASE_URL };
  try {
    process.env.GATEWAY_API_KEY = "gw_live_from-env";
    process.env.GATEWAY_BASE_URL = "https://gw.example/";
    assert.equal(new Gateway().baseUrl, "https://gw.example");
    delete process.env.GATEWAY_BASE_URL;
    assert.equal(new Gateway().baseUrl, "http://127.0.0.1:8000");
    delete process.env.GATEWAY_API_KEY;
    assert.throws(() => new Gateway(), (error) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.code, "UNAUTHORIZED");
      assert.match(error.message, /GATEWAY_API_KEY/);
      return true;
    });
  } finally {
    restore("GATEWAY_API_KEY", saved.key);
    restore("GATEWAY_BASE_URL", saved.url);
  }
});

test("a 429 is retried after its Retry-After", async () => {
  answers.push([429, { "Retry-After": "1" }, { success: false, error: "slow", code: "RATE_LIMITED" }]);
  answers.push([200, {}, { success: true, balance: "$1.00" }]);
  const started = Date.now();
  const answer = await client().balance();
  assert.equal(answer.balance, "$1.00");
  assert.equal(received.length, 2);
  assert.ok(Date.now() - started >= 900, "it did not wait for Retry-After");
});

test("a 429 that keeps coming is reported after maxRetries", async () => {
  const limited = [429, { "Retry-After": "0" }, { success: false, error: "slow", code: "RATE_LIMITED" }];
  answers.push(limited, limited, limited);
  await assert.rejects(client({ maxRetries: 1 }).balance(), (error) => {
    assert.equal(error.code, "RATE_LIMITED");
    assert.equal(error.status, 429);
    assert.equal(error.retryAfterSeconds, 0);
    return true;
  });
  assert.equal(received.length, 2);
});

test("a Retry-After longer than a minute is reported, not slept through", async () => {
  answers.push([429, { "Retry-After": "3600" }, { success: false, error: "slow", code: "RATE_LIMITED" }]);
  await assert.rejects(client().balance(), { code: "RATE_LIMITED", retryAfterSeconds: 3600 });
  assert.equal(received.length, 1);
});

test("other failures are not retried", async () => {
  answers.push([500, {}, { success: false, error: "boom", code: "INTERNAL_ERROR" }]);
  await assert.rejects(client().whoami(), { code: "INTERNAL_ERROR", status: 500, message: "boom" });
  assert.equal(received.length, 1);
});

test("an attempt that takes longer than timeoutMs is a TIMEOUT", async () => {
  answers.push("hang");
  const started = Date.now();
  await assert.rejects(client({ timeoutMs: 200 }).whoami(), (error) => {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.code, "TIMEOUT");
    assert.equal(error.status, 0);
    return true;
  });
  assert.ok(Date.now() - started < 5000);
});

test("a gateway that cannot be reached is a NETWORK_ERROR", async () => {
  const closed = createServer();
  await new Promise((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const { port } = closed.address();
  await new Promise((resolve) => closed.close(resolve));
  const unreachable = new Gateway({ apiKey: KEY, baseUrl: `http://127.0.0.1:${port}` });
  await assert.rejects(unreachable.whoami(), { code: "NETWORK_ERROR", status: 0 });
});

test("an answer that is not the gateway's JSON is an INVALID_RESPONSE", async () => {
  answers.push([502, { "Content-Type": "text/html" }, "<html>Bad Gateway</html>"]);
  await assert.rejects(client().whoami(), (error) => {
    assert.equal(error.code, "INVALID_RESPONSE");
    assert.equal(error.status, 502);
    assert.match(error.message, /Bad Gateway/);
    return true;
  });
});

test("an error body without a code is named by its status", async () => {
  answers.push([402, { "X-Request-Id": "run_2_b" }, { success: false, error: "short", priceCents: 5 }]);
  await assert.rejects(client().run({ api: "a", path: "/b" }), {
    code: "INSUFFICIENT_CREDITS",
    status: 402,
    priceCents: 5,
    requestId: "run_2_b",
  });
});

test("a custom fetch is used", async () => {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push([String(url), init.method]);
    return new Response(JSON.stringify({ success: true, balance: "$2.00" }), { status: 200 });
  };
  const answer = await new Gateway({ apiKey: KEY, baseUrl: "https://gw.example", fetch }).balance();
  assert.equal(answer.balance, "$2.00");
  assert.deepEqual(calls, [["https://gw.example/v1/credits/balance", "GET"]]);
});
