"""What the review platform asks the ProMQA recipe (`ReviewHooks`): its directories, its judged
pages and its export format. Imported only when the platform first needs a recipe's hooks."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any

from expvid.recipes.api import ReviewHooks


def _deferred(module: str, name: str) -> Any:
    """Function `name` of this package's `module`, imported on its first call (the modules import
    the platform, which asks for these hooks while it loads)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(import_module(f"{__package__}.{module}"), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return staticmethod(call)


class JudgedPages:
    """The page kind `procedural` for ProMQA's items: what the platform's review and adjudication
    routes call for an item at the recipe's `review_level`."""

    review_template = "review_procedural.html"
    adjudication_template = "adjudicate_procedural.html"

    review_context = _deferred("pages", "review_context")
    judgement_from_form = _deferred("pages", "judgement_from_form")
    submit_judgement = _deferred("judgements", "submit_judgement")
    adjudication_context = _deferred("pages", "adjudication_context")
    resolution_from_form = _deferred("pages", "resolution_from_form")
    resolve = _deferred("judgements", "resolve")
    mark_adjudication_opened = _deferred("judgements", "mark_adjudication_opened")


class ProMQAReviewHooks(ReviewHooks):
    #: No review time is reported by the paper.
    paper_minutes = "not reported"

    def claims_directory(self, root: Path) -> bool:
        from expvid.construction.recipes.promqa.review.importing import is_procedural_dir

        return is_procedural_dir(root)

    def import_directory(self, database: Any, root: Path, **options: Any) -> Any:
        """Always with the paper's two annotators per item (`--annotators` does not apply)."""
        from expvid.construction.recipes.promqa.review.importing import import_procedural

        options.pop("annotators", None)
        return import_procedural(database, root, **options)

    def judged_pages(self) -> Any:
        return JudgedPages

    def export(self, database: Any, directory: Path, **options: Any) -> list[str]:
        from expvid.construction.recipes.promqa.review.exporting import export_procedural

        report = export_procedural(
            database,
            directory,
            internal=options.get("internal"),
            with_reviewers=bool(options.get("with_reviewers")),
            answer_types=options.get("answer_types"),
        )
        return [
            f"exported {report.total} verified ProMQA example(s) and {report.videos} recording(s) to {report.out}",
            f"campaign, answer_types.csv and construction tables (do not publish): {report.internal}",
        ]
