"""Messages as a model sees them, kept per change for one request (internal to the loop).

A model request never carries ``render_data`` (data for the application's UI). Taking it out
is a pass over every tool result of the history; the loop keeps each message's view for the
request and extends the views of the saved history by what was added since the last model
call, so a call costs what changed, not the whole history.
"""

from __future__ import annotations

from glove_core._history_facts import HistoryFacts
from glove_core.models.base import without_render_data
from glove_core.types import Message

__all__ = ["ModelViews"]


class ModelViews:
    """One request's model views of its messages."""

    def __init__(self) -> None:
        # message id -> (the saved message, its model view)
        self._views: dict[str, tuple[Message, Message]] = {}
        # The views of the saved history as last sent, and that list: the history only grows
        # between model calls, so each call views only the messages added since.
        self._sent: list[Message] = []
        self._viewed: list[Message] | None = None

    def of(self, messages: list[Message]) -> list[Message]:
        """``messages`` without ``render_data``."""
        if without_render_data(messages) is messages:
            return list(messages)  # the usual case: nothing to take out, one pass
        views = []
        for message in messages:
            known = self._views.get(message.id)
            if known is None or known[0] is not message:
                known = self._views[message.id] = (message, without_render_data([message])[0])
            views.append(known[1])
        return views

    def seed(self, facts: HistoryFacts) -> None:
        """Take the saved history's views from ``facts`` when none of it carries render_data
        (the usual case): the first model call then views only what was added since."""
        if not facts.render_data:
            self._viewed = facts.messages
            self._sent = list(facts.messages[: facts.count])

    def one(self, message: Message) -> Message:
        """One message as models see it."""
        return self.of([message])[0]

    def history(self, sent: list[Message]) -> list[Message]:
        """``of(sent)`` for the saved history as sent; the caller must not change it."""
        count = len(self._sent)
        if (
            sent is not self._viewed
            or count > len(sent)
            or (count and self._sent[-1] is not self.one(sent[count - 1]))
        ):
            self._viewed = sent
            self._sent = self.of(sent)
        elif count < len(sent):
            self._sent.extend(self.of(sent[count:]))
        return self._sent
