"""How the near-duplicate thresholds were calibrated, runnable on any releases (docs/audit.md).

For each release: the pairs of distinct options of its multiple-choice items, how many embed at or
above the whole-text threshold, and how many the paraphrase test flags; with `--answers`, the same
over the reference answers of each open question (lists of acceptable answers hold true
paraphrases). Each release is named by its suite:

    python -m expvid.audit.calibration SUITE=/path/to/release expvid=/path/to/sample [--answers SUITE=DIR]
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from expvid.audit.duplicates import (
    EMBEDDING_THRESHOLD,
    EmbeddingTable,
    default_embedder,
    embedding_texts,
    near_duplicate_pairs,
)
from expvid.audit.option_text import option_key
from expvid.audit.release import load_release


def option_sets(suite: str, root: Path, *, answers: bool) -> list[dict[str, str]]:
    """Each item's options (or, with `answers`, its reference answers lettered A, B, ...)."""
    _, dataset = load_release(root, suite)
    if not answers:
        return [dict(item.options) for item in dataset.items if item.options]
    return [
        dict(zip("ABCDEFGHIJ", [str(a) for a in item.answer], strict=False))
        for item in dataset.items
        if isinstance(item.answer, list) and len(item.answer) > 1
    ]


def calibrate(sets: Sequence[Mapping[str, str]], table: EmbeddingTable) -> dict[str, object]:
    """Pairs of distinct texts, those at or above the whole-text threshold, those flagged as twins."""
    table.add([t.strip() for options in sets for t in options.values()])
    table.add([t for options in sets for t in embedding_texts(options)])
    similar = pairs = 0
    flagged: list[tuple[float, str, str]] = []
    for options in sets:
        texts = [t.strip() for t in options.values() if t.strip()]
        for a, b in itertools.combinations(texts, 2):
            if option_key(a) == option_key(b):
                continue
            pairs += 1
            similar += float(np.dot(table.vectors[a], table.vectors[b])) >= EMBEDDING_THRESHOLD
        for pair in near_duplicate_pairs(options, embeddings=table):
            if pair.how == "embedding" and pair.similarity is not None:
                flagged.append((pair.similarity, options[pair.first], options[pair.second]))
    return {"sets": len(sets), "pairs": pairs, "similar": similar, "flagged": flagged}


def _specs(values: Iterable[str]) -> list[tuple[str, Path]]:
    found = []
    for value in values:
        suite, _, path = value.partition("=")
        found.append((suite, Path(path)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("releases", nargs="*", help="SUITE=DIR: option sets of multiple-choice items")
    parser.add_argument("--answers", action="append", default=[], help="SUITE=DIR: reference-answer lists")
    args = parser.parse_args()
    table = EmbeddingTable(default_embedder())
    runs = [(s, p, False) for s, p in _specs(args.releases)] + [(s, p, True) for s, p in _specs(args.answers)]
    print(f"| release | sets | pairs | cosine >= {EMBEDDING_THRESHOLD} | flagged as twins |")
    print("| --- | ---: | ---: | ---: | ---: |")
    shown = []
    for suite, path, answers in runs:
        found = calibrate(option_sets(suite, path, answers=answers), table)
        flagged = found["flagged"]
        assert isinstance(flagged, list)
        label = f"{suite} {path}{' (answers)' if answers else ''}"
        print(f"| {label} | {found['sets']} | {found['pairs']} | {found['similar']} | {len(flagged)} |")
        shown += [(label, *pair) for pair in flagged]
    for label, similarity, a, b in shown:
        print(f"- {label}: {similarity:.3f} | {a} | {b}")


if __name__ == "__main__":
    main()
