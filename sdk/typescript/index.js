/**
 * gw-sdk: the API gateway's client. One class, Gateway, with a method per /v1 operation; each
 * resolves to the gateway's JSON answer and rejects with a GatewayError built from its envelope.
 */

const DEFAULT_BASE_URL = "http://127.0.0.1:8000";
// A run waits up to 60 s for its provider (the gateway's cap), plus the gateway's own time.
const DEFAULT_TIMEOUT_MS = 90_000;
const DEFAULT_MAX_RETRIES = 2;
// The gateway counts requests in one-minute windows, so a longer wait would not be asked for;
// anything beyond it is reported rather than slept through.
const MAX_RETRY_WAIT_MS = 60_000;
const FIRST_BACKOFF_MS = 500;

// The contract documents run errors that carry no code; the status names them then.
const CODE_FOR_STATUS = {
  400: "INVALID_REQUEST",
  401: "UNAUTHORIZED",
  402: "INSUFFICIENT_CREDITS",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  429: "RATE_LIMITED",
  500: "INTERNAL_ERROR",
};

export class GatewayError extends Error {
  constructor(
    message,
    {
      code,
      status = 0,
      requestId = null,
      upstreamStatus = null,
      data = null,
      priceCents = null,
      retryAfterSeconds = null,
      cause,
    } = {},
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "GatewayError";
    this.code = code;
    this.status = status;
    this.requestId = requestId;
    this.upstreamStatus = upstreamStatus;
    this.data = data;
    this.priceCents = priceCents;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class Gateway {
  #apiKey;
  #fetch;

  constructor({ apiKey, baseUrl, timeoutMs, maxRetries, fetch: fetchImplementation } = {}) {
    const environment = globalThis.process?.env ?? {};
    this.#apiKey = apiKey || environment.GATEWAY_API_KEY;
    if (!this.#apiKey) {
      throw new GatewayError("No API key: pass { apiKey } or set GATEWAY_API_KEY", {
        code: "UNAUTHORIZED",
      });
    }
    this.#fetch = fetchImplementation ?? globalThis.fetch;
    if (typeof this.#fetch !== "function") {
      throw new TypeError("No fetch in this runtime: use Node 18 or later, or pass { fetch }");
    }
    this.baseUrl = (baseUrl || environment.GATEWAY_BASE_URL || DEFAULT_BASE_URL).replace(/\/+$/, "");
    this.timeoutMs = timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = maxRetries ?? DEFAULT_MAX_RETRIES;
  }

  whoami() {
    return this.#request("GET", "/v1/whoami");
  }

  search(request) {
    return this.#request("POST", "/v1/search", { body: request });
  }

  listEndpoints(query = {}) {
    return this.#request("GET", "/v1/list-endpoints", { query });
  }

  details(request) {
    return this.#request("POST", "/v1/details", { body: request });
  }

  integrate(request) {
    return this.#request("POST", "/v1/integrate", { body: request });
  }

  run(request, { idempotencyKey } = {}) {
    const headers = idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey };
    return this.#request("POST", "/v1/run", { body: request, headers });
  }

  balance() {
    return this.#request("GET", "/v1/credits/balance");
  }

  check(request) {
    return this.#request("POST", "/v1/credits/check", { body: request });
  }

  usage(query = {}) {
    return this.#request("GET", "/v1/credits/usage", { query });
  }

  transactions(query = {}) {
    return this.#request("GET", "/v1/credits/transactions", { query });
  }

  // Requests are sent as given, without picking known fields: the gateway answers a field it
  // does not take with a 400 naming it, where dropping a misspelt one would run the call without it.
  async #request(method, path, { query, body, headers = {} } = {}) {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const init = {
      method,
      headers: { Accept: "application/json", Authorization: `Bearer ${this.#apiKey}`, ...headers },
    };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    for (let attempt = 0; ; attempt += 1) {
      const { response, answer } = await this.#exchange(url, init);
      if (response.ok && answer.success !== false) return answer;
      const error = errorFromAnswer(response, answer);
      // A 429 is refused before anything runs or is charged, so sending it again is safe.
      if (response.status !== 429 || attempt >= this.maxRetries) throw error;
      const waitMs = retryWaitMs(response.headers.get("retry-after"), attempt);
      if (waitMs > MAX_RETRY_WAIT_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }

  async #exchange(url, init) {
    const signal = AbortSignal.timeout(this.timeoutMs);
    let response;
    let text;
    try {
      response = await this.#fetch(url, { ...init, signal });
      text = await response.text();
    } catch (cause) {
      if (signal.aborted) {
        throw new GatewayError(`No answer from ${url.origin} within ${this.timeoutMs} ms`, {
          code: "TIMEOUT",
          cause,
        });
      }
      const reason = cause?.cause?.message ?? cause?.message ?? String(cause);
      throw new GatewayError(`Could not reach ${url.origin}: ${reason}`, {
        code: "NETWORK_ERROR",
        cause,
      });
    }
    let answer;
    try {
      answer = JSON.parse(text);
    } catch {
      answer = undefined;
    }
    if (answer === null || typeof answer !== "object" || Array.isArray(answer)) {
      throw new GatewayError(
        `${url.origin} answered ${response.status} without a JSON object: ${text.slice(0, 200)}`,
        { code: "INVALID_RESPONSE", status: response.status, requestId: requestIdOf(response) },
      );
    }
    return { response, answer };
  }
}

function errorFromAnswer(response, answer) {
  const status = response.status;
  return new GatewayError(answer.error ?? `The gateway answered ${status}`, {
    code: answer.code ?? CODE_FOR_STATUS[status] ?? (status >= 500 ? "UPSTREAM_ERROR" : "ERROR"),
    status,
    requestId: answer.requestId ?? requestIdOf(response),
    upstreamStatus: answer.upstreamStatus ?? null,
    data: answer.data ?? null,
    priceCents: answer.priceCents ?? null,
    retryAfterSeconds: retryAfterSecondsOf(response.headers.get("retry-after")),
  });
}

function requestIdOf(response) {
  return response.headers.get("x-request-id") ?? null;
}

function retryAfterSecondsOf(header) {
  if (!header) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

function retryWaitMs(header, attempt) {
  const seconds = retryAfterSecondsOf(header);
  return seconds === null ? FIRST_BACKOFF_MS * 2 ** attempt : seconds * 1000;
}
