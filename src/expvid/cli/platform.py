"""`expvid platform ...`: serve the verification web app, manage users, import candidates, export.

The lead wires this into the main app with `app.add_typer(platform_app, name="platform")`.
Every command migrates the database to the newest schema first (creating the SQLite file if needed).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.markup import escape
from rich.table import Column, Table
from typer.core import TyperGroup

from expvid.platform.config import DATABASE_ENV, default_database_url
from expvid.run.terminal import message_console, print_table

if TYPE_CHECKING:
    from sqlalchemy.orm import Session
    from typer._click import Context

    from expvid.platform.db.engine import Database
    from expvid.platform.security.hashing import HashPool
    from expvid.platform.services.audit_queue import AuditApplication
    from expvid.platform.services.import_report import ImportReport
    from expvid.platform.services.reports import AgreementReport
    from expvid.platform.services.users import Reassignment


class _DatabaseErrorsGroup(TyperGroup):
    """A database URL that does not parse or cannot be reached is the user's to fix: one line, exit 2.

    Every platform command opens the database first; without this, an unreachable PostgreSQL server
    or a `--db review.db` printed SQLAlchemy's (and psycopg's) whole traceback.
    """

    def invoke(self, ctx: Context) -> object:
        try:
            return super().invoke(ctx)
        except Exception as error:
            problem = _database_problem(error)
            if problem is None:
                raise
            console.print(f"[red]error:[/red] {escape(problem)}")
            raise typer.Exit(code=2) from None


def _database_problem(error: Exception) -> str | None:
    """The one-line message for a bad database URL or a failed connection; None for any other error."""
    if "sqlalchemy" not in sys.modules:  # nothing opened a database: not a database problem
        return None
    from sqlalchemy.exc import ArgumentError, OperationalError

    if isinstance(error, ArgumentError):
        reason = f"{error}; expected sqlite:///file.db or postgresql://user:pass@host/dbname"
    elif isinstance(error, OperationalError):
        reason = str(error.orig or error)
    else:
        return None
    return f"cannot use the database (--db or ${DATABASE_ENV}): {' '.join(reason.split())}"


platform_app = typer.Typer(
    cls=_DatabaseErrorsGroup,
    no_args_is_help=True,
    help="Expert verification platform (web review of candidates).",
)
user_app = typer.Typer(no_args_is_help=True, help="Manage platform accounts.")
platform_app.add_typer(user_app, name="user")
console = message_console()

DbOption = Annotated[
    str,
    typer.Option(
        "--db",
        envvar=DATABASE_ENV,
        help="Database URL: sqlite:///file.db (default) or postgresql://user:pass@host/dbname.",
        default_factory=default_database_url,
        show_default=False,
    ),
]
#: The account a `platform user` command acts on.
UserName = Annotated[str, typer.Argument(help="User name.")]
T = TypeVar("T")


def _plain(text: str) -> None:
    """Print `text` as written (it names files and users: no markup), its lines whole on a narrow terminal."""
    console.print(text, markup=False, soft_wrap=True)


def _fail(message: str) -> typer.Exit:
    console.print(f"[red]error:[/red] {escape(message)}")
    return typer.Exit(code=1)


@contextmanager
def _failing_on(*errors: type[Exception]) -> Iterator[None]:
    """An error of `errors` (what a service or a file refuses) ends the command with exit 1 and says
    why: every problem of an `InvalidInput`, else the error's text."""
    from expvid.platform.services.errors import InvalidInput

    try:
        yield
    except errors as error:
        raise _fail("; ".join(error.problems) if isinstance(error, InvalidInput) else str(error)) from None


@contextmanager
def _opened(db: str) -> Iterator[Database]:
    """The database at `db`, brought to the newest schema; its connections closed when the command is done."""
    from expvid.platform import open_database

    database = open_database(db)
    try:
        yield database
    finally:
        database.dispose()


def _write_retry(db: str, work: Callable[[Session], T]) -> T:
    """`work` in a write transaction on the database at `db` (retried on deadlocks); what the service
    refuses (`InvalidInput`, `NotFound`) ends the command with exit 1 and says why."""
    from expvid.platform.services.errors import InvalidInput, NotFound

    with _failing_on(InvalidInput, NotFound), _opened(db) as database:
        return database.write_retry(work)


@contextmanager
def _session(db: str, *, write: bool = False) -> Iterator[Session]:
    """One read session (or write transaction) on the database at `db`, for a command that needs no other."""
    with _opened(db) as database:
        session_scope = database.write() if write else database.read()
        with session_scope as session:
            yield session


@platform_app.command("migrate")
def migrate(db: DbOption) -> None:
    """Create or upgrade the database schema (Alembic)."""
    from expvid.platform.db.migrate import upgrade_to_head

    console.print(f"database at revision {upgrade_to_head(db)}")


