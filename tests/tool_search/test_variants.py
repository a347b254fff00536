"""Stem variants: derived forms the stemmer leaves apart still meet, at a fraction of a word."""

from __future__ import annotations

from stowage.tool_search import Catalog, ToolIndex
from stowage.tool_search.tokens import normalize
from stowage.tool_search.variants import VARIANT_WEIGHT, StemVariants

from .catalogs import tool


def test_variants_extend_or_are_extended_by_the_stem():
    v = StemVariants(
        [
            normalize(w)
            for w in ("multiply", "multiplication", "discoverer", "discovered", "list", "listen", "add", "addition")
        ]
    )
    assert normalize("multiplication") in v.of(normalize("multiply"))
    assert normalize("discoverer") in v.of(normalize("discovered"))
    assert v.of(normalize("add")) == ()  # too short to expand
    assert v.of("zzzz") == () and v.of("12345") == ()


def test_expand_adds_variants_at_a_fraction_and_keeps_the_terms_own_weight():
    v = StemVariants(["multipl", "multipli", "weather"])
    out = v.expand({"multipl": 1.0, "weather": 0.5})
    assert out == {"multipl": 1.0, "weather": 0.5, "multipli": VARIANT_WEIGHT}
    assert v.expand({"multipl": 1.0, "multipli": 1.0}) == {"multipl": 1.0, "multipli": 1.0}


def test_a_derived_form_finds_the_tool_but_the_exact_form_ranks_first():
    index = ToolIndex(
        Catalog.from_schemas(
            [
                tool("multiply", "Multiplies two integers."),
                tool("multiplication_table", "Print a multiplication table."),
                tool("divide", "Divides two integers."),
            ]
        )
    )
    assert [h.name for h in index.search("what is the multiplication of 3 and 2", 3)][:2] == [
        "multiplication_table",
        "multiply",
    ]
    assert index.search("multiply 3 by 2", 1)[0].name == "multiply"
    only_variant = ToolIndex(
        Catalog.from_schemas([tool("multiply", "Multiplies two integers."), tool("divide", "Divides two integers.")])
    )
    hit = only_variant.search("the multiplication of 3 and 2", 1)[0]
    assert (hit.name, hit.match) == ("multiply", "text")  # a text match, not the closest-name fallback
