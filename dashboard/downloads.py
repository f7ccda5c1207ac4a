"""Files people download from the gateway: the TypeScript SDK as the npm tarball `npm pack` would
make of sdk/typescript/ (its files under package/), so `npm install <url>` works from any machine
that reaches the gateway."""

import functools
import gzip
import io
import tarfile

from catalog.sdk import sdk_directory, sdk_manifest

# npm pack's own fixed date (1985-10-26T08:15:00Z): the same files always give the same bytes.
PACKED_MTIME = 499162500


def sdk_tarball_files() -> list[str]:
    """What npm pack publishes: package.json, the README and the files package.json lists."""
    return sorted({"package.json", "README.md", *sdk_manifest()["files"]})


@functools.cache
def sdk_tarball() -> bytes:
    buffer = io.BytesIO()
    # GzipFile rather than tarfile's "w:gz", which stamps the gzip header with the current time.
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as compressed,
        tarfile.open(fileobj=compressed, mode="w", format=tarfile.USTAR_FORMAT) as archive,
    ):
        for name in sdk_tarball_files():
            content = (sdk_directory() / name).read_bytes()
            entry = tarfile.TarInfo(f"package/{name}")
            entry.size = len(content)
            entry.mtime = PACKED_MTIME
            entry.mode = 0o644
            archive.addfile(entry, io.BytesIO(content))
    return buffer.getvalue()
