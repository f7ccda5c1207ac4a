import io
import json
import tarfile
from pathlib import Path

from django.conf import settings

from dashboard.downloads import sdk_tarball

SDK_DIRECTORY = Path(settings.BASE_DIR) / "sdk" / "typescript"
VERSION = json.loads((SDK_DIRECTORY / "package.json").read_text())["version"]
TARBALL = f"/downloads/gw-sdk-{VERSION}.tgz"


def members(content: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(content), mode="r:gz") as archive:
        return {
            entry.name: archive.extractfile(entry).read() for entry in archive if entry.isfile()
        }


def test_anyone_downloads_the_sdk_as_an_npm_tarball(client, db):
    response = client.get(TARBALL)

    assert response.status_code == 200
    assert response["Content-Type"] == "application/gzip"
    assert response["Content-Disposition"] == f'attachment; filename="gw-sdk-{VERSION}.tgz"'
    files = members(response.content)
    assert sorted(files) == [
        "package/README.md",
        "package/index.d.ts",
        "package/index.js",
        "package/package.json",
    ]
    for name, content in files.items():
        assert content == (SDK_DIRECTORY / name.removeprefix("package/")).read_bytes(), name


def test_the_tarball_is_the_same_bytes_every_time_it_is_built():
    first = sdk_tarball.__wrapped__()
    assert sdk_tarball.__wrapped__() == first
    assert first[4:8] == b"\0\0\0\0"  # the gzip header's own timestamp
    with tarfile.open(fileobj=io.BytesIO(first), mode="r:gz") as archive:
        assert {entry.mtime for entry in archive} == {499162500}


def test_an_unknown_download_is_a_404(client, db):
    for path in ("/downloads/gw-sdk-0.0.1.tgz", "/downloads/other.tgz", "/downloads/"):
        assert client.get(path).status_code == 404, path


def test_the_download_is_only_read(client, db):
    assert client.post(TARBALL).status_code == 405
    assert client.head(TARBALL).status_code == 200
