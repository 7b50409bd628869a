"""Paper sections for Level 3 from Markdown and from real PDF files."""

from __future__ import annotations

from pathlib import Path

import pytest

from expvid.construction.papers import PaperError, read_paper, sections_from_markdown


def write_pdf(path: Path, pages: list[list[str]]) -> None:
    """A minimal but valid PDF (Helvetica text, one line per string), with a correct xref table."""
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    kids = []
    for lines in pages:
        body = ["BT /F1 11 Tf 14 TL 50 780 Td"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            body.append(f"({escaped}) Tj T*")
        body.append("ET")
        stream = "\n".join(body).encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        content = len(objects)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (content, len(pages) * 2 + 3)
        )
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        len(kids),
    )
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))


def test_markdown_sections_of_the_sample_paper(sample_sources):
    paper = read_paper(sample_sources / "61842" / "paper.md")
    assert paper.title.startswith("Live Imaging of Human Induced Pluripotent Stem Cell")
    assert paper.missing == []
    assert paper.sections["Introduction"].startswith("Matrigel is the most common substrate")
    assert "OCT4-positive" in paper.sections["Results"] and "phototoxicity" in paper.sections["Discussion"]
    assert "Place one sterile" not in paper.markdown()  # Methods are not part of the sections
    markdown = paper.markdown()
    assert markdown.index("# Introduction") < markdown.index("# Results") < markdown.index("# Discussion")


def test_markdown_heading_levels_and_combined_sections():
    text = "\n".join(
        [
            "# A Study", "## 1. Introduction", "Why.", "### Background detail", "More why.",
            "## Protocol", "Steps.", "## Results and Discussion", "It worked.", "## References", "[1] x",
        ]
    )  # fmt: skip
    paper = sections_from_markdown(text)
    assert paper.title == "A Study"
    assert paper.sections["Introduction"] == "Why.\n### Background detail\nMore why."
    assert paper.sections["Results"] == paper.sections["Discussion"] == "It worked."


def test_pdf_sections_are_found_by_their_headings(tmp_path):
    path = tmp_path / "paper.pdf"
    write_pdf(
        path,
        [
            ["Imaging Stem Cells", "Abstract", "We image cells.", "Introduction",
             "Vitronectin is a defined substrate.", "Protocol", "1. Coat the coverslips."],
            ["REPRESENTATIVE RESULTS", "Colonies attached within 4 hours.", "Discussion",
             "The method suits drug screening.", "References", "1. Someone (2020)."],
        ],
    )  # fmt: skip
    paper = read_paper(path, title="Imaging Stem Cells")
    assert paper.missing == []
    assert paper.sections["Introduction"] == "Vitronectin is a defined substrate."
    assert paper.sections["Results"] == "Colonies attached within 4 hours."
    assert paper.sections["Discussion"] == "The method suits drug screening."
    assert paper.markdown().startswith("# Imaging Stem Cells\n\n# Introduction\n")


def test_unreadable_papers_name_the_file(tmp_path):
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nthis is not really a pdf")
    with pytest.raises(PaperError, match=r"broken\.pdf"):
        read_paper(broken)
    empty = tmp_path / "empty.pdf"
    write_pdf(empty, [[]])
    with pytest.raises(PaperError, match="no extractable text"):
        read_paper(empty)
