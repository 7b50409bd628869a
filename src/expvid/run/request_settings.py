"""What a run asks of its backend, and what was really sent: the parts of the manifest that make a
number comparable to the paper's (F.2: frames at 224x224 as images, temperature 0.1, 8192 tokens).

- `apply_image_limit`: a provider's cap on images per request (Claude: 100) becomes the sampler's
  frame cap, so the model gets at most that many frames, evenly spread, instead of a refused request;
  the cap and its source are recorded and every report says so.
- `check_input_mode`: `--input-mode video` needs a backend that takes videos and JPEG frames
  (vLLM's frame-sequence video); refused before any item otherwise.
- `generation_record`: the manifest's `generation` block: requested settings, the paper's, the input
  mode, the seed scheme, the image cap.
- `sent_summary`: what predictions say was sent (temperature or none and why, token-limit field,
  reasoning effort, input mode, frame size), counted over the run: stored in the manifest at the end
  of generation, read by the reports' departure notes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from expvid.models.types import InputMode, ModelBackend
from expvid.run.generate import SEED_SCHEME
from expvid.schema import DataError, Prediction
from expvid.scoring.judges.calls import innermost_backend
from expvid.suites.protocol import FrameOptions, GenerationDefaults

#: Keys of `Prediction.sent` summarised per run, in report order.
SUMMARY_KEYS = (
    "temperature",
    "token_limit_field",
    "max_tokens",
    "reasoning_effort",
    "thinking_budget",
    "input_mode",
    "size",
    "max_side",
    "top_p",
    "top_k",
    "repetition_penalty",
)


def image_limit_of(backend: ModelBackend) -> dict[str, Any] | None:
    """The provider's images-per-request cap, as {"max_images", "source"}, or None."""
    if getattr(backend, "kind", None) == "blind" or str(getattr(backend, "name", "")).startswith("blind:"):
        return None  # no image ever leaves a blind backend
    limit = getattr(innermost_backend(backend), "image_limit", None)
    return None if limit is None else {"max_images": int(limit.max_images), "source": str(limit.source)}


def apply_image_limit(
    frames: FrameOptions, backend: ModelBackend
) -> tuple[FrameOptions, dict[str, Any] | None]:
    """`frames` capped at the provider's limit, and the record of the cap (None when none applies)."""
    limit = image_limit_of(backend)
    if limit is None:
        return frames, None
    cap = limit["max_images"]
    if frames.max_images is not None and frames.max_images <= cap:
        return frames, None
    return frames.model_copy(update={"max_images": cap}), limit


def input_modes_of(backend: ModelBackend) -> tuple[str, ...] | None:
    """How the backend can take a video's frames; None when it does not look at images at all."""
    inner = innermost_backend(backend)
    modes = getattr(inner, "input_modes", None)
    if callable(modes):
        return tuple(modes())
    return None


def check_input_mode(mode: InputMode, backend: ModelBackend, frames: FrameOptions) -> None:
    """Refuse, before any item, a video run the backend or the frame format cannot serve."""
    if mode != "video":
        return
    modes = input_modes_of(backend)
    if modes is not None and "video" not in modes:
        raise DataError(f"{backend.name} cannot take frames as a video; use --input-mode images")
    if frames.image_format.lower() not in ("jpeg", "jpg"):
        raise DataError(
            f"--input-mode video sends JPEG frames (vLLM's video/jpeg frame sequence); "
            f"the frames are {frames.image_format}"
        )


def generation_record(
    *,
    temperature: float,
    max_tokens: int,
    paper: GenerationDefaults,
    input_mode: InputMode,
    image_limit: dict[str, Any] | None,
    temperature_sent: bool = True,
    frames_control: str = "full",
) -> dict[str, Any]:
    """The manifest's `generation` block: what the run sends (`temperature` None when the model's
    rules send none) and asks for, beside what the paper states."""
    record: dict[str, Any] = {
        "temperature": temperature if temperature_sent else None,
        "temperature_requested": temperature,
        "max_tokens": max_tokens,
        "source": paper.source,
        "paper": {"temperature": paper.temperature, "max_tokens": paper.max_tokens, "source": paper.source},
        "input_mode": input_mode,
        "frames_control": frames_control,
        "seed_scheme": SEED_SCHEME,
    }
    if image_limit is not None:
        record["image_limit"] = image_limit
    return record


def _value(value: Any) -> str:
    return "none" if value is None else str(value)


def temperature_as_sent(summary: dict[str, Any], recorded: Any) -> Any:
    """The generation block's temperature after the run: None when no request carried one (a
    server refused it, or the rules omit it), else what was recorded."""
    values = (summary.get("values") or {}).get("temperature") or {}
    return None if values and set(values) == {"none"} else recorded


def sent_summary(predictions: Iterable[Prediction]) -> dict[str, Any]:
    """Counts of what was sent, over the predictions that reached the model (cached ones included).

    {"requests": n, "values": {"temperature": {"0.1": n, "none": m}, ...}, "not_sent": {"temperature":
    {"<reason>": m}}, "refusals": k}. Only keys some prediction recorded appear.
    """
    values: dict[str, Counter[str]] = {}
    not_sent: dict[str, Counter[str]] = {}
    requests = refusals = 0
    for prediction in predictions:
        if not prediction.sent:
            continue
        requests += 1
        refusals += prediction.refusal is not None
        for key in SUMMARY_KEYS:
            if key in prediction.sent:
                values.setdefault(key, Counter())[_value(prediction.sent[key])] += 1
        for key, reason in (prediction.sent.get("not_sent") or {}).items():
            not_sent.setdefault(str(key), Counter())[str(reason)] += 1
    return {
        "requests": requests,
        "values": {key: dict(values[key].most_common()) for key in SUMMARY_KEYS if key in values},
        "not_sent": {key: dict(counter.most_common()) for key, counter in sorted(not_sent.items())},
        "refusals": refusals,
    }
