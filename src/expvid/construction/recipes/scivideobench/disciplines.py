"""A source's discipline label placed among SciVideoBench's four, or refused with the reason.

SciVideoBench reports accuracy per discipline (Table 2: Biology, Chemistry, Medicine, Physics), the
review platform routes items to annotators by discipline, and `expvid eval` fills the four columns
from each record's `discipline`. A label outside the four ("Neuroscience") would be released
unchecked, counted in no column and reviewed by nobody. So every experiment's `meta.json`
discipline is resolved before anything is asked:

- one of the four (any case) is kept;
- a raw value of the published release that the suite maps (Biochemistry, Bioengineering ->
  Biology, Engineering -> Physics) goes to its column;
- a subject that appendix B lists under exactly one discipline goes there ("Neuroscience" ->
  Biology), and becomes the record's `subject` unless meta.json gives one;
- a replacement mapping (`-R disciplines=FILE`, JSON `{label: discipline}`) is consulted first;
- anything else, and a subject listed under two disciplines (Microfluidics), is refused with what
  to write instead; the experiment is rejected and the build report says why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from expvid.schema import DataError
from expvid.suites.scivideobench.spec import APPENDIX_B_SUBJECTS, DISCIPLINE_GROUPS, DISCIPLINES


def _key(label: str) -> str:
    return " ".join(label.split()).casefold()


@dataclass(frozen=True)
class Placed:
    discipline: str
    subject: str | None


def _subjects() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for discipline, subjects in APPENDIX_B_SUBJECTS.items():
        for subject in subjects:
            found.setdefault(_key(subject), []).append(discipline)
    return found


class DisciplineMap:
    """The suite's placement of labels, with a user's replacement entries on top."""

    def __init__(self, extra: dict[str, str] | None = None) -> None:
        self.extra = {_key(k): v for k, v in (extra or {}).items()}
        self.groups = {_key(k): v for k, v in DISCIPLINE_GROUPS.items()}
        self.subjects = _subjects()

    @classmethod
    def load(cls, path: Path | None) -> DisciplineMap:
        """The map with `path`'s entries (JSON {label: one of the four}); `DataError` naming the file."""
        if path is None:
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise DataError(f"{path}: cannot read the discipline mapping ({error})") from None
        if not isinstance(data, dict):
            raise DataError(f"{path}: expected a JSON object {{label: discipline}}")
        canonical = {_key(d): d for d in DISCIPLINES}
        mapping = {}
        for label, target in data.items():
            if not isinstance(target, str) or _key(target) not in canonical:
                raise DataError(
                    f"{path}: {label!r} maps to {target!r}; SciVideoBench's disciplines are {', '.join(DISCIPLINES)}"
                )
            mapping[str(label)] = canonical[_key(target)]
        return cls(mapping)

    def place(self, label: str, subject: str | None) -> Placed:
        """(discipline, subject) for a meta.json label; ValueError with the fix when it has none."""
        key = _key(label)
        canonical = {_key(d): d for d in DISCIPLINES}
        if not key:
            raise ValueError(f"no discipline given (one of {', '.join(DISCIPLINES)})")
        if key in self.extra:
            return Placed(self.extra[key], subject or (None if key in canonical else label))
        if key in canonical:
            return Placed(canonical[key], subject)
        if key in self.groups:
            return Placed(self.groups[key], subject or label)
        homes = self.subjects.get(key, [])
        if len(homes) == 1:
            return Placed(homes[0], subject or label)
        if homes:
            raise ValueError(
                f"discipline {label!r} is a subject of both {' and '.join(homes)} in SciVideoBench's appendix B: "
                f'set "discipline" to one of them and "subject" to {label!r}'
            )
        raise ValueError(
            f"discipline {label!r} is not one of SciVideoBench's disciplines ({', '.join(DISCIPLINES)}) nor a "
            f'subject its appendix B lists under one: set "discipline" to one of the four (and "subject" to '
            f"the field), or map the label with -R disciplines=FILE"
        )
