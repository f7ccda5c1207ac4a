"""The HTTP client that calls providers.

One pooled ``requests.Session`` per provider origin. Retries go through urllib3's ``Retry`` and
only where they are safe: failures to connect (the request never left), and 429/502/503/504 for
idempotent methods, honouring ``Retry-After``, at most twice and never past the call's deadline.
A request is prepared on its own and sent through the session (``Session.send``): the session
brings its pool, adapters and retries, and nothing of its per-request merging of cookies, hooks
and settings, which the gateway never uses and which cost a tenth of a millisecond a call.
Nothing of the caller's request is forwarded but the method, path, query and JSON body; the
provider's credential is added here. Redirects are not followed, responses are size-capped, and
connections to private, loopback or link-local addresses are refused after the socket connects
(so DNS rebinding cannot slip past a check made before it) unless the provider is allowed them.
"""

import contextvars
import http.cookiejar
import ipaddress
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    MaxRetryError,
    NameResolutionError,
    NewConnectionError,
    ReadTimeoutError,
)
from urllib3.util.retry import Retry

from gateway.errors import InvalidRequest

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
RETRY_STATUSES = (429, 502, 503, 504)
USER_AGENT = "api-gateway/1.0"
STREAM_READ_BYTES = 65536

_deadline: contextvars.ContextVar[float] = contextvars.ContextVar("upstream_deadline")


class UpstreamFailure(Exception):
    """The provider could not be reached or its answer could not be used. Never charged."""

    def __init__(self, message: str, *, timeout: bool = False):
        super().__init__(message)
        self.message = message
        self.timeout = timeout


@dataclass(frozen=True)
class UpstreamAuth:
    type: str = "none"  # none | bearer | header | query
    name: str = ""
    secret: str = ""


@dataclass
class UpstreamRequest:
    method: str
    url: str
    query: dict = field(default_factory=dict)
    body: Any = None
    has_body: bool = False
    body_encoding: str = "json"  # json | form | multipart
    auth: UpstreamAuth = field(default_factory=UpstreamAuth)
    timeout_seconds: float = 30
    allow_private_network: bool = False


@dataclass
class UpstreamResponse:
    status: int
    content_type: str
    content: bytes
    elapsed_ms: float


class DeadlineRetry(Retry):
    """A Retry that gives up instead of sleeping past the current call's deadline."""

    def increment(self, method=None, url=None, response=None, error=None, **kwargs):
        retry = super().increment(method, url, response=response, error=error, **kwargs)
        deadline = _deadline.get(None)
        if deadline is not None:
            pause = (retry.get_retry_after(response) if response is not None else None) or (
                retry.get_backoff_time()
            )
            if time.monotonic() + pause >= deadline:
                raise MaxRetryError(kwargs.get("_pool"), url, error)
        return retry


