"""GET /skill.md: the skill file that teaches an agent the gateway, with its real addresses."""

from django.conf import settings
from django.shortcuts import render
from django.views.decorators.http import require_safe

SKILL_VERSION = "1.0"


@require_safe
def skill_file(request):
    context = {
        "version": SKILL_VERSION,
        "base_url": settings.GATEWAY_BASE_URL,
        "mcp_url": settings.MCP_URL,
    }
    response = render(
        request, "agents/skill.md", context, content_type="text/markdown; charset=utf-8"
    )
    response["Content-Disposition"] = 'inline; filename="SKILL.md"'
    return response
