"""Tiny, randomly initialised checkpoints of every family the transformers backend runs, built offline.

Each checkpoint is a real folder in the shape the hub ships (config.json, safetensors weights,
tokenizer files, preprocessor / video preprocessor / processor configs, chat_template.jinja), made
here from a small local vocabulary: nothing is downloaded. The weights are random, so the answers
are noise; the point is that the real loading, preprocessing and generation code runs.

Skipped with a reason when torch or transformers is missing, unless EXPVID_REQUIRE_HF=1.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from expvid.media.synth import scene_frame

REQUIRED = os.environ.get("EXPVID_REQUIRE_HF") == "1"

try:
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    HF_MISSING: str | None = None
except ImportError as _missing:  # pragma: no cover - depends on the environment
    if REQUIRED:
        raise
    HF_MISSING = f"torch / transformers not installed ({_missing}); set EXPVID_REQUIRE_HF=1 to fail instead"


def require_hf() -> None:
    """Skip the calling test with the reason when the transformers stack is not installed."""
    if HF_MISSING is not None:
        pytest.skip(HF_MISSING)


TEMPLATES = Path(__file__).parent / "templates"
WORDS = [
    "the",
    "a",
    "an",
    "answer",
    "is",
    "video",
    "frame",
    "frames",
    "pipette",
    "tube",
    "beaker",
    "flask",
    "which",
    "tool",
    "used",
    "in",
    "this",
    "step",
    "what",
    "happens",
    "next",
    "A",
    "B",
    "C",
    "D",
    "E",
    "F",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
    "9",
    "0",
    "yes",
    "no",
    "of",
    "to",
    "and",
]


def _tokenizer(special: Sequence[str], plain: Sequence[str] = (), named: dict[str, str] | None = None) -> Any:
    """A WordLevel tokenizer: a few hundred words, ASCII characters and the family's special tokens."""
    vocab: dict[str, int] = {}
    for token in ["<unk>", *WORDS, *(chr(c) for c in range(33, 127))]:
        vocab.setdefault(token, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    backend.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="<unk>",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        extra_special_tokens=named or {},
    )
    tokenizer.add_special_tokens({"additional_special_tokens": list(special)})
    if plain:
        tokenizer.add_tokens(list(plain))  # not special: kept when decoding, like Qwen3's <think>
    return tokenizer


def _ids(tokenizer: Any, *tokens: str) -> list[int]:
    return [int(tokenizer.convert_tokens_to_ids(token)) for token in tokens]


def _text_config(tokenizer: Any, **extra: Any) -> dict[str, Any]:
    pad, eos = _ids(tokenizer, "<|endoftext|>", "<|im_end|>")
    return {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "max_position_embeddings": 4096,
        "bos_token_id": pad,
        "eos_token_id": eos,
        "pad_token_id": pad,
        **extra,
    }


def _save(
    folder: Path,
    model: Any,
    tokenizer: Any,
    image_processor: Any,
    *,
    template: str,
    processor: dict[str, Any],
    video: dict[str, Any],
) -> Path:
    """Write the folder the way `processor.save_pretrained` + `model.save_pretrained` lay it out."""
    model.generation_config.eos_token_id = tokenizer.convert_tokens_to_ids("<|im_end|>")
    model.generation_config.pad_token_id = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    image_processor.save_pretrained(folder)
    (folder / "processor_config.json").write_text(json.dumps(processor, indent=2))
    (folder / "video_preprocessor_config.json").write_text(json.dumps(video, indent=2))
    (folder / "chat_template.jinja").write_text((TEMPLATES / template).read_text())
    return folder


QWEN_SPECIAL = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|vision_start|>", "<|vision_end|>",
                "<|image_pad|>", "<|video_pad|>"]  # fmt: skip