@platform_app.command("serve")
def serve(
    db: DbOption,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    secure_cookies: Annotated[
        bool,
        typer.Option(help="Mark cookies Secure: set it when users reach the app over HTTPS (a TLS proxy)."),
    ] = False,
    workers: Annotated[
        int, typer.Option(min=1, help="Worker processes (each with its own connection pool).")
    ] = 1,
    proxy_header: Annotated[
        str | None,
        typer.Option(
            help="Header your reverse proxy sets to the client's address (X-Forwarded-For or X-Real-IP); "
            "trusted only on connections from --trusted-proxy. Sign-in throttling keys on that address."
        ),
    ] = None,
    trusted_proxy: Annotated[
        list[str] | None,
        typer.Option(help="Address or CIDR range of the reverse proxy (repeatable; default: this machine)."),
    ] = None,
    hash_slots: Annotated[
        int,
        typer.Option(
            min=1, max=64, help="Password hashes computed at once (each takes 64 MiB); more wait their turn."
        ),
    ] = 1,
    hash_nice: Annotated[
        int,
        typer.Option(
            min=0, max=19, help="CPU priority of password hashing (Linux nice): 19 lets saves go first."
        ),
    ] = 19,
    hash_share: Annotated[
        float,
        typer.Option(
            min=0.05, max=1.0, help="Largest share of its time a hashing slot computes (rests in between)."
        ),
    ] = 0.5,
) -> None:
    """Run the web app (uvicorn)."""
    import os

    import uvicorn

    from expvid.platform import PlatformSettings, create_app, open_database
    from expvid.platform.config import PasswordPolicy
    from expvid.platform.security.client import parse_networks
    from expvid.platform.web.app import (
        HASH_NICE_ENV,
        HASH_SHARE_ENV,
        HASH_SLOTS_ENV,
        PROXY_HEADER_ENV,
        SECURE_COOKIES_ENV,
        TRUSTED_PROXIES_ENV,
    )

    extra: dict[str, object] = {}
    if trusted_proxy:
        try:
            extra["trusted_proxies"] = parse_networks(trusted_proxy)
        except ValueError as error:
            raise _fail(f"--trusted-proxy: {error}") from None
    settings = PlatformSettings(
        database_url=db, secure_cookies=secure_cookies, proxy_header=proxy_header,
        passwords=PasswordPolicy(hash_slots=hash_slots, hash_nice=hash_nice, hash_share=hash_share), **extra,
    )  # fmt: skip
    database = open_database(db)
    console.print(f"serving on http://{host}:{port}  (database {database.engine.url.render_as_string()})")
    if proxy_header:
        console.print(
            f"client addresses from {proxy_header} on connections from {', '.join(settings.trusted_proxies)}"
        )
    # uvicorn's own proxy-header handling is off: the app trusts the header from the configured proxies only.
    if workers == 1:
        app = create_app(settings, database=database)
        uvicorn.run(app, host=host, port=port, log_level="info", proxy_headers=False)
        return
    database.dispose()
    os.environ[DATABASE_ENV] = db
    os.environ[SECURE_COOKIES_ENV] = "1" if secure_cookies else "0"
    os.environ[PROXY_HEADER_ENV] = proxy_header or ""
    os.environ[TRUSTED_PROXIES_ENV] = ",".join(settings.trusted_proxies)
    os.environ[HASH_SLOTS_ENV], os.environ[HASH_NICE_ENV] = str(hash_slots), str(hash_nice)
    os.environ[HASH_SHARE_ENV] = str(hash_share)
    uvicorn.run(
        "expvid.platform.web.app:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="info",
        proxy_headers=False,
    )


