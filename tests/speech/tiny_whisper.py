"""A tiny randomly initialised Whisper, converted to CTranslate2 the way real models are.

transformers' `WhisperConfig` with tiny dimensions (2 layers, d_model 64) and a byte-level tokenizer
(256 byte tokens plus Whisper's special tokens, timestamps included) is saved with
`save_pretrained` and converted by `ctranslate2.converters.TransformersConverter`, exactly the path
`ct2-transformers-converter --model openai/whisper-small` takes. faster-whisper then loads the folder
like any converted model. Its text is noise; its segment structure, timestamps, word alignment and
the whole code path are real. Takes about a second on CPU.
"""

from __future__ import annotations

import json
from pathlib import Path

#: Languages the tiny model knows (Whisper's first ones, in Whisper's order).
LANGUAGES = ("en", "zh", "de")
SPECIALS_BEFORE_LANGUAGES = ("<|endoftext|>", "<|startoftranscript|>")
SPECIALS_AFTER_LANGUAGES = (
    "<|translate|>",
    "<|transcribe|>",
    "<|startoflm|>",
    "<|startofprev|>",
    "<|nospeech|>",
    "<|notimestamps|>",
)
N_TIMESTAMPS = 1501  # <|0.00|> .. <|30.00|>


def _byte_tokens() -> list[str]:
    """GPT-2's byte-to-unicode table: the 256 single-byte tokens of a byte-level BPE."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    codes = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + extra)
            extra += 1
    mapping = dict(zip(printable, codes, strict=True))
    return [chr(mapping[b]) for b in range(256)]


def make_tiny_whisper(folder: Path) -> Path:
    """Write a converted tiny Whisper into `folder/ct2` and return that path."""
    import ctranslate2
    import torch
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import (
        GenerationConfig,
        PreTrainedTokenizerFast,
        WhisperConfig,
        WhisperForConditionalGeneration,
    )

    torch.manual_seed(0)
    hf_dir = folder / "hf"
    hf_dir.mkdir(parents=True, exist_ok=True)
    vocab = {token: index for index, token in enumerate(_byte_tokens())}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    specials = [
        *SPECIALS_BEFORE_LANGUAGES,
        *(f"<|{code}|>" for code in LANGUAGES),
        *SPECIALS_AFTER_LANGUAGES,
    ]
    tokenizer.add_special_tokens([AddedToken(t, special=True) for t in specials])
    timestamps = [f"<|{i * 0.02:.2f}|>" for i in range(N_TIMESTAMPS)]
    tokenizer.add_tokens([AddedToken(t, special=False) for t in timestamps])
    ids = {token: tokenizer.token_to_id(token) for token in specials}
    vocab_size = tokenizer.get_vocab_size()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        additional_special_tokens=specials[1:],
    )
    fast.save_pretrained(hf_dir)
    config = WhisperConfig(
        vocab_size=vocab_size,
        num_mel_bins=80,
        encoder_layers=2,
        encoder_attention_heads=2,
        decoder_layers=2,
        decoder_attention_heads=2,
        d_model=64,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        max_source_positions=1500,
        max_target_positions=448,
        pad_token_id=ids["<|endoftext|>"],
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|endoftext|>"],
        decoder_start_token_id=ids["<|startoftranscript|>"],
        suppress_tokens=[],
        begin_suppress_tokens=[ids["<|endoftext|>"]],
    )
    model = WhisperForConditionalGeneration(config).eval()
    model.generation_config = GenerationConfig(
        decoder_start_token_id=ids["<|startoftranscript|>"],
        eos_token_id=ids["<|endoftext|>"],
        pad_token_id=ids["<|endoftext|>"],
        suppress_tokens=[],
        begin_suppress_tokens=[ids["<|endoftext|>"]],
        lang_to_id={f"<|{code}|>": ids[f"<|{code}|>"] for code in LANGUAGES},
        alignment_heads=[[1, 0], [1, 1]],
        no_timestamps_token_id=ids["<|notimestamps|>"],
        is_multilingual=True,
    )
    model.save_pretrained(hf_dir)
    (hf_dir / "preprocessor_config.json").write_text(
        json.dumps(
            {
                "feature_size": 80,
                "sampling_rate": 16000,
                "hop_length": 160,
                "chunk_length": 30,
                "n_fft": 400,
                "feature_extractor_type": "WhisperFeatureExtractor",
            }
        ),
        encoding="utf-8",
    )
    out = folder / "ct2"
    converter = ctranslate2.converters.TransformersConverter(
        str(hf_dir), copy_files=["tokenizer.json", "preprocessor_config.json"]
    )
    converter.convert(str(out), force=True)
    return out
