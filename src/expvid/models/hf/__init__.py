"""expvid.models.hf: open-weight video VLMs run locally with Hugging Face transformers (`hf:PATH`).

Importing this package imports neither torch nor transformers; `HFBackend` does, when it is built.
"""

from expvid.models.hf.checkpoint import Checkpoint, read_checkpoint
from expvid.models.hf.families import FAMILIES, Family
from expvid.models.hf.inputs import FRAME_TIMES_KEY

__all__ = ["FAMILIES", "FRAME_TIMES_KEY", "Checkpoint", "Family", "read_checkpoint"]
