"""ListPager: one whole list, fetched a page at a time (`limit` + `continue`).

Why page: a list of 50,000 pods in one answer is one huge body the server must build and the
client must parse at once. With `limit`, the server answers at most that many items and a
`continue` token; each later page, asked for with the token, is read at the same revision as the
first, so the pages join into one consistent snapshot: nothing seen twice, nothing missed, and the
first page's resourceVersion is the whole list's (the one a reflector then watches from).

A token is only good while the server still has that revision. When storage was compacted past
it, the next page is refused with 410 Expired ("The provided continue parameter is too old …");
the pager then starts over with one list without a limit, as client-go's pager does by default
(FullListIfExpired). The pages read so far are dropped: a list put together from two revisions
would not be a snapshot.
"""

from __future__ import annotations

from typing import Any

from api.errors import GoneError
from client.rest import Resource, RESTClient

DEFAULT_PAGE_SIZE = 500  # client-go's pager default


class ListPager:
    """Lists `resource` in pages of `page_size` (0: one unpaged list)."""

    def __init__(self, client: RESTClient, resource: Resource, page_size: int = DEFAULT_PAGE_SIZE) -> None:
        self.client = client
        self.resource = resource
        self.page_size = page_size
        self.pages = 0  # list requests answered so far (every page, and a fallback's full list)

    async def list(
        self, namespace: str | None = None, *, label_selector: str | None = None, field_selector: str | None = None
    ) -> dict[str, Any]:
        """The whole list: `items` of every page, the first page's `metadata.resourceVersion`."""
        items: list[dict[str, Any]] = []
        token: str | None = None
        first: dict[str, Any] | None = None
        while True:
            try:
                page = await self.client.list(
                    self.resource, namespace, label_selector=label_selector, field_selector=field_selector,
                    limit=self.page_size or None, continue_=token,
                )  # fmt: skip
            except GoneError:
                if token is None:  # the first page itself: not ours to recover from
                    raise
                full = await self.client.list(
                    self.resource, namespace, label_selector=label_selector, field_selector=field_selector
                )
                self.pages += 1
                return full
            self.pages += 1
            items.extend(page.get("items") or [])
            if first is None:
                first = page
            token = (page.get("metadata") or {}).get("continue") or None
            if token is None:
                break
        assert first is not None
        metadata = (first.get("metadata") or {}).items()
        whole = {k: v for k, v in metadata if k not in ("continue", "remainingItemCount")}
        return {**first, "metadata": whole, "items": items}
