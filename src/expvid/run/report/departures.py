"""Notes under every report table when a run departs from the paper's settings (ExpVid F.2).

A number is only comparable to the paper's when it was produced the paper's way: frames at 224x224
as images, temperature 0.1, 8192 tokens. Reasoning APIs that refuse a temperature, a provider's cap
on images per request, another input mode, a checkpoint's own sampling defaults, refusals: each is
said here, from the run directory alone (`manifest.json`'s `generation` and `sent` blocks, or the
predictions' own `sent` records for runs made before the summary existed).
"""

from __future__ import annotations

import json
from typing import Any

from expvid.run.request_settings import sent_summary
from expvid.run.rundir import RunDir
from expvid.schema import DataError, frames_control_of

#: What each frames control showed the model (`--frames-control`, or a `blind:` model spec).
CONTROL_LINES = {
    "none": "a CONTROL run without frames (text only: frames sampled, none sent)",
    "single": "a CONTROL run with one frame per item (the middle of its video or window)",
    "shuffled": "a CONTROL run with the frames shuffled (a seeded order, never the original)",
}

#: Sampling settings a checkpoint's generation_config may add beyond the paper's temperature.
GENERATION_CONFIG_KEYS = ("top_p", "top_k", "min_p", "repetition_penalty")


def _tag(paper: dict[str, Any]) -> str:
    source = str(paper.get("source", ""))
    return "F.2" if "F.2" in source else "paper"


def _number(value: Any) -> str:
    return "none" if value is None else (f"{value:g}" if isinstance(value, float) else str(value))


def _manifest(rundir: RunDir) -> dict[str, Any] | None:
    path = rundir.root / "manifest.json"
    if not path.is_file():
        return None
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return loaded if isinstance(loaded, dict) else None


def _summary(rundir: RunDir, config: dict[str, Any]) -> dict[str, Any]:
    stored = config.get("sent")
    if isinstance(stored, dict) and "values" in stored:
        return stored
    try:
        return sent_summary(rundir.predictions().values())
    except (OSError, ValueError, DataError):
        return {"requests": 0, "values": {}, "not_sent": {}, "refusals": 0}


def _find(description: Any, key: str) -> Any:
    """`key` in a backend description or in the descriptions it wraps (blind: inner, vllm: client)."""
    if not isinstance(description, dict):
        return None
    if key in description:
        return description[key]
    for wrapped in ("inner", "client"):
        found = _find(description.get(wrapped), key)
        if found is not None:
            return found
    return None


def departure_notes(rundir: RunDir, label: str) -> list[str]:
    """One line per way the run departs from the paper's settings, each naming the run (a frames
    control first: such a run measures the benchmark, not the model)."""
    manifest = _manifest(rundir)
    if manifest is None:
        return []
    config = manifest.get("config") or {}
    generation = config.get("generation") or {}
    paper = generation.get("paper") or {}
    tag = _tag(paper) if paper else "paper"
    summary = _summary(rundir, config)
    values: dict[str, dict[str, int]] = summary.get("values") or {}
    not_sent: dict[str, dict[str, int]] = summary.get("not_sent") or {}
    requests = int(summary.get("requests") or 0)
    notes: list[str] = []
    settings = config.get("settings") or {}
    control = frames_control_of(
        str(manifest.get("model") or ""),
        settings.get("frames_control") if isinstance(settings, dict) else None,
    )
    if control in CONTROL_LINES:
        notes.append(f"{label}: {CONTROL_LINES[control]}; not comparable with runs that see the video")

    temperatures = values.get("temperature", {})
    unsent = temperatures.get("none", 0)
    if unsent and paper.get("temperature") is not None:
        reasons = not_sent.get("temperature") or {}
        why = f"; {next(iter(reasons))}" if reasons else ""
        notes.append(
            f"{label}: temperature not settable for this model: sent none on {unsent} of {requests} "
            f"request(s) ({tag}: {_number(paper['temperature'])}){why}"
        )
    requested = generation.get("temperature_requested", generation.get("temperature"))
    if paper and requested is not None and requested != paper.get("temperature"):
        notes.append(
            f"{label}: temperature {_number(requested)} requested ({tag}: {_number(paper['temperature'])})"
        )
    if paper and generation.get("max_tokens") not in (None, paper.get("max_tokens")):
        notes.append(
            f"{label}: at most {generation['max_tokens']} new tokens ({tag}: {paper.get('max_tokens')})"
        )

    efforts = {effort: n for effort, n in values.get("reasoning_effort", {}).items() if effort != "none"}
    if efforts:
        listed = ", ".join(f"{effort} on {n}" for effort, n in efforts.items())
        notes.append(f"{label}: reasoning_effort {listed} of {requests} request(s) (not set in {tag})")

    videos = values.get("input_mode", {}).get("video", 0)
    if videos or generation.get("input_mode") == "video":
        notes.append(
            f"{label}: frames sent as one video on {videos} of {requests} request(s) "
            f"({tag}: frames as independent images)"
        )
    sizes = {size: n for size, n in values.get("size", {}).items() if size != "224"}
    if sizes and tag == "F.2":
        listed = ", ".join(
            f"{'source size' if s == 'none' else s + 'x' + s} on {n}" for s, n in sizes.items()
        )
        notes.append(f"{label}: frames at {listed} request(s) (F.2: 224x224)")

    limit = generation.get("image_limit")
    if isinstance(limit, dict):
        cap = limit.get("max_images")
        capped = sorted(
            task
            for task, sampler in (manifest.get("samplers") or {}).items()
            if isinstance(sampler, dict) and cap in (sampler.get("num_frames"), sampler.get("max_frames"))
        )
        if capped:  # a cap no task reached changed nothing
            notes.append(
                f"{label}: at most {cap} frames per request ({', '.join(capped)}): {limit.get('source')}"
            )

    settings = _find(config.get("backend"), "generation_config")
    if isinstance(settings, dict):
        added = {k: settings[k] for k in GENERATION_CONFIG_KEYS if settings.get(k) is not None}
        if added:
            listed = ", ".join(f"{k}={_number(v)}" for k, v in added.items())
            notes.append(
                f"{label}: sampling also used the checkpoint's generation_config: {listed} "
                f"(not in {tag}, which sets only the temperature)"
            )

    for key, reasons in not_sent.items():  # e.g. a thinking budget the model cannot take
        if key == "temperature" or not reasons:
            continue
        count = sum(int(n) for n in reasons.values())
        notes.append(
            f"{label}: {key} not as asked on {count} of {requests} request(s): {next(iter(reasons))}"
        )

    refusals = int(summary.get("refusals") or 0)
    if refusals:
        notes.append(f"{label}: {refusals} refusal(s) by the provider, recorded and scored as unparseable")
    return notes
