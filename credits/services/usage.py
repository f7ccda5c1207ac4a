"""Usage events: one per gateway call, whatever its outcome, with what it cost."""

from datetime import datetime

from django.utils import timezone

from credits.models import Account, UsageEvent


def usage_event_new(
    *,
    account_id: int,
    api_key_id: int | None,
    request_id: str,
    api_slug: str,
    path: str,
    method: str,
    status: str,
    mode: str,
    cost_micros: int,
    latency_ms: int,
    created_at: datetime | None = None,
    endpoint_id: int | None = None,
    params_fingerprint: str = "",
    billing_root_request_id: str = "",
) -> UsageEvent:
    """An unsaved usage event, for a service to save in its own transaction."""
    return UsageEvent(
        account_id=account_id,
        api_key_id=api_key_id,
        request_id=request_id,
        api_slug=api_slug,
        path=path,
        method=method,
        status=status,
        mode=mode,
        cost_micros=cost_micros,
        latency_ms=latency_ms,
        created_at=created_at or timezone.now(),
        endpoint_id=endpoint_id,
        params_fingerprint=params_fingerprint,
        billing_root_request_id=billing_root_request_id,
    )


def usage_event_record(*, account: Account | int, **fields) -> UsageEvent:
    """Save a usage event of its own (a call that moved no money)."""
    account_id = account if isinstance(account, int) else account.pk
    event = usage_event_new(account_id=account_id, **fields)
    event.save(force_insert=True)
    return event