@platform_app.command("import")
def import_dir(
    directory: Annotated[Path, typer.Argument(help="Candidate directory (ExpVid release layout).")],
    db: DbOption,
    skip_bad: Annotated[bool, typer.Option(help="Import the good records and report the bad lines.")] = False,
    annotators: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=5,
            help="Independent judgements each new item needs (default: `platform settings`, the paper's 2).",
        ),
    ] = None,
    assign: Annotated[bool, typer.Option(help="Assign new items to annotators right away.")] = True,
    report_file: Annotated[
        Path | None,
        typer.Option("--report", help="Also write the report (every item's outcome) to this JSON file."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON (and nothing else) on standard output.")
    ] = False,
    with_audit: Annotated[
        bool,
        typer.Option(
            "--audit/--no-audit",
            help="Apply the directory's audit.json (a build's validity audit) after the import: its "
            "flagged items go to the re-review queue.",
        ),
    ] = True,
) -> None:
    """Import a batch of candidate items (and provenance, segments, papers) into the platform.

    Items are matched by their stable identity (`uid` in provenance.jsonl; per directory without
    one). Each is reported as added, unchanged, changed (a new version, back to review), restored,
    removed upstream (flagged, never deleted) or conflict (not applied). Exit status: 0; 1 when
    nothing was imported (bad lines, listed); 3 when conflicts were left unapplied. --json and
    --report FILE give the report in every one of these outcomes, with its problems.
    """
    import json

    from sqlalchemy.exc import SQLAlchemyError

    from expvid.platform.services.import_report import ImportReport
    from expvid.platform.services.importer import ImportRefused, import_candidates
    from expvid.schema import DataError

    try:
        with _opened(db) as database:
            report = import_candidates(
                database, directory, skip_bad=skip_bad, assign=assign, annotators=annotators
            )
    except ImportRefused as error:
        report = error.report
    except (DataError, SQLAlchemyError, OSError) as error:  # the database, or the folder, unusable
        report = ImportReport(root=directory.absolute(), refused=str(error).splitlines()[0])
    data = report.as_dict()
    applied: AuditApplication | str | None = None  # a string: why the directory's audit.json was not applied
    if with_audit and report.refused is None and (directory / "audit.json").is_file():
        applied = _apply_audit(db, directory / "audit.json", root=directory)
        data["audit"] = applied.as_dict() if not isinstance(applied, str) else {"error": applied}
    audit_exit = 0 if applied is None else (2 if isinstance(applied, str) else applied.exit_code)
    if report_file is not None:
        report_file.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if as_json:
        print(json.dumps(data, ensure_ascii=False))
        raise typer.Exit(code=report.exit_code or audit_exit)
    if report.refused is not None:
        console.print(f"[red]error:[/red] {escape(report.refused)}", soft_wrap=True)
        for problem in report.problems:
            console.print(f"  {escape(str(problem))}", soft_wrap=True, highlight=False)
        raise typer.Exit(code=report.exit_code)
    _print_import(report)
    if isinstance(applied, str):
        console.print(
            f"[red]error:[/red] the items were imported; the audit was not: {escape(applied)}", soft_wrap=True
        )
    elif applied is not None:
        _print_audit(applied)
    raise typer.Exit(code=report.exit_code or audit_exit)


def _apply_audit(db: str, file: Path, *, root: Path | None) -> AuditApplication | str:
    """Apply a validity audit (`services/audit_queue.py`); the error, one line naming the file, when
    it is not an audit."""
    from expvid.platform.services.audit_queue import apply_audit
    from expvid.schema import DataError

    try:
        with _opened(db) as database:
            return apply_audit(database, file, root=root)
    except DataError as error:
        return str(error).splitlines()[0]


def _print_audit(applied: AuditApplication) -> None:
    if not applied.new:
        console.print(
            f"audit {applied.source} (sha256 {applied.sha256[:12]}) was applied before; nothing changed",
            soft_wrap=True, highlight=False,
        )  # fmt: skip
    else:
        console.print(
            f"audit {applied.source}: {applied.flagged} of {applied.audit_items} audited item(s) flagged; "
            f"{applied.findings_added} item(s) added to the re-review queue ({applied.reopened} of them "
            f"settled before, sent back to their annotators); matched against {applied.scope}",
            soft_wrap=True, highlight=False,
        )  # fmt: skip
    if applied.unmatched:
        console.print(f"[yellow]{escape(applied.unmatched_line())}[/yellow]", soft_wrap=True)
    if applied.ambiguous:
        console.print(
            f"[yellow]{len(applied.ambiguous)} audit id(s) match several items (each was flagged): "
            f"{escape(', '.join(applied.ambiguous[:20]))}[/yellow]",
            soft_wrap=True,
        )


@platform_app.command("audit")
def audit_cmd(
    audit_file: Annotated[
        Path, typer.Argument(help="An audit.json (`expvid audit`, or `expvid build`'s), or its folder.")
    ],
    db: DbOption,
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="Match only the items imported from this candidate directory (default: the directory "
            "the audit names, when items were imported from it; else every item).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print what was done as JSON.")] = False,
) -> None:
    """Apply a validity audit to imported items: flagged ones go to the re-review queue.

    Each flagged item gets the audit's flags and reasons (shown on its review page); one already
    verified or rejected goes back to its annotators. Applying the same file again changes nothing.
    Exit status: 0 applied (ids that match no item are listed on one line); 2 when the file is not
    an audit, or none of its ids matches an item.
    """
    import json

    applied = _apply_audit(db, audit_file, root=directory)
    if isinstance(applied, str):
        console.print(f"[red]error:[/red] {escape(applied)}", soft_wrap=True)
        raise typer.Exit(code=2)
    if as_json:
        print(json.dumps(applied.as_dict(), ensure_ascii=False))
    else:
        _print_audit(applied)
    raise typer.Exit(code=applied.exit_code)


