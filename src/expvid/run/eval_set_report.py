"""The campaign's report: the paper's table per suite and setting, a leaderboard page, viewer pages.

For every suite and setting, the cells with scores (finished or not) become rows of the suite's
paper table (`report.build_table`), labelled by the model names of the config; partial cells keep
their labels ("(incomplete)", "(stopped at budget)"); the paper's reference rows follow. Cells
without scores are named under their table with why (failed: the error; pending). `report.md`
holds every table with its caveat lines and the campaign's cost; `leaderboard.html` the same as
sortable tables with intervals, each model linked to its cell's exported viewer (`views/`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from expvid.run.eval_set import PreparedCell, SetState
from expvid.run.eval_set_config import EvalSetConfig
from expvid.run.report.leaderboard import BoardSection, leaderboard_html
from expvid.run.report.table import LoadedRun, build_table, load_runs
from expvid.run.report.text_formats import to_markdown
from expvid.run.rundir import write_atomic
from expvid.schema import DataError
from expvid.suites.registry import get_suite


@dataclass
class SetReport:
    markdown: str
    sections: list[BoardSection]
    total_usd: float | None
    n_scored: int
    n_cells: int


def _references(config: EvalSetConfig) -> list[str] | None:
    if config.references == "all":
        return None
    if config.references == "none":
        return []
    return list(config.references)


def build_set_report(config: EvalSetConfig, cells: Sequence[PreparedCell], state: SetState) -> SetReport:
    groups: dict[tuple[str, str], list[PreparedCell]] = {}
    for prepared in cells:
        groups.setdefault((prepared.cell.suite.name, prepared.cell.setting), []).append(prepared)
    sections: list[BoardSection] = []
    markdown = [f"# Evaluation set: {config.out.name}", ""]
    total = 0.0
    unpriced: list[str] = []
    n_scored = 0
    for (suite_name, setting), members in groups.items():
        runs: list[LoadedRun] = []
        section = BoardSection(
            title=f"{suite_name} — {setting}", table=build_table(get_suite(suite_name), [], [])
        )
        for prepared in members:
            cell = prepared.cell
            cell_state = state.cells.get(cell.id)
            if (prepared.config.out / "scores.json").is_file():
                try:
                    [loaded] = load_runs([prepared.config.out])
                except DataError as error:
                    section.notes.append(f"{cell.model.name}: scores unreadable ({error})")
                    continue
                loaded.label = cell.model.name
                runs.append(loaded)
                n_scored += 1
                cost = loaded.scores.run.cost
                usd = None if cost is None else cost.usd
                if usd is None:
                    unpriced.append(cell.id)
                else:
                    total += usd
                if cell_state is not None and cell_state.status == "failed":
                    section.notes.append(
                        f"{cell.model.name}: the last attempt failed ({cell_state.error}); scores so far"
                    )
            else:
                why = "not run yet" if cell_state is None else cell_state.status
                if cell_state is not None and cell_state.error:
                    why += f": {cell_state.error}"
                section.notes.append(f"{cell.model.name}: no scores ({why})")
        table = build_table(get_suite(suite_name), runs, _references(config))
        section.table = table
        for row in table.rows:
            if row.reference:
                continue
            owner = next(
                (r for r in runs if row.label == r.label or row.label.startswith(r.label + " (")), None
            )
            if owner is None:
                continue
            member = next(m for m in members if m.cell.model.name == owner.label)
            section.links[row.label] = member.cell.view_file(config.out).relative_to(config.out).as_posix()
            section.costs[row.label] = row.cost_usd
        sections.append(section)
        markdown.append(to_markdown(table, title=section.title))
        markdown += [f"- {note}" for note in section.notes]
        markdown.append("")
    spent = f"${total:.4f}"
    if unpriced:
        spent += f" for the priced cells; no price for {', '.join(unpriced)} (give them a price: [IN, OUT])"
    markdown.append(f"Campaign cost so far: {spent}; {n_scored} of {len(cells)} cell(s) have scores.")
    frames = state.frames
    if frames:
        markdown.append(
            f"Frames: {frames.get('frame_sets', 0)} distinct frame set(s) for all cells, decoded once "
            f"({frames.get('decoded', 0)} in the last run, {frames.get('cached', 0)} already cached)."
        )
    return SetReport("\n".join(markdown) + "\n", sections, None if unpriced else total, n_scored, len(cells))


def write_set_report(config: EvalSetConfig, cells: Sequence[PreparedCell], state: SetState) -> SetReport:
    """Write report.md and leaderboard.html (the cells' viewer pages: `expvid.view.export.export_cell_views`)."""
    report = build_set_report(config, cells, state)
    out = config.out
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "report.md", report.markdown)
    write_atomic(
        out / "leaderboard.html", leaderboard_html(report.sections, title=f"Leaderboard: {out.name}")
    )
    return report
