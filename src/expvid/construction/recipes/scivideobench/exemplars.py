"""The QA generator's exemplar questions (section 2.2: "guided by curated exemplar questions").

The paper's exemplars (12 per type) are not published: the bundled `exemplars.json` holds 2 per
type written for expvid; `-R exemplars=FILE` replaces them (checked before anything is asked).
"""

from __future__ import annotations

import json
from pathlib import Path

from expvid.construction.recipes.scivideobench.config import QUESTION_TYPES


def counts_text(per_type: dict[str, int]) -> str:
    return ", ".join(f"{n} {t}" for t, n in per_type.items() if n)


def exemplars_text(exemplars: dict[str, list[dict[str, str]]], per_type: dict[str, int]) -> str:
    lines = []
    for task, count in per_type.items():
        if not count:
            continue
        lines.append(f"{QUESTION_TYPES[task]}:")
        for example in exemplars.get(task, []):
            lines.append(f"- Q: {example['question']}\n  A: {example['answer']}")
    return "\n".join(lines)


def load_exemplars(path: Path | None) -> dict[str, list[dict[str, str]]]:
    """The exemplar set: `path` (a replacement) or the bundled `exemplars.json`; checked."""
    from importlib.resources import files

    from expvid.schema import DataError

    where = str(path) if path else "exemplars.json (bundled)"
    try:
        text = (
            path.read_text(encoding="utf-8")
            if path
            else files(__package__).joinpath("exemplars.json").read_text(encoding="utf-8")
        )
        data = json.loads(text)
    except (OSError, ValueError) as error:
        raise DataError(f"{where}: cannot read the exemplars ({error})") from None
    result: dict[str, list[dict[str, str]]] = {}
    for task in QUESTION_TYPES:
        entries = data.get(task) if isinstance(data, dict) else None
        if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("question"), str) and isinstance(e.get("answer"), str)
            for e in entries
        ):
            raise DataError(f"{where}: '{task}' must be a list of {{question, answer}} objects")
        result[task] = [{"question": e["question"], "answer": e["answer"]} for e in entries]
    return result