def _print_import(report: ImportReport) -> None:
    from expvid.platform.services.import_report import OUTCOMES

    by_task = report.as_dict()["by_task"]
    if by_task:
        table = Table("task", *OUTCOMES)
        for task, counts in by_task.items():
            table.add_row(task, *(str(counts.get(o, 0)) for o in OUTCOMES))
        print_table(console, table)
    counts = report.counts
    console.print(
        f"{counts['added']} new item(s), {counts['unchanged']} already present, {counts['changed']} changed "
        f"upstream (back to review), {counts['restored']} restored, {counts['removed']} removed upstream, "
        f"{counts['conflict']} conflict(s); {report.experiments} experiment(s), {report.segments} segment(s) "
        f"added (identity: {report.identity})",
        highlight=False,
    )
    styles = {"changed": "cyan", "restored": "cyan", "removed": "yellow", "conflict": "red"}
    for outcome in ("changed", "restored", "removed", "conflict"):
        for item in report.of(outcome):
            console.print(
                f"[{styles[outcome]}]{outcome}:[/{styles[outcome]}] {escape(item.release_key)} "
                f"({escape(item.video_id)}): {escape(item.reason)}",
                soft_wrap=True,
            )
    for problem in report.problems:
        console.print(f"[yellow]skipped:[/yellow] {escape(str(problem))}")
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(str(warning))}")
    if report.assignment is not None:
        console.print(f"{report.assignment.assignments_created} assignment(s) made")
        for discipline, n in sorted(report.assignment.short_of_annotators.items()):
            console.print(f"[yellow]{n} item(s) in {discipline} lack two eligible annotators[/yellow]")
    if report.conflicts:
        console.print(
            f"[red]{len(report.conflicts)} item(s) not applied (conflicts, listed above); they are flagged "
            "upstream_conflict on the platform[/red]"
        )


@platform_app.command("export")
def export_dir(
    directory: Annotated[Path, typer.Argument(help="New directory for the verified benchmark.")],
    db: DbOption,
    export_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="expvid (release layout), hf (the same, as a Hub dataset repository) or a recipe's own "
            "format (its judged items in its release layout; `expvid recipes show NAME` names it).",
        ),
    ] = "expvid",
    license_id: Annotated[
        str, typer.Option("--license", help="--format hf: the card's license id.")
    ] = "cc-by-nc-4.0",
    repo_id: Annotated[
        str | None, typer.Option("--repo-id", help="--format hf: the Hub id it will have.")
    ] = None,
    public: Annotated[
        bool,
        typer.Option(
            "--public/--no-public",
            help="--public (default): DIR holds only annotations/ and videos/ (renamed, metadata stripped) "
            "and the provenance goes to a separate internal folder. --no-public: one directory with every "
            "sidecar, for the team's own use (it names original files and local paths: never publish it).",
        ),
    ] = True,
    internal: Annotated[
        Path | None,
        typer.Option(
            help="Where the internal provenance goes (default: DIR-INTERNAL-do-not-publish beside DIR)."
        ),
    ] = None,
    with_reviewers: Annotated[
        bool, typer.Option(help="Name reviewers by user name in the provenance (default: pseudonyms).")
    ] = False,
    answer_types: Annotated[
        Path | None,
        typer.Option(
            "--answer-types",
            help="A recipe's own format: a labels file it takes (e.g. answer_types.csv with the type column "
            "filled: direct, suggestion, intervention).",
        ),
    ] = None,
) -> None:
    """Write the verified items as an ExpVid-layout benchmark usable by `expvid eval` (--format hf: Hub-ready)."""
    if export_format not in ("expvid", "hf"):
        _export_recipe_format(export_format, directory, db, internal, with_reviewers, answer_types)
        return
    if export_format == "hf" and not public:
        raise typer.BadParameter(
            "a Hub repository is published: --format hf always writes the public export",
            param_hint="--no-public",
        )
    from expvid.platform.services.exporter import ExportError, export_verified
    from expvid.schema import DataError

    with _failing_on(ExportError), _opened(db) as database:
        report = export_verified(
            database, directory, public=public, internal=internal, with_reviewers=with_reviewers,
            kind="hf" if export_format == "hf" else "public",
        )  # fmt: skip
    _plain(
        f"release {report.release}: exported {report.total} verified item(s) and {report.videos} video file(s) "
        f"to {report.out}",
    )
    _plain(f"manifest sha256 {report.manifest_sha256}")
    if report.internal is not None:
        _plain(f"internal provenance (do not publish): {report.internal}")
    else:
        console.print("[yellow]--no-public: this directory names original files and local paths[/yellow]")
    if export_format == "hf":
        from expvid.hub.dataset_repo import describe, make_hub_repo

        with _failing_on(DataError):
            hub_report = make_hub_repo(
                report.out, license_id=license_id, repo_id=repo_id, internal=report.internal
            )
        for line in describe(hub_report, repo_id):
            console.print(line, highlight=False, markup=False, soft_wrap=True)


def _export_recipe_format(
    export_format: str,
    directory: Path,
    db: str,
    internal: Path | None,
    with_reviewers: bool,
    answer_types: Path | None,
) -> None:
    """`--format FORMAT` of a recipe that exports its judged items itself (`ReviewHooks.export`)."""
    from expvid.platform.services.exporter import ExportError
    from expvid.platform.services.recipe_hooks import export_formats, exporter_for

    hooks = exporter_for(export_format)
    if hooks is None:
        choices = ", ".join(["expvid", "hf", *export_formats()])
        raise typer.BadParameter(f"expected {choices}", param_hint="--format")
    with _failing_on(ExportError, ValueError), _opened(db) as database:
        lines = hooks.export(
            database, directory, internal=internal, with_reviewers=with_reviewers, answer_types=answer_types
        )
    for line in lines:
        _plain(line)


