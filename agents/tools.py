"""The tools an agent calls: search, details, integrate, list_endpoints, run, balance, usage.

Each tool validates its arguments twice: against the JSON schema the agent was shown (types,
required and unknown names), then with the input serializer of the /v1 view it stands for, so a
tool accepts exactly what its route accepts. It then calls the same selectors, or for run the
same paid-call pipeline (``run_execute``), as that view: a run made through a tool is quoted,
charged and recorded like a POST /v1/run.

A tool answers structured content (the route's JSON answer) and a short summary for the model,
which ends with the next step to take.
"""

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from jsonschema import Draft202012Validator
from rest_framework import serializers

from calls.apis import RunInputSerializer
from calls.run import RunInput, new_request_id, run_execute
from catalog.apis import (
    METHODS,
    SEARCH_LIMIT_MAX,
    EndpointDetailsInputSerializer,
    EndpointIntegrateInputSerializer,
    EndpointListInputSerializer,
    SearchInputSerializer,
)
from catalog.selectors import (
    catalog_list_page_json,
    endpoint_details,
    endpoint_integration,
    endpoint_resolve,
    endpoint_search,
)
from catalog.snippets import ALL_FORMATS
from credits.apis import CreditsUsageApi, CreditsUsageEventSerializer
from credits.models import Account
from credits.selectors import (
    account_has_overdue_holds,
    usage_events_in_window,
    usage_window_totals,
)
from credits.services.accounts import account_for_owner
from credits.services.holds import holds_expire
from gateway.money import cents_to_micros, format_usd
from gateway.selectors import KeyPrincipal

# A model's context is small: list-endpoints and usage pages default smaller than the routes'.
LIST_ENDPOINTS_DEFAULT_LIMIT = 10
USAGE_DEFAULT_LIMIT = 20


class ToolArgumentsInvalid(Exception):
    """The arguments do not satisfy the tool's input schema."""


@dataclass(frozen=True)
class ToolAnswer:
    data: dict  # the structured content: the /v1 route's answer
    summary: str  # a few lines for the model, ending with what to do next


@dataclass(frozen=True)
class AgentTool:
    name: str
    title: str
    description: str
    input_schema: dict
    execute: Callable[[KeyPrincipal, dict], ToolAnswer]
    read_only: bool = True
    validator: Draft202012Validator = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "validator", Draft202012Validator(self.input_schema))

    def call(self, *, principal: KeyPrincipal, arguments: dict) -> ToolAnswer:
        problems = sorted(self.validator.iter_errors(arguments), key=lambda error: error.path)
        if problems:
            raise ToolArgumentsInvalid("; ".join(_described(problem) for problem in problems))
        return self.execute(principal, arguments)

    def annotations(self) -> dict:
        return {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "destructiveHint": False,
            "idempotentHint": self.read_only,
            "openWorldHint": not self.read_only,
        }


def _described(problem) -> str:
    where = ".".join(str(part) for part in problem.absolute_path)
    return f"{where}: {problem.message}" if where else problem.message