def _peer_is_public(sock) -> bool:
    address = ipaddress.ip_address(sock.getpeername()[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


class NonPublicAddressError(ConnectionRefusedError):
    pass


class _PublicOnly:
    def connect(self):
        super().connect()
        if not _peer_is_public(self.sock):
            peer = self.sock.getpeername()[0]
            self.close()
            raise NonPublicAddressError(f"refused to connect to the non-public address {peer}")


class PublicHTTPConnection(_PublicOnly, HTTPConnection):
    pass


class PublicHTTPSConnection(_PublicOnly, HTTPSConnection):
    pass


class PublicHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = PublicHTTPConnection


class PublicHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = PublicHTTPSConnection


class PublicOnlyAdapter(HTTPAdapter):
    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": PublicHTTPConnectionPool,
            "https": PublicHTTPSConnectionPool,
        }


def _new_session(*, public_only: bool) -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # no proxies or .netrc credentials from the environment
    # The session is shared by every caller of a provider: it must never keep cookies.
    session.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
    retry = DeadlineRetry(
        total=2,
        connect=2,
        read=0,
        status=2,
        other=0,
        redirect=0,
        allowed_methods=IDEMPOTENT_METHODS,
        status_forcelist=RETRY_STATUSES,
        backoff_factor=0.05,
        respect_retry_after_header=True,
        raise_on_status=False,
        raise_on_redirect=False,
    )
    adapter_class = PublicOnlyAdapter if public_only else HTTPAdapter
    adapter = adapter_class(
        max_retries=retry,
        pool_connections=4,
        pool_maxsize=settings.UPSTREAM_POOL_SIZE,
    )
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


_sessions: dict[tuple[str, bool], requests.Session] = {}
_sessions_lock = threading.Lock()


def _session_for(origin: str, *, public_only: bool) -> requests.Session:
    key = (origin, public_only)
    session = _sessions.get(key)
    if session is None:
        with _sessions_lock:
            session = _sessions.setdefault(key, _new_session(public_only=public_only))
    return session


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port


def build_url(base_url: str, path: str) -> str:
    """The provider URL for an already-encoded path; it must stay on the base URL's origin."""
    url = base_url.rstrip("/") + path
    if _origin(url) != _origin(base_url) or not urlsplit(url).path.startswith(
        urlsplit(base_url).path.rstrip("/")
    ):
        raise InvalidRequest(f"path {path!r} leaves the provider's address")
    return url


DEFAULT_HEADERS = {
    "User-Agent": USER_AGENT,
    "Accept": "application/json, */*;q=0.5",
    "Accept-Encoding": requests.utils.DEFAULT_ACCEPT_ENCODING,
}


def _with_credentials(request: UpstreamRequest) -> tuple[dict, dict]:
    headers = dict(DEFAULT_HEADERS)
    params = dict(request.query)
    auth = request.auth
    if auth.type == "bearer" and auth.secret:
        headers["Authorization"] = f"Bearer {auth.secret}"
    elif auth.type == "header" and auth.secret:
        headers[auth.name] = auth.secret
    elif auth.type == "query" and auth.secret:
        params[auth.name] = auth.secret
    return headers, params


def upstream_call(request: UpstreamRequest) -> UpstreamResponse:
    """Call the provider once (plus safe retries). Raises UpstreamFailure when unusable."""
    started = time.perf_counter()
    response = _send(request)
    try:
        content = _failures_translated(
            lambda: _read_capped(response, settings.UPSTREAM_MAX_RESPONSE_BYTES), request
        )
    finally:
        response.close()
    return UpstreamResponse(
        status=response.status_code,
        content_type=response.headers.get("Content-Type", ""),
        content=content,
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )


class UpstreamStream:
    """A provider's answer whose body is still arriving: ``chunks()`` yields what each read of
    the socket brings, as it comes (an event stream is relayed, never buffered). A pause longer
    than the provider's timeout, a broken connection or more than the size limit raise
    UpstreamFailure mid-way. ``close()`` drops the connection (the provider stops generating)."""

    def __init__(self, response: requests.Response, request: UpstreamRequest, started: float):
        self.status = response.status_code
        self.content_type = response.headers.get("Content-Type", "")
        self.headers_ms = (time.perf_counter() - started) * 1000
        self._response = response
        self._request = request

    def chunks(self):
        limit, size = settings.UPSTREAM_MAX_RESPONSE_BYTES, 0
        raw = self._response.raw
        while True:
            chunk = _failures_translated(lambda: raw.read1(STREAM_READ_BYTES), self._request)
            if not chunk:
                return
            size += len(chunk)
            if size > limit:
                raise UpstreamFailure(f"The provider's answer exceeds the limit of {limit} bytes")
            yield chunk

    def read(self) -> bytes:
        """The whole (remaining) body, size-capped, for an answer that is not a stream."""
        return _failures_translated(
            lambda: _read_capped(self._response, settings.UPSTREAM_MAX_RESPONSE_BYTES),
            self._request,
        )

    def close(self) -> None:
        self._response.close()


def upstream_open(request: UpstreamRequest) -> UpstreamStream:
    """Send the request and return once the provider's status and headers have arrived; the
    body is read from the returned stream. Raises UpstreamFailure when the provider cannot be
    reached."""
    started = time.perf_counter()
    return UpstreamStream(_send(request, identity=True), request, started)


def _send(request: UpstreamRequest, *, identity: bool = False) -> requests.Response:
    """The provider's response with its body unread (the caller closes it). ``identity`` asks
    for an uncompressed body, since a compressed stream would arrive in compressor-sized
    bursts instead of event by event."""
    headers, params = _with_credentials(request)
    if identity:
        headers["Accept-Encoding"] = "identity"
    scheme, host, port = _origin(request.url)
    origin = f"{scheme}://{host}:{port or ''}"
    session = _session_for(origin, public_only=not request.allow_private_network)
    timeout = _timeout(request)
    token = _deadline.set(time.monotonic() + timeout)
    try:
        prepared = requests.PreparedRequest()
        prepared.prepare(
            method=request.method,
            url=request.url,
            headers=headers,
            # Encoded here: requests' own encoding of a dict spends more on type checks.
            params=urlencode(params, doseq=True),
            **_encoded_body(request),
        )
        response = _failures_translated(
            lambda: session.send(
                prepared,
                timeout=(min(timeout, settings.UPSTREAM_CONNECT_TIMEOUT_SECONDS), timeout),
                allow_redirects=False,
                stream=True,
            ),
            request,
        )
    finally:
        _deadline.reset(token)
    if 300 <= response.status_code < 400:
        response.close()
        raise UpstreamFailure(
            f"The provider redirected to {response.headers.get('Location', 'elsewhere')!r}; "
            "redirects are not followed"
        )
    return response


def _timeout(request: UpstreamRequest) -> float:
    return min(request.timeout_seconds, settings.UPSTREAM_TIMEOUT_CAP_SECONDS)


def _failures_translated(work, request: UpstreamRequest):
    """Run ``work`` (a send or a read), turning a network failure into UpstreamFailure."""
    try:
        return work()
    except (requests.RequestException, HTTPError, OSError) as error:
        if _timed_out(error):
            raise UpstreamFailure(
                f"The provider did not answer within {_timeout(request):g} seconds", timeout=True
            ) from None
        raise UpstreamFailure(f"Could not reach the provider: {_reason(error)}") from None


def _encoded_body(request: UpstreamRequest) -> dict:
    if not request.has_body:
        return {}
    if request.body_encoding == "form":
        return {"data": request.body}
    if request.body_encoding == "multipart":
        return {
            "files": {
                name: (None, value if isinstance(value, str) else json.dumps(value))
                for name, value in request.body.items()
            }
        }
    return {"json": request.body}


def _read_capped(response: requests.Response, limit: int) -> bytes:
    declared = response.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise UpstreamFailure(f"The provider's response exceeds the limit of {limit} bytes")
    chunks, size = [], 0
    for chunk in response.iter_content(chunk_size=65536):
        size += len(chunk)
        if size > limit:
            raise UpstreamFailure(f"The provider's response exceeds the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _causes(error: BaseException):
    """The exception and everything it wraps (urllib3 nests causes in args and .reason)."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        inner = getattr(error, "reason", None)
        if not isinstance(inner, BaseException):
            inner = next((arg for arg in error.args if isinstance(arg, BaseException)), None)
        error = inner or error.__cause__ or error.__context__


def _timed_out(error: Exception) -> bool:
    # urllib3 wraps a read timeout in MaxRetryError, which requests reports as ConnectionError.
    if isinstance(error, requests.Timeout):
        return True
    for cause in _causes(error):
        if isinstance(cause, NewConnectionError):
            return False
        if isinstance(cause, ReadTimeoutError | ConnectTimeoutError | TimeoutError):
            return True
    return False


def _reason(error: Exception) -> str:
    causes = list(_causes(error))
    for cause in causes:
        if isinstance(cause, NonPublicAddressError):
            return str(cause)
    for cause in causes:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, ConnectionResetError):
            return "connection reset by the provider"
        if isinstance(cause, NameResolutionError):
            return "the provider's host name does not resolve"
    return str(causes[-1])