@platform_app.command("backup")
def backup_db(
    file: Annotated[
        Path,
        typer.Argument(help="New backup file (gzip'd JSON lines), e.g. review-2027-01-12.expvid-backup.gz."),
    ],
    db: DbOption,
) -> None:
    """Back up the whole review database (SQLite or PostgreSQL) into one portable file, while it runs.

    Restore with `expvid platform restore FILE --db URL` into a new, empty database of either kind.
    The file holds password hashes and token digests: keep it as safe as the database. Keep the
    SHA-256 and the audit chain head it prints apart from it: they tell a forged copy from this one.
    """
    from expvid.platform.db.backup import BackupError, backup

    with _failing_on(BackupError):
        report = backup(db, file)
    _plain(
        f"backed up {report.rows} row(s) of {len(report.counts)} table(s) at schema revision {report.revision} "
        f"to {report.path}",
    )
    _plain(f"sha256 {report.file_sha256}")
    if report.chain_head:
        _plain(
            f"audit trail: {report.counts.get('audit_events', 0)} event(s), chain head {report.chain_head['chain']} "
            f"(event {report.chain_head['id']})",
        )
    if report.chain_breaks:
        listed = ", ".join(str(i) for i in report.chain_breaks[:20])
        console.print(
            f"[red]warning:[/red] the audit trail's hash chain is broken at {len(report.chain_breaks)} event(s) "
            f"in this database ({escape(listed)}): rows were changed outside expvid. The backup holds them as "
            "they are; a restore refuses it unless --unverified",
            soft_wrap=True,
        )


@platform_app.command("restore")
def restore_db(
    file: Annotated[Path, typer.Argument(help="A file written by `expvid platform backup`.")],
    db: DbOption,
    sha256: Annotated[
        str | None, typer.Option("--sha256", help="The SHA-256 `backup` printed: the file must have it.")
    ] = None,
    unverified: Annotated[
        bool,
        typer.Option(
            help="Restore a backup made before backups carried a digest and a hash-chained audit trail "
            "(nothing can show whether it was changed)."
        ),
    ] = False,
) -> None:
    """Restore a backup into a new, empty database (SQLite file or PostgreSQL), then migrate it to the
    newest schema. Every line is checked first (digest, audit hash chain, every row against the
    schema); each problem is listed as file:line and nothing is written. All or nothing; everyone
    signs in again afterwards."""
    from expvid.platform.db.backup import BackupError, restore

    try:
        report = restore(file, db, unverified=unverified, expected_sha256=sha256)
    except BackupError as error:
        console.print(f"[red]error:[/red] {escape(str(error).splitlines()[0])}", soft_wrap=True)
        for problem in error.problems:
            console.print(escape(problem), soft_wrap=True, highlight=False)
        raise typer.Exit(code=1) from None
    counts = ", ".join(f"{n} {t}" for t, n in report.counts.items() if n)
    _plain(f"restored {report.rows} row(s) ({counts}) from {file}")
    if report.chain_head:
        _plain(
            f"audit trail intact: chain head {report.chain_head['chain']} (event {report.chain_head['id']})",
        )
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True)


@platform_app.command("assign")
def assign(db: DbOption) -> None:
    """Assign pending items to their annotators (two each by default; by discipline and load)."""
    from expvid.platform.services.assignment import assign_pending

    with _session(db, write=True) as session:
        report = assign_pending(session)
    console.print(
        f"{report.assignments_created} assignment(s) made, {report.items_fully_assigned} item(s) complete"
    )
    for discipline, n in sorted(report.short_of_annotators.items()):
        console.print(f"[yellow]{n} item(s) in {discipline} lack two eligible annotators[/yellow]")


@platform_app.command("status")
def status(db: DbOption) -> None:
    """Progress and agreement, as on the dashboard; each figure says which items it covers."""
    from expvid.platform.services.audit_queue import queue_counts
    from expvid.platform.services.campaign_settings import annotators_per_item
    from expvid.platform.services.releases import list_releases, release_item_ids
    from expvid.platform.services.reports import STATES, agreement_report, progress

    with _session(db) as session:
        report, agreement = progress(session), agreement_report(session)
        releases = list_releases(session)
        latest = releases[-1] if releases else None
        released = agreement_report(
            session, item_ids=release_item_ids(session, latest), scope="items of the latest release"
        ) if latest else None  # fmt: skip
        per_item = annotators_per_item(session)
        queue = queue_counts(session)
    total = sum(report.totals.values())
    console.print(
        f"Items: all {total} on the platform, by state (removed = removed upstream, kept):", highlight=False
    )
    if console.width >= 100:
        table = Table(*(Column(h, overflow="fold") for h in ("discipline", "task", *STATES, "total")))
        for row in report.by_group:
            table.add_row(row["discipline"], row["task"], *(str(row[s]) for s in STATES), str(row["total"]))
        print_table(console, table)
    else:  # a narrow terminal: one line per group, which folds readably
        for row in report.by_group:
            counts = ", ".join(f"{s} {row[s]}" for s in STATES if row[s])
            console.print(f"{row['discipline']} / {row['task']}: {row['total']} ({counts})", highlight=False)
    console.print(f"items left: {report.items_left} (pending, in review or in conflict)", highlight=False)
    if latest is not None:
        console.print(
            f"latest release: {latest.number} ({latest.item_count} item(s), {latest.kind}, "
            f"{latest.created_at:%Y-%m-%d %H:%M} UTC); {report.totals.get('verified', 0)} item(s) verified now",
            highlight=False,
        )
    console.print(f"new items need {per_item} annotator(s) each", highlight=False)
    for line in queue.lines():
        console.print(line, highlight=False, soft_wrap=True)
    for figures in (agreement, released):
        if figures is None:
            continue
        console.print(f"Agreement over {figures.covers()}:", highlight=False, soft_wrap=True)
        _print_agreement(figures)


