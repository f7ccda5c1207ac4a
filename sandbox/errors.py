"""Errors as each emulated provider writes them.

The sandbox stands in for third-party providers, so its error bodies follow the provider's own
shape (Hunter's ``errors`` list, PDL's ``{status, error}``, X's problem documents...), not the
gateway's ``{success, error, code}`` envelope: callers of the sandbox must see what a real
provider would send.
"""

import hashlib
from http import HTTPStatus

from django.http import JsonResponse


class ProviderError(Exception):
    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        parameter: str | None = None,
        headers: dict | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.parameter = parameter
        self.headers = headers or {}


def missing(name: str) -> ProviderError:
    return ProviderError(400, "missing_parameter", f"{name} is required", parameter=name)


def invalid(name: str, message: str) -> ProviderError:
    return ProviderError(400, "invalid_parameter", message, parameter=name)


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _default(error: ProviderError) -> dict:
    return {"error": {"code": error.code, "message": error.message}}


def _hunter(error):
    return {"errors": [{"id": error.code, "code": error.status, "details": error.message}]}


def _pdl(error):
    return {"status": error.status, "error": {"type": error.code, "message": error.message}}


def _x(error):
    if error.status == 400:
        return {
            "errors": [
                {"parameters": {error.parameter or "request": []}, "message": error.message}
            ],
            "title": "Invalid Request",
            "detail": "One or more parameters to your request was invalid.",
            "type": "https://api.twitter.com/2/problems/invalid-request",
        }
    return {
        "title": _reason(error.status),
        "detail": error.message,
        "type": "about:blank",
        "status": error.status,
    }


def _google(error):
    reason = "required" if error.code == "missing_parameter" else error.code
    return {
        "error": {
            "code": error.status,
            "message": error.message,
            "errors": [{"message": error.message, "domain": "global", "reason": reason}],
            "status": "INVALID_ARGUMENT" if error.status == 400 else _reason(error.status).upper(),
        }
    }


_ZHIPU_CODES = {"missing_parameter": "1214", "invalid_parameter": "1210", "rate_limited": "1302"}


def _zhipu(error):
    return {
        "error": {"code": _ZHIPU_CODES.get(error.code, str(error.status)), "message": error.message}
    }


def _reddit(error):
    return {"message": _reason(error.status), "error": error.status, "reason": error.message}


def _crunchbase(error):
    return [
        {"code": "MD100" if error.status == 400 else error.code.upper(), "message": error.message}
    ]


def _brave(error):
    request_id = hashlib.sha256(error.message.encode()).hexdigest()[:32]
    return {
        "type": "ErrorResponse",
        "error": {
            "id": request_id,
            "status": error.status,
            "code": error.code.upper(),
            "detail": error.message,
            "meta": {"component": "sandbox"},
        },
        "time": 0,
    }


STYLES = {
    "hunter": _hunter,
    "peopledatalabs": _pdl,
    "x-twitter": _x,
    "youtube": _google,
    "zhipu-glm": _zhipu,
    "reddit": _reddit,
    "crunchbase": _crunchbase,
    "brave-search": _brave,
    "firecrawl": lambda error: {"success": False, "error": error.message},
    "apollo": lambda error: {"error": error.message, "error_code": error.code.upper()},
    "serpapi": lambda error: {"error": error.message},
    "exa": lambda error: {"error": error.message, "tag": error.code.upper()},
    "tavily": lambda error: {"detail": {"error": error.message}},
    "serper": lambda error: {"message": error.message, "statusCode": error.status},
    "apify": lambda error: {
        "error": {"type": error.code.replace("_", "-"), "message": error.message}
    },
    "dropcontact": lambda error: {"error": True, "success": False, "reason": error.message},
    "neverbounce": lambda error: {
        "status": "general_failure",
        "message": error.message,
        "execution_time": 3,
    },
    "zerobounce": lambda error: {"error": error.message},
    "millionverifier": lambda error: {"error": error.message},
    "opencorporates": lambda error: {"error": {"message": error.message}},
    "lusha": lambda error: {"statusCode": error.status, "message": error.message},
    "snov": lambda error: {
        "success": False,
        "errors": {error.parameter or "request": [error.message]},
    },
}


def error_body(slug: str | None, error: ProviderError):
    return STYLES.get(slug or "", _default)(error)


def error_response(slug: str | None, error: ProviderError) -> JsonResponse:
    response = JsonResponse(error_body(slug, error), status=error.status, safe=False)
    for name, value in error.headers.items():
        response[name] = value
    return response