def _validated(serializer_class: type[serializers.Serializer], data: dict) -> dict:
    """The /v1 route's own validation; its ValidationError becomes the route's 400."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _object(properties: dict, required: tuple[str, ...] = ()) -> dict:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


API = {"type": "string", "minLength": 1, "description": "The API's slug, as search returns it"}
PATH = {
    "type": "string",
    "minLength": 1,
    "description": "The endpoint's catalog path (may hold {placeholders}), or a concrete path "
    "matching it",
}
METHOD = {
    "type": "string",
    "enum": list(METHODS),
    "description": "Only when the path has several methods",
}


# --- search ---------------------------------------------------------------------------------------


def _search(principal: KeyPrincipal, arguments: dict) -> ToolAnswer:
    started = time.perf_counter()
    data = _validated(SearchInputSerializer, arguments)
    results = endpoint_search(prompt=data["prompt"], limit=data["limit"])
    answer = {
        "success": True,
        "results": results,
        "count": sum(len(api["endpoints"]) for api in results),
        "apisCount": len(results),
        "prompt": data["prompt"],
        "searchType": "semantic",
        "responseTime": round((time.perf_counter() - started) * 1000, 1),
    }
    if not results:
        return ToolAnswer(answer, "No endpoint matches; describe the need in other words.")
    lines = [f"{answer['count']} endpoints in {answer['apisCount']} APIs, best first:"]
    for api in results:
        for endpoint in api["endpoints"]:
            price = endpoint["price"] if endpoint["price"] == "dynamic" else f"${endpoint['price']}"
            lines.append(
                f"- api={api['slug']} path={endpoint['path']} {endpoint['method']} {price} "
                f"score {endpoint['score']:.2f}: {endpoint['description'][:120]}"
            )
    lines.append("Next: call details with the api and path of the best fit.")
    return ToolAnswer(answer, "\n".join(lines))


SEARCH = AgentTool(
    name="search",
    title="Search the catalog",
    description=(
        "Find provider API endpoints that answer a need described in plain language (for "
        "example 'find the email addresses of people at a company domain'). Returns endpoints "
        "grouped by API, best first, each with its api slug, path, method, price in dollars and "
        "a relevance score from 0 to 1 (0.5 and above: worth reading; a best score below 0.3: "
        "the catalog likely has nothing for the need). Start here, then call details on the "
        "best fit."
    ),
    input_schema=_object(
        {
            "prompt": {
                "type": "string",
                "minLength": 1,
                "maxLength": 1000,
                "description": "The need, in plain language",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": SEARCH_LIMIT_MAX,
                "default": 10,
                "description": "Endpoints to return at most",
            },
        },
        required=("prompt",),
    ),
    execute=_search,
)


# --- details --------------------------------------------------------------------------------------


def _details(principal: KeyPrincipal, arguments: dict) -> ToolAnswer:
    data = _validated(EndpointDetailsInputSerializer, arguments)
    answer = endpoint_details(api_slug=data["api"], path=data["path"], method=data.get("method"))
    endpoint = answer["endpoint"]
    lines = [
        f"{answer['api']['slug']} {endpoint['method']} {endpoint['path']}: "
        f"{endpoint['priceDetail']}."
    ]
    for kind, key in (("path", "pathParams"), ("query", "queryParams"), ("body", "bodyParams")):
        required = [param["name"] for param in endpoint[key] if param.get("required")]
        optional = [param["name"] for param in endpoint[key] if not param.get("required")]
        if required or optional:
            lines.append(
                f"{kind} parameters: required {', '.join(required) or 'none'}; "
                f"optional {', '.join(optional) or 'none'}"
            )
    if endpoint["paginationParams"]:
        lines.append(
            f"Pages through results with {', '.join(endpoint['paginationParams'])}: pass the "
            "first page's billing.requestId as parentRequestId to fetch later pages uncharged."
        )
    if endpoint["pollEndpoint"]:
        poll = endpoint["pollEndpoint"]
        lines.append(
            f"Starts an asynchronous job: read its result with run on {poll['method']} "
            f"{poll['path']} (free), filling the job id the start returns."
        )
    example = run_arguments(answer["usage"]["runApi"])
    if example is not None:
        lines.append(f"Next: call run with {json.dumps(example, ensure_ascii=False)}")
    return ToolAnswer(answer, "\n".join(lines))


def run_arguments(run_api_text: str) -> dict | None:
    """The JSON request in details' usage.runApi ("POST <base>/v1/run {...}")."""
    _, found, payload = run_api_text.partition("/v1/run ")
    try:
        return json.loads(payload) if found else None
    except ValueError:
        return None


DETAILS = AgentTool(
    name="details",
    title="Read an endpoint's parameters and price",
    description=(
        "One endpoint's full description: its price and how it is counted, its path, query "
        "and body parameters (name, type, required, description, examples), the parameters "
        "that page through results, the free poll endpoint of an asynchronous job, and the "
        "exact run arguments with example values. Call it before run."
    ),
    input_schema=_object({"api": API, "path": PATH, "method": METHOD}, required=("api", "path")),
    execute=_details,
)


# --- integrate ------------------------------------------------------------------------------------


def _integrate(principal: KeyPrincipal, arguments: dict) -> ToolAnswer:
    data = _validated(EndpointIntegrateInputSerializer, arguments)
    answer = endpoint_integration(
        api_slug=data["api"], path=data["path"], format=data["format"], method=data.get("method")
    )
    endpoint = answer["endpoint"]
    summary = (
        f"Code calling {answer['api']['slug']} {endpoint['method']} {endpoint['path']} in "
        f"{', '.join(answer['snippets'])}; setup.sdk and setup.x402 hold the set-up commands."
    )
    return ToolAnswer(answer, summary)