def _print_agreement(agreement: AgreementReport) -> None:
    def fmt(value: float | None, digits: int) -> str:
        return "n/a" if value is None else f"{value:.{digits}f}"

    headers = ("task", "items", "% agreement", "kappa", "AC1", "Fleiss", "alpha")
    rows = [
        (task, str(a.n), fmt(a.percent, 1), fmt(a.kappa, 3), fmt(a.ac1, 3), fmt(a.fleiss_kappa, 3),
         fmt(a.krippendorff_alpha, 3))
        for task, a in [("all", agreement.overall), *agreement.by_task.items()]
    ]  # fmt: skip
    if console.width >= 80:
        figures = Table(*headers)
        for row in rows:
            figures.add_row(*row)
        print_table(console, figures)
    else:
        for row in rows:
            console.print(" · ".join(f"{h} {v}" for h, v in zip(headers, row, strict=True)), highlight=False)


@platform_app.command("settings")
def settings_cmd(
    db: DbOption,
    annotators_per_item: Annotated[
        int | None,
        typer.Option(
            "--annotators-per-item",
            min=1,
            max=5,
            help="Independent judgements each item imported or written from now on needs (the paper's: 2).",
        ),
    ] = None,
) -> None:
    """Show or change the campaign's settings (kept in the database)."""
    from expvid.platform.services import campaign_settings
    from expvid.platform.services.errors import SYSTEM

    if annotators_per_item is not None:
        with _session(db, write=True) as session:
            before = campaign_settings.set_annotators_per_item(session, SYSTEM, annotators_per_item)
        console.print(
            f"annotators per item: {before} -> {annotators_per_item} (for items imported or written from now "
            "on; items already on the platform keep what they need)",
            highlight=False,
        )
        return
    with _session(db) as session:
        value = campaign_settings.annotators_per_item(session)
    console.print(f"annotators per item: {value}", highlight=False)


@platform_app.command("releases")
def releases_cmd(db: DbOption) -> None:
    """List the releases (every export is one, numbered and immutable)."""
    from expvid.platform.services.releases import list_releases

    with _session(db) as session:
        rows = [
            (str(r.number), f"{r.created_at:%Y-%m-%d %H:%M}", r.kind, str(r.item_count), r.created_by,
             r.manifest_sha256[:16])
            for r in list_releases(session)
        ]  # fmt: skip
    if not rows:
        console.print("no release yet (`expvid platform export DIR` makes release 1)")
        return
    headers = ("release", "made (UTC)", "kind", "items", "by", "manifest sha256")
    for row in rows:
        console.print(" · ".join(f"{h} {v}" for h, v in zip(headers, row, strict=True)), highlight=False)


@platform_app.command("diff")
def diff_cmd(
    old: Annotated[str, typer.Argument(help="A release number, or a release folder / release.json.")],
    new: Annotated[str, typer.Argument(help="A release number, or a release folder / release.json.")],
    db: DbOption,
    as_json: Annotated[bool, typer.Option("--json", help="Print the differences as JSON.")] = False,
) -> None:
    """What changed from one release to another: items added, removed and changed, and changed answers."""
    import json

    from expvid.platform.services.errors import NotFound
    from expvid.platform.services.releases import diff, load_manifest

    with _failing_on(NotFound):
        if old.isdigit() or new.isdigit():
            with _session(db) as session:
                manifests = load_manifest(session, old), load_manifest(session, new)
        else:
            manifests = load_manifest(None, old), load_manifest(None, new)
    result = diff(*manifests)
    if as_json:
        print(json.dumps(result.as_dict(), ensure_ascii=False))
        return
    counts = result.as_dict()["counts"]
    console.print(
        f"release {result.old} -> {result.new}: {counts['added']} added, {counts['removed']} removed, "
        f"{counts['changed']} changed ({counts['answers_changed']} answer(s) changed), {counts['unchanged']} unchanged",
        highlight=False,
    )
    for key in result.added:
        console.print(f"[green]added:[/green] {escape(key)}", soft_wrap=True)
    for key in result.removed:
        console.print(f"[red]removed:[/red] {escape(key)}", soft_wrap=True)
    for key, fields in result.changed.items():
        console.print(f"[cyan]changed:[/cyan] {escape(key)} ({escape(', '.join(fields))})", soft_wrap=True)
    for key, (before, after) in result.answers.items():
        console.print(
            f"[yellow]answer:[/yellow] {escape(key)}: {escape(json.dumps(before, ensure_ascii=False))} -> "
            f"{escape(json.dumps(after, ensure_ascii=False))}",
            soft_wrap=True,
        )


