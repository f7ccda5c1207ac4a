"""A typed Python client of the gateway's /v1 API.

    from gw_client import Gateway, InsufficientCredits

    gateway = Gateway()  # GATEWAY_API_KEY and GATEWAY_BASE_URL from the environment
    hits = gateway.search("find the email addresses of people at a company domain", limit=3)
    answer = gateway.run("hunter", "/v2/domain-search", query={"domain": "stripe.com"})
    print(answer["priceCents"], answer["data"])

Each method returns the decoded JSON answer (a dict) exactly as the README's HTTP API section
documents it, and raises a ``GatewayError`` subclass (see ``gw_client.errors``) otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from gw_client.errors import (
    AuthError,
    GatewayError,
    InvalidRequest,
    NetworkError,
    NotFound,
    error_from_answer,
)
from gw_client.version import __version__

DEFAULT_BASE_URL = "http://127.0.0.1:8000"

Json = dict[str, Any]


class Gateway:
    """One gateway key, one method per /v1 operation.

    ``api_key`` and ``base_url`` default to the ``GATEWAY_API_KEY`` and ``GATEWAY_BASE_URL``
    environment variables (the address defaults to http://127.0.0.1:8000). ``timeout`` bounds
    each request in seconds (a provider call may take up to 60 s). A 429 is retried up to
    ``max_retries`` times after the wait its ``Retry-After`` asks for, never waiting more than
    ``max_retry_wait`` seconds; so is a connection that could not be opened. A ``session`` of
    your own gets the retrying adapter mounted for ``base_url`` only.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 30,
        max_retries: int = 2,
        session: requests.Session | None = None,
        max_retry_wait: float = 60,
    ):
        self.api_key = api_key or os.environ.get("GATEWAY_API_KEY") or ""
        if not self.api_key:
            raise AuthError("no API key: pass api_key or set GATEWAY_API_KEY", "NO_API_KEY")
        address = base_url or os.environ.get("GATEWAY_BASE_URL") or DEFAULT_BASE_URL
        self.base_url = address.rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise InvalidRequest(
                f"the gateway address {self.base_url!r} must start with http:// or https://",
                "INVALID_BASE_URL",
            )
        self.timeout = timeout
        self._owns_session = session is None
        self.session = session or requests.Session()
        retry = HTTPAdapter(max_retries=_retry(max_retries, max_retry_wait))
        self.session.mount(self.base_url + "/", retry)

    def close(self) -> None:
        if self._owns_session:
            self.session.close()

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # Discovery

    def whoami(self) -> Json:
        """``{success, data: {key: {masked, name, mode}, owner: {type, name}}}``."""
        return self._request("GET", "/v1/whoami")

    def search(self, prompt: str, limit: int | None = None) -> Json:
        """Endpoints answering a need in plain language: ``{results, count, apisCount, ...}``,
        ``results`` grouped by API, each endpoint with ``price`` (dollars) and ``score``."""
        return self._request("POST", "/v1/search", json={"prompt": prompt, "limit": limit})

    def list_endpoints(
        self,
        limit: int | None = None,
        offset: int | None = None,
        verified: bool | None = None,
        is_payable: bool | None = None,
    ) -> Json:
        """A page of the catalog's APIs with their endpoints:
        ``{apis, count, totalEndpoints, pagination: {limit, offset, hasMore}}``."""
        params = {
            "limit": limit,
            "offset": offset,
            "verified": _flag(verified),
            "isPayable": _flag(is_payable),
        }
        return self._request("GET", "/v1/list-endpoints", params=params)

    def iter_apis(self, verified: bool | None = None) -> Iterator[Json]:
        """Every API of the catalog, paging through list-endpoints."""
        offset = 0
        while True:
            page = self.list_endpoints(limit=500, offset=offset, verified=verified)
            yield from page["apis"]
            if not page["pagination"]["hasMore"]:
                return
            offset += page["count"]

    def api(self, slug: str) -> Json:
        """One API's catalog record with its endpoints; ``NotFound`` when the catalog has none."""
        for record in self.iter_apis():
            if record["slug"] == slug:
                return record
        raise NotFound(f"no API {slug!r} in the catalog", "NOT_FOUND", 404)

    def details(self, api: str, path: str, method: str | None = None) -> Json:
        """One endpoint's parameters, price and how to call it: ``{api, endpoint, usage}``."""
        return self._request(
            "POST", "/v1/details", json={"api": api, "path": path, "method": method}
        )

    def integrate(
        self, api: str, path: str, format: str | None = None, method: str | None = None
    ) -> Json:
        """Code snippets calling an endpoint: ``{snippets: {<format>: code}, setup, ...}``.
        ``format`` is gw-sdk (the gateway's default), run-api, curl, x402-fetch, x402-python or
        all."""
        payload = {"api": api, "path": path, "format": format, "method": method}
        return self._request("POST", "/v1/integrate", json=payload)

    # The paid call

    def run(
        self,
        api: str,
        path: str,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        path_params: Mapping[str, str] | None = None,
        parent_request_id: str | None = None,
        method: str | None = None,
        idempotency_key: str | None = None,
    ) -> Json:
        """Call a provider endpoint and pay for it: ``{priceCents, data, requestId, billing:
        {requestId, charged}}``. ``data`` is the provider's answer. ``parent_request_id`` (a
        charged request's ``billing.requestId``) fetches a next page without a new charge; the
        same ``idempotency_key`` on a retry replays the first answer instead of paying twice."""
        payload = {
            "api": api,
            "path": path,
            "query": query,
            "body": body,
            "pathParams": path_params,
            "parentRequestId": parent_request_id,
            "method": method,
        }
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return self._request("POST", "/v1/run", json=payload, headers=headers)

    # Credits

    def balance(self) -> Json:
        """``{balance: "$12.50"}``: the balance minus pending holds."""
        return self._request("GET", "/v1/credits/balance")

    def check(self, amount_cents: float | int | str) -> Json:
        """Whether the balance covers ``amount_cents`` (100 = one dollar, up to 4 decimals):
        ``{sufficient, balanceCents, requiredCents, shortfallCents}``."""
        return self._request("POST", "/v1/credits/check", json={"amountCents": amount_cents})

    def usage(
        self, days: int | None = None, limit: int | None = None, offset: int | None = None
    ) -> Json:
        """Calls of the last ``days`` days, newest first:
        ``{usage: [{api, path, method, timestamp, cost, status, requestId}], totalSpent,
        pagination: {limit, offset, count, total}}``."""
        params = {"days": days, "limit": limit, "offset": offset}
        return self._request("GET", "/v1/credits/usage", params=params)

    def transactions(self, limit: int | None = None, offset: int | None = None) -> Json:
        """Ledger entries, newest first: ``{transactions: [{id, type, amountCents, description,
        timestamp, metadata}], pagination}``; charges are negative."""
        params = {"limit": limit, "offset": offset}
        return self._request("GET", "/v1/credits/transactions", params=params)

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Json:
        try:
            response = self.session.request(
                method,
                self.base_url + path,
                params=_present(params),
                json=_present(json),
                headers={
                    "Authorization": f"Bearer {self.api_key}",
                    "User-Agent": f"gw-client/{__version__}",
                    **(headers or {}),
                },
                timeout=self.timeout,
            )
        except requests.Timeout as error:
            message = f"the gateway at {self.base_url} did not answer within {self.timeout:g} s"
            if path == "/v1/run":
                message += (
                    "; the call may still have run: check usage before calling again, or "
                    "retry with the same Idempotency-Key"
                )
            raise NetworkError(message, "TIMEOUT") from error
        except requests.ConnectionError as error:
            raise NetworkError(
                f"cannot reach the gateway at {self.base_url}", "CONNECTION_FAILED"
            ) from error
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.ok and isinstance(body, dict):
            return body
        if response.ok:
            raise GatewayError(
                f"the answer of {self.base_url}{path} is not a JSON object; "
                "is GATEWAY_BASE_URL the gateway's address?",
                "NOT_JSON",
                response.status_code,
            )
        raise error_from_answer(response.status_code, body, response.headers)


def _retry(max_retries: int, max_retry_wait: float) -> Retry:
    return Retry(
        total=max_retries,
        connect=max_retries,
        # A request that reached the gateway may have run (and been charged): never resent.
        read=False,
        status=max_retries,
        # The gateway refuses a rate-limited request before doing anything, so a 429 is safe to
        # retry whatever the method, a paid POST /v1/run included.
        status_forcelist=[429],
        allowed_methods=None,
        respect_retry_after_header=True,
        retry_after_max=int(max_retry_wait),
        backoff_factor=0.5,
        raise_on_status=False,
    )


def _present(values: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The fields given a value: the gateway takes an absent field for its default."""
    if values is None:
        return None
    return {name: value for name, value in values.items() if value is not None}


def _flag(value: bool | None) -> str | None:
    return None if value is None else str(value).lower()
