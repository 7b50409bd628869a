"""Price table lookups and the providers' image-token rules, checked against their documented examples."""

from __future__ import annotations

import re

import pytest

from expvid.models.image_tokens import (
    CLAUDE_HIGH_RES,
    CLAUDE_STANDARD,
    anthropic_tokens,
    claude_resized,
    gemini_tokens,
    image_tokens,
    openai_patch_count,
    openai_patches,
    openai_tiles,
)
from expvid.models.price_table import PRICE_SOURCES, PRICE_TABLE
from expvid.models.pricing import Price, model_ref, parse_price_override, price_for


def test_openai_tile_rule_matches_the_vision_guide_examples():
    # "A 1024 x 1024 square image in detail: high mode costs 765 tokens" (gpt-4o: 85 + 170 x 4)
    assert openai_tiles(1024, 1024, 85, 170) == 765
    # "A 2048 x 4096 image in detail: high mode costs 1105 tokens" (768 x 1536: 6 tiles)
    assert openai_tiles(2048, 4096, 85, 170) == 1105
    assert openai_tiles(4096, 8192, 85, 170, detail="low") == 85
    # small frames are not scaled up: a 224 x 224 frame is one tile
    assert openai_tiles(224, 224, 85, 170) == 255


def test_openai_patch_rule_matches_the_vision_guide_examples():
    # "A 1024 x 1024 image is 1024 tokens"; "A 1800 x 2400 image is 1452 tokens" (before the multiplier)
    assert openai_patch_count(1024, 1024) == 1024
    assert openai_patch_count(1800, 2400) == 1452
    assert openai_patches(1800, 2400, 1.62) == round(1452 * 1.62)
    # The guide's step B fits BOTH sides to whole patches (the smaller of the two ratios): the same
    # image turned landscape is 1452 patches too, not 45 x 34 = 1530 from fitting the width alone.
    assert openai_patch_count(2400, 1800) == 1452
    assert openai_patch_count(1920, 1080) <= 1536


@pytest.mark.parametrize(
    ("size", "standard", "standard_tokens", "high_res", "high_res_tokens"),
    [
        # Claude's "Vision" guide, resolution and token cost table (standard tier / Claude 4.7+)
        ((200, 200), (200, 200), 64, (200, 200), 64),
        ((1000, 1000), (1000, 1000), 1296, (1000, 1000), 1296),
        ((1092, 1092), (1092, 1092), 1521, (1092, 1092), 1521),
        ((1920, 1080), (1456, 819), 1560, (1920, 1080), 2691),
        # the table prints 1269 x 952; the guide's own reference implementation gives 1270 x 952
        # (952.5 rounds half to even); both cost 1564 tokens
        ((2000, 1500), (1270, 952), 1564, (2000, 1500), 3888),
        ((3840, 2160), (1456, 819), 1560, (2576, 1449), 4784),
    ],
)
def test_claude_patches_and_resizing_match_the_vision_guide(
    size, standard, standard_tokens, high_res, high_res_tokens
):
    assert claude_resized(*size, *CLAUDE_STANDARD) == standard
    assert anthropic_tokens(*size) == standard_tokens
    assert claude_resized(*size, *CLAUDE_HIGH_RES) == high_res
    assert anthropic_tokens(*size, CLAUDE_HIGH_RES) == high_res_tokens


def test_claude_token_limit_resizes_an_image_whose_sides_fit():
    # "an A4 page scanned at 130 DPI is 1075x1520 pixels ... costs 39 x 55 = 2145 visual tokens,
    # so Claude resizes it to 924x1307" (standard tier); a 4.7+ model keeps it as it is
    assert claude_resized(1075, 1520, *CLAUDE_STANDARD) == (924, 1307)
    assert claude_resized(1075, 1520, *CLAUDE_HIGH_RES) == (1075, 1520)


def test_gemini_rule():
    assert gemini_tokens(384, 384) == 258
    assert gemini_tokens(1000, 500) == 2 * 1 * 258  # 768 px tiles


@pytest.mark.parametrize(
    ("spec", "rule_start", "tokens"),
    [
        ("openai:gpt-4o-2024-08-06", "OpenAI tiles", 255),
        ("openai:gpt-5", "OpenAI tiles", 70 + 140),
        ("openai:gpt-5-chat-latest", "OpenAI tiles", 70 + 140),
        ("openai:gpt-5-mini", "OpenAI 32 px patches", round(49 * 1.62)),
        ("openai:o3", "OpenAI tiles", 75 + 150),
        ("anthropic:claude-sonnet-4-20250514", "Anthropic: 28 px patches, standard", 64),
        ("anthropic:claude-opus-4-7", "Anthropic: 28 px patches, high-resolution", 64),
        ("gemini:gemini-2.5-pro", "Gemini 2.x", 258),
        ("gemini:gemini-3-pro-preview", "Gemini 3", 1120),
        ("openai:Qwen/Qwen2.5-VL-7B-Instruct@http://gpu:8000/v1", "Qwen2-VL", 64),
    ],
)
def test_rule_chosen_by_model_for_a_224_frame(spec: str, rule_start: str, tokens: int):
    cost = image_tokens(model_ref(spec), 224, 224)
    assert cost is not None and cost.rule.startswith(rule_start)
    assert cost.tokens == tokens


def test_claude_tier_decides_a_large_frame():
    standard = image_tokens(model_ref("anthropic:claude-sonnet-4-5-20250929"), 1920, 1080)
    high = image_tokens(model_ref("anthropic:claude-opus-4-7"), 1920, 1080)
    assert standard is not None and high is not None and (standard.tokens, high.tokens) == (1560, 2691)


