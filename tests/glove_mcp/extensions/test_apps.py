"""MCP Apps' declared CSP, read strictly: only plain origins are kept."""

from __future__ import annotations

from glove_mcp.extensions.apps import csp_from_wire, declared_origins


def test_only_well_formed_origins_are_kept() -> None:
    meta = {
        "ui": {
            "csp": {
                "connectDomains": [
                    "https://api.example.com",
                    "wss://live.example.com:8443",
                    "https://x.example.com; script-src *",
                    "'self'",
                    "*",
                    7,
                ],
                "resourceDomains": ["https://*.cdn.example.com", "data:", "javascript:x"],
                "frameDomains": "https://not-a-list.example.com",
                "other": ["https://ignored.example.com"],
            }
        }
    }
    assert csp_from_wire(meta) == {
        "connectDomains": ("https://api.example.com", "wss://live.example.com:8443"),
        "resourceDomains": ("https://*.cdn.example.com",),
    }


def test_no_declaration_is_no_origin() -> None:
    metas: list[object] = [None, {}, {"ui": None}, {"ui": {"csp": []}}, {"ui": {"csp": {}}}, "x"]
    for meta in metas:
        assert csp_from_wire(meta) == {}
    assert declared_origins({"connectDomains": ["https://a.example.com", "x y"]}, "connectDomains")
    assert declared_origins({}, "frameDomains") == []
