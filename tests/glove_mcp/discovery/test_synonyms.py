"""Query rewriting for catalogue ranking (glove_mcp.discovery._synonyms.rewrite_query)."""

from __future__ import annotations

from glove_mcp.discovery._synonyms import expansions, lexicon_size, rewrite_query
from glove_mcp.discovery._text import stem


def test_quoted_text_and_what_follows_a_marker_are_the_topic() -> None:
    assert rewrite_query("tick off 'call the plumber'").topic == "call the plumber"
    text = rewrite_query("text my mom that the flight landed")
    assert (text.request, text.topic) == ("text my mom", "the flight landed")
    # "that" before a noun is a determiner, not the start of a topic
    assert rewrite_query("block that ip address").topic == ""
    # a marker as the first word starts nothing
    assert rewrite_query("about us page").topic == ""


def test_phrases_are_replaced_by_their_gloss_and_slots_are_kept() -> None:
    assert rewrite_query("show the balance sheet").request == "show the accounting report"
    assert rewrite_query("let the whole team know").request == "tell message the whole team"
    assert rewrite_query("let know").request == "let know"  # a slot needs a word


def test_shapes_and_mentions() -> None:
    assert rewrite_query("post in #general").request == "post in chat channel"
    assert rewrite_query("point api.example.com at it").request == "point website domain at it"
    assert rewrite_query("put it in our team wiki").mentions == "wiki"
    assert rewrite_query("send it in google drive").mentions == "drive"


def test_a_pasted_email_address_is_topic_not_request() -> None:
    text = rewrite_query("cancel jane@foo.com's subscription")
    assert "@" not in text.request and "email" not in text.request.split()
    assert text.topic == "email"
    assert rewrite_query("email bob@x.io the deck").request.split()[0] == "email"


def test_clock_times_read_as_calendar_cues() -> None:
    assert "o'clock" in rewrite_query("move my 2pm to 4:30 pm").request


def test_corrections_apply_only_through_the_callback() -> None:
    fixes = {"wether": "weather"}
    assert rewrite_query("the wether").request == "the wether"
    assert rewrite_query("the wether", fixes.get).request == "the weather"


def test_hints_reach_every_name_of_their_concept() -> None:
    related = expansions(stem("umbrella"))
    assert related[stem("weather")] == "hint"
    assert related[stem("forecast")] == "hint"
    assert lexicon_size()["synonym_groups"] > 50