def build_qwen(folder: Path, *, version: str) -> Path:
    """Qwen2-VL ("2") or Qwen2.5-VL ("2.5"): 56x56 frames per image (4 tokens), temporal patches of 2."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    tokenizer = _tokenizer(QWEN_SPECIAL, plain=["<think>", "</think>"])
    image, video, start, end = _ids(
        tokenizer, "<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>"
    )
    rope = {"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 10000.0}
    vision: dict[str, Any] = {"depth": 1, "num_heads": 2, "patch_size": 14, "spatial_merge_size": 2,
                              "temporal_patch_size": 2}  # fmt: skip
    if version == "2":
        config: Any = transformers.Qwen2VLConfig(
            text_config=_text_config(tokenizer, rope_parameters=rope),
            vision_config={**vision, "embed_dim": 32, "hidden_size": 32},
            image_token_id=image, video_token_id=video, vision_start_token_id=start, vision_end_token_id=end,
        )  # fmt: skip
        model = transformers.Qwen2VLForConditionalGeneration(config)
        processor_class, video_class = "Qwen2VLProcessor", "Qwen2VLVideoProcessor"
    else:
        config = transformers.Qwen2_5_VLConfig(
            text_config=_text_config(tokenizer, rope_parameters=rope),
            vision_config={**vision, "hidden_size": 32, "intermediate_size": 64, "out_hidden_size": 32,
                           "fullatt_block_indexes": [0], "window_size": 56},
            image_token_id=image, video_token_id=video, vision_start_token_id=start, vision_end_token_id=end,
        )  # fmt: skip
        model = transformers.Qwen2_5_VLForConditionalGeneration(config)
        processor_class, video_class = "Qwen2_5_VLProcessor", "Qwen2VLVideoProcessor"
    pixels = {"shortest_edge": 56 * 56, "longest_edge": 56 * 56}
    image_processor = Qwen2VLImageProcessorPil(size=pixels)
    video_config = {
        "video_processor_type": video_class,
        "size": pixels,
        "patch_size": 14,
        "temporal_patch_size": 2,
        "merge_size": 2,
        "image_mean": [0.48145466, 0.4578275, 0.40821073],
        "image_std": [0.26862954, 0.26130258, 0.27577711],
        "do_sample_frames": False,
    }
    return _save(
        folder, model, tokenizer, image_processor,
        template="qwen2_vl.jinja", processor={"processor_class": processor_class}, video=video_config,
    )  # fmt: skip


def build_internvl(folder: Path) -> Path:
    """InternVL (transformers-native, as in the -hf conversions): 28x28 tiles, one token per tile."""
    from transformers.models.got_ocr2.image_processing_pil_got_ocr2 import GotOcr2ImageProcessorPil

    named = {"start_image_token": "<img>", "end_image_token": "</img>",
             "context_image_token": "<IMG_CONTEXT>", "video_token": "<video>"}  # fmt: skip
    tokenizer = _tokenizer(["<|im_start|>", "<|im_end|>", "<|endoftext|>"], named=named)
    tokenizer.add_special_tokens({"additional_special_tokens": list(named.values())})
    (context,) = _ids(tokenizer, "<IMG_CONTEXT>")
    config = transformers.InternVLConfig(
        vision_config={"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64,
                       "image_size": [28, 28], "patch_size": [14, 14]},
        text_config={"model_type": "qwen2", **_text_config(tokenizer)},
        image_token_id=context, image_seq_length=1, downsample_ratio=0.5,
    )  # fmt: skip
    model = transformers.InternVLForConditionalGeneration(config)
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    image_processor = GotOcr2ImageProcessorPil(
        size={"height": 28, "width": 28}, crop_to_patches=True, min_patches=1, max_patches=4,
        image_mean=mean, image_std=std,
    )  # fmt: skip
    video_config = {"video_processor_type": "InternVLVideoProcessor", "size": {"height": 28, "width": 28},
                    "image_mean": mean, "image_std": std, "do_sample_frames": False}  # fmt: skip
    return _save(
        folder, model, tokenizer, image_processor, template="internvl.jinja",
        processor={"processor_class": "InternVLProcessor", "image_seq_length": 1}, video=video_config,
    )  # fmt: skip


def build_llava_onevision(folder: Path) -> Path:
    """LLaVA-OneVision: a 28x28 SigLIP tower (4 patches), anyres grid up to 2x2, frames pooled 2x2."""
    from transformers.models.llava_onevision.image_processing_pil_llava_onevision import (
        LlavaOnevisionImageProcessorPil,
    )

    tokenizer = _tokenizer(["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<image>", "<video>"])
    image, video = _ids(tokenizer, "<image>", "<video>")
    pinpoints = [[28, 28], [28, 56], [56, 28], [56, 56]]
    config = transformers.LlavaOnevisionConfig(
        vision_config={"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 64,
                       "num_hidden_layers": 1, "num_attention_heads": 2, "image_size": 28, "patch_size": 14,
                       "vision_use_head": False},
        text_config={"model_type": "qwen2", **_text_config(tokenizer)},
        image_token_index=image, video_token_index=video, vision_feature_select_strategy="full",
        vision_feature_layer=-1, image_grid_pinpoints=pinpoints, vision_aspect_ratio="anyres_max_9",
    )  # fmt: skip
    model = transformers.LlavaOnevisionForConditionalGeneration(config)
    half = [0.5, 0.5, 0.5]
    image_processor = LlavaOnevisionImageProcessorPil(
        size={"height": 28, "width": 28}, image_grid_pinpoints=pinpoints, image_mean=half, image_std=half,
    )  # fmt: skip
    video_config = {"video_processor_type": "LlavaOnevisionVideoProcessor", "size": {"height": 28, "width": 28},
                    "image_mean": half, "image_std": half, "do_sample_frames": False}  # fmt: skip
    processor = {"processor_class": "LlavaOnevisionProcessor", "num_image_tokens": 4,
                 "vision_feature_select_strategy": "full", "vision_aspect_ratio": "anyres_max_9"}  # fmt: skip
    return _save(
        folder, model, tokenizer, image_processor, template="llava_onevision.jinja",
        processor=processor, video=video_config,
    )  # fmt: skip


BUILDERS: dict[str, Callable[[Path], Path]] = {
    "qwen2_vl": lambda folder: build_qwen(folder, version="2"),
    "qwen2_5_vl": lambda folder: build_qwen(folder, version="2.5"),
    "internvl": build_internvl,
    "llava_onevision": build_llava_onevision,
}


@pytest.fixture(scope="session")
def tiny_checkpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """model_type -> folder of a tiny random checkpoint of that family (built once per session)."""
    require_hf()
    root = tmp_path_factory.mktemp("tiny_vlms")
    torch.manual_seed(0)
    return {name: build(root / name) for name, build in BUILDERS.items()}


def _jpeg(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, "JPEG", quality=85)
    return buffer.getvalue()


@pytest.fixture(scope="session")
def frames() -> list[bytes]:
    """Eight 224x224 JPEG frames, as the runner sends them (coded lab scenes)."""
    require_hf()
    return [_jpeg(scene_frame(i, 224, 224)) for i in range(8)]