INTEGRATE = AgentTool(
    name="integrate",
    title="Write code that calls an endpoint",
    description=(
        "Code snippets that call an endpoint from a program, with their set-up commands. "
        "format: gw-sdk (TypeScript SDK, the default), run-api (Python requests posting to "
        "/v1/run), curl, x402-fetch, x402-python, or all. To call an endpoint yourself, use run."
    ),
    input_schema=_object(
        {
            "api": API,
            "path": PATH,
            "format": {"type": "string", "enum": list(ALL_FORMATS), "default": "gw-sdk"},
            "method": METHOD,
        },
        required=("api", "path"),
    ),
    execute=_integrate,
)


# --- list_endpoints -------------------------------------------------------------------------------


def _list_endpoints(principal: KeyPrincipal, arguments: dict) -> ToolAnswer:
    data = _validated(
        EndpointListInputSerializer, {"limit": LIST_ENDPOINTS_DEFAULT_LIMIT, **arguments}
    )
    answer = json.loads(
        catalog_list_page_json(
            limit=data["limit"],
            offset=data["offset"],
            verified=data["verified"],
            is_payable=data["isPayable"],
        )
    )
    slugs = ", ".join(api["slug"] for api in answer["apis"])
    summary = (
        f"{answer['count']} APIs ({answer['totalEndpoints']} endpoints) from offset "
        f"{data['offset']}: {slugs or 'none'}."
    )
    if answer["pagination"]["hasMore"]:
        summary += f" More: call list_endpoints with offset {data['offset'] + answer['count']}."
    return ToolAnswer(answer, summary)


LIST_ENDPOINTS = AgentTool(
    name="list_endpoints",
    title="Browse the catalog",
    description=(
        "The whole catalog, a page of APIs at a time (ordered by slug), each with its "
        "endpoints, prices and parameters. Prefer search to find an endpoint for a need; use "
        "this to browse. Add limit to offset until pagination.hasMore is false."
    ),
    input_schema=_object(
        {
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 500,
                "default": LIST_ENDPOINTS_DEFAULT_LIMIT,
                "description": "APIs per page",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "APIs skipped",
            },
            "verified": {"type": "boolean", "description": "Only verified (or unverified) APIs"},
            "isPayable": {"type": "boolean", "description": "Only payable endpoints, or only not"},
        }
    ),
    execute=_list_endpoints,
)


# --- run ------------------------------------------------------------------------------------------


def _run(principal: KeyPrincipal, arguments: dict) -> ToolAnswer:
    fields = {name: value for name, value in arguments.items() if name != "idempotencyKey"}
    data = _validated(RunInputSerializer, fields)
    run = RunInput(
        api=data["api"],
        path=data["path"],
        query=data.get("query") or {},
        body=data.get("body"),
        has_body=data.get("body") is not None,
        path_params=data.get("pathParams") or {},
        parent_request_id=data.get("parentRequestId"),
        method=data.get("method"),
    )
    result = run_execute(
        principal=principal,
        run=run,
        request_id=new_request_id(),
        idempotency_key=arguments.get("idempotencyKey"),
    )
    answer = result.body
    billing = answer["billing"]
    price = format_usd(cents_to_micros(answer["priceCents"]))
    if billing["charged"]:
        cost = f"charged {price}"
    elif billing.get("parentRequestId"):
        cost = f"not charged: continues {billing['parentRequestId']} ({price} paid there)"
    elif principal.is_test:
        cost = f"not charged (test key; a live key pays {price})"
    else:
        cost = f"not charged ({price})"
    lines = [
        f"{data['api']} {data['path']} answered; {cost}. requestId {answer['requestId']}"
        f"{' (replayed for this idempotencyKey)' if result.replayed else ''}. The provider's "
        "answer is in data."
    ]
    endpoint = endpoint_resolve(
        api_slug=data["api"], path=data["path"], method=data.get("method")
    ).endpoint
    if endpoint.pagination_params:
        first_page = billing.get("parentRequestId") or billing["requestId"]
        lines.append(
            f'Next page: call run again with parentRequestId "{first_page}" and only '
            f"{', '.join(endpoint.pagination_params)} changed; it is not charged again."
        )
    poll = endpoint.poll_endpoint if endpoint.poll_endpoint_id else None
    if poll is not None and poll.enabled:
        lines.append(
            f"This started an asynchronous job: read its result with run on {poll.method} "
            f"{poll.path} (free), filling in the job id from data, every few seconds until "
            "it is done."
        )
    return ToolAnswer(answer, "\n".join(lines))


