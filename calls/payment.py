"""How a call is paid for: the one step of the paid-call pipeline that differs between the
prepaid credits of POST /v1/run (calls.prepaid) and the pay-per-call rails.

The pipeline (calls.pipeline) asks a ``Payment`` twice. ``authorize`` comes before the provider
is called: reserve the quote, or verify and claim a payment, or refuse the call with an ApiError
(402 when it is not paid for). ``settle`` comes once the call has ended, whatever its outcome
(also when its inputs were refused before ``authorize``): charge the price of a completed call
(never more than was authorized), give back the rest or all of it, and record the call, in one
transaction. No network call may run inside that transaction.
"""

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from catalog.models import Endpoint


class Outcome(enum.StrEnum):
    COMPLETED = "completed"  # the provider answered 2xx: its price is charged
    FAILED = "failed"  # the provider was called and failed, or could not be reached: free
    REJECTED = "rejected"  # refused before the provider was called: free


@dataclass(frozen=True)
class Call:
    """One call of an enabled endpoint (its ``api`` loaded), with the caller's inputs, about to
    be paid for. ``polled`` marks an asynchronous job's polling endpoint: starting the job was
    paid, polling it is free."""

    request_id: str
    endpoint: Endpoint
    query: dict = field(default_factory=dict)
    body: Any = None
    path_params: dict = field(default_factory=dict)
    polled: bool = False

    @property
    def description(self) -> str:
        """ "<api slug> <METHOD> <catalog path>", as holds and ledger entries name a call."""
        return f"{self.endpoint.api.slug} {self.endpoint.method} {self.endpoint.path}"


@dataclass(frozen=True)
class CallRecord:
    """How a call ended, for its payment to settle and record."""

    call: Call
    outcome: Outcome
    price_micros: int  # what the provider's answer says the call costs; 0 unless completed
    latency_ms: int
    started_at: datetime


class Payment(Protocol):
    # True when the answer may not leave before the payment settles (the rails: a signed payment
    # is settled whole, and a refused one withholds the answer). A stream is then settled at
    # the quote before its first event; otherwise when it ends, at the price it came to.
    settles_before_delivery: bool

    def authorize(self, *, call: Call, quote_micros: int) -> None:
        """Secure ``quote_micros`` (the most the call can cost) before the provider is called,
        or raise an ApiError to refuse the call."""

    def settle(self, *, record: CallRecord) -> None:
        """Charge a completed call's price, give back what was not charged and record the call,
        atomically. Called exactly once for every call the pipeline resolved to an endpoint."""
