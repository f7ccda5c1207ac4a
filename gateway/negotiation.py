from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer


class JsonOnlyNegotiation(DefaultContentNegotiation):
    """API views speak JSON only: whatever the Accept header says, answer JSON, never 406.

    Views that render something else (the OpenAPI document, the docs page) negotiate as usual.
    """

    def select_renderer(self, request, renderers, format_suffix=None):
        for renderer in renderers:
            if type(renderer) is JSONRenderer:
                return renderer, renderer.media_type
        return super().select_renderer(request, renderers, format_suffix)
