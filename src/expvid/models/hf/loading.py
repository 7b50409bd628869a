"""Loading a checkpoint's processor and model onto the chosen device, with errors a user can act on.

The processor is assembled from its parts (tokenizer, image processor, video processor) through
transformers' own `get_processor_dict` / `from_args_and_dict`, so processor_config.json and the
chat template are read exactly as `AutoProcessor.from_pretrained` reads them. The one part that can
differ is the video processor: transformers' own when torchvision is importable, otherwise
expvid's `FramesVideoProcessor` (see `video_fallback`).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any

from expvid.models.hf.checkpoint import Checkpoint
from expvid.models.hf.video_fallback import FramesVideoProcessor, accepting_fallback, read_video_config
from expvid.models.types import BackendConfigError

DTYPES = {"bfloat16", "float16", "float32"}


@dataclass(frozen=True)
class Placement:
    device: str
    dtype: str
    device_map: str | None


def torchvision_available() -> bool:
    """True when torchvision imports (a wheel built for another torch fails at import, not at lookup)."""
    if importlib.util.find_spec("torchvision") is None:
        return False
    try:
        importlib.import_module("torchvision")
    except Exception:
        return False
    return True


def choose_placement(device: str | None, device_map: str | None, dtype: str) -> Placement:
    import torch

    if device_map is not None and importlib.util.find_spec("accelerate") is None:
        raise BackendConfigError(
            f"device_map={device_map!r} needs the 'accelerate' package (pip install accelerate)"
        )
    if device is None:
        if torch.cuda.is_available():
            device = "cuda:0"
        elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            device = "mps"
        else:
            device = "cpu"
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise BackendConfigError(f"device {device!r} is not a torch device ({error})") from None
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            raise BackendConfigError(f"device {device!r} asked for, but no CUDA GPU is visible to torch")
        if parsed.index is not None and parsed.index >= torch.cuda.device_count():
            raise BackendConfigError(
                f"device {device!r}: only {torch.cuda.device_count()} CUDA GPU(s) visible"
            )
    if dtype == "auto":
        if parsed.type == "cuda":
            dtype = "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
        elif parsed.type == "mps":
            dtype = "float16"
        else:
            dtype = "float32"
    if dtype not in DTYPES:
        raise BackendConfigError(f"dtype must be one of {sorted(DTYPES)} or 'auto', got {dtype!r}")
    return Placement(device=str(parsed), dtype=dtype, device_map=device_map)


def load_processor(checkpoint: Checkpoint) -> tuple[Any, str]:
    """The checkpoint's processor, and which video processor it got ("transformers" or "expvid")."""
    import transformers

    family = checkpoint.family
    path = str(checkpoint.path)
    processor_class = getattr(transformers, family.processor_class)
    try:
        processor_dict, init_kwargs = processor_class.get_processor_dict(path, local_files_only=True)
        parts: dict[str, Any] = {
            "tokenizer": transformers.AutoTokenizer.from_pretrained(path, local_files_only=True),
            "image_processor": transformers.AutoImageProcessor.from_pretrained(path, local_files_only=True),
        }
        if torchvision_available():
            parts["video_processor"] = transformers.AutoVideoProcessor.from_pretrained(
                path, local_files_only=True
            )
            source = "transformers"
        else:
            parts["video_processor"] = FramesVideoProcessor(
                family.video_layout, read_video_config(checkpoint.path, family)
            )
            processor_class = accepting_fallback(processor_class)
            source = "expvid (torchvision not importable)"
        args = [parts[name] for name in processor_class.get_attributes()]
        processor = processor_class.from_args_and_dict(args, processor_dict, **init_kwargs)
    except BackendConfigError:
        raise
    except Exception as error:
        raise BackendConfigError(
            f"{path}: building the {family.processor_class} failed: {type(error).__name__}: {error}"
        ) from None
    if processor.chat_template is None:
        raise BackendConfigError(
            f"{path}: the checkpoint has no chat template (chat_template.jinja or chat_template.json); "
            "the prompt cannot be formatted the way the model was trained"
        )
    processor.tokenizer.padding_side = "left"  # batched generation continues every row at its end
    return processor, source


@dataclass(frozen=True)
class LoadedModel:
    model: Any
    #: Tensors in the files that the model class has no place for (reported, not fatal).
    unexpected_weights: int


def load_model(checkpoint: Checkpoint, placement: Placement, attn_implementation: str | None) -> LoadedModel:
    """The model in eval mode on its device. Weights the model needs but the files lack are an error:
    transformers would start them at random and every score of the run would be noise."""
    import torch
    import transformers
    from transformers.utils import logging as hf_logging

    family = checkpoint.family
    model_class = getattr(transformers, family.model_class)
    kwargs: dict[str, Any] = {
        "dtype": getattr(torch, placement.dtype),
        "local_files_only": True,
        "output_loading_info": True,
    }
    if attn_implementation is not None:
        kwargs["attn_implementation"] = attn_implementation
    if placement.device_map is not None:
        kwargs["device_map"] = placement.device_map
    hf_logging.disable_progress_bar()  # no loading bars inside the run's own progress display
    try:
        model, info = model_class.from_pretrained(str(checkpoint.path), **kwargs)
        if placement.device_map is None:
            model = model.to(placement.device)
    except Exception as error:
        raise BackendConfigError(
            f"{checkpoint.path}: loading {family.model_class} failed: {type(error).__name__}: {error}"
        ) from None
    missing = sorted(info.get("missing_keys") or [])
    mismatched = sorted(str(key) for key in info.get("mismatched_keys") or [])
    if missing or mismatched:
        problems = [f"{len(missing)} missing (e.g. {', '.join(missing[:3])})"] if missing else []
        if mismatched:
            problems.append(f"{len(mismatched)} of the wrong shape (e.g. {', '.join(mismatched[:3])})")
        raise BackendConfigError(
            f"{checkpoint.path}: the weight files do not match {family.model_class}: "
            f"{'; '.join(problems)}. An incomplete download or a config from another model does this"
        )
    return LoadedModel(model=model.eval(), unexpected_weights=len(info.get("unexpected_keys") or []))
