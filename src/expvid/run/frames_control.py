"""`--frames-control`: the control conditions of a run (no frames, one frame, shuffled frames).

A validity audit asks how much an item needs its video: the same model run with every frame, with
none, with the middle frame only, and with the frames out of order (`expvid audit --runs`). The
condition is one recorded setting of the run (`EvalConfig.frames_control`, in the manifest and the
resume identity; `FramesControl` in `expvid.schema` says what each value means), applied here, in
the runner, the same way for every backend:

- "none": frames are sampled and logged as for the seeing run (so both runs fail on the same broken
  media), and the request is sent with its images removed by `GenerateRequest.without_images`, the
  one place images are ever stripped (a `blind:` model spec does the same in its backend and is
  recorded as this control);
- "single": the sampler is asked for one frame, at the middle of the item's video or window (an
  image list keeps its middle image);
- "shuffled": the sampled frames (or images) in a seeded order fixed by the run's seed and the
  item, never the original order; sent as independent images (a video's frames out of order would
  contradict the timestamps a video input carries).
"""

from __future__ import annotations

import hashlib
import random

from expvid.run.media_inputs import PreparedMedia
from expvid.schema import FramesControl, SamplerSettings, frames_control_of

__all__ = ["FramesControl", "arrange_media", "control_sampler", "effective_control", "shuffled_order"]


def effective_control(model: str, control: FramesControl) -> str:
    """What the run does: "none" for a `blind:` model whatever the setting, else the setting."""
    return frames_control_of(model, control)


def control_sampler(settings: SamplerSettings | None, control: str) -> SamplerSettings | None:
    """The sampler a control uses: one uniform frame (the middle one) for "single", else unchanged."""
    if control != "single" or settings is None:
        return settings
    return settings.model_copy(
        update={"strategy": "uniform", "num_frames": 1, "fps": None, "max_frames": None}
    )


def shuffled_order(n: int, seed: int | None, item_id: str) -> list[int]:
    """A permutation of range(n) fixed by the run's seed and the item, never the identity (n >= 2)."""
    digest = hashlib.sha256(f"shuffle\0{seed}\0{item_id}".encode()).digest()
    order = list(range(n))
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    if n >= 2 and order == sorted(order):
        order = order[1:] + order[:1]
    return order


def arrange_media(media: PreparedMedia, control: str, seed: int | None, item_id: str) -> PreparedMedia:
    """The images (and their frame records) a control sends, in the order it sends them."""
    if control == "shuffled" and len(media.images) >= 2:
        order = shuffled_order(len(media.images), seed, item_id)
        frames = [media.frames[i] for i in order] if len(media.frames) == len(media.images) else media.frames
        return PreparedMedia(
            images=[media.images[i] for i in order], frames=frames, from_cache=media.from_cache
        )
    if control == "single" and len(media.images) > 1:  # an image list: its middle image
        middle = (len(media.images) - 1) // 2
        frames = media.frames[middle : middle + 1] if len(media.frames) == len(media.images) else media.frames
        return PreparedMedia(images=[media.images[middle]], frames=frames, from_cache=media.from_cache)
    return media
