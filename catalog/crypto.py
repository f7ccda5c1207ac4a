"""Upstream secrets at rest: Fernet (AES-128-CBC + HMAC-SHA256) with settings.CATALOG_SECRET_KEY.

MultiFernet takes a list of keys: the first encrypts and every one decrypts, so an operator rotates
by putting the new key first and re-saving the secrets.
"""

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


def _fernet() -> MultiFernet:
    return MultiFernet([Fernet(key) for key in settings.CATALOG_SECRET_KEY])


def secret_encrypt(plaintext: str) -> str:
    return _fernet().encrypt(plaintext.encode()).decode()


def secret_decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise ValueError(
            "The upstream secret cannot be decrypted with CATALOG_SECRET_KEY (was the key changed "
            "without keeping the old one?)"
        ) from None
