// Every method against a live gateway whose catalog is the seed catalog, answered by its sandbox.
// GATEWAY_API_KEY is a funded live key; GW_SDK_TEST_UNFUNDED_KEY a live key with no credits.
// tests/sdk/test_typescript_sdk.py starts such a gateway and runs these tests.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import { Gateway, GatewayError } from "../index.js";

const NEEDED = ["GATEWAY_BASE_URL", "GATEWAY_API_KEY", "GW_SDK_TEST_UNFUNDED_KEY"];
const missing = NEEDED.filter((name) => !process.env[name]);
const skip = missing.length ? `needs a live gateway: set ${missing.join(", ")}` : false;

const DOMAIN_SEARCH = { api: "hunter", path: "/v2/domain-search" };

function liveTest(name, body) {
  test(name, { skip }, body);
}

function gateway(options = {}) {
  return new Gateway(options);
}

function failsWith(expected) {
  return (error) => {
    assert.ok(error instanceof GatewayError, `not a GatewayError: ${error}`);
    for (const [field, value] of Object.entries(expected)) {
      if (value instanceof RegExp) assert.match(String(error[field]), value, field);
      else assert.deepEqual(error[field], value, field);
    }
    return true;
  };
}

liveTest("whoami names the key's owner and mode", async () => {
  const answer = await gateway().whoami();
  assert.equal(answer.success, true);
  assert.equal(answer.data.key.mode, "live");
  assert.equal(answer.data.owner.type, "user");
  assert.ok(answer.data.key.masked.startsWith("gw_live_"));
});

liveTest("search finds an endpoint for a need described in words", async () => {
  const answer = await gateway().search({
    prompt: "find the email addresses of people at a company domain",
    limit: 5,
  });
  assert.equal(answer.searchType, "semantic");
  assert.ok(answer.count >= 1 && answer.count <= 5);
  const found = answer.results.flatMap((api) => api.endpoints.map((e) => `${api.slug} ${e.path}`));
  assert.ok(found.includes("hunter /v2/domain-search"), found.join(", "));
});

liveTest("listEndpoints pages through the APIs and filters them", async () => {
  const first = await gateway().listEndpoints({ limit: 2 });
  const second = await gateway().listEndpoints({ limit: 2, offset: 2 });
  assert.equal(first.count, 2);
  assert.deepEqual(first.pagination, { limit: 2, offset: 0, hasMore: true });
  const slugs = (page) => page.apis.map((api) => api.slug);
  assert.equal(slugs(first).filter((slug) => slugs(second).includes(slug)).length, 0);

  const payable = await gateway().listEndpoints({ limit: 500, isPayable: false });
  const endpoints = payable.apis.flatMap((api) => api.endpoints);
  assert.ok(endpoints.length > 0 && endpoints.every((endpoint) => !endpoint.isPayable));
});

liveTest("details gives an endpoint's parameters and price", async () => {
  const answer = await gateway().details(DOMAIN_SEARCH);
  assert.equal(answer.api.slug, "hunter");
  assert.equal(answer.endpoint.method, "GET");
  assert.equal(answer.endpoint.price, "$0.0025");
  assert.equal(answer.endpoint.priceUnit, "result");
  assert.ok(answer.endpoint.queryParams.some((param) => param.name === "domain"));
  assert.match(answer.usage.runApi, /\/v1\/run /);
});

liveTest("integrate gives the snippets and the set-up that installs this SDK", async () => {
  const answer = await gateway().integrate({ ...DOMAIN_SEARCH, format: "all" });
  assert.deepEqual(Object.keys(answer.snippets), [
    "gw-sdk",
    "run-api",
    "curl",
    "x402-fetch",
    "x402-python",
  ]);
  assert.match(answer.snippets["gw-sdk"], /import \{ Gateway \} from "gw-sdk"/);
  assert.match(answer.setup.sdk, /npm install \S+\/downloads\/gw-sdk-\d+\.\d+\.\d+\.tgz/);
});

liveTest("run charges the call and answers with the provider's data", async () => {
  const client = gateway();
  const before = await client.check({ amountCents: 0 });
  const result = await client.run({ ...DOMAIN_SEARCH, query: { domain: "stripe.com", limit: 3 } });
  assert.equal(result.success, true);
  assert.equal(result.data.data.domain, "stripe.com");
  assert.equal(result.data.data.emails.length, 3);
  assert.equal(result.priceCents, 0.75);
  assert.match(result.requestId, /^run_\d+_[0-9a-f]+$/);
  assert.deepEqual(result.billing, { requestId: result.requestId, charged: true });
  const after = await client.check({ amountCents: 0 });
  assert.equal(before.balanceCents - after.balanceCents, 0.75);
});

