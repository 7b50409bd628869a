"""Finding and checking a checkpoint folder before anything heavy is imported or loaded.

Every problem a user can fix (wrong path, a hub id that was never downloaded, a folder without
weights or tokenizer, an architecture this backend does not run) is reported here as a
`BackendConfigError` naming the folder and what is missing, before torch is even imported.

Hub ids ("Qwen/Qwen2.5-VL-7B-Instruct") are resolved from the local Hugging Face cache only: a run
never starts a 150 GB download on its own, and the weights it used stay pinned on disk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from expvid.models.hf.families import FAMILIES, REMOTE_CODE_ADVICE, Family, supported_model_types
from expvid.models.types import BackendConfigError

WEIGHT_PATTERNS = ("*.safetensors", "*.safetensors.index.json", "pytorch_model*.bin", "*.pt")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "tokenizer_config.json")


@dataclass(frozen=True)
class Checkpoint:
    path: Path
    family: Family
    model_type: str
    config: dict[str, Any]

    @property
    def architectures(self) -> list[str]:
        value = self.config.get("architectures")
        return [str(a) for a in value] if isinstance(value, list) else []


def resolve_path(spec_path: str) -> Path:
    """A local folder, or a hub id found in the local Hugging Face cache."""
    path = Path(spec_path).expanduser()
    if path.is_dir():
        return path.resolve()
    if path.exists():
        raise BackendConfigError(f"hf:{spec_path}: expected a checkpoint folder, found a file")
    looks_like_hub_id = spec_path.count("/") == 1 and not spec_path.startswith((".", "/", "~"))
    if looks_like_hub_id:
        try:
            from huggingface_hub import snapshot_download

            return Path(snapshot_download(repo_id=spec_path, local_files_only=True))
        except Exception:
            raise BackendConfigError(
                f"hf:{spec_path}: no such folder, and the hub id is not in the local Hugging Face cache. "
                f"Download it first (hf download {spec_path} --local-dir DIR) and pass hf:DIR"
            ) from None
    raise BackendConfigError(f"hf:{spec_path}: no such checkpoint folder")


def read_checkpoint(spec_path: str) -> Checkpoint:
    path = resolve_path(spec_path)
    config_path = path / "config.json"
    if not config_path.is_file():
        raise BackendConfigError(f"{path}: no config.json; this is not a Hugging Face checkpoint folder")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise BackendConfigError(f"{config_path}: not valid JSON ({error})") from None
    if not isinstance(config, dict):
        raise BackendConfigError(f"{config_path}: expected a JSON object")
    model_type = str(config.get("model_type", ""))
    if model_type in REMOTE_CODE_ADVICE:
        raise BackendConfigError(f"{path}: {REMOTE_CODE_ADVICE[model_type]}")
    family = FAMILIES.get(model_type)
    if family is None:
        architectures = config.get("architectures") or []
        raise BackendConfigError(
            f"{path}: unsupported architecture model_type={model_type or '<missing>'!r} "
            f"{architectures}; the hf backend runs: {supported_model_types()}. "
            "Other models can be served with vllm:PATH"
        )
    _require_weights(path)
    _require_tokenizer(path)
    return Checkpoint(path=path, family=family, model_type=model_type, config=config)


def _require_weights(path: Path) -> None:
    if any(next(path.glob(pattern), None) is not None for pattern in WEIGHT_PATTERNS):
        return
    present = sorted(p.name for p in path.iterdir())[:12]
    raise BackendConfigError(
        f"{path}: the model weights are missing (no *.safetensors or pytorch_model*.bin); "
        f"the folder holds: {', '.join(present) or 'nothing'}. "
        "A download interrupted after the config files leaves a folder like this"
    )


def _require_tokenizer(path: Path) -> None:
    if not any((path / name).is_file() for name in TOKENIZER_FILES):
        raise BackendConfigError(
            f"{path}: no tokenizer files ({', '.join(TOKENIZER_FILES)}); the processor cannot be built"
        )


#: Sampling keys of a checkpoint's generation_config.json that change answers.
SAMPLING_KEYS = ("temperature", "top_k", "top_p", "min_p", "repetition_penalty", "do_sample")


def checkpoint_generation_config(path: Path) -> dict[str, Any]:
    """The sampling settings the checkpoint's own `generation_config.json` states (nothing assumed).

    transformers (hf:) and vLLM (`--generation-config auto`, its default) both apply them on top of
    a request's temperature; Qwen2.5-VL-Instruct's, for one, set top_k 1, top_p 0.001 and
    repetition_penalty 1.05. Recorded in the manifest so a reader knows the real decoding.
    """
    file = path / "generation_config.json"
    if not file.is_file():
        return {}
    try:
        loaded = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {key: loaded[key] for key in SAMPLING_KEYS if loaded.get(key) is not None}
