"""What the evaluated model is given in a suite's evaluation setting, as far as the audit needs it.

A text-only solver measures a shortcut only if it reads what the model reads. The transcript an
item carries (`Item.context`: ExpVid's `asr_caption`, a clip's narration) reaches the model only
where the suite's prompt shows it (ExpVid's `-S with_asr=true` ablation); in ExpVid's main setting
it never does, and a solver that reads it (the `transcript` family: transcript overlap, the learned
model with its transcript features) measures something no evaluated model can use. Such a result is
kept in the report, marked informational, and flags nothing (docs/audit.md, "The evaluation
setting").

The suite declares what it shows in one of two ways:

- explicitly, with a `shows_transcript()` method returning a bool (a suite whose models hear the
  narration some other way, e.g. video with its sound, says True);
- by its prompts: the prompt the suite builds for an item under its settings (`messages(item, [])`)
  either contains the item's transcript or does not. This needs nothing of a suite but the API every
  suite already implements, so outside suites are read the same way.

When neither can tell (no item carries a transcript, or the prompt cannot be built without frames),
the transcript family counts like any other solver: a doubt never hides a shortcut.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from expvid.schema import Item

#: Items whose prompts are built to decide (the prompt is a function of the settings, not the item).
PROBED_ITEMS = 20
#: Words of the transcript's start that must appear, in order, in the prompt for it to count as shown.
SHOWN_WORDS = 12


def _words(text: str) -> list[str]:
    return "".join(c.lower() if c.isalnum() else " " for c in text).split()


def _contains(haystack: list[str], needle: list[str]) -> bool:
    size = len(needle)
    return any(haystack[i : i + size] == needle for i in range(len(haystack) - size + 1))


def _prompt_text(suite: Any, item: Item) -> str | None:
    messages = getattr(suite, "messages", None)
    if not callable(messages):
        return None
    try:
        built = messages(item, [])
    except Exception:  # a suite that needs frames or a judge to build a prompt: cannot tell
        return None
    texts = []
    for message in built:
        content = getattr(message, "content", "")
        if isinstance(content, str):
            texts.append(content)
            continue
        texts += [str(getattr(part, "text", "")) for part in content]
    return "\n".join(texts)


def transcript_shown(suite: Any, items: Sequence[Item]) -> tuple[bool | None, str]:
    """(whether the suite's evaluation setting shows the items' transcripts to the model, how that
    was decided). None: undecided (no item carries a transcript, or no prompt could be built)."""
    declared = getattr(suite, "shows_transcript", None)
    if callable(declared):
        shown = bool(declared())
        return shown, f"declared by the suite ({'shown' if shown else 'not shown'})"
    carrying = [item for item in items if item.context and item.context.strip()]
    if not carrying:
        return None, "no item carries a transcript"
    probed = 0
    for item in carrying[:PROBED_ITEMS]:
        text = _prompt_text(suite, item)
        if text is None:
            continue
        probed += 1
        start = _words(item.context or "")[:SHOWN_WORDS]
        if start and _contains(_words(text), start):
            return True, f"the suite's prompt for {item.id} contains its transcript"
    if not probed:
        return None, "the suite's prompts could not be built without frames"
    return False, f"the suite's prompts for {probed} item(s) carrying a transcript do not contain it"
