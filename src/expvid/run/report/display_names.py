"""Short names for the runs in a table: the model's name, not its whole spec with the server URL.

A run records the model spec it was given (`openai:Qwen2.5-VL-7B-Instruct@http://gpu-3:8000/v1`),
and a row labelled with all of it pushes the scores off a screenshot. Rows and chips show the
model's name (`Qwen2.5-VL-7B-Instruct`); the spec stays beside it (the HTML `title`, a Markdown
footnote, a CSV column). Names that would be the same for different runs are told apart by the first
of these that differs: the API family, the server, the checkpoint's folder, the spec, the run
directory's name; what is still the same after all that gets "#1", "#2".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from expvid.models.spec import split_spec


def display_name(spec: str) -> str:
    """The model's name in `spec`: 'openai:gpt-4o@http://h:8000/v1' -> 'gpt-4o'; 'hf:/ckpt/Qwen2-VL-7B'
    -> 'Qwen2-VL-7B'; 'blind:openai:gpt-4o' -> 'gpt-4o (blind)'; baselines and plain names as they are."""
    text = spec.strip()
    if text.startswith("blind:"):
        return f"{display_name(text.removeprefix('blind:'))} (blind)"
    if text.startswith("socratic:"):
        captioner, plus, answerer = text.removeprefix("socratic:").partition("+")
        if plus:
            return f"socratic {display_name(captioner)} + {display_name(answerer)}"
        return text
    kind, model, _server = split_spec(text)
    if not model or kind == "random":
        return text  # a baseline ("first-option", "random:3") or a name without a kind
    if kind in ("hf", "vllm"):
        return model.rstrip("/").rsplit("/", 1)[-1] or text
    return model


def _kind(spec: str) -> str:
    return split_spec(spec)[0]


def _server(spec: str) -> str:
    server = split_spec(spec)[2]
    if server is None:
        return "default endpoint"
    hosts = [urlsplit(url.strip()).netloc for url in server.split(",") if url.strip()]
    return hosts[0] + (f" +{len(hosts) - 1}" if len(hosts) > 1 else "")


def _folder(spec: str) -> str:
    return split_spec(spec)[1].rstrip("/").rsplit("/", 1)[0]


def display_names(specs: Sequence[str], directories: Sequence[str] = ()) -> list[str]:
    """One name per run, in order, distinct wherever the runs differ (see the module docstring)."""
    names = [display_name(spec) for spec in specs]
    dirs = list(directories) or [""] * len(specs)
    qualifiers: list[Callable[[int], str]] = [
        lambda i: _kind(specs[i]),
        lambda i: _server(specs[i]),
        lambda i: _folder(specs[i]),
        lambda i: specs[i],
        lambda i: dirs[i],
    ]
    for qualifier in qualifiers:
        for group in _collisions(names):
            values = [qualifier(i) for i in group]
            if len(set(values)) > 1:
                for i, value in zip(group, values, strict=True):
                    names[i] = f"{names[i]} ({value})" if value else names[i]
    for group in _collisions(names):
        for number, i in enumerate(group, start=1):
            names[i] = f"{names[i]} #{number}"
    return names


def _collisions(names: Sequence[str]) -> list[list[int]]:
    groups: dict[str, list[int]] = {}
    for index, name in enumerate(names):
        groups.setdefault(name, []).append(index)
    return [group for group in groups.values() if len(group) > 1]
