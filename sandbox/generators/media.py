"""Tiny real media files: a generated PNG and fixed 8x8 JPEG, WebP and GIF images, a one-page
PDF and an MP4 header (not playable: enough for a client that checks type and size)."""

import base64
import functools
import struct
import zlib

JPEG = base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAA0JCgsKCA0LCgsODg0PEyAVExISEyccHhcgLikxMC4pLSwzOko+MzZGNy"
    "wtQFdBRkxOUlNSMj5aYVpQYEpRUk//2wBDAQ4ODhMREyYVFSZPNS01T09PT09PT09PT09PT09PT09PT09PT09PT09P"
    "T09PT09PT09PT09PT09PT09PT09PT0//wAARCAAIAAgDASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAw"
    "QFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkK"
    "FhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmq"
    "KjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEB"
    "AQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRob"
    "HBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOE"
    "hYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+P"
    "n6/9oADAMBAAIRAxEAPwCOiiivqDxT/9k="
)
WEBP = base64.b64decode(
    "UklGRjgAAABXRUJQVlA4ICwAAADQAQCdASoIAAgAAoBCJaACdLoB+AADsAD+u7f/nEugba9D//hVuGIZOgAAAA=="
)
GIF = base64.b64decode("R0lGODdhCAAIAIEAADuC9gAAAAAAAAAAACwAAAAACAAIAAAIDwABCBxIsKDBgwgTKkwYEAA7")
MP4 = (
    struct.pack(">I", 24)
    + b"ftypisom"
    + struct.pack(">I", 512)
    + b"isomiso2"
    + (struct.pack(">I", 8) + b"free")
)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


@functools.lru_cache(maxsize=64)
def png(width: int = 64, height: int = 40, rgb: tuple[int, int, int] = (59, 130, 246)) -> bytes:
    """A solid-colour RGB PNG; a darker band across the top stands for a page header."""
    header_rows = max(1, height // 8)
    dark = bytes(max(0, c - 60) for c in rgb)
    rows = b"".join(
        b"\x00" + (dark if y < header_rows else bytes(rgb)) * width for y in range(height)
    )
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + _chunk(b"IDAT", zlib.compress(rows, 9))
        + _chunk(b"IEND", b"")
    )


def pdf(title: str) -> bytes:
    text = title.replace("\\", "").replace("(", "").replace(")", "")[:80]
    stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return out


def image(format_name: str, seed: int = 0) -> tuple[bytes, str]:
    """(bytes, content type) of a small image in the asked format."""
    name = (format_name or "png").lower()
    if name in ("jpg", "jpeg"):
        return JPEG, "image/jpeg"
    if name == "webp":
        return WEBP, "image/webp"
    if name == "gif":
        return GIF, "image/gif"
    rgb = (40 + seed % 180, 60 + seed // 7 % 160, 90 + seed // 49 % 150)
    return png(64, 40, rgb), "image/png"
