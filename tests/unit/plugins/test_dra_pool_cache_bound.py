"""PoolCache.bound drops each part of the cache on its own: many DeviceClasses (one per extended
resource, as SchedulingWithExtendedResource has a thousand) drop the classes and the answers
keyed by them, never the pools, so the pools are not rebuilt every few hundred pods; too many
pools drop the pools and everything keyed by their devices; too many answers drop the answers."""

from __future__ import annotations

from kubesched.plugins.dynamicresources.pools import _CLASSES_LIMIT, _VERDICTS_LIMIT, Pool, PoolCache


def _filled(pools: int, classes: int, answers: int) -> PoolCache:
    cache = PoolCache()
    for i in range(pools):
        cache.pools[("d", f"p{i}")] = ([], None, Pool("d", f"p{i}"))
    for i in range(classes):
        cache.classes[i] = {"metadata": {"name": f"class-{i}"}}
    for i in range(answers):
        cache.selected[((i, ()), i)] = True
    cache.capacity_fits[("x", 1)] = True
    cache.layouts["k"] = object()  # type: ignore[assignment]
    return cache


def test_many_classes_drop_the_classes_and_their_answers_not_the_pools() -> None:
    cache = _filled(pools=100, classes=_CLASSES_LIMIT + 1, answers=10)
    cache.bound(100)
    assert len(cache.pools) == 100 and cache.layouts and cache.capacity_fits
    assert not cache.classes and not cache.selected


def test_a_thousand_classes_are_kept_beside_a_hundred_slices() -> None:
    cache = _filled(pools=100, classes=1000, answers=10)
    cache.bound(100)
    assert (len(cache.pools), len(cache.classes), len(cache.selected)) == (100, 1000, 10)


def test_too_many_pools_drop_the_pools_and_what_is_keyed_by_their_devices() -> None:
    cache = _filled(pools=4 * 10 + 65, classes=5, answers=10)
    cache.bound(10)
    assert not cache.pools and not cache.layouts and not cache.selected and not cache.capacity_fits
    assert len(cache.classes) == 5  # kept: a class is kept alive by the map, its id not reused


def test_too_many_answers_drop_the_answers_alone() -> None:
    cache = _filled(pools=3, classes=5, answers=_VERDICTS_LIMIT + 1)
    cache.bound(10)
    assert not cache.selected and not cache.capacity_fits
    assert (len(cache.pools), len(cache.classes)) == (3, 5) and cache.layouts
