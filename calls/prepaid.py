"""Paying with prepaid credits, as POST /v1/run does: the credits ledger behind the pipeline's
payment interface.

Authorizing reserves a hold on the quote in the caller's account (HTTP 402 when the available
balance does not cover it); settling captures the actual price, booking the provider's revenue
and the platform's fee, or releases the hold, and saves the call's usage event in the same
transaction. Test keys, polls of an asynchronous job, free calls and continuation pages reserve
nothing and are never charged.
"""

import hashlib
import json
from datetime import timedelta

from django.utils import timezone
from django.utils.functional import cached_property

from calls.payment import Call, CallRecord, Outcome
from credits.models import Hold, UsageEvent
from credits.services.accounts import account_id_for_owner
from credits.services.holds import hold_capture, hold_release, hold_reserve
from credits.services.usage import usage_event_new, usage_event_record
from gateway.errors import InvalidRequest
from gateway.selectors import KeyPrincipal

CONTINUATION_WINDOW = timedelta(hours=24)


class PrepaidCredits:
    """One call's payment from the account that owns the caller's key.

    ``parent_request_id`` asks to continue a charged request (its next page): with unchanged
    non-pagination parameters, on the same endpoint, within CONTINUATION_WINDOW, the call is
    not charged again and ``continues`` names the request it continues.
    """

    settles_before_delivery = False

    def __init__(self, *, principal: KeyPrincipal, parent_request_id: str | None = None):
        self.principal = principal
        self.parent_request_id = parent_request_id
        self.hold: Hold | None = None
        self.continues: str | None = None
        self.charged_micros = 0
        self._fingerprint = ""
        self._root_request_id = ""  # the charged request this call is billed under

    @cached_property
    def account_id(self) -> int:
        return account_id_for_owner(
            user_id=self.principal.user_id, organization_id=self.principal.organization_id
        )

    def authorize(self, *, call: Call, quote_micros: int) -> None:
        self._fingerprint = _fingerprint(call)
        if self.parent_request_id:
            root = self._continued_request(self.parent_request_id)
            if (
                root is not None
                and root.endpoint_id == call.endpoint.pk
                and root.params_fingerprint == self._fingerprint
                and root.created_at >= timezone.now() - CONTINUATION_WINDOW
            ):
                self.continues = self.parent_request_id
                self._root_request_id = root.request_id
                return
        # Polling an asynchronous job is free: starting it was charged.
        if self.principal.is_test or quote_micros <= 0 or call.polled:
            return
        self._root_request_id = call.request_id
        self.hold = hold_reserve(
            account=self.account_id,
            amount_micros=quote_micros,
            request_id=call.request_id,
            description=call.description,
            metadata={
                "api": call.endpoint.api.slug,
                "path": call.endpoint.path,
                "method": call.endpoint.method,
            },
        )

    def settle(self, *, record: CallRecord) -> None:
        captured = self.hold is not None and record.outcome == Outcome.COMPLETED
        fields = self._usage_fields(record, cost_micros=record.price_micros if captured else 0)
        if self.hold is None:
            usage_event_record(account=self.account_id, **fields)
            return
        usage = usage_event_new(account_id=self.account_id, **fields)
        if captured:
            hold_capture(
                hold=self.hold,
                amount_micros=record.price_micros,
                provider_account=self._provider_account_id(record.call),
                description=record.call.description,
                usage=usage,
            )
            self.charged_micros = record.price_micros
        else:
            hold_release(hold=self.hold, usage=usage)

    def _usage_fields(self, record: CallRecord, *, cost_micros: int) -> dict:
        """The call's usage event, as usage_event_new and usage_event_record take it."""
        endpoint = record.call.endpoint
        return {
            "api_key_id": self.principal.key_id,
            "request_id": record.call.request_id,
            "api_slug": endpoint.api.slug,
            "path": endpoint.path,
            "method": endpoint.method,
            "status": UsageEvent.Status(record.outcome.value),
            "mode": self.principal.mode,
            "cost_micros": cost_micros,
            "latency_ms": record.latency_ms,
            "created_at": record.started_at,
            "endpoint_id": endpoint.pk,
            "params_fingerprint": self._fingerprint,
            "billing_root_request_id": self._root_request_id,
        }

    @staticmethod
    def _provider_account_id(call: Call) -> int | None:
        """The account of the organization that owns the API, which takes the revenue."""
        owner_id = call.endpoint.api.owner_id
        if owner_id is None:
            return None
        return account_id_for_owner(user_id=None, organization_id=owner_id)

    def _continued_request(self, parent_id: str) -> UsageEvent | None:
        """The charged first page ``parent_id`` continues, or None when it was not charged."""
        parent = UsageEvent.objects.filter(request_id=parent_id).first()
        if parent is None or parent.account_id != self.account_id:
            raise InvalidRequest(f"parentRequestId {parent_id} is not a request of this account")
        root_id = parent.billing_root_request_id
        if not root_id:
            return None
        root = (
            parent
            if root_id == parent.request_id
            else UsageEvent.objects.filter(request_id=root_id, account_id=self.account_id).first()
        )
        if root is None or root.status != UsageEvent.Status.COMPLETED or root.cost_micros <= 0:
            return None
        return root


def _fingerprint(call: Call) -> str:
    """A digest of the call's inputs but its pagination parameters: a next page has the same."""
    paging = set(call.endpoint.pagination_params or [])
    body = call.body
    if isinstance(body, dict):
        body = {name: value for name, value in body.items() if name not in paging}
    identity = {
        "query": {name: value for name, value in call.query.items() if name not in paging},
        "body": body,
        "pathParams": {
            name: value for name, value in call.path_params.items() if name not in paging
        },
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()
