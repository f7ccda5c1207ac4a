"""The openai SDK pointed at POST /v1/run: an httpx transport that wraps each chat-completions
request in the run envelope, and unwraps a whole answer's ``data`` (a stream is relayed as is)."""

import json

import httpx
from openai import OpenAI

CHAT_API = "zhipu-glm"
CHAT_PATH = "/api/paas/v4/chat/completions"


class RunTransport(httpx.BaseTransport):
    def __init__(self, gateway: str, key: str, *, timeout: float = 30):
        self.gateway, self.key = gateway, key
        self.inner = httpx.HTTPTransport()
        self.timeout = timeout
        self.last_response: httpx.Response | None = None

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        run = httpx.Request(
            "POST",
            f"{self.gateway}/v1/run",
            json={"api": CHAT_API, "path": CHAT_PATH, "body": json.loads(request.content)},
            headers={"Authorization": f"Bearer {self.key}"},
            extensions={"timeout": httpx.Timeout(self.timeout).as_dict()},
        )
        response = self.inner.handle_request(run)
        self.last_response = response
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response
        envelope = json.loads(response.read())
        if response.status_code == 200:
            content = envelope["data"]
        else:
            content = {"error": {"message": envelope["error"], "code": envelope.get("code")}}
        return httpx.Response(
            response.status_code,
            json=content,
            headers={"X-Request-Id": response.headers.get("X-Request-Id", "")},
            request=request,
        )


def openai_through_run(gateway: str, key: str) -> tuple[OpenAI, RunTransport]:
    transport = RunTransport(gateway, key)
    client = OpenAI(
        api_key="unused",
        base_url="http://gateway.invalid/v1",
        http_client=httpx.Client(transport=transport),
        max_retries=0,
    )
    return client, transport
