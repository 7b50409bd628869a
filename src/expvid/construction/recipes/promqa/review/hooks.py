"""What the review platform asks the ProMQA recipe (`ReviewHooks`): its directories, its judged
pages and its export format. Imported only when the platform first needs a recipe's hooks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from expvid.recipes.api import ReviewHooks


class JudgedPages:
    """The page kind `procedural` for ProMQA's items: what the platform's review and adjudication
    routes call for an item at the recipe's `review_level` (the modules load on first use: they
    import the platform, which asks for these hooks while it loads)."""

    review_template = "review_procedural.html"
    adjudication_template = "adjudicate_procedural.html"

    @staticmethod
    def review_context(*args: Any, **kwargs: Any) -> dict[str, Any]:
        from expvid.construction.recipes.promqa.review import pages

        return pages.review_context(*args, **kwargs)

    @staticmethod
    def judgement_from_form(*args: Any, **kwargs: Any) -> Any:
        from expvid.construction.recipes.promqa.review import pages

        return pages.judgement_from_form(*args, **kwargs)

    @staticmethod
    def submit_judgement(*args: Any, **kwargs: Any) -> Any:
        from expvid.construction.recipes.promqa.review import judgements

        return judgements.submit_judgement(*args, **kwargs)

    @staticmethod
    def adjudication_context(*args: Any, **kwargs: Any) -> dict[str, Any]:
        from expvid.construction.recipes.promqa.review import pages

        return pages.adjudication_context(*args, **kwargs)

    @staticmethod
    def resolution_from_form(*args: Any, **kwargs: Any) -> Any:
        from expvid.construction.recipes.promqa.review import pages

        return pages.resolution_from_form(*args, **kwargs)

    @staticmethod
    def resolve(*args: Any, **kwargs: Any) -> Any:
        from expvid.construction.recipes.promqa.review import judgements

        return judgements.resolve(*args, **kwargs)

    @staticmethod
    def mark_adjudication_opened(*args: Any, **kwargs: Any) -> None:
        from expvid.construction.recipes.promqa.review import judgements

        judgements.mark_adjudication_opened(*args, **kwargs)


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
