"""Price table lookups and the providers' image-token rules, checked against their documented examples."""

from __future__ import annotations

import pytest

from expvid.models.image_tokens import (
    anthropic_tokens,
    gemini_tokens,
    image_tokens,
    openai_patches,
    openai_tiles,
)
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
    assert openai_patches(1024, 1024, 1.0) == 1024
    assert openai_patches(1800, 2400, 1.0) == 1452
    assert openai_patches(1800, 2400, 1.62) == round(1452 * 1.62)


def test_anthropic_and_gemini_rules():
    assert anthropic_tokens(200, 200) == 54  # "~54" in Claude's vision guide
    assert anthropic_tokens(1092, 1092) == 1590  # the largest 1:1 image that is not resized
    assert anthropic_tokens(4000, 4000) <= 1600  # resized down to about 1.15 megapixels first
    assert gemini_tokens(384, 384) == 258
    assert gemini_tokens(1000, 500) == 2 * 1 * 258  # 768 px tiles


@pytest.mark.parametrize(
    ("spec", "rule_start", "tokens"),
    [
        ("openai:gpt-4o-2024-08-06", "OpenAI tiles", 255),
        ("openai:gpt-5", "OpenAI tiles", 70 + 140),
        ("openai:gpt-5-mini", "OpenAI 32 px patches", round(49 * 1.62)),
        ("openai:o3-pro", "OpenAI tiles", 75 + 150),
        ("anthropic:claude-sonnet-4-20250514", "Anthropic", 67),
        ("gemini:gemini-2.5-pro", "Gemini 2.x", 258),
        ("gemini:gemini-3-pro-preview", "Gemini 3", 1120),
        ("openai:Qwen/Qwen2.5-VL-7B-Instruct@http://gpu:8000/v1", "Qwen2-VL", 64),
    ],
)
def test_rule_chosen_by_model_for_a_224_frame(spec: str, rule_start: str, tokens: int):
    cost = image_tokens(model_ref(spec), 224, 224)
    assert cost is not None and cost.rule.startswith(rule_start)
    assert cost.tokens == tokens


def test_unknown_models_have_no_rule_and_no_price():
    ref = model_ref("openai:my-finetune@http://gpu:8000/v1")
    assert ref.provider == "self-hosted"
    assert image_tokens(ref, 224, 224) is None
    assert price_for("openai:my-finetune@http://gpu:8000/v1") is None
    assert price_for("vllm:/models/InternVL3-8B") is None
    proxied = price_for("openai:gpt-4o@http://gateway:4000/v1")  # a proxy serving the provider's model
    assert proxied is not None and "priced as openai's model" in proxied.source


def test_price_lookup_dated_and_prefixed_names_and_overrides():
    price = price_for("openai:gpt-4o-2024-08-06")
    assert price is not None and (price.input_per_m, price.output_per_m) == (2.5, 10.0)
    assert "dated match" in price.source
    mini = price_for("openai:gpt-4o-mini")
    assert mini is not None and mini.input_per_m == 0.15  # not gpt-4o's price
    opus = price_for("blind:anthropic:claude-opus-4-1-20250805")
    assert opus is not None and (opus.input_per_m, opus.output_per_m) == (15.0, 75.0)
    name, given = parse_price_override("gpt-4o=1.25,5")
    assert name == "gpt-4o" and given.output_per_m == 5.0
    assert price_for("openai:gpt-4o", {"gpt-4o": given}) == given
    _, bare = parse_price_override("0.5,1.5")
    assert price_for("openai:anything@http://gpu:8000/v1", {"": bare}) == bare
    assert price_for("random") is not None and price_for("random").cost(10**6, 10**6) == 0  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="IN,OUT"):
        parse_price_override("gpt-4o=cheap")


def test_price_cost_long_context_and_separate_reasoning():
    gemini = price_for("gemini:gemini-2.5-pro")
    assert gemini is not None and gemini.reasoning_separate
    # thoughts are billed as output on Gemini; above 200k prompt tokens the whole request costs more
    assert gemini.cost(1000, 100, 900) == pytest.approx((1000 * 1.25 + 1000 * 10) / 1e6)
    assert gemini.cost(300_000, 0) == pytest.approx(300_000 * 2.5 / 1e6)
    openai = Price(input_per_m=1, output_per_m=2)
    assert openai.cost(1000, 1000, 500) == pytest.approx(3000 / 1e6)  # reasoning already in completion
