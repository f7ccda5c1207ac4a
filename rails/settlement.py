"""Settling what the rails served but did not settle at once: np payments in batches, and x402
payments and mpp transactions whose settlement did not answer in time. Both are run by
cron-friendly commands (``settle_np_batches``, ``rails_reconcile``) and are safe to run again, or
twice at once.

An np batch is written (its id, its payments) before the facilitator is asked, and the np
facilitator settles a batch id at most once: a batch whose answer was lost is asked again with
the same id and answered from the facilitator's record. A pending x402 payment is settled
again; "nonce already used" means the first settlement went through (an EIP-3009 authorization
names its recipient, so its nonce can only have moved the money to us). A pending mpp
transaction was sent already: its receipt says whether it paid.
"""

import logging
import uuid
from dataclasses import dataclass

import httpx
import requests
from django.conf import settings
from django.db import transaction
from django.db.models import F, Sum
from django.utils import timezone
from x402.mechanisms.evm.constants import ERR_NONCE_ALREADY_USED
from x402.schemas import PaymentPayload, PaymentRequirements
from x402.schemas.v1 import PaymentPayloadV1, PaymentRequirementsV1

from rails.models import RailPayment, SettlementBatch
from rails.mpp.server import mpp_config, transfer_landed
from rails.offers import MPP, NP, X402
from rails.services import payment_failed, payment_settle_record
from rails.x402 import FacilitatorUnavailable, payment_settle

logger = logging.getLogger("rails.settlement")
Status = RailPayment.Status


@dataclass
class BatchRun:
    batches: int = 0
    settled: int = 0
    failed: int = 0
    unanswered: int = 0


def np_batches_settle(*, limit: int | None = None) -> BatchRun:
    """Ask again for every batch whose answer is missing, then batch and settle every served np
    payment that no batch holds yet."""
    run = BatchRun()
    for batch in SettlementBatch.objects.filter(status=SettlementBatch.Status.SUBMITTING).order_by(
        "pk"
    ):
        _batch_submit(batch, run)
    while True:
        batch = np_batch_open(limit=limit or settings.NP_BATCH_MAX_PAYMENTS)
        if batch is None:
            return run
        if not _batch_submit(batch, run):
            return run  # the facilitator is not answering: the batch waits for the next run


def np_batch_open(*, limit: int) -> SettlementBatch | None:
    """Put up to ``limit`` served np payments of one network, that no batch holds, in a new
    batch; None when there are none."""
    with transaction.atomic():
        waiting = RailPayment.objects.select_for_update(skip_locked=True).filter(
            protocol=NP, status=Status.BATCHED, batch__isnull=True
        )
        first = waiting.order_by("pk").first()
        if first is None:
            return None
        ids = list(
            waiting.filter(network=first.network)
            .order_by("pk")
            .values_list("pk", flat=True)[:limit]
        )
        batch = SettlementBatch.objects.create(batch_id=uuid.uuid4().hex, network=first.network)
        RailPayment.objects.filter(pk__in=ids).update(batch=batch)
        total = RailPayment.objects.filter(pk__in=ids).aggregate(total=Sum("amount_micros"))
        batch.payment_count = len(ids)
        batch.amount_micros = total["total"] or 0
        batch.save(update_fields=["payment_count", "amount_micros"])
    return batch


