from django.db import models
from django.db.models import F, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from gateway.models import ApiKey, Organization, User

# A call's description is "<api slug> <METHOD> <catalog path>": slugs take up to 100 characters
# and catalog paths up to 500.
DESCRIPTION_MAX_LENGTH = 700


class AccountQuerySet(models.QuerySet):
    def with_balance(self) -> "AccountQuerySet":
        """Each account with its receipts not rolled up yet summed in the same query, so that
        ``balance_micros`` costs no query of its own."""
        pending = (
            LedgerEntry.objects.filter(account=OuterRef("pk"), rolled_up=False)
            .order_by()
            .values("account")
            .annotate(total=Sum("amount_micros"))
            .values("total")
        )
        return self.annotate(pending_receipts_micros=Coalesce(Subquery(pending), 0))


class Account(models.Model):
    """A balance in integer micro-dollars: a rolled-up figure plus the receipts after it.

    Money an account spends (a charge, a negative adjustment, a refund taken back) is booked
    under the account's row lock and moves ``rolled_up_micros`` at once. Money it only receives
    (a provider's revenue, the platform's fee) is booked as a receipt: an entry appended without
    touching the account's row, so that no row is written by every call. ``roll_up_receipts``
    (and any later locked write on the account) folds receipts into ``rolled_up_micros``.

    Invariants (checked by ``check_ledger``): ``rolled_up_micros`` equals the sum of the
    account's rolled-up entries, so ``balance_micros`` (rolled up plus pending receipts) equals
    the sum of all its entries; ``held_micros`` equals the sum of its pending holds and is never
    negative. Spending never overdraws a user or organization account: a hold is reserved only
    from the available balance (rolled up minus held) and a capture takes at most its hold, and
    an adjustment or a call's refund refuses to take more than is available. Only a purchase
    taken back (a card refund or dispute, see ``Purchase``) may leave the account negative: the
    money had left it already, and its paid calls are refused until it is topped up. The one
    platform account is the counterparty of grants and purchases, so its balance is fees earned
    minus credits issued and may be negative.
    """

    class Kind(models.TextChoices):
        USER = "user", "User"
        ORGANIZATION = "organization", "Organization"
        PLATFORM = "platform", "Platform"

    kind = models.CharField(max_length=12, choices=Kind.choices)
    user = models.OneToOneField(
        User, null=True, blank=True, on_delete=models.PROTECT, related_name="credit_account"
    )
    organization = models.OneToOneField(
        Organization,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="credit_account",
    )
    rolled_up_micros = models.BigIntegerField(default=0)
    held_micros = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AccountQuerySet.as_manager()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(kind="user", user__isnull=False, organization__isnull=True)
                | Q(kind="organization", user__isnull=True, organization__isnull=False)
                | Q(kind="platform", user__isnull=True, organization__isnull=True),
                name="account_owner_matches_kind",
            ),
            models.UniqueConstraint(
                fields=["kind"], condition=Q(kind="platform"), name="one_platform_account"
            ),
            # Not a floor on the balance: a purchase taken back after its credits were spent
            # leaves the account negative, even while a call holds funds.
            models.CheckConstraint(
                condition=Q(held_micros__gte=0), name="account_held_not_negative"
            ),
        ]

    def __str__(self):
        if self.kind == self.Kind.PLATFORM:
            return "platform"
        return str(self.user if self.kind == self.Kind.USER else self.organization)

    def refresh_from_db(self, *args, **kwargs):
        self.__dict__.pop("pending_receipts_micros", None)
        super().refresh_from_db(*args, **kwargs)

    @property
    def balance_micros(self) -> int:
        """The account's balance: exact at the moment it is read, receipts included."""
        if "pending_receipts_micros" not in self.__dict__:
            self.pending_receipts_micros = (
                LedgerEntry.objects.filter(account_id=self.pk, rolled_up=False).aggregate(
                    total=Coalesce(Sum("amount_micros"), 0)
                )["total"]
                if self.pk
                else 0
            )
        return self.rolled_up_micros + self.pending_receipts_micros

    @property
    def available_micros(self) -> int:
        return self.balance_micros - self.held_micros


