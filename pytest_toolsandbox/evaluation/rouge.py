"""ROUGE-L F-measure with Porter stemming, bit-identical to rouge-score's
`RougeScorer(["rougeL"], use_stemmer=True)` but without its repeated work.

Scoring compares every message of a trajectory with every milestone target, so the same texts are
scored many times. rouge-score re-tokenises and re-stems both texts on each call and fills a
Python LCS table; here each distinct text is tokenised once (rouge-score's own tokenizer with a
memoised stemmer, so tokens are the same), its tokens are mapped to small integers (exact: no hash
collisions between distinct tokens), and the LCS length comes from rapidfuzz's bit-parallel
`LCSseq`. Precision, recall and F use rouge-score's arithmetic in the same order, so the floats
are identical, not merely close (tests/test_rouge.py checks this with hypothesis).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from rapidfuzz.distance import LCSseq
from rouge_score import tokenize

_VOCABULARY: dict[str, int] = {}
"""Token → id, shared by all texts of the process so ids of equal tokens agree across texts."""


class _MemoStemmer:
    """The Porter stemmer rouge-score uses, remembering each word's stem (stemming dominates tokenising).

    nltk is imported at the first word stemmed, not with this module: its package import pulls in
    scipy.stats and takes most of a second, which collection (compiling milestones needs this
    module's measures) should not pay."""

    def __init__(self) -> None:
        self._stem: Callable[[str], str] | None = None
        self.stem = lru_cache(maxsize=1 << 16)(self._stem_word)

    def load(self) -> Callable[[str], str]:
        """nltk's stemmer, imported now if not yet (a concurrent run imports it while its episodes
        wait for their models: the plugin's `WARM_UP_IMPORTS`)."""
        if self._stem is None:
            from nltk.stem import porter

            self._stem = porter.PorterStemmer().stem
        return self._stem

    def _stem_word(self, word: str) -> str:
        return (self._stem or self.load())(word)


_STEMMER = _MemoStemmer()


@lru_cache(maxsize=1 << 14)
def token_ids(text: str) -> tuple[int, ...]:
    """The stemmed rouge-score tokens of `text` as integer ids (computed once per distinct text)."""
    return tuple(_VOCABULARY.setdefault(token, len(_VOCABULARY)) for token in tokenize.tokenize(text, _STEMMER))


def rouge_l(target: str, prediction: str) -> float:
    """ROUGE-L F-measure of `prediction` against `target` (0.0 when either has no tokens)."""
    target_ids, prediction_ids = token_ids(target), token_ids(prediction)
    if not target_ids or not prediction_ids:
        return 0.0
    lcs = LCSseq.similarity(target_ids, prediction_ids)
    precision = lcs / len(prediction_ids)
    recall = lcs / len(target_ids)
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0
