import hashlib

from django.contrib.auth.models import AbstractUser
from django.contrib.auth.models import UserManager as DjangoUserManager
from django.db import models
from django.db.models import Q


class UserManager(DjangoUserManager):
    """People sign in with their email address; there is no separate username."""

    def _create_user(self, email, password, **extra_fields):
        if not email:
            raise ValueError("An email address is required")
        email = self.normalize_email(email).lower()
        user = self.model(email=email, **extra_fields)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email, password=None, **extra_fields):
        extra_fields.setdefault("is_staff", False)
        extra_fields.setdefault("is_superuser", False)
        return self._create_user(email, password, **extra_fields)

    def create_superuser(self, email, password=None, **extra_fields):
        extra_fields.setdefault("is_staff", True)
        extra_fields.setdefault("is_superuser", True)
        return self._create_user(email, password, **extra_fields)


class User(AbstractUser):
    """A person. The email address is the unique sign-in name."""

    username = None
    email = models.EmailField("email address", unique=True)

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS = []

    objects = UserManager()

    def __str__(self):
        return self.email


class Organization(models.Model):
    """A team that shares keys and a balance; a provider organization is paid for its APIs."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(User, through="Membership", related_name="organizations")

    def __str__(self):
        return self.slug


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        MEMBER = "member", "Member"

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="memberships")
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "organization"], name="unique_membership")
        ]

    def __str__(self):
        return f"{self.user} in {self.organization} ({self.role})"


class ApiKey(models.Model):
    """A bearer credential owned by exactly one user or one organization.

    Only the SHA-256 of the secret is stored; the secret itself is shown once, at creation.
    """

    class Mode(models.TextChoices):
        LIVE = "live", "Live"
        TEST = "test", "Test"

    user = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.CASCADE, related_name="api_keys"
    )
    organization = models.ForeignKey(
        Organization, null=True, blank=True, on_delete=models.CASCADE, related_name="api_keys"
    )
    name = models.CharField(max_length=100, blank=True)
    mode = models.CharField(max_length=4, choices=Mode.choices)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=12, editable=False)
    last4 = models.CharField(max_length=4, editable=False)
    rate_limit_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="Overrides the default requests-per-minute limit."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(user__isnull=False, organization__isnull=True)
                | Q(user__isnull=True, organization__isnull=False),
                name="api_key_has_exactly_one_owner",
            ),
            models.CheckConstraint(
                condition=Q(rate_limit_per_minute__isnull=True) | Q(rate_limit_per_minute__gt=0),
                name="api_key_rate_limit_positive",
            ),
        ]

    def __str__(self):
        return f"{self.prefix}…{self.last4}"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    @property
    def masked(self) -> str:
        return f"{self.prefix}…{self.last4}"


def hash_api_key_secret(secret: str) -> str:
    # Keys carry 256 random bits, so an unsalted fast hash is safe and lets lookups use an index.
    return hashlib.sha256(secret.encode()).hexdigest()


class IdempotencyRecord(models.Model):
    """The stored outcome of a request sent with an Idempotency-Key, per API key, for 24 hours.

    The unique (api_key, key) pair is what makes two concurrent retries run the call once.
    """

    class State(models.TextChoices):
        IN_PROGRESS = "in_progress", "In progress"
        COMPLETED = "completed", "Completed"

    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    state = models.CharField(max_length=11, choices=State.choices, default=State.IN_PROGRESS)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["api_key", "key"], name="unique_idempotency_key")
        ]
        indexes = [models.Index(fields=["created_at"])]

    def __str__(self):
        return f"{self.key} ({self.state})"