class LedgerEntry(models.Model):
    """One leg of a money movement; append-only, never deleted, its money never updated.

    All entries sharing an ``event_ref`` form one business event and sum to zero.
    ``idempotency_ref`` is unique, so the same leg of the same event can never be booked twice.

    An entry booked under its account's row lock is rolled up from the start and carries the
    account's balance after it. A receipt, booked without that lock, has no known balance after
    it (``balance_after_micros`` is null, for good) and waits with ``rolled_up`` false until the
    roll-up adds it to its account's ``rolled_up_micros``: the one change an entry ever sees.
    """

    class Type(models.TextChoices):
        PURCHASE = "purchase", "Purchase"
        GRANT = "grant", "Grant"
        API_CALL = "api_call", "API call"
        REVENUE = "revenue", "Revenue"
        FEE = "fee", "Fee"
        REFUND = "refund", "Refund"
        ADJUSTMENT = "adjustment", "Adjustment"
        # A payment on a pay-per-call rail: the stablecoin the platform received (a negative
        # leg on the platform), the provider's share of it and the platform's fee.
        RAIL_PAYMENT = "rail_payment", "Rail payment"
        RAIL_REVENUE = "rail_revenue", "Rail revenue"
        RAIL_FEE = "rail_fee", "Rail fee"

    # Every index below is written three times per charged call: the account is indexed by
    # the (account, created) index alone, and the references by plain unique/b-tree indexes
    # without the pattern-matching copies Django adds to indexed CharFields.
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="entries", db_index=False
    )
    type = models.CharField(max_length=12, choices=Type.choices)
    amount_micros = models.BigIntegerField()
    balance_after_micros = models.BigIntegerField(null=True, blank=True)
    rolled_up = models.BooleanField(default=True)
    description = models.CharField(max_length=DESCRIPTION_MAX_LENGTH)
    metadata = models.JSONField(default=dict, blank=True)
    event_ref = models.CharField(max_length=120)
    idempotency_ref = models.CharField(max_length=160)
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        verbose_name_plural = "ledger entries"
        constraints = [
            models.UniqueConstraint(fields=["idempotency_ref"], name="ledger_entry_unique_ref")
        ]
        indexes = [
            models.Index(fields=["account", "-created_at", "-id"]),
            models.Index(fields=["event_ref"], name="ledger_entry_event"),
            # Receipts waiting for the roll-up: few at any time, read on every balance read.
            models.Index(
                fields=["account"], condition=Q(rolled_up=False), name="ledger_entry_pending"
            ),
        ]

    def __str__(self):
        return f"{self.type} {self.amount_micros} on {self.account}"


