"""The TypeScript SDK that the gw-sdk snippets import: where its files are, its name and version
(read from its package.json, so that file alone says which version exists), and the address where
this gateway serves it as an npm tarball until it is on the npm registry."""

import functools
import json
from pathlib import Path

from django.conf import settings

DOWNLOADS_PATH = "/downloads/"


def sdk_directory() -> Path:
    return Path(settings.BASE_DIR) / "sdk" / "typescript"


@functools.cache
def sdk_manifest() -> dict:
    """The SDK's package.json."""
    return json.loads((sdk_directory() / "package.json").read_text(encoding="utf-8"))


def sdk_package_name() -> str:
    return sdk_manifest()["name"]


def sdk_tarball_name() -> str:
    """gw-sdk-1.0.0.tgz: what npm pack would name it."""
    manifest = sdk_manifest()
    return f"{manifest['name']}-{manifest['version']}.tgz"


def sdk_tarball_url() -> str:
    return f"{settings.GATEWAY_BASE_URL}{DOWNLOADS_PATH}{sdk_tarball_name()}"
