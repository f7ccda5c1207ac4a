// Types of gw-sdk: the requests and answers of the gateway's /v1 operations, and its errors.

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS";
/** `"$0.01"` per call, `"$0.00"` when free, `"$0.0025"` per result, or `"dynamic"` (per token). */
export type Price = string;
export type PriceUnit = "call" | "result" | "token";
export type SnippetFormat = "gw-sdk" | "run-api" | "curl" | "x402-fetch" | "x402-python";
export type KeyMode = "live" | "test";

export interface GatewayOptions {
  /** The gateway key (`gw_live_...` or `gw_test_...`); defaults to `process.env.GATEWAY_API_KEY`. */
  apiKey?: string;
  /** Defaults to `process.env.GATEWAY_BASE_URL`, then `http://127.0.0.1:8000`. */
  baseUrl?: string;
  /** How long one attempt may take, in milliseconds (default 90000). */
  timeoutMs?: number;
  /** How many times a 429 answer is retried after its `Retry-After` (default 2). */
  maxRetries?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

// --- Requests -------------------------------------------------------------------------------

export interface SearchRequest {
  /** The need, in plain language (1 to 1000 characters). */
  prompt: string;
  /** Endpoints to return, 1 to 50 (default 10). */
  limit?: number;
}

export interface ListEndpointsQuery {
  /** APIs per page, 1 to 500 (default 100). */
  limit?: number;
  /** APIs skipped (default 0). */
  offset?: number;
  verified?: boolean;
  isPayable?: boolean;
}

export interface EndpointChoice {
  /** The API's slug. */
  api: string;
  /** A catalog path (`/v2/jobs/{id}`) or a concrete one (`/v2/jobs/abc`). */
  path: string;
  /** Needed only when the path has several methods. */
  method?: HttpMethod;
}

export type DetailsRequest = EndpointChoice;

export interface IntegrateRequest extends EndpointChoice {
  /** Default `"gw-sdk"`. */
  format?: SnippetFormat | "all";
}

export interface RunRequest {
  api: string;
  path: string;
  /** Sent as the provider's query string. */
  query?: { [name: string]: JsonValue };
  /** Sent as the body of a POST, PUT or PATCH. */
  body?: JsonObject | JsonValue[];
  /** Values of the path template's placeholders, by name. */
  pathParams?: { [name: string]: string };
  /** `billing.requestId` of a charged first page: the next page is not charged. */
  parentRequestId?: string;
  /** Needed only when the path has several methods. */
  method?: HttpMethod;
}

export interface RunOptions {
  /** A retry with the same key and request replays the first answer and is not charged again. */
  idempotencyKey?: string;
}

export interface CheckRequest {
  /** Cents (100 = one dollar), up to 4 decimals. */
  amountCents: number | string;
}

export interface UsageQuery {
  /** The rolling window, 1 to 365 days (default 30). */
  days?: number;
  /** 1 to 200 (default 50). */
  limit?: number;
  offset?: number;
}

export interface TransactionsQuery {
  /** 1 to 200 (default 50). */
  limit?: number;
  offset?: number;
}

// --- Answers --------------------------------------------------------------------------------

export interface WhoAmIAnswer {
  success: true;
  data: {
    key: { masked: string; name: string; mode: KeyMode };
    owner: { type: "user" | "organization"; name: string };
  };
}

export interface SearchEndpoint {
  id: string;
  path: string;
  method: string;
  description: string;
  /** Decimal dollars without a symbol (`"0.01"`), `"0"` when free, or `"dynamic"`. */
  price: string;
  isPayable: boolean;
  verified: boolean;
  /**
   * Calibrated relevance from 0 to 1: 0.5 and above is worth reading; a best score below 0.3
   * means the catalog likely has nothing for the need.
   */
  score: number;
}

export interface SearchApiRecord {
  id: string;
  name: string;
  slug: string;
  baseUrl: string;
  payableBaseUrl?: string;
  verified: boolean;
  endpoints: SearchEndpoint[];
}

export interface SearchAnswer {
  success: true;
  results: SearchApiRecord[];
  count: number;
  apisCount: number;
  prompt: string;
  searchType: "semantic";
  /** Milliseconds. */
  responseTime: number;
}

export interface Parameter {
  name: string;
  type: string;
  required: boolean;
  description: string;
  enum?: JsonValue[];
  default?: JsonValue;
  example?: JsonValue;
  format?: string;
  items?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  multiSegment?: boolean;
}

export interface ApiSummary {
  name: string;
  slug: string;
  description: string;
  baseUrl: string;
  verified: boolean;
}

export interface CatalogEndpoint {
  path: string;
  method: string;
  description: string;
  price: Price;
  priceUnit: PriceUnit;
  isPayable: boolean;
  verified: boolean;
  docsUrl: string;
  queryParams: Parameter[];
  bodyParams: Parameter[];
}

export interface CatalogApi extends ApiSummary {
  category?: string;
  endpoints: CatalogEndpoint[];
}

export interface ListEndpointsAnswer {
  success: true;
  apis: CatalogApi[];
  count: number;
  totalEndpoints: number;
  pagination: { limit: number; offset: number; hasMore: boolean };
}

export interface EndpointDetails extends CatalogEndpoint {
  priceDetail: string;
  /** `"object"`, `"array"` or `""`. */
  bodyType: string;
  pathParams: Parameter[];
  paginationParams: string[];
  /** For an asynchronous job: its free poll endpoint. */
  pollEndpoint: { method: string; path: string } | null;
}

export interface DetailsAnswer {
  success: true;
  api: ApiSummary;
  endpoint: EndpointDetails;
  usage: {
    /** The exact `POST {base}/v1/run {...}` call. */
    runApi: string;
    /** The endpoint's pay-per-call address on the x402 rail. */
    x402: string;
  };
}

export interface IntegrateAnswer {
  success: true;
  api: { name: string; slug: string };
  endpoint: { path: string; method: string; price: Price; priceUnit: PriceUnit };
  format: SnippetFormat | "all";
  snippets: Partial<Record<SnippetFormat, string>>;
  setup: { sdk: string; x402: string };
}

export interface RunAnswer<Data = unknown> {
  success: true;
  /** The price of the call in cents (100 = one dollar). */
  priceCents: number;
  /** The provider's answer: its JSON unmodified, other text as a string, binary as base64. */
  data: Data;
  /** `run_<epoch ms>_<hex>`. */
  requestId: string;
  billing: { requestId: string; parentRequestId?: string; charged: boolean };
}

export interface BinaryData {
  contentType: string;
  encoding: "base64";
  content: string;
}

export interface BalanceAnswer {
  success: true;
  /** Dollars, `"$12.50"`. */
  balance: string;
}

export interface CheckAnswer {
  success: true;
  sufficient: boolean;
  balanceCents: number;
  requiredCents: number;
  shortfallCents: number;
}

export interface UsageEvent {
  api: string;
  path: string;
  method: string;
  /** ISO 8601. */
  timestamp: string;
  /** Dollars, `"$0.0075"`. */
  cost: string;
  status: "completed" | "failed" | "rejected";
  requestId: string;
}

export interface UsageAnswer {
  success: true;
  usage: UsageEvent[];
  totalSpent: string;
  pagination: { limit: number; offset: number; count: number; total: number };
}

export type TransactionType =
  | "grant"
  | "purchase"
  | "api_call"
  | "revenue"
  | "fee"
  | "refund"
  | "adjustment";

export interface Transaction {
  /** `txn_<n>`. */
  id: string;
  type: TransactionType;
  /** Negative for charges, positive for credits. */
  amountCents: number;
  description: string;
  /** ISO 8601. */
  timestamp: string;
  /** An `api_call` carries `api`, `path`, `method` and `requestId`. */
  metadata: { [key: string]: JsonValue };
}

export interface TransactionsAnswer {
  success: true;
  transactions: Transaction[];
  pagination: { limit: number; offset: number; count: number };
}

// --- Errors ---------------------------------------------------------------------------------

export type GatewayErrorCode =
  | "INVALID_REQUEST"
  | "UNAUTHORIZED"
  | "INSUFFICIENT_CREDITS"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "IDEMPOTENCY_IN_PROGRESS"
  | "PAYLOAD_TOO_LARGE"
  | "IDEMPOTENCY_MISMATCH"
  | "RATE_LIMITED"
  | "INTERNAL_ERROR"
  | "UPSTREAM_ERROR"
  /** No answer within `timeoutMs`. */
  | "TIMEOUT"
  /** The gateway could not be reached. */
  | "NETWORK_ERROR"
  /** The answer was not the gateway's JSON (a proxy's error page, say). */
  | "INVALID_RESPONSE"
  | (string & {});

export interface GatewayErrorDetails {
  code?: GatewayErrorCode;
  status?: number;
  requestId?: string | null;
  upstreamStatus?: number | null;
  data?: unknown;
  priceCents?: number | null;
  retryAfterSeconds?: number | null;
  cause?: unknown;
}

/** The error envelope `{success: false, error, code}` of a failed call, or a failure to get one. */
export class GatewayError extends Error {
  constructor(message: string, details?: GatewayErrorDetails);
  name: "GatewayError";
  code: GatewayErrorCode;
  /** The HTTP status; 0 when no answer came (TIMEOUT, NETWORK_ERROR). */
  status: number;
  /** The run's request id (`run_...`), for run failures. */
  requestId: string | null;
  /** The provider's status, for UPSTREAM_ERROR. */
  upstreamStatus: number | null;
  /** The provider's answer, for UPSTREAM_ERROR. */
  data: unknown;
  /** What the call would have cost, for INSUFFICIENT_CREDITS. */
  priceCents: number | null;
  /** The `Retry-After` of a RATE_LIMITED answer. */
  retryAfterSeconds: number | null;
}

// --- The client -----------------------------------------------------------------------------

export class Gateway {
  /** Throws a GatewayError (code UNAUTHORIZED) when no key is given or in the environment. */
  constructor(options?: GatewayOptions);
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;

