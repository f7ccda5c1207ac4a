from django.db import models
from django.db.models import Q

from catalog.models import Endpoint
from credits.models import Account


class SettlementBatch(models.Model):
    """np payments settled together by one facilitator call. The batch id is written before the
    facilitator is asked, and the facilitator settles a batch id at most once, so a crash between
    the two is resumed by asking again with the same id."""

    class Status(models.TextChoices):
        SUBMITTING = "submitting", "Submitting"
        SETTLED = "settled", "Settled"
        FAILED = "failed", "Failed"

    batch_id = models.CharField(max_length=64, unique=True)
    network = models.CharField(max_length=64)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.SUBMITTING)
    payment_count = models.PositiveIntegerField(default=0)
    amount_micros = models.BigIntegerField(default=0)
    transaction = models.CharField(max_length=100, blank=True)
    error = models.CharField(max_length=300, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "settlement batches"

    def __str__(self):
        return f"np batch {self.batch_id} ({self.status})"


class RailPayment(models.Model):
    """One payment offered on a rail, from its verification to its settlement.

    It pays for a call of ``endpoint`` or, on the x402 rail, for credits bought for
    ``credits_account``; its settlement books the provider's revenue or the purchase.
    A payment's identity (protocol, network, payer, nonce) is claimed by inserting this row
    before the provider is called: the unique constraint lets one request through and refuses
    every other use of the same signed payment. A provider failure releases the claim (status
    released), so the same payment can be retried; every other status keeps it.
    """

    class Status(models.TextChoices):
        VERIFIED = "verified", "Verified"  # claimed, the provider is being called
        SETTLED = "settled", "Settled"
        BATCHED = "batched", "Batched"  # np: served, waiting for its batch to settle
        PENDING = "pending", "Pending"  # settlement did not answer in time: reconciled later
        FAILED = "failed", "Failed"  # settlement refused: the answer was withheld
        RELEASED = "released", "Released"  # the provider failed: not settled, payment reusable

    protocol = models.CharField(max_length=8)
    x402_version = models.PositiveSmallIntegerField(default=2)
    network = models.CharField(max_length=64)
    payer = models.CharField(max_length=100)
    nonce = models.CharField(max_length=100)
    pay_to = models.CharField(max_length=100)
    amount_micros = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.VERIFIED)
    endpoint = models.ForeignKey(
        Endpoint, null=True, on_delete=models.SET_NULL, related_name="rail_payments"
    )
    # A purchase of credits (no endpoint): the account its settlement credits. Never looked up
    # by account, so not indexed: every paid call inserts a row here.
    credits_account = models.ForeignKey(
        Account,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
    )
    request_id = models.CharField(max_length=80, db_index=True)
    # What the payment's settlement needs later (np batches, reconciling a pending settlement).
    payload = models.JSONField()
    requirements = models.JSONField()
    transaction = models.CharField(max_length=100, blank=True)
    error = models.CharField(max_length=300, blank=True)
    batch = models.ForeignKey(
        SettlementBatch, null=True, blank=True, on_delete=models.PROTECT, related_name="payments"
    )
    revenue_booked = models.BooleanField(default=False)
    verify_ms = models.PositiveIntegerField(null=True, blank=True)
    upstream_ms = models.PositiveIntegerField(null=True, blank=True)
    settle_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["protocol", "network", "payer", "nonce"],
                condition=~Q(status="released"),
                name="rail_payment_claimed_once",
            ),
        ]
        indexes = [
            models.Index(
                fields=["protocol", "status"],
                condition=Q(status__in=["batched", "pending"]),
                name="rail_payment_to_settle",
            )
        ]

    def __str__(self):
        return f"{self.protocol} {self.amount_micros} from {self.payer} ({self.status})"


class MppReplayKey(models.Model):
    """One key of the mpp rail's replay store (the SDK's ``Store``): a spent or in-flight
    transaction hash. The unique key is the atomic ``put_if_absent`` every worker shares; a key
    with ``expires_at`` is a temporary recovery record and counts as absent once it has passed."""

    key = models.CharField(max_length=200, unique=True)
    value = models.JSONField(null=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.key
