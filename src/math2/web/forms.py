"""Forms read before anything else: one content type, no file parts, a body cap kept while
reading.

Every form of the site is a plain HTML form (`application/x-www-form-urlencoded`): sign-in,
sign-out, decisions, grades. `read_form` refuses any other content type with 415 before reading
a byte (multipart included, so no part is ever spooled to a temporary file), refuses a declared
`Content-Length` over the cap with 413 before reading, and counts the bytes of the body as they
arrive (chunked bodies too), stopping at the cap with 413. The body is parsed in memory by
`urllib.parse.parse_qsl`; nothing of a request reaches the disk.

Caps: `SMALL_BODY` for a request without a session token or identity header (anonymous: sign-in,
and every refused POST), `decision_body()` (room for one text at `math2.util.textlimit`'s limit,
percent-encoded) for a signed-in reviewer's session. CSRF is checked on the parsed form after
this (`math2.web.security.check_csrf`).
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from fastapi import HTTPException, Request

from math2.util.textlimit import text_limit

URLENCODED = "application/x-www-form-urlencoded"
SMALL_BODY = 8 * 1024  # sign-in: a token, a name, a password, a path
MAX_FIELDS = 32  # the largest form has 7


def decision_body() -> int:
    """The cap for a signed-in reviewer's form: a text at the text limit, every character
    percent-encoded UTF-8 (up to 9 bytes), and a reason as long."""
    return 2 * 9 * text_limit() + 16 * 1024


def _content_type_ok(value: str) -> bool:
    kind, _, params = value.partition(";")
    if kind.strip().lower() != URLENCODED:
        return False
    for param in params.split(";"):
        key, _, val = param.partition("=")
        if key.strip().lower() == "charset" and val.strip().strip('"').lower() != "utf-8":
            return False
    return True


async def read_form(request: Request, max_bytes: int) -> dict[str, str]:
    """The urlencoded form of `request`, read up to `max_bytes`: 415 for another content type,
    413 past the cap (declared or counted), 400 for a body that is not UTF-8."""
    if not _content_type_ok(request.headers.get("content-type", "")):
        raise HTTPException(415, f"a form here is sent as {URLENCODED} only")
    declared = request.headers.get("content-length")
    # an ASCII count of at most 18 digits (`"²".isdigit()` is true; a huge one trips int())
    if declared is not None and (
        not (declared.isascii() and declared.isdigit() and len(declared) < 19)
        or int(declared) > max_bytes
    ):
        raise HTTPException(413, f"the form is larger than {max_bytes:,} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise HTTPException(413, f"the form is larger than {max_bytes:,} bytes")
        chunks.append(chunk)
    try:
        text = b"".join(chunks).decode("utf-8")
        pairs = parse_qsl(text, keep_blank_values=True, max_num_fields=MAX_FIELDS, errors="strict")
    except UnicodeDecodeError:
        raise HTTPException(400, "the form is not UTF-8") from None
    except ValueError:
        raise HTTPException(413, f"the form has more than {MAX_FIELDS} fields") from None
    return dict(pairs)
