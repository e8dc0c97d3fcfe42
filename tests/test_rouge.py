"""The fast ROUGE-L gives exactly rouge-score's F-measure (same float, not an approximation)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from pytest_toolsandbox.evaluation.rouge import rouge_l, token_ids

SCORER = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)

WORDS = ["the", "reminder", "reminders", "remind", "buy", "buying", "chocolate", "milk", "tomorrow", "at", "5",
         "PM", "5:00", "running", "runs", "ran", "Bart", "Homer's", "phone", "number", "+1-415-555-0100", "is",
         "set", "setting", "caresses", "ponies", "généralement", "日本語", "naïve", "I've", "don't", "C++",
         "e-mail", "2024-05-01", "3.14", "", "!!!", "—", "ﬁne", "İstanbul", "ß", "Straße", "x", "ok"]
SEPARATORS = [" ", "  ", ", ", ". ", "\n", "\t", "-", "/", "'", ""]

realistic = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=40).map(
    lambda parts: "".join(word + separator for word, separator in parts))
anything = st.text(max_size=120)
texts = st.one_of(realistic, anything, st.just(""))


def reference(target: str, prediction: str) -> float:
    return SCORER.score(target=target, prediction=prediction)["rougeL"].fmeasure


@settings(max_examples=600, deadline=None)
@given(texts, texts)
def test_rouge_l_equals_rouge_score_bit_for_bit(target: str, prediction: str) -> None:
    assert rouge_l(target, prediction) == reference(target, prediction)


@settings(max_examples=200, deadline=None)
@given(realistic)
def test_a_text_against_itself_or_a_variant_matches_rouge_score(text: str) -> None:
    variant = text.upper().replace(" ", "  ") + " and more"
    assert rouge_l(text, text) == reference(text, text)
    assert rouge_l(text, variant) == reference(text, variant)
    assert rouge_l(variant, text) == reference(variant, text)


def test_known_values() -> None:
    assert rouge_l("The cat sat on the mat", "the cats sitting on a mat") == reference(
        "The cat sat on the mat", "the cats sitting on a mat")
    assert rouge_l("Remind me to buy milk", "Remind me to buy milk") == 1.0
    assert rouge_l("", "anything") == 0.0
    assert rouge_l("!!!", "???") == 0.0


def test_tokens_are_stemmed_once_and_shared_between_texts() -> None:
    assert token_ids("running reminders") == token_ids("RUNS, reminder!") == token_ids("run remind")
    assert len(set(token_ids("run remind"))) == 2
    assert token_ids("") == ()
