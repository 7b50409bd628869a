"""The appendix G prompts: verbatim, free of PDF noise, and filled safely."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from expvid.construction.prompts import PROMPTS, PromptError, load_prompt, retry_feedback, text_file

PAPER = Path("/work/shared/seeds/000_d486a81fe50e6571.txt")
G_PROMPTS = [p for p in PROMPTS if p.startswith(("g1_", "g2_"))]

EXPECTED_PLACEHOLDERS = {
    "g1_1_material_extraction": {"asr_caption", "qwen_caption"},
    "g1_2_material_mcq": {"asr_caption", "target_material", "question_template"},
    "g1_3_tool_extraction": {"asr_caption", "qwen_caption"},
    "g1_4_tool_mcq": {"asr_caption", "target_tool", "question_template"},
    "g1_5_quantity_mcq": {"asr_caption", "qwen_caption"},
    "g1_6_operation_alignment": {"asr_caption", "qwen_caption"},
    "g1_7_operation_mcq": {"asr_caption"},
    "g2_1_clip_segmentation": {"asr_caption"},
    "g2_2_step_extraction": {"title", "description", "timestamped_subtitles"},
    "g2_3_sequence_ordering_mcq": {"title", "description", "steps_text"},
}


@pytest.mark.parametrize("prompt_id", G_PROMPTS)
def test_prompt_files_are_clean_of_pdf_extraction_noise(prompt_id):
    prompt = load_prompt(prompt_id)
    text = (prompt.system or "") + "\n" + prompt.user
    assert prompt.placeholders == EXPECTED_PLACEHOLDERS[prompt_id]
    assert not re.search(r"^\s*\d{3,4}\s*$", text, re.MULTILINE)  # page / line numbers
    assert not re.search(r"\b1[5-9]\d\d \b|\b20\d\d \b", text)  # "1577 You are ..." line-number prefixes
    assert not re.search(r"[“”‘’]", text)  # LaTeX's curly quotes undone
    assert "PROMPT = " not in text and "—false" not in text


@pytest.mark.parametrize(
    "prompt_id, phrase",
    [
        ("g1_1_material_extraction", "- Unspecified solutions (e.g., just \"solution\")"),
        ("g1_2_material_mcq", "1. Do not use distractors that only differ from the target material by quantity or concentration."),
        ("g1_3_tool_extraction", "4. Do not hallucinate. Only extract explicitly mentioned tools."),
        ("g1_5_quantity_mcq", "If the ASR caption has no quantity-related info, return:"),
        ("g1_6_operation_alignment", '"has_operation": <true|false>,'),
        ("g1_7_operation_mcq", "3. Do NOT use audio/textual clues (e.g., ASR narration). Assume only visual content is available."),
        ("g2_1_clip_segmentation", "1. Each segment must be 20–60 seconds long.\n2. Start/end times must come directly from ASR (no invented timestamps)."),
        ("g2_2_step_extraction", "If no operations: return { null }."),
        ("g2_3_sequence_ordering_mcq", "4. Use the same steps — only reorder."),
    ],
)  # fmt: skip
def test_prompts_keep_the_papers_wording(prompt_id, phrase):
    prompt = load_prompt(prompt_id)
    assert phrase in (prompt.system or "") + "\n" + prompt.user


def _words(text: str) -> list[str]:
    text = text.replace("“", '"').replace("”", '"').replace("’", "'").replace("—", "-").replace("–", "-")
    text = text.replace("|", "-").replace("**", "").replace("```", "")
    return re.findall(r"[A-Za-z]+", text)


@pytest.mark.skipif(not PAPER.is_file(), reason="the paper text is not available here")
@pytest.mark.parametrize("prompt_id", G_PROMPTS)
def test_every_sentence_of_a_prompt_is_in_the_paper(prompt_id):
    """Word sequences only (numbers, punctuation and layout differ after PDF extraction)."""
    text = PAPER.read_text(encoding="utf-8")
    text = re.sub(r"([a-z])-\s*\n\s*\d{4}\s+([a-z])", r"\1\2", text)  # words hyphenated across PDF lines
    paper = " ".join(_words(text))
    prompt = load_prompt(prompt_id)
    for line in ((prompt.system or "") + "\n" + prompt.user).splitlines():
        words = _words(line)
        if len(words) >= 4:
            assert " ".join(words) in paper, line


def test_filling_checks_values_and_never_refills_a_value():
    prompt = load_prompt("g1_2_material_mcq")
    system, user = prompt.fill(
        asr_caption="Add {target_material} now", target_material="PBS", question_template="Q?"
    )
    assert system is not None and "Your task is to generate 3 plausible distractors" in system
    assert (
        '- An experimental step transcription (ASR): "Add {target_material} now"' in user
    )  # not filled twice
    assert '"target_material": "PBS"' in user and '"question": "Q?"' in user
    assert '"D": "<distractor 3>"' in user  # the literal JSON braces survive
    with pytest.raises(PromptError, match=r"missing values \['question_template'\]"):
        prompt.fill(asr_caption="x", target_material="y")
    with pytest.raises(PromptError, match=r"unknown values \['qwen_caption'\]"):
        prompt.fill(asr_caption="x", target_material="y", question_template="q", qwen_caption="c")
    with pytest.raises(PromptError, match="unknown prompt"):
        load_prompt("g9_nothing")


def test_hashes_identify_the_wording_and_retry_feedback_names_the_attempt():
    shas = {load_prompt(p).sha256 for p in PROMPTS}
    assert len(shas) == len(PROMPTS) and all(len(s) == 64 for s in shas)
    message = retry_feedback("the reply is empty", 2, 3)
    assert message.startswith("Your previous reply could not be used: the reply is empty")
    assert "(attempt 2 of 3)" in message
    guidelines = text_file("g3_level3_guidelines.txt")
    assert (
        "Type 1: Experimental conclusion questions" in guidelines
        and "Type 2: Scientific discovery questions" in guidelines
    )
