"""The brief that lists of endpoints show: plain text, one line, cut after whole sentences."""

from catalog.texts import BRIEF_CHARS, endpoint_brief


def test_the_summary_is_preferred_and_the_description_stands_in_for_a_missing_one():
    assert endpoint_brief("Create a gist.", "Long text about gists.") == "Create a gist."
    assert endpoint_brief("  ", "Creates an envelope.") == "Creates an envelope."
    assert endpoint_brief("", "") == ""


def test_html_markdown_and_entities_become_plain_text():
    description = (
        "<p>Stops a query execution.</p> <p>For samples, see "
        '<a href="http://docs.example/samples.html">Examples &amp; Samples</a> in the '
        "<i>User Guide</i>.</p>"
    )
    assert endpoint_brief("", description) == (
        "Stops a query execution. For samples, see Examples & Samples in the User Guide."
    )
    assert endpoint_brief("[Get an Artist's Top Tracks](https://docs.example/top) `v1`", "") == (
        "Get an Artist's Top Tracks v1"
    )


def test_a_paragraph_that_is_only_an_address_is_left_out_and_an_address_in_a_sentence_stays():
    s3 = "Adds an object to a bucket.<p>http://docs.example/AmazonS3/RESTObjectPUT.html</p>"
    assert endpoint_brief("", s3) == "Adds an object to a bucket."
    assert endpoint_brief("", "<p>Creates a topic.</p><p>See http://docs.example/sns.</p>") == (
        "Creates a topic. See http://docs.example/sns."
    )


def test_line_breaks_and_runs_of_spaces_become_single_spaces():
    assert endpoint_brief("", "Revives a deleted\nservice.\n\n  Within 30 days.") == (
        "Revives a deleted service. Within 30 days."
    )
    assert endpoint_brief("Verify\u00a0an\temail  address .", "") == "Verify an email address."
    assert endpoint_brief("  Verify an email address (one) ", "") == "Verify an email address (one)"


def test_a_long_description_is_cut_after_its_last_whole_sentence_that_fits():
    sentence = "This sentence is exactly fifty characters long ok."
    description = " ".join([sentence] * 10)

    brief = endpoint_brief("", description)

    assert len(brief) <= BRIEF_CHARS
    assert brief == " ".join([sentence] * 5) + " …"


def test_a_long_first_sentence_is_cut_after_a_whole_word():
    description = "word " * 100 + "end."

    brief = endpoint_brief("", description)

    assert len(brief) <= BRIEF_CHARS
    assert brief.endswith("word …")
    assert "wor …" not in brief and "  " not in brief


def test_a_short_text_is_never_cut():
    text = "x" * BRIEF_CHARS
    assert endpoint_brief(text, "") == text
