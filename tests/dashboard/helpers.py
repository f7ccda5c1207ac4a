"""Book usage and money through the credits services, as the run path does."""

import itertools
from datetime import timedelta

from django.utils import timezone

from credits.services.holds import hold_capture, hold_reserve
from credits.services.usage import usage_event_record

_request_ids = itertools.count(1)


def record_call(
    account,
    *,
    api="hunter",
    path="/v2/domain-search",
    method="GET",
    status="completed",
    cost=10_000,
    at=None,
    days_ago=0,
):
    """A usage event as the run path records one."""
    return usage_event_record(
        account=account,
        api_key_id=None,
        request_id=f"req_{next(_request_ids)}",
        api_slug=api,
        path=path,
        method=method,
        status=status,
        mode="live",
        cost_micros=cost,
        latency_ms=120,
        created_at=at or timezone.now() - timedelta(days=days_ago),
    )


def charge(account, micros, *, provider=None, api="hunter", path="/v2/domain-search"):
    """A charged call: a hold with the call's metadata, captured for ``micros``."""
    request_id = f"run_{next(_request_ids)}"
    hold_reserve(
        account=account,
        amount_micros=micros,
        request_id=request_id,
        metadata={"api": api, "path": path},
    )
    hold_capture(
        request_id=request_id,
        amount_micros=micros,
        provider_account=provider,
        description=f"{api} {path}",
    )
    return request_id