liveTest("run continues a charged search without charging the next page", async () => {
  const client = gateway();
  const query = { domain: "stripe.com", limit: 3 };
  const first = await client.run({ ...DOMAIN_SEARCH, query });
  const next = await client.run({
    ...DOMAIN_SEARCH,
    query: { ...query, offset: 3 },
    parentRequestId: first.billing.requestId,
  });
  assert.equal(next.billing.charged, false);
  assert.equal(next.billing.parentRequestId, first.requestId);
  assert.notDeepEqual(next.data.data.emails, first.data.data.emails);
});

liveTest("run with an idempotency key replays the first answer without a second charge", async () => {
  const client = gateway();
  const idempotencyKey = `sdk-test-${randomUUID()}`;
  const request = { ...DOMAIN_SEARCH, query: { domain: "example.org", limit: 2 } };
  const before = await client.check({ amountCents: 0 });
  const first = await client.run(request, { idempotencyKey });
  const replay = await client.run(request, { idempotencyKey });
  assert.equal(replay.requestId, first.requestId);
  assert.deepEqual(replay.data, first.data);
  const after = await client.check({ amountCents: 0 });
  assert.equal(before.balanceCents - after.balanceCents, first.priceCents);
});

liveTest("balance, check, usage and transactions show the calls made", async () => {
  const client = gateway();
  const result = await client.run({ ...DOMAIN_SEARCH, query: { domain: "acme.io", limit: 1 } });

  const { balance } = await client.balance();
  assert.match(balance, /^\$\d+\.\d{2,}$/);

  const enough = await client.check({ amountCents: 1 });
  assert.deepEqual(
    [enough.sufficient, enough.requiredCents, enough.shortfallCents],
    [true, 1, 0],
  );
  const tooMuch = await client.check({ amountCents: 100_000_000 });
  assert.equal(tooMuch.sufficient, false);
  assert.equal(tooMuch.shortfallCents, 100_000_000 - tooMuch.balanceCents);

  const usage = await client.usage({ days: 1, limit: 5 });
  assert.equal(usage.pagination.limit, 5);
  const event = usage.usage.find((item) => item.requestId === result.requestId);
  assert.deepEqual(
    [event.api, event.path, event.method, event.status, event.cost],
    ["hunter", "/v2/domain-search", "GET", "completed", "$0.0025"],
  );

  const { transactions } = await client.transactions({ limit: 50 });
  const charge = transactions.find((item) => item.metadata.requestId === result.requestId);
  assert.equal(charge.type, "api_call");
  assert.equal(charge.amountCents, -0.25);
});

liveTest("a bad key is a GatewayError with code UNAUTHORIZED", async () => {
  const client = gateway({ apiKey: "gw_live_not-a-real-key" });
  await assert.rejects(client.whoami(), failsWith({ code: "UNAUTHORIZED", status: 401 }));
  await assert.rejects(client.balance(), failsWith({ code: "UNAUTHORIZED", status: 401 }));
});

liveTest("an unknown API is a 404 naming it", async () => {
  const client = gateway();
  const expected = { code: "NOT_FOUND", status: 404, message: /no-such-api/ };
  await assert.rejects(client.details({ api: "no-such-api", path: "/v1/x" }), failsWith(expected));
  await assert.rejects(client.run({ api: "no-such-api", path: "/v1/x" }), failsWith(expected));
});

liveTest("a run the balance does not cover is a 402 with its price", async () => {
  const client = gateway({ apiKey: process.env.GW_SDK_TEST_UNFUNDED_KEY });
  await assert.rejects(
    client.run({ ...DOMAIN_SEARCH, query: { domain: "stripe.com", limit: 3 } }),
    failsWith({
      code: "INSUFFICIENT_CREDITS",
      status: 402,
      priceCents: 0.75,
      requestId: /^run_\d+_[0-9a-f]+$/,
    }),
  );
});

liveTest("a provider failure carries the provider's status and answer", async () => {
  const query = { domain: "stripe.com", sandbox_fault: "500" };
  await assert.rejects(gateway().run({ ...DOMAIN_SEARCH, query }), (error) => {
    failsWith({ code: "UPSTREAM_ERROR", status: 502, upstreamStatus: 500 })(error);
    assert.match(error.requestId, /^run_\d+_[0-9a-f]+$/);
    assert.ok(error.data !== null && typeof error.data === "object");
    return true;
  });
});

liveTest("a misspelt field is a 400 naming it, not a call run without it", async () => {
  const request = { ...DOMAIN_SEARCH, querry: { domain: "stripe.com" } };
  await assert.rejects(
    gateway().run(request),
    failsWith({ code: "INVALID_REQUEST", status: 400, message: /querry/ }),
  );
});