def _hash_pool(db: str) -> HashPool:
    from expvid.platform import PlatformSettings
    from expvid.platform.security.hashing import HashPool
    from expvid.platform.security.passwords import Passwords

    return HashPool(Passwords(PlatformSettings(database_url=db).passwords), slots=1, nice=0)


def _read_password(password_stdin: bool, command: str) -> str:
    """The password: the first line of standard input with --password-stdin, else asked twice on the
    terminal. Without a terminal (a script, CI, `ssh host cmd`) there is nobody to ask: say how to pipe it."""
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            raise typer.BadParameter("standard input held no password", param_hint="--password-stdin")
        return password
    if not sys.stdin.isatty():
        raise typer.BadParameter(
            f"no terminal to ask for the password on; pipe it in: printf '%s\\n' \"$PASSWORD\" | {command} --password-stdin",
            param_hint="--password-stdin",
        )
    return str(typer.prompt("password", hide_input=True, confirmation_prompt=True))


@user_app.command("add")
def user_add(
    name: UserName,
    db: DbOption,
    role: Annotated[str, typer.Option(help="annotator | adjudicator | admin")] = "annotator",
    discipline: Annotated[
        list[str] | None, typer.Option(help="Discipline(s) reviewed; repeat or comma-separate. None = any.")
    ] = None,
    password_stdin: Annotated[
        bool,
        typer.Option(help="Read the password from the first line of standard input (scripts, no terminal)."),
    ] = False,
) -> None:
    """Create an account (the password is prompted for, or read from stdin)."""
    from expvid.platform.services.errors import SYSTEM, InvalidInput
    from expvid.platform.services.users import create_account

    password = _read_password(password_stdin, f"expvid platform user add {name}")
    with _failing_on(InvalidInput), _opened(db) as database, closing(_hash_pool(db)) as pool:
        user = create_account(
            database,
            pool,
            username=name,
            password=password,
            role=role,
            disciplines=discipline or [],
            actor=SYSTEM,
        )
    disciplines = ", ".join(user.disciplines) or "any discipline"
    console.print(f"created {role} {name} ({disciplines})")


@user_app.command("passwd")
def user_passwd(
    name: UserName,
    db: DbOption,
    password_stdin: Annotated[
        bool, typer.Option(help="Read the new password from the first line of standard input (no terminal).")
    ] = False,
    keep_tokens: Annotated[
        bool, typer.Option(help="Keep their API tokens working (by default a reset revokes them all).")
    ] = False,
) -> None:
    """Set a new password for an account (an admin's reset); its sessions end and its API tokens are
    revoked (a reset after a compromise closes every door), unless --keep-tokens."""
    from expvid.platform.services.errors import SYSTEM, InvalidInput, NotFound
    from expvid.platform.services.users import reset_password

    password = _read_password(password_stdin, f"expvid platform user passwd {name}")
    with _failing_on(InvalidInput, NotFound), _opened(db) as database, closing(_hash_pool(db)) as pool:
        revoked = reset_password(
            database, pool, username=name, password=password, actor=SYSTEM, revoke_tokens=not keep_tokens
        )
    tokens = (
        f" and {revoked} API token(s) revoked" if revoked else (" (API tokens kept)" if keep_tokens else "")
    )
    console.print(f"new password set for {name}; their sessions ended{tokens}")


def _moved(result: Reassignment) -> str:
    if not result.released:
        return ""
    placed = result.assignment.assignments_created if result.assignment else 0
    short = sum(result.assignment.short_of_annotators.values()) if result.assignment else 0
    return f": {len(result.released)} open item(s) returned to the pool, {placed} reassigned" + (
        f", {short} item(s) still short of annotators" if short else ""
    )


@user_app.command("edit")
def user_edit(
    name: UserName,
    db: DbOption,
    role: Annotated[str | None, typer.Option(help="New role: annotator | adjudicator | admin.")] = None,
    discipline: Annotated[
        list[str] | None,
        typer.Option(help="New discipline list (repeat or comma-separate; replaces the old one)."),
    ] = None,
    any_discipline: Annotated[bool, typer.Option(help="Clear the discipline list (= any).")] = False,
) -> None:
    """Change an account's role or disciplines. An annotator given another role hands over their open items."""
    from expvid.platform.services.errors import SYSTEM
    from expvid.platform.services.users import update_user

    if role is None and discipline is None and not any_discipline:
        raise typer.BadParameter("give --role, --discipline or --any-discipline")
    disciplines = [] if any_discipline else discipline
    result = _write_retry(db, lambda s: update_user(s, SYSTEM, name, role=role, disciplines=disciplines))
    console.print(f"updated {name}{_moved(result)}")