class Hold(models.Model):
    """Funds reserved for one call (a two-phase transfer).

    pending -> captured (the call succeeded and was charged), released (it failed) or expired
    (nothing settled it before ``expires_at``). Only pending holds count in ``held_micros``.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        CAPTURED = "captured", "Captured"
        RELEASED = "released", "Released"
        EXPIRED = "expired", "Expired"

    # Pending holds are found through the partial indexes below; settled ones only by request.
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="holds", db_index=False
    )
    request_id = models.CharField(max_length=80)
    amount_micros = models.BigIntegerField()
    captured_micros = models.BigIntegerField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    description = models.CharField(max_length=DESCRIPTION_MAX_LENGTH, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(amount_micros__gte=0), name="hold_amount_positive"),
            models.CheckConstraint(
                condition=Q(captured_micros__isnull=True)
                | Q(captured_micros__gte=0, captured_micros__lte=F("amount_micros")),
                name="hold_capture_within_amount",
            ),
            models.UniqueConstraint(fields=["request_id"], name="hold_unique_request"),
        ]
        indexes = [
            models.Index(
                fields=["expires_at"],
                condition=Q(status="pending"),
                name="pending_hold_expiry",
            ),
            models.Index(
                fields=["account", "expires_at"],
                condition=Q(status="pending"),
                name="pending_hold_by_account",
            ),
        ]

    def __str__(self):
        return f"hold {self.request_id} ({self.status})"


class UsageEvent(models.Model):
    """One gateway call, whatever its outcome, with what it cost.

    The key and the endpoint are references without a database constraint: a constraint check
    share-locks the referenced row at every commit, and every in-flight call of one key (or to
    one endpoint) locks the same row, which cost the settlement a tenth of its database time
    under load. Keys and endpoints are revoked or disabled, not deleted; a deletion through
    Django still sets these references to NULL.
    """

    class Status(models.TextChoices):
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"
        REJECTED = "rejected", "Rejected"

    # The account is indexed by the two (account, ...) indexes below.
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="usage_events", db_index=False
    )
    api_key = models.ForeignKey(
        ApiKey,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="usage_events",
        db_constraint=False,
    )
    request_id = models.CharField(max_length=80)
    api_slug = models.CharField(max_length=100)
    path = models.CharField(max_length=500)
    method = models.CharField(max_length=7)
    status = models.CharField(max_length=10, choices=Status.choices)
    mode = models.CharField(max_length=4, choices=ApiKey.Mode.choices)
    cost_micros = models.BigIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField()
    # Continuation billing: the endpoint called, a digest of its non-pagination parameters and
    # the charged request this call continues (itself, for a charged first page).
    endpoint = models.ForeignKey(
        "catalog.Endpoint",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
    )
    params_fingerprint = models.CharField(max_length=64, blank=True)
    billing_root_request_id = models.CharField(max_length=80, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["request_id"], name="usage_event_unique_request")
        ]
        indexes = [
            models.Index(fields=["account", "-created_at", "-id"]),
            models.Index(fields=["account", "api_slug", "-created_at"]),
        ]

    def __str__(self):
        return f"{self.request_id} {self.api_slug} {self.path} ({self.status})"


class Purchase(models.Model):
    """Credits bought with money from outside the ledger: by card through a Stripe Checkout
    session, or in USDC on the x402 rail.

    One row per payment (``method`` and ``reference`` are unique: the Checkout session, or the
    rail payment), written in the transaction that books its ``purchase`` event, so a payment
    announced twice is credited once. ``refunded_micros`` and ``disputed_micros`` are what card
    refunds and disputes took back since, each booked as a ``refund`` event; together they never
    exceed the amount bought.
    """

    class Method(models.TextChoices):
        CARD = "card", "Card"
        USDC = "usdc", "USDC"

    # Indexed by the (account, created) index below.
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="purchases", db_index=False
    )
    method = models.CharField(max_length=4, choices=Method.choices)
    # The Checkout session id (cs_...) for a card, "rail:<RailPayment id>" for USDC.
    reference = models.CharField(max_length=100)
    # What the payer's own records show: the PaymentIntent (pi_...) that refunds and disputes
    # name, or the settlement's transaction hash.
    payment_reference = models.CharField(max_length=120, blank=True)
    amount_micros = models.BigIntegerField()
    refunded_micros = models.BigIntegerField(default=0)
    disputed_micros = models.BigIntegerField(default=0)
    event_ref = models.CharField(max_length=120)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["method", "reference"], name="purchase_unique_payment"),
            models.CheckConstraint(
                condition=Q(amount_micros__gt=0), name="purchase_amount_positive"
            ),
            models.CheckConstraint(
                condition=Q(refunded_micros__gte=0, disputed_micros__gte=0)
                & Q(amount_micros__gte=F("refunded_micros") + F("disputed_micros")),
                name="purchase_reversed_within_amount",
            ),
        ]
        indexes = [
            models.Index(fields=["account", "-created_at", "-id"]),
            models.Index(
                fields=["payment_reference"],
                condition=~Q(payment_reference=""),
                name="purchase_payment_reference",
            ),
        ]

    def __str__(self):
        return f"{self.method} purchase {self.reference} of {self.amount_micros}"

    @property
    def public_id(self) -> str:
        return f"pur_{self.pk}"

    @property
    def reversed_micros(self) -> int:
        return self.refunded_micros + self.disputed_micros
