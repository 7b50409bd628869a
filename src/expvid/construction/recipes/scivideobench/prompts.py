"""The recipe's prompt files (expvid's own: SciVideoBench does not publish its prompts), replaceable.

`load(prompt_id, override_dir)` reads `prompts/<id>.system.txt` and `<id>.user.txt`; a file of the
same name in `override_dir` (`--prompts DIR`) replaces the bundled one, and must keep every
placeholder of the bundled template (a missing `{transcript}` would silently drop the transcript).
Each template's sha256 goes into every item's provenance.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from expvid.construction.prompts import Prompt, PromptError

SOURCE = "expvid's own (SciVideoBench section 2.2 describes the role; its prompts are not published)"

#: Prompt id -> the role it plays (README.md has the table).
PROMPTS: dict[str, str] = {
    "svb_analysis": "QA generator: core question, theory, operations, numbers",
    "svb_generate": "QA generator: questions of three types from exemplars",
    "svb_evaluate": "Evaluator: answer with frames, transcript and paper, with a rationale",
    "svb_compare": "Visual comparer: visual cues of the rationale with timestamps",
    "svb_refine": "Refiner: references to visual segments, sharper distractors",
    "svb_video": "QA generator, -R generator=video: the frame times stated before the video",
}


def _bundled(name: str) -> str | None:
    resource = files(__package__).joinpath("prompts", name)
    return resource.read_text(encoding="utf-8").rstrip("\n") if resource.is_file() else None


def _read(name: str, override: Path | None) -> tuple[str | None, str | None]:
    """(bundled text, override text or None)."""
    custom = None
    if override is not None and (override / name).is_file():
        custom = (override / name).read_text(encoding="utf-8").rstrip("\n")
    return _bundled(name), custom


def load(prompt_id: str, override: Path | None = None) -> Prompt:
    if prompt_id not in PROMPTS:
        raise PromptError(f"unknown prompt {prompt_id!r}; known: {', '.join(PROMPTS)}")
    system, system_custom = _read(f"{prompt_id}.system.txt", override)
    user, user_custom = _read(f"{prompt_id}.user.txt", override)
    if user is None:
        raise PromptError(f"prompt file prompts/{prompt_id}.user.txt is missing from the recipe")
    bundled = Prompt(prompt_id, system, user, SOURCE)
    if system_custom is None and user_custom is None:
        return bundled
    prompt = Prompt(
        prompt_id,
        system_custom if system_custom is not None else system,
        user_custom or user,
        f"replaced from {override}",
    )
    lost = sorted(bundled.placeholders - prompt.placeholders)
    if lost:
        raise PromptError(
            f"{override}: the replacement of {prompt_id} drops the placeholder(s) {', '.join('{' + p + '}' for p in lost)}"
        )
    return prompt


def check_override_dir(override: Path | None) -> None:
    """Fail before any call when `--prompts DIR` names unknown files or breaks a template."""
    if override is None:
        return
    if not override.is_dir():
        raise PromptError(f"{override}: --prompts must be a folder of prompt files")
    known = {f"{p}.{part}.txt" for p in PROMPTS for part in ("system", "user")}
    unknown = sorted(p.name for p in override.iterdir() if p.suffix == ".txt" and p.name not in known)
    if unknown:
        raise PromptError(
            f"{override}: unknown prompt file(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    for prompt_id in PROMPTS:
        load(prompt_id, override)
