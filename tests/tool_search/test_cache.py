from __future__ import annotations

import copy

from stowage.tool_search import Catalog, FieldWeights, IndexCache


def test_unchanged_catalog_is_not_rebuilt(schemas):
    cache = IndexCache()
    first = cache.get(Catalog.from_schemas(schemas))
    for _ in range(5):
        # A fresh Catalog object from fresh schema dicts, as a host sends each request.
        again = cache.get(Catalog.from_schemas(copy.deepcopy(schemas)))
        assert again is first
    assert cache.builds == 1
    assert cache.hits == 5


def test_changed_schema_rebuilds(schemas):
    cache = IndexCache()
    cache.get(Catalog.from_schemas(schemas))
    edited = copy.deepcopy(schemas)
    edited[0]["description"] = "Now searches for unicorns."
    index = cache.get(Catalog.from_schemas(edited))
    assert cache.builds == 2
    assert index.search("unicorns", 1)[0].name == edited[0]["name"]


def test_lru_evicts_oldest(schemas):
    cache = IndexCache(maxsize=2)
    cats = [Catalog.from_schemas(schemas[: i + 1]) for i in range(3)]
    for c in cats:
        cache.get(c)
    assert len(cache) == 2 and cache.builds == 3
    cache.get(cats[2])
    assert cache.builds == 3  # still cached
    cache.get(cats[0])
    assert cache.builds == 4  # was evicted


def test_weights_are_part_of_the_key(schemas):
    cache = IndexCache()
    cat = Catalog.from_schemas(schemas)
    cache.get(cat)
    cache.get(cat, FieldWeights(name=1.0))
    assert cache.builds == 2


def test_empty_cache_is_used_not_replaced(schemas):
    # Regression: an empty cache is falsy (len 0); callers must not swap in the default.
    from stowage.tool_search import BridgeService

    cache = IndexCache()
    BridgeService(Catalog.from_schemas(schemas), cache=cache)
    assert cache.builds == 1
