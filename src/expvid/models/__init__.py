"""expvid.models: model backends behind one async protocol, `await backend.generate(request)`.

`create_backend(spec, **options)` builds one from a spec string. The loopback server that speaks
the providers' APIs for tests and benchmarks lives in `expvid.fakes.models`, not here.
"""

from expvid.models.factory import create_backend
from expvid.models.options import BackendOptions
from expvid.models.stats import BackendStats, ReportsStats
from expvid.models.types import (
    AnswerHints,
    BackendConfigError,
    BackendError,
    GenerateRequest,
    GenerateResponse,
    ImagePart,
    Message,
    ModelBackend,
    TextPart,
    ThinkingConfig,
)

__all__ = [
    "AnswerHints",
    "BackendConfigError",
    "BackendError",
    "BackendOptions",
    "BackendStats",
    "GenerateRequest",
    "GenerateResponse",
    "ImagePart",
    "Message",
    "ModelBackend",
    "ReportsStats",
    "TextPart",
    "ThinkingConfig",
    "create_backend",
]