def _batch_submit(batch: SettlementBatch, run: BatchRun) -> bool:
    payments = list(batch.payments.order_by("pk"))
    SettlementBatch.objects.filter(pk=batch.pk).update(attempts=F("attempts") + 1)
    try:
        answer = _np_facilitator_batch(batch, payments)
    except (requests.RequestException, ValueError) as error:
        SettlementBatch.objects.filter(pk=batch.pk).update(error=str(error)[:300])
        logger.warning("np batch %s unanswered: %s", batch.batch_id, error)
        run.unanswered += 1
        return False
    results = {
        (str(item.get("payer", "")).lower(), str(item.get("nonce", "")).lower()): item
        for item in answer.get("results", [])
    }
    reference = str(answer.get("transaction") or "")
    with transaction.atomic():
        for payment in payments:
            result = results.get((payment.payer, payment.nonce))
            if answer.get("success") and result and result.get("success"):
                if payment_settle_record(payment=payment, transaction_ref=reference):
                    run.settled += 1
            elif payment.status == Status.BATCHED:
                reason = (
                    (result or {}).get("errorReason")
                    or answer.get("errorReason")
                    or ("not settled by the batch")
                )
                RailPayment.objects.filter(pk=payment.pk, status=Status.BATCHED).update(
                    status=Status.FAILED, error=str(reason)[:300]
                )
                run.failed += 1
        SettlementBatch.objects.filter(pk=batch.pk).update(
            status=SettlementBatch.Status.SETTLED
            if answer.get("success")
            else SettlementBatch.Status.FAILED,
            transaction=reference[:100],
            error=str(answer.get("errorReason") or "")[:300],
            settled_at=timezone.now(),
        )
    run.batches += 1
    return True


def _np_facilitator_batch(batch: SettlementBatch, payments: list[RailPayment]) -> dict:
    if not settings.NP_FACILITATOR_URL:
        raise ValueError("NP_FACILITATOR_URL is not set")
    response = requests.post(
        f"{settings.NP_FACILITATOR_URL}/batches",
        json={
            "batchId": batch.batch_id,
            "x402Version": 2,
            "payments": [
                {"paymentPayload": payment.payload, "paymentRequirements": payment.requirements}
                for payment in payments
            ],
        },
        timeout=settings.RAIL_FACILITATOR_TIMEOUT_SECONDS,
    )
    if response.status_code != 200:
        raise ValueError(f"the np facilitator answered {response.status_code}")
    answer = response.json()
    if not isinstance(answer, dict) or answer.get("batchId") != batch.batch_id:
        raise ValueError("the np facilitator answered for another batch")
    return answer


@dataclass
class ReconcileRun:
    settled: int = 0
    failed: int = 0
    unanswered: int = 0


def pending_payments_reconcile() -> ReconcileRun:
    """Settle every payment whose settlement did not answer in time: x402 payments are settled
    again; mpp transactions (already sent) are looked up by their receipt."""
    run = ReconcileRun()
    for payment in RailPayment.objects.filter(protocol=MPP, status=Status.PENDING).order_by("pk"):
        _mpp_reconcile(payment, run)
    for payment in RailPayment.objects.filter(protocol=X402, status=Status.PENDING).order_by("pk"):
        payload, requirements = _stored(payment)
        try:
            result = payment_settle(protocol=X402, payload=payload, requirements=requirements)
        except FacilitatorUnavailable as error:
            logger.warning("pending payment %s unanswered: %s", payment.pk, error)
            run.unanswered += 1
            continue
        if result.success:
            payment_settle_record(payment=payment, transaction_ref=result.transaction)
            run.settled += 1
        elif result.error_reason == ERR_NONCE_ALREADY_USED:
            payment_settle_record(payment=payment, transaction_ref="settled before (nonce used)")
            run.settled += 1
        else:
            payment_failed(payment=payment, reason=result.error_reason or "settlement refused")
            run.failed += 1
    return run


def _mpp_reconcile(payment: RailPayment, run: ReconcileRun) -> None:
    try:
        landed = transfer_landed(
            config=mpp_config(), tx_hash=payment.nonce, amount_micros=payment.amount_micros
        )
    except (httpx.HTTPError, ValueError, KeyError) as error:
        logger.warning("pending mpp payment %s unanswered: %s", payment.pk, error)
        run.unanswered += 1
        return
    if landed is None:
        run.unanswered += 1  # not mined (yet): asked again next run
    elif landed:
        payment_settle_record(payment=payment, transaction_ref=payment.nonce)
        run.settled += 1
    else:
        payment_failed(payment=payment, reason="the transaction reverted or paid something else")
        run.failed += 1


def _stored(payment: RailPayment):
    if payment.x402_version == 1:
        return (
            PaymentPayloadV1.model_validate(payment.payload),
            PaymentRequirementsV1.model_validate(payment.requirements),
        )
    return (
        PaymentPayload.model_validate(payment.payload),
        PaymentRequirements.model_validate(payment.requirements),
    )
