"""Idempotency-Key: a retried request replays the first outcome instead of running again."""

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from gateway.errors import ApiError, InvalidRequest
from gateway.models import IdempotencyRecord

MAX_KEY_LENGTH = 255


class IdempotencyInProgress(ApiError):
    status_code = 409
    code = "IDEMPOTENCY_IN_PROGRESS"
    default_message = (
        "A request with this Idempotency-Key is still in progress; retry when it has finished"
    )


class IdempotencyMismatch(ApiError):
    status_code = 422
    code = "IDEMPOTENCY_MISMATCH"
    default_message = "This Idempotency-Key was already used for a different request"


@dataclass(frozen=True)
class Replay:
    status: int
    body: dict


def request_fingerprint(payload) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _lifetime() -> timedelta:
    return timedelta(seconds=settings.IDEMPOTENCY_KEY_TTL_SECONDS)


def idempotency_begin(*, api_key_id: int, key: str, fingerprint: str) -> IdempotencyRecord | Replay:
    """Claim the key for this request, or say what an earlier use of it decides.

    Returns the claimed record, or a Replay of the stored outcome; raises 422 when the key was
    used for another request and 409 while the first request is still running.
    """
    if not key or len(key) > MAX_KEY_LENGTH or not key.isprintable():
        raise InvalidRequest(f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} printable characters")
    now = timezone.now()
    try:
        with transaction.atomic():
            return IdempotencyRecord.objects.create(
                api_key_id=api_key_id, key=key, fingerprint=fingerprint, created_at=now
            )
    except IntegrityError:
        pass
    with transaction.atomic():
        record = IdempotencyRecord.objects.select_for_update().get(api_key_id=api_key_id, key=key)
        abandoned = (
            record.state == IdempotencyRecord.State.IN_PROGRESS
            and record.created_at < now - timedelta(seconds=settings.HOLD_TTL_SECONDS)
        )
        if record.created_at < now - _lifetime() or abandoned:
            # An expired key, or one whose request died mid-way, starts afresh.
            record.fingerprint = fingerprint
            record.state = IdempotencyRecord.State.IN_PROGRESS
            record.response_status = record.response_body = None
            record.created_at = now
            record.save()
            return record
    if record.fingerprint != fingerprint:
        raise IdempotencyMismatch()
    if record.state == IdempotencyRecord.State.IN_PROGRESS:
        raise IdempotencyInProgress()
    return Replay(status=record.response_status, body=record.response_body)


def idempotency_complete(*, record: IdempotencyRecord, status: int, body: dict) -> None:
    record.state = IdempotencyRecord.State.COMPLETED
    record.response_status = status
    record.response_body = body
    record.save(update_fields=["state", "response_status", "response_body"])


def idempotency_abandon(*, record: IdempotencyRecord) -> None:
    """Forget a claim whose request was refused before it ran, so a retry runs it."""
    IdempotencyRecord.objects.filter(
        pk=record.pk, state=IdempotencyRecord.State.IN_PROGRESS
    ).delete()


def idempotency_purge_expired() -> int:
    deleted, _ = IdempotencyRecord.objects.filter(
        created_at__lt=timezone.now() - _lifetime()
    ).delete()
    return deleted
