from django.db import models


class PendingSignUp(models.Model):
    """A sign-up whose address is not confirmed yet; no account exists until its mailed link is
    followed. One per address: signing up again replaces the password and ``nonce``, so only the
    newest mailed link works. Deleted when confirmed, or once older than the link's life by the
    next sign-up."""

    email = models.EmailField(unique=True)
    # Hashed when chosen, as User.password is; the account takes it as it is.
    password = models.CharField(max_length=128)
    # Named in the mailed link's signed value: a later sign-up changes it, so earlier links die.
    nonce = models.CharField(max_length=32)
    created_at = models.DateTimeField(db_index=True)

    def __str__(self):
        return self.email
