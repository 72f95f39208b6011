"""``redact_url``: a URL as a person, a log, a follower or the model may see it.

One helper decides what of a URL is secret, for database URLs and MCP server URLs alike:
the password of the user-info always, and — unless told to keep them — the user name, the
query string and the fragment (an ``api_key=`` or ``#access_token=`` there is a credential as
often as not). What is dropped becomes ``…`` so a reader sees that something was there.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["redact_url"]

_ELIDED = "…"
_PASSWORD_PARAM = re.compile(r"((?:^|[&;\s?])password=)[^&;\s]*", re.IGNORECASE)


def redact_url(url: str, *, keep_user: bool = False, keep_query: bool = False) -> str:
    """``url`` without its credentials.

    Args:
        url: any URL (or a libpq ``key=value`` string, whose ``password=`` is masked).
        keep_user: keep the user name of the user-info (its password becomes ``***``);
            otherwise the whole user-info becomes ``…``.
        keep_query: keep the query string, with ``password=`` values masked; otherwise the
            query and the fragment become ``…``.

    Returns:
        The redacted text. Text that is not a URL is returned with ``password=`` masked.
    """
    if "://" not in url:
        return _PASSWORD_PARAM.sub(r"\1***", url)
    try:
        parts = urlsplit(url)
    except ValueError:
        # Not parseable (e.g. a bad IPv6 literal): keep only the scheme.
        return url.split("://", 1)[0] + "://" + _ELIDED
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        if keep_user:
            user, colon, _ = userinfo.partition(":")
            netloc = f"{user}{':***' if colon else ''}@{hostport}"
        else:
            netloc = f"{_ELIDED}@{hostport}"
    if keep_query:
        query = _PASSWORD_PARAM.sub(r"\1***", parts.query)
        fragment = parts.fragment
    else:
        query = _ELIDED if parts.query else ""
        fragment = _ELIDED if parts.fragment else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))
