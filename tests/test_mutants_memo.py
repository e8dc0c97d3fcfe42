"""The content caches scoring shares (evaluation/memo.py) and rouge's memoised stemmer (evaluation/rouge.py):
what they return and how much they keep (issue 33, mutation testing). Built here, not taken from the
modules' own instances, which exist before any test runs."""

from __future__ import annotations

from collections.abc import Callable

from pytest_toolsandbox.evaluation.memo import ContentCache
from pytest_toolsandbox.evaluation.rouge import _MemoStemmer


def looked_up(cache: ContentCache[str], computed: list[object]) -> Callable[[object], str]:
    """The cache's value for a key, computed as "value <key>" and noted in `computed` when it is not kept."""

    def value(key: object) -> str:
        def compute() -> str:
            computed.append(key)
            return f"value {key}"

        return cache.get(key, compute)

    return value


def test_a_cache_keeps_a_thousand_and_twenty_four_values_then_starts_afresh() -> None:
    computed: list[object] = []
    value = looked_up(ContentCache(), computed)
    assert [value(key) for key in range(1024)] == [f"value {key}" for key in range(1024)]
    assert value(0) == "value 0" and computed.count(0) == 1  # kept
    value(1024)  # the 1025th: the cache starts afresh
    assert value(0) == "value 0" and computed.count(0) == 2


def test_the_stemmer_gives_porter_stems_and_remembers_them() -> None:
    stemmer = _MemoStemmer()
    assert [stemmer.stem(word) for word in ("running", "ponies", "caresses")] == ["run", "poni", "caress"]
    stemmer.stem("running")
    assert stemmer.stem.cache_info().hits == 1


def test_a_cleared_cache_computes_every_value_again() -> None:
    cache: ContentCache[str] = ContentCache()
    computed: list[object] = []
    value = looked_up(cache, computed)
    assert [value("a"), value("b"), value("a")] == ["value a", "value b", "value a"] and computed == ["a", "b"]
    cache.clear()
    assert value("a") == "value a" and computed == ["a", "b", "a"]