RUN = AgentTool(
    name="run",
    title="Call an endpoint (paid)",
    description=(
        "Execute a provider endpoint and return its answer in data. A live key is charged "
        "priceCents (100 = $1) from the prepaid balance; a gw_test_ key calls the sandbox for "
        "free. Read details first: query parameters go in query, body parameters in body, "
        "path placeholders in pathParams (or fill the path). To fetch further pages of a "
        "charged call, repeat it with parentRequestId set to its billing.requestId and only "
        "the pagination parameters changed: those pages are not charged. An asynchronous "
        "job's start returns an id; read the result with run on its poll endpoint (free)."
    ),
    input_schema=_object(
        {
            "api": API,
            "path": PATH,
            "query": {
                "type": "object",
                "description": "Query-string parameters, name to value (a list repeats it)",
            },
            "body": {
                "type": ["object", "array"],
                "description": "The JSON body, for endpoints with body parameters",
            },
            "pathParams": {
                "type": "object",
                "additionalProperties": {"type": ["string", "integer"]},
                "description": "Values of the path's {placeholders}, by name",
            },
            "parentRequestId": {
                "type": "string",
                "description": "billing.requestId of a charged first page: fetch a later "
                "page of the same search without a new charge",
            },
            "method": METHOD,
            "idempotencyKey": {
                "type": "string",
                "minLength": 1,
                "maxLength": 255,
                "description": "Retrying with the same key replays the first answer instead "
                "of paying twice",
            },
        },
        required=("api", "path"),
    ),
    execute=_run,
    read_only=False,
)


# --- balance and usage ----------------------------------------------------------------------------


def _account_of(principal: KeyPrincipal) -> Account:
    account = account_for_owner(
        user_id=principal.user_id, organization_id=principal.organization_id
    )
    if account_has_overdue_holds(account=account):
        holds_expire(account=account)
        account.refresh_from_db()
    return account


def _balance(principal: KeyPrincipal, arguments: dict) -> ToolAnswer:
    balance = format_usd(_account_of(principal).available_micros)
    summary = f"{balance} available to spend with live keys (test keys are never charged)."
    return ToolAnswer({"success": True, "balance": balance}, summary)


BALANCE = AgentTool(
    name="balance",
    title="Read the credit balance",
    description=(
        "The credits available to spend, in dollars, pending charges taken off. A user key "
        "reads its user's balance, an organization key its organization's."
    ),
    input_schema=_object({}),
    execute=_balance,
)


def _usage(principal: KeyPrincipal, arguments: dict) -> ToolAnswer:
    params = _validated(
        CreditsUsageApi.CreditsUsageQuerySerializer, {"limit": USAGE_DEFAULT_LIMIT, **arguments}
    )
    limit, offset = params["limit"], params["offset"]
    events = usage_events_in_window(account=_account_of(principal), days=params["days"])
    total, spent = usage_window_totals(events=events)
    usage = CreditsUsageEventSerializer(events[offset : offset + limit], many=True).data
    answer = {
        "success": True,
        "usage": usage,
        "totalSpent": format_usd(spent),
        "pagination": {"limit": limit, "offset": offset, "count": len(usage), "total": total},
    }
    lines = [f"{total} calls in the last {params['days']} days, {answer['totalSpent']} spent."]
    lines += [
        f"- {event['timestamp']} {event['api']} {event['method']} {event['path']} "
        f"{event['cost']} {event['status']} {event['requestId']}"
        for event in usage
    ]
    if offset + len(usage) < total:
        lines.append(f"More: call usage with offset {offset + len(usage)}.")
    return ToolAnswer(answer, "\n".join(lines))


USAGE = AgentTool(
    name="usage",
    title="Read recent calls and their cost",
    description=(
        "The calls made with this account's keys, newest first, each with its cost, status "
        "and requestId, and the total spent in the window."
    ),
    input_schema=_object(
        {
            "days": {
                "type": "integer",
                "minimum": 1,
                "maximum": 365,
                "default": 30,
                "description": "Look back this many days",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 200,
                "default": USAGE_DEFAULT_LIMIT,
                "description": "Calls to return",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "Calls skipped",
            },
        }
    ),
    execute=_usage,
)


TOOLS: dict[str, AgentTool] = {
    tool.name: tool for tool in (SEARCH, DETAILS, INTEGRATE, LIST_ENDPOINTS, RUN, BALANCE, USAGE)
}
