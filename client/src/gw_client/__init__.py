"""The gateway's Python client (``Gateway``) and the ``gw`` command built on it."""

from gw_client.client import Gateway
from gw_client.errors import (
    AuthError,
    GatewayError,
    InsufficientCredits,
    InvalidRequest,
    NetworkError,
    NotFound,
    RateLimited,
    UpstreamError,
)
from gw_client.version import __version__

__all__ = [
    "AuthError",
    "Gateway",
    "GatewayError",
    "InsufficientCredits",
    "InvalidRequest",
    "NetworkError",
    "NotFound",
    "RateLimited",
    "UpstreamError",
    "__version__",
]
