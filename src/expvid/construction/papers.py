"""Key paper sections for Level 3 (ExpVid 3.3: "Introduction, Results, Discussion"), from Markdown or PDF.

The paper used MinerU to turn PDFs into text; we read PDFs with `pypdf` (pure Python, well kept) and
find section headings as lines of their own ("Introduction", "2. Results", "REPRESENTATIVE RESULTS",
"Discussion and Conclusions"); Markdown papers are split at their `#` headings. A section runs to the
next heading of the same or a higher level (Markdown) or to the next recognised heading (PDF).
JoVE names its results section "Representative Results"; "Results and Discussion" fills both.
What comes out is `papers/<video_id>.md`, shown to reviewers beside the video, and the text the
findings summary is drafted from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

SECTIONS = ("Introduction", "Results", "Discussion")

_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Results+Discussion", re.compile(r"^results?\s+(?:and|&)\s+discussions?$")),
    ("Introduction", re.compile(r"^(?:introduction|background)$")),
    ("Results", re.compile(r"^(?:representative\s+)?results?$")),
    ("Discussion", re.compile(r"^(?:discussion|conclusions?|discussion\s+(?:and|&)\s+conclusions?)$")),
)
#: Other headings that END a section in a PDF (they are not kept).
_OTHER = re.compile(
    r"^(?:abstract|summary|methods?|materials?\s+and\s+methods|protocol|experimental(?:\s+section)?|"
    r"references|bibliography|acknowledge?ments?|disclosures?|funding|author\s+contributions|"
    r"supplementary\s+(?:material|information)|figure\s+legends?|table\s+of\s+materials)$"
)
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[IVX]+\.)\s+")
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


class PaperError(ValueError):
    """The paper cannot be read; the message names the file."""


@dataclass
class PaperSections:
    title: str = ""
    sections: dict[str, str] = field(default_factory=dict)

    @property
    def missing(self) -> list[str]:
        return [name for name in SECTIONS if not self.sections.get(name, "").strip()]

    def markdown(self) -> str:
        lines = [f"# {self.title}", ""] if self.title else []
        for name in SECTIONS:
            text = self.sections.get(name, "").strip()
            if text:
                lines += [f"# {name}", "", text, ""]
        return "\n".join(lines).rstrip("\n") + "\n"


def _kind(heading: str) -> str | None:
    text = _NUMBERING.sub("", heading.strip()).strip(" :.").casefold()
    text = re.sub(r"\s+", " ", text)
    for kind, pattern in _KINDS:
        if pattern.match(text):
            return kind
    return "other" if _OTHER.match(text) else None


def _add(sections: dict[str, str], kind: str, text: str) -> None:
    names = ("Results", "Discussion") if kind == "Results+Discussion" else (kind,)
    for name in names:
        sections[name] = (sections.get(name, "") + "\n\n" + text).strip()


def sections_from_markdown(text: str) -> PaperSections:
    paper = PaperSections()
    current: tuple[str, int] | None = None  # (kind, heading level)
    body: list[str] = []

    def flush() -> None:
        if current is not None and current[0] != "other":
            _add(paper.sections, current[0], "\n".join(body).strip())

    for line in text.splitlines():
        match = _MD_HEADING.match(line)
        if match:
            level, heading = len(match.group(1)), match.group(2)
            kind = _kind(heading)
            if not paper.title and level == 1 and kind is None:
                paper.title = heading
                continue
            if kind is not None or (current is not None and level <= current[1]):
                flush()
                current, body = ((kind, level) if kind is not None else None), []
                continue
        if current is not None:
            body.append(line)
    flush()
    return paper


def sections_from_text(text: str, title: str = "") -> PaperSections:
    """Split plain text (from a PDF) at lines that are known section headings."""
    paper = PaperSections(title=title)
    current: str | None = None
    body: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        kind = _kind(stripped) if 0 < len(stripped) <= 60 else None
        if kind is not None:
            if current not in (None, "other"):
                _add(paper.sections, current, "\n".join(body).strip())
            current, body = kind, []
            continue
        if current is not None:
            body.append(line)
    if current not in (None, "other"):
        _add(paper.sections, current, "\n".join(body).strip())
    return paper


def read_paper(path: Path, *, title: str = "") -> PaperSections:
    """Sections of a Markdown or PDF paper; `PaperError` naming the file when it cannot be read."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".pdf":
            return sections_from_text(_pdf_text(path), title=title)
        paper = sections_from_markdown(path.read_text(encoding="utf-8"))
    except PaperError:
        raise
    except (OSError, UnicodeDecodeError) as error:
        raise PaperError(f"{path}: cannot read the paper ({error})") from None
    paper.title = paper.title or title
    return paper


def _pdf_text(path: Path) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, OSError, ValueError) as error:
        raise PaperError(f"{path}: not a readable PDF ({error})") from None
    text = "\n".join(pages)
    if not text.strip():
        raise PaperError(f"{path}: the PDF has no extractable text (scanned pages need OCR first)")
    return text