@user_app.command("reassign")
def user_reassign(
    name: UserName,
    db: DbOption,
    reason: Annotated[str, typer.Option(help="Why (kept in the audit trail).")] = "reassigned by an admin",
) -> None:
    """Give an annotator's open items to other eligible annotators (what they decided stays theirs)."""
    from expvid.platform.services.errors import SYSTEM
    from expvid.platform.services.users import reassign_open_items

    result = _write_retry(db, lambda s: reassign_open_items(s, SYSTEM, name, reason=reason))
    console.print(f"{name}{_moved(result) or ': no open items to reassign'}")


@user_app.command("list")
def user_list(db: DbOption) -> None:
    """List accounts."""
    from expvid.platform.services.users import list_users

    with _session(db) as session:
        table = Table("user", "role", "disciplines", "active")
        for user in list_users(session):
            table.add_row(
                user.username,
                user.role,
                ", ".join(user.disciplines) or "any",
                "yes" if user.active else "no",
            )
    print_table(console, table)


@user_app.command("deactivate")
def user_deactivate(name: UserName, db: DbOption) -> None:
    """Deactivate an account and end its sessions; its open items go to other annotators (its decisions stay)."""
    _set_active(name, db, active=False)


@user_app.command("activate")
def user_activate(name: UserName, db: DbOption) -> None:
    """Let a deactivated account sign in again (items reassigned meanwhile stay with their new annotators)."""
    _set_active(name, db, active=True)


def _set_active(name: str, db: str, *, active: bool) -> None:
    from expvid.platform.services.errors import SYSTEM
    from expvid.platform.services.users import set_active

    result = _write_retry(db, lambda s: set_active(s, name, active, actor=SYSTEM))
    console.print(f"{'activated' if active else 'deactivated'} {name}{_moved(result)}")


token_app = typer.Typer(no_args_is_help=True, help="Personal API tokens for scripts (Authorization: Bearer).")
platform_app.add_typer(token_app, name="token")


@token_app.command("create")
def token_create(
    name: Annotated[str, typer.Argument(help="User the token acts as.")],
    db: DbOption,
    label: Annotated[str, typer.Option("--name", help="What the token is for (shown in lists).")] = "script",
    read_only: Annotated[bool, typer.Option(help="The token may only read.")] = False,
    expires_days: Annotated[
        float | None, typer.Option(help="Days until the token expires (default: never).")
    ] = None,
) -> None:
    """Create a token and print it (once: only its digest is stored)."""
    from sqlalchemy import select

    from expvid.platform.db.models import User
    from expvid.platform.security.api_tokens import create_token
    from expvid.platform.services.errors import SYSTEM, InvalidInput

    with _failing_on(InvalidInput), _session(db, write=True) as session:
        user = session.scalar(select(User).where(User.username == name))
        if user is None:
            raise _fail(f"no user {name!r}")
        token, row = create_token(
            session, SYSTEM, user, name=label, read_only=read_only, expires_days=expires_days
        )
        token_id = row.id
    console.print(
        f"token {token_id} for {name} ({'read only' if read_only else 'read and write'}):", soft_wrap=True
    )
    print(token)


@token_app.command("list")
def token_list(
    db: DbOption, name: Annotated[str | None, typer.Argument(help="Only this user's tokens.")] = None
) -> None:
    """List tokens (never the tokens themselves)."""
    from sqlalchemy import select

    from expvid.platform.db.models import User
    from expvid.platform.security.api_tokens import list_tokens

    with _session(db) as session:
        user_id = None
        if name is not None:
            user_id = session.scalar(select(User.id).where(User.username == name))
            if user_id is None:
                raise _fail(f"no user {name!r}")
        rows = [
            (
                str(token.id), username, token.name, token.prefix + "…",
                "read" if token.read_only else "read/write",
                token.last_used_at.strftime("%Y-%m-%d %H:%M") if token.last_used_at else "never",
                "revoked" if token.revoked_at else "live",
            )
            for token, username in list_tokens(session, user_id)
        ]  # fmt: skip
    headers = ("id", "user", "name", "starts with", "access", "last used", "state")
    if console.width >= 100:
        table = Table(*headers)
        for row in rows:
            table.add_row(*row)
        console.print(table)
    else:  # a narrow terminal: one line per token
        for row in rows:
            console.print(" · ".join(f"{h} {v}" for h, v in zip(headers, row, strict=True)), highlight=False)


@token_app.command("revoke")
def token_revoke(
    token_id: Annotated[int, typer.Argument(help="Token id (see `token list`).")], db: DbOption
) -> None:
    """Revoke a token at once."""
    from expvid.platform.security.api_tokens import revoke_token
    from expvid.platform.services.errors import SYSTEM, NotFound

    with _failing_on(NotFound), _session(db, write=True) as session:
        revoke_token(session, SYSTEM, token_id)
    console.print(f"revoked token {token_id}")
