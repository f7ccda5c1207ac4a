"""The SDK's replay store (``mpp.store.Store``) in the database, shared by every worker.

``put_if_absent`` is one INSERT against a unique key: of concurrent claims on one transaction
hash, in any process, exactly one succeeds. The ORM is synchronous and the SDK calls the store
from the event loop, so operations run on two threads of the store's own; they are not request
threads, so each operation ends as a request does, closing its connection once it is older than
CONN_MAX_AGE.
"""

import asyncio
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from django.db import IntegrityError, close_old_connections, transaction
from django.utils import timezone

from rails.models import MppReplayKey


def _stored(value: Any) -> Any:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _live(queryset):
    now = timezone.now()
    return queryset.exclude(expires_at__lte=now)


class DatabaseStore:
    """``get`` / ``put`` / ``delete`` / ``put_if_absent`` (and the expiring variant)."""

    async def get(self, key: str) -> Any | None:
        return await self._run(self._get, key)

    async def put(self, key: str, value: Any) -> None:
        await self._run(self._put, key, value)

    async def delete(self, key: str) -> None:
        await self._run(self._delete, key)

    async def put_if_absent(self, key: str, value: Any) -> bool:
        return await self._run(self._insert, key, value, None)

    async def put_if_absent_until(self, key: str, value: Any, expires_at: float) -> bool:
        if expires_at <= datetime.now(UTC).timestamp():
            raise ValueError("expires_at must be a finite future Unix timestamp")
        return await self._run(self._insert, key, value, datetime.fromtimestamp(expires_at, tz=UTC))

    @staticmethod
    async def _run(operation, *args):
        return await asyncio.get_running_loop().run_in_executor(
            _executor(), _as_a_request, operation, *args
        )

    @staticmethod
    def _get(key: str) -> Any | None:
        row = _live(MppReplayKey.objects.filter(key=key)).values_list("value", flat=True).first()
        return row

    @staticmethod
    def _put(key: str, value: Any) -> None:
        MppReplayKey.objects.update_or_create(
            key=key, defaults={"value": _stored(value), "expires_at": None}
        )

    @staticmethod
    def _delete(key: str) -> None:
        MppReplayKey.objects.filter(key=key).delete()

    @staticmethod
    def _insert(key: str, value: Any, expires_at: datetime | None) -> bool:
        try:
            with transaction.atomic():
                # An expired recovery record no longer holds its key.
                MppReplayKey.objects.filter(key=key, expires_at__lte=timezone.now()).delete()
                MppReplayKey.objects.create(key=key, value=_stored(value), expires_at=expires_at)
        except IntegrityError:
            return False
        return True


_executors: dict[int, ThreadPoolExecutor] = {}
_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    pid = os.getpid()
    executor = _executors.get(pid)
    if executor is None:
        with _lock:
            executor = _executors.setdefault(
                pid, ThreadPoolExecutor(max_workers=2, thread_name_prefix="mpp-store")
            )
    return executor


def _as_a_request(operation, *args):
    close_old_connections()
    try:
        return operation(*args)
    finally:
        close_old_connections()
