from urllib.parse import urlsplit

from django.conf import settings
from django.urls import path

from agents.apis import McpApi
from agents.views import skill_file

app_name = "agents"

# MCP_URL is the address agents are given; this gateway serves its path.
MCP_PATH = urlsplit(settings.MCP_URL).path.strip("/")

urlpatterns = [
    path(MCP_PATH, McpApi.as_view(), name="mcp"),
    path("skill.md", skill_file, name="skill"),
]
