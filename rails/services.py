"""A rail payment's record, from its claim to its settlement, and the revenue it books.

Each service is one short transaction; none calls the network. A status only moves forward from
``verified`` (the claim), and what a settled payment pays for (the provider's revenue, or the
credits bought) is booked in the same transaction that marks it settled, at most once.
"""

from django.db import IntegrityError, transaction
from django.utils import timezone

from catalog.models import Endpoint
from credits.models import Purchase
from credits.services.purchases import purchase_book
from credits.services.revenue import rail_revenue_book
from rails.models import RailPayment

Status = RailPayment.Status


def payment_claim(
    *,
    protocol: str,
    x402_version: int,
    network: str,
    payer: str,
    nonce: str,
    pay_to: str,
    amount_micros: int,
    endpoint: Endpoint | None,
    request_id: str,
    payload: dict,
    requirements: dict,
    verify_ms: int,
    credits_account_id: int | None = None,
) -> RailPayment | None:
    """Claim a verified payment for one request (a call of ``endpoint``, or credits bought for
    ``credits_account_id``); None when it is already claimed."""
    try:
        with transaction.atomic():
            return RailPayment.objects.create(
                protocol=protocol,
                x402_version=x402_version,
                network=network,
                payer=payer,
                nonce=nonce,
                pay_to=pay_to,
                amount_micros=amount_micros,
                endpoint=endpoint,
                credits_account_id=credits_account_id,
                request_id=request_id,
                payload=payload,
                requirements=requirements,
                verify_ms=verify_ms,
            )
    except IntegrityError:
        return None


def payment_release(*, payment: RailPayment, upstream_ms: int, reason: str) -> None:
    """The provider failed: nothing is settled and the payment may be used again."""
    _advance(payment, Status.RELEASED, upstream_ms=upstream_ms, error=reason[:300])


def payment_batch_wait(*, payment: RailPayment, upstream_ms: int) -> None:
    """An np payment that was served: it waits for the next settlement batch."""
    _advance(payment, Status.BATCHED, upstream_ms=upstream_ms)


def payment_pending(*, payment: RailPayment, upstream_ms: int, settle_ms: int, reason: str) -> None:
    """Settlement did not answer in time: ``rails_reconcile`` asks again later."""
    _advance(
        payment, Status.PENDING, upstream_ms=upstream_ms, settle_ms=settle_ms, error=reason[:300]
    )


def payment_failed(
    *,
    payment: RailPayment,
    reason: str,
    upstream_ms: int | None = None,
    settle_ms: int | None = None,
) -> None:
    fields = {"error": reason[:300]}
    if upstream_ms is not None:
        fields["upstream_ms"] = upstream_ms
    if settle_ms is not None:
        fields["settle_ms"] = settle_ms
    _advance(payment, Status.FAILED, **fields)


def payment_settle_record(
    *,
    payment: RailPayment,
    transaction_ref: str,
    upstream_ms: int | None = None,
    settle_ms: int | None = None,
) -> bool:
    """Mark a payment settled and book its revenue (or, for credits bought, the purchase), once;
    False when it was already settled."""
    with transaction.atomic():
        locked = (
            RailPayment.objects.select_for_update(of=("self",))
            .select_related("endpoint__api")
            .get(pk=payment.pk)
        )
        if locked.status in (Status.SETTLED, Status.RELEASED):
            return False
        locked.status = Status.SETTLED
        locked.transaction = transaction_ref[:100]
        locked.settled_at = timezone.now()
        locked.error = ""
        if upstream_ms is not None:
            locked.upstream_ms = upstream_ms
        if settle_ms is not None:
            locked.settle_ms = settle_ms
        if not locked.revenue_booked:
            if locked.credits_account_id is not None:
                _book_purchase(locked)
            else:
                _book_revenue(locked)
            locked.revenue_booked = True
        locked.save()
    payment.status = Status.SETTLED
    return True


def _book_revenue(payment: RailPayment) -> None:
    endpoint = payment.endpoint
    owner_id = endpoint.api.owner_id if endpoint is not None else None
    what = (
        f"{endpoint.api.slug} {endpoint.method} {endpoint.path}"
        if endpoint is not None
        else "a deleted endpoint"
    )
    rail_revenue_book(
        organization_id=owner_id,
        amount_micros=payment.amount_micros,
        payment_ref=f"rail:{payment.pk}",
        description=f"{payment.protocol} payment for {what}",
        metadata={
            "api": endpoint.api.slug if endpoint is not None else "",
            "protocol": payment.protocol,
            "network": payment.network,
            "payer": payment.payer,
            "requestId": payment.request_id,
            "transaction": payment.transaction,
        },
    )


def _book_purchase(payment: RailPayment) -> None:
    purchase_book(
        account_id=payment.credits_account_id,
        method=Purchase.Method.USDC,
        reference=f"rail:{payment.pk}",
        amount_micros=payment.amount_micros,
        description=f"Credits bought in USDC on {payment.network}",
        payment_reference=payment.transaction,
        metadata={
            "protocol": payment.protocol,
            "network": payment.network,
            "payer": payment.payer,
            "requestId": payment.request_id,
            "transaction": payment.transaction,
        },
    )


def _advance(payment: RailPayment, status: str, **fields) -> None:
    """Move a payment on from ``verified`` (or from ``pending``, when reconciling)."""
    RailPayment.objects.filter(pk=payment.pk, status__in=[Status.VERIFIED, Status.PENDING]).update(
        status=status, **fields
    )
    payment.status = status