@pytest.mark.parametrize("spec", ["openai:o3-pro", "openai:gpt-5-pro", "openai:gpt-5.1", "openai:o3-mini"])
def test_openai_models_the_guide_does_not_list_have_no_rule(spec: str):
    # a rule borrowed from another model would be a guess presented as a count
    assert image_tokens(model_ref(spec), 224, 224) is None


def test_unknown_models_have_no_rule_and_no_price():
    ref = model_ref("openai:my-finetune@http://gpu:8000/v1")
    assert ref.provider == "self-hosted"
    assert image_tokens(ref, 224, 224) is None
    assert price_for("openai:my-finetune@http://gpu:8000/v1") is None
    assert price_for("vllm:/models/InternVL3-8B") is None
    proxied = price_for("openai:gpt-4o@http://gateway:4000/v1")  # a proxy serving the provider's model
    assert proxied is not None and "priced as openai's model" in proxied.source


def test_price_lookup_dated_and_variant_names_and_overrides():
    price = price_for("openai:gpt-4o-2024-08-06")
    assert price is not None and (price.input_per_m, price.output_per_m) == (2.5, 10.0)
    assert "dated match" in price.source
    first = price_for("openai:gpt-4o-2024-05-13")  # the first gpt-4o snapshot kept its own price
    assert first is not None and (first.input_per_m, first.output_per_m) == (5.0, 15.0)
    mini = price_for("openai:gpt-4o-mini")
    assert mini is not None and mini.input_per_m == 0.15  # not gpt-4o's price
    opus = price_for("blind:anthropic:claude-opus-4-1-20250805")
    assert opus is not None and (opus.input_per_m, opus.output_per_m) == (15.0, 75.0)
    preview = price_for("gemini:gemini-2.5-pro-preview-06-05")
    assert preview is not None and preview.input_per_m == 1.25 and "variant match" in preview.source
    name, given = parse_price_override("gpt-4o=1.25,5")
    assert name == "gpt-4o" and given.output_per_m == 5.0 and given.cached_input_per_m is None
    assert price_for("openai:gpt-4o", {"gpt-4o": given}) == given
    _, bare = parse_price_override("0.5,1.5,0.05")
    assert bare.cached_input_per_m == 0.05
    assert price_for("openai:anything@http://gpu:8000/v1", {"": bare}) == bare
    assert price_for("random") is not None and price_for("random").cost(10**6, 10**6) == 0  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="IN,OUT"):
        parse_price_override("gpt-4o=cheap")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # A newer version is not an older one: each of these used to get its predecessor's price.
        ("anthropic:claude-opus-4-6", (5.0, 25.0)),  # not claude-opus-4's $15 / $75
        ("openai:gpt-5.2", (1.75, 14.0)),  # not gpt-5's $1.25 / $10
        ("openai:o3-mini", None),  # not o3's
        ("openai:o3-deep-research", None),  # $10 / $40, not o3's $2 / $8
        ("openai:gpt-5.4", None),  # not in the table: unknown, never gpt-5's
        ("gemini:gemini-2.5-flash-image-preview", None),  # an image model, priced apart
    ],
)
def test_versions_and_siblings_are_not_priced_as_the_model_they_extend(spec, expected):
    price = price_for(spec)
    assert (None if price is None else (price.input_per_m, price.output_per_m)) == expected


def test_every_table_entry_names_its_source_page_and_date():
    for provider, models in PRICE_TABLE.items():
        source = PRICE_SOURCES[provider]
        assert source.url.startswith("https://") and re.fullmatch(r"\d{4}-\d{2}-\d{2}", source.checked)
        for name in models:
            price = price_for(f"{provider}:{name}")
            assert price is not None and source.url in price.source and source.checked in price.source


def test_price_cost_long_context_cached_input_and_separate_reasoning():
    gemini = price_for("gemini:gemini-2.5-pro")
    assert gemini is not None and gemini.reasoning_separate
    # thoughts are billed as output on Gemini; above 200k prompt tokens the whole request costs more
    assert gemini.cost(1000, 100, 900) == pytest.approx((1000 * 1.25 + 1000 * 10) / 1e6)
    assert gemini.cost(300_000, 0) == pytest.approx(300_000 * 2.5 / 1e6)
    assert gemini.cost(300_000, 1000) == pytest.approx((300_000 * 2.5 + 1000 * 15) / 1e6)
    # implicit-cache reads (part of the prompt count) at the cached rate, of the request's tier
    assert gemini.cost(100_000, 0, cache_read_tokens=60_000) == pytest.approx(
        (40_000 * 1.25 + 60_000 * 0.125) / 1e6
    )
    assert gemini.cost(250_000, 0, cache_read_tokens=50_000) == pytest.approx(
        (200_000 * 2.5 + 50_000 * 0.25) / 1e6
    )
    gpt5 = price_for("openai:gpt-5")
    assert gpt5 is not None and gpt5.cost(10_000, 0, cache_read_tokens=8_000) == pytest.approx(
        (2_000 * 1.25 + 8_000 * 0.125) / 1e6
    )
    pro = price_for("openai:gpt-5-pro")  # no cached price listed: cache reads cost full input
    assert pro is not None and pro.cost(10_000, 0, cache_read_tokens=8_000) == pytest.approx(
        10_000 * 15 / 1e6
    )
    openai = Price(input_per_m=1, output_per_m=2)
    assert openai.cost(1000, 1000, 500) == pytest.approx(3000 / 1e6)  # reasoning already in completion