  /** `GET /v1/whoami`: the key's owner and mode. */
  whoami(): Promise<WhoAmIAnswer>;
  /** `POST /v1/search`: endpoints that answer a need, grouped by API. */
  search(request: SearchRequest): Promise<SearchAnswer>;
  /** `GET /v1/list-endpoints`: a page of APIs with their endpoints. */
  listEndpoints(query?: ListEndpointsQuery): Promise<ListEndpointsAnswer>;
  /** `POST /v1/details`: one endpoint's parameters, price and how to call it. */
  details(request: DetailsRequest): Promise<DetailsAnswer>;
  /** `POST /v1/integrate`: code snippets that call an endpoint. */
  integrate(request: IntegrateRequest): Promise<IntegrateAnswer>;
  /** `POST /v1/run`: call the provider and pay; `result.data` is the provider's answer. */
  run<Data = unknown>(request: RunRequest, options?: RunOptions): Promise<RunAnswer<Data>>;
  /** `GET /v1/credits/balance`. */
  balance(): Promise<BalanceAnswer>;
  /** `POST /v1/credits/check`: whether the balance covers an amount. */
  check(request: CheckRequest): Promise<CheckAnswer>;
  /** `GET /v1/credits/usage`: calls made, newest first. */
  usage(query?: UsageQuery): Promise<UsageAnswer>;
  /** `GET /v1/credits/transactions`: ledger entries, newest first. */
  transactions(query?: TransactionsQuery): Promise<TransactionsAnswer>;
}
