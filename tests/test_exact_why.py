"""Exact's invisible failures said in words (issue 27): a pure function, rendered as plain text."""

from __future__ import annotations

from scoring.core.exact_why import describe_whitespace, why_exact_fails


def test_a_double_space_in_the_golden_answer_is_named() -> None:
    why = why_exact_fails("Narmada  valley", "It flows through the Narmada valley.")
    assert why == "Exact failed: golden text not found as one run of characters: 'Narmada  valley' has two spaces."


def test_a_double_space_or_tab_in_the_response_is_named() -> None:
    why = why_exact_fails("Narmada valley", "It flows through the Narmada  valley.")
    assert why is not None and "the response writes 'Narmada  valley' with two spaces" in why
    tab = why_exact_fails("Narmada valley", "the Narmada\tvalley")
    assert tab is not None and "a tab" in tab
    nbsp = why_exact_fails("Narmada valley", "the Narmada\u00a0valley")
    assert nbsp is not None and "U+00A0 no-break space" in nbsp


def test_a_space_at_an_end_of_the_golden_answer_is_named() -> None:
    why = why_exact_fails("Paris ", "It is Paris.")
    assert why is not None and "'Paris ' ends with a space" in why


def test_an_invisible_character_is_named() -> None:
    why = why_exact_fails("Nar\u200bmada", "the Narmada river")
    assert why is not None and "golden answer holds an invisible character (U+200B zero width space)" in why


def test_nothing_is_said_when_exact_passes_or_the_difference_is_visible() -> None:
    assert why_exact_fails("Narmada valley", "the narmada valley") is None  # passes
    assert why_exact_fails("Narmada valley", "the Tapti valley") is None  # a real difference
    assert why_exact_fails("Narmada valley", "") is None and why_exact_fails("x", None) is None
    assert describe_whitespace("   ") == "three spaces" and describe_whitespace(" \t") == "a space and a tab"


def _card(plain: bool) -> list[str]:
    from streamlit.testing.v1 import AppTest

    def page(plain: bool) -> None:
        import pandas as pd

        from ui.display import show_row

        show_row(
            pd.Series(
                {
                    "question": "Where?",
                    "answer": "Narmada  valley",
                    "response": "![x](http://host/p.png) the Narmada valley",
                }
            ),
            plain=plain,
        )

    at = AppTest.from_function(page, args=(plain,), default_timeout=30).run()
    assert not at.exception
    assert not at.markdown  # dataset text never goes through Markdown
    return [t.value for t in at.text]


def test_the_card_says_why_in_plain_text_and_not_when_blind() -> None:
    assert _card(plain=False) == [
        "Exact failed: golden text not found as one run of characters: 'Narmada  valley' has two spaces."
    ]
    assert _card(plain=True) == []
