"""A simulated browser for OAuth tests: follows the authorize redirects with httpx2."""

from __future__ import annotations

import asyncio
from urllib.parse import urljoin

import httpx2


class Browser:
    """A simulated user agent: follows the authorize redirects like a browser would.

    It stops at the first URL that is not on the authorization server (the callback) and,
    unless ``deliver`` is False, requests it — as the browser does when it lands there.
    """

    def __init__(self, issuer: str, deliver: bool = True, consent: str = "approve") -> None:
        self.issuer = issuer
        self.deliver = deliver
        self.consent = consent
        self.landed: list[str] = []
        self.pages: list[httpx2.Response] = []
        self.tasks: list[asyncio.Task[None]] = []

    async def visit(self, url: str) -> None:
        async with httpx2.AsyncClient(timeout=10.0) as client:
            response = await client.get(url)
            while True:
                if response.status_code in (302, 303, 307):
                    target = urljoin(str(response.url), response.headers["location"])
                    if not target.startswith(self.issuer):
                        self.landed.append(target)
                        if self.deliver:
                            self.pages.append(await client.get(target))
                        return
                    response = await client.get(target)
                elif response.status_code == 200 and "/consent" in str(response.url):
                    request_id = response.url.params["request"]
                    response = await client.post(
                        urljoin(self.issuer, "/consent"),
                        data={"request": request_id, "decision": self.consent},
                    )
                else:
                    raise AssertionError(f"browser stuck at {response.url}: {response.status_code}")

    def on_authorize_url(self, url: str) -> None:
        self.tasks.append(asyncio.create_task(self.visit(url)))

    async def finish(self) -> None:
        for task in self.tasks:
            await task
