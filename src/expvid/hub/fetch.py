"""`expvid data fetch`: download a suite's published release from the Hugging Face Hub, only what is needed.

Steps (each re-runnable; a second run after an interruption only downloads what is missing):
1. Resolve the revision (branch, tag or sha) to a commit sha and list the repo's files once.
2. `snapshot_download` the selected tasks' annotation files into DIR (`local_dir`, so DIR holds the
   release layout itself, not links into a cache).
3. Load them with the suite's loader and collect exactly the media the selected questions use;
   `snapshot_download` those, with the shortest pattern list that selects them (`patterns`).
4. Verify (`verify`): every selected item loads with its media present, at the listed size, and
   readable (videos demuxed, images decoded). Problems are reported, never silently skipped.
5. Write `fetch.json` (`record`): the resolved sha, what was selected, the annotation hashes and the
   loader's fingerprint, the verification outcome. `expvid eval` copies it into the run manifest.

Offline (`HF_HUB_OFFLINE=1`, as on cluster compute nodes): nothing is asked of the Hub. A folder an
earlier fetch filled (its `fetch.json` names the repo, the revision asked for and the sha it was)
is used as it is: the revision is taken from that record (written into the new record as
`resolved_from: "cache"`, with when it was resolved: a branch may have moved since), the files are
listed from disk, and the usual verification runs. Tasks the folder never held are an error naming
them; only a connected machine can fetch those.

Resuming: huggingface_hub keeps per-file metadata under `DIR/.cache/huggingface/`, so finished files
are kept and skipped; a connection dropped mid-file is retried by huggingface_hub itself (with a
`Range` request once a chunk has arrived). Always pinned: every download after step 1 uses the
commit sha, so a branch that moves during the fetch cannot mix two revisions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from expvid.hub.fetch_types import Echo, FetchError, FetchOutcome, FetchRequest, versions
from expvid.hub.patterns import minimal_patterns
from expvid.hub.record import FetchRecord, SourceInfo, Verification, read_fetch_record
from expvid.hub.verify import check_media, media_files
from expvid.media.cache import hash_file
from expvid.schema import DataError
from expvid.schema.dataset import Dataset
from expvid.suites.release_layout import Selection

DEFAULT_ENDPOINT = "https://huggingface.co"
#: Above this many allow patterns, files are downloaded one by one instead of through snapshot_download.
MAX_PATTERNS = 64


def resolve_endpoint(endpoint: str | None) -> str:
    return (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def fetch_release(request: FetchRequest, *, echo: Echo = lambda _: None) -> FetchOutcome:
    """Fetch `request.suite` into `request.out`; see the module docstring for the steps."""
    from expvid.suites.registry import get_suite

    try:
        suite: Any = get_suite(request.suite, request.settings)
    except ValueError as error:
        raise DataError(str(error)) from None
    github = getattr(suite, "github_release", None)
    if github is not None:  # question files that are not on the Hub but on GitHub
        from expvid.hub.github_release import fetch_github_release

        return fetch_github_release(request, suite, github, echo=echo)
    hook = getattr(suite, "hub_layout", None)
    layout = hook() if callable(hook) else None
    repo = request.repo_id or getattr(suite, "hub_repo", None)
    if layout is None or repo is None:
        raise DataError(f"the {request.suite} suite names no published release to fetch")
    root = request.out.expanduser().resolve()
    root.mkdir(parents=True, exist_ok=True)
    selection = layout.select(request.tasks, request.levels, request.languages)
    previous = read_fetch_record(root)
    if previous is not None and previous.suite == request.suite and previous.source.repo == repo:
        # One directory, one revision: the tasks fetched before are brought to this revision too.
        tasks = [*previous.tasks, *selection.tasks]
        languages = [*(previous.languages or ()), *(selection.languages or ())]
        merged = layout.select(list(dict.fromkeys(tasks)), None, list(dict.fromkeys(languages)) or None)
        if merged.tasks != selection.tasks or merged.languages != selection.languages:
            echo(f"also keeping the task(s) fetched before: {', '.join(merged.tasks)}")
            selection = merged
    endpoint = resolve_endpoint(request.endpoint)
    hub = _Hub(repo, endpoint, request.token, root, request.max_workers, request.progress)

    offline = hub_offline()
    resolved_at: datetime | None = None
    if offline:
        sha, listing, resolved_at = _from_cache(request, repo, root, previous, selection)
        hub.offline = True
        echo(
            f"{repo} @ {request.revision} -> {sha} (HF_HUB_OFFLINE: resolved from the cache, {len(listing)} files)"
        )
    else:
        sha, listing = hub.resolve(request.revision)
        echo(f"{repo} @ {request.revision} -> {sha} ({len(listing)} files)")
    annotation_paths, problems = layout.annotations(listing, selection)
    if not annotation_paths:
        raise FetchError(f"{repo}@{sha[:12]}: nothing to fetch: " + "; ".join(problems))
    extras: list[str] = [p for p in ("README.md", "LICENSE") if p in listing]
    hub.download(sha, annotation_paths + extras, listing)
    problems += layout.prepare(root, annotation_paths)
    dataset = _load(layout, root, selection, check_media=False)
    needed, media_problems = layout.media(dataset, root, listing)
    problems += media_problems
    echo(f"{len(dataset)} item(s) in {len(selection.tasks)} task(s) need {len(needed)} media file(s)")
    hub.download(sha, sorted(needed), listing)
    problems += layout.place_media(root, needed)

    # Loaded again without the loaders' media check (a loader may check the media of every task, not
    # only the selected ones): presence, size and readability are checked below for the selected items.
    verified = _load(layout, root, selection, check_media=False)
    problems += [str(p) for p in verified.problems]
    videos, images = media_files(verified)
    sizes = {(root / p).resolve(): listing[p] for p in needed if p in listing}
    echo(
        f"checking {len(videos) + len(images)} media file(s)"
        + (" (demuxing videos)" if request.probe else "")
    )
    checked = check_media(root, videos, images, expected_sizes=sizes, probe=request.probe)
    repo_path = {(root / path).resolve(): path for path in needed}
    damaged = [repo_path[p] for p in checked.damaged() if p in repo_path]
    if damaged and not offline:  # on disk and recorded as done, but short or unreadable: download again, once
        echo(f"downloading {len(damaged)} damaged file(s) again: {', '.join(damaged[:5])}")
        hub.forget(damaged)
        hub.download(sha, damaged, listing)
        checked = check_media(root, videos, images, expected_sizes=sizes, probe=request.probe)
    problems += checked.problems
    problems = list(dict.fromkeys(problems))

    record = FetchRecord(
        suite=request.suite,
        source=SourceInfo(kind="hub", repo=repo, endpoint=endpoint, url=f"{endpoint}/datasets/{repo}"),
        revision_requested=request.revision,
        revision=sha,
        tasks=list(selection.tasks),
        levels=list(selection.levels) if selection.levels else None,
        languages=list(selection.languages) if selection.languages else None,
        files=len(annotation_paths) + len(needed),
        bytes=sum(listing.get(p, 0) for p in [*annotation_paths, *needed]),
        annotations={p: hash_file(root / p) for p in annotation_paths if (root / p).is_file()},
        fingerprint=verified.fingerprint(),
        license=_card_license(root / "README.md"),
        versions=versions(),
        resolved_from="cache" if offline else "hub",
        resolved_at=resolved_at if offline else None,
        verification=Verification.of(len(dataset), checked, problems, probed=request.probe),
    )
    record.write(root)
    return FetchOutcome(record=record, root=root, problems=problems, downloaded_files=hub.downloaded)


def hub_offline() -> bool:
    """Whether huggingface_hub is in offline mode (`HF_HUB_OFFLINE`, read now: it is often set after
    import, e.g. by a job script or by the offline MiniLM judge)."""
    value = os.environ.get("HF_HUB_OFFLINE", "")
    if value.strip().upper() in ("1", "ON", "YES", "TRUE"):
        return True
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _from_cache(
    request: FetchRequest, repo: str, root: Path, previous: FetchRecord | None, selection: Selection
) -> tuple[str, dict[str, int], datetime]:
    """Offline: the sha an earlier fetch into `root` resolved, and the files on disk (path -> size)."""
    wanted = request.revision
    if (
        previous is None
        or previous.suite != request.suite
        or previous.source.repo != repo
        or wanted not in (previous.revision_requested, previous.revision)
    ):
        had = "" if previous is None else f" (it holds {previous.source.repo}@{previous.revision_requested})"
        raise FetchError(
            f"HF_HUB_OFFLINE is set and {root} holds no earlier fetch of {repo}@{wanted}{had}: "
            "fetch it once on a machine with network access (same command, same folder), then run offline"
        )
    missing = [task for task in selection.tasks if task not in previous.tasks]
    missing_languages = [lang for lang in selection.languages or () if lang not in (previous.languages or ())]
    if missing or missing_languages:
        what = ", ".join([*missing, *(f"language {lang}" for lang in missing_languages)])
        raise FetchError(
            f"HF_HUB_OFFLINE is set and {root} was fetched without {what}: fetch them once with network access"
        )
    listing = {
        path.relative_to(root).as_posix(): path.stat().st_size
        for path in root.rglob("*")
        if path.is_file() and ".cache" not in path.relative_to(root).parts
    }
    return previous.revision, listing, previous.resolved_at or previous.fetched_at


def _load(layout: Any, root: Path, selection: Selection, *, check_media: bool) -> Dataset:
    try:
        dataset: Dataset = layout.load(root, selection, check_media)
    except DataError as error:
        raise FetchError(f"the fetched annotation files do not load: {error}") from None
    return dataset


@dataclass
class _Hub:
    """The two huggingface_hub calls a fetch makes, with the Hub's errors turned into advice."""

    repo: str
    endpoint: str
    token: str | bool | None
    root: Path
    workers: int
    progress: bool
    downloaded: int = 0
    #: Offline: the files must already be here; nothing is downloaded.
    offline: bool = False

    def resolve(self, revision: str) -> tuple[str, dict[str, int]]:
        from huggingface_hub import HfApi
        from huggingface_hub.hf_api import RepoFile

        api = HfApi(endpoint=self.endpoint, token=self.token)
        with self._errors(revision):
            found = api.dataset_info(self.repo, revision=revision).sha
            if not found:
                raise FetchError(f"{self.endpoint} did not say which commit {revision!r} is")
            sha: str = found
            listing = {
                entry.path: entry.size
                for entry in api.list_repo_tree(self.repo, repo_type="dataset", revision=sha, recursive=True)
                if isinstance(entry, RepoFile)
            }
        return sha, listing

    def download(self, sha: str, paths: list[str], listing: dict[str, int]) -> None:
        """Download `paths` at commit `sha` into the root (already complete ones are skipped by huggingface_hub).

        `snapshot_download` when the selection collapses to a few patterns; otherwise the same per-file
        download it uses (`hf_hub_download`, same local metadata, same resume) from our own thread pool:
        its pattern filter costs files x patterns fnmatch calls, about a minute for 2,000 scattered clips
        of the 8,000-file ExpVid repo (`benchmarks/hub_patterns.py`).
        """
        if not paths:
            return
        if self.offline:
            absent = [path for path in paths if not (self.root / path).is_file()]
            if absent:
                raise FetchError(
                    f"HF_HUB_OFFLINE is set and {len(absent)} file(s) are not in {self.root} "
                    f"(e.g. {absent[0]}): fetch them once with network access"
                )
            return
        from huggingface_hub.utils import (
            are_progress_bars_disabled,
            disable_progress_bars,
            enable_progress_bars,
        )

        patterns = minimal_patterns(paths, listing)
        was_disabled = are_progress_bars_disabled()
        if not self.progress:
            disable_progress_bars()
        try:
            with self._errors(sha):
                if len(patterns) <= MAX_PATTERNS:
                    self._snapshot(sha, patterns)
                else:
                    self._each(sha, sorted(paths))
        finally:
            if not self.progress and not was_disabled:
                enable_progress_bars()
        self.downloaded += len(paths)

    def _common(self) -> dict[str, Any]:
        return {
            "repo_type": "dataset",
            "local_dir": self.root,
            "cache_dir": self.root / ".cache" / "huggingface" / "hub",
            "endpoint": self.endpoint,
            "token": self.token,
        }

    def _snapshot(self, sha: str, patterns: list[str]) -> None:
        from huggingface_hub import snapshot_download

        snapshot_download(
            self.repo, revision=sha, allow_patterns=patterns, max_workers=self.workers, **self._common()
        )

    def _each(self, sha: str, paths: list[str]) -> None:
        from concurrent.futures import ThreadPoolExecutor

        from huggingface_hub import hf_hub_download
        from huggingface_hub.utils import tqdm

        common = self._common()

        def one(path: str) -> None:
            hf_hub_download(self.repo, path, revision=sha, **common)

        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            futures = [pool.submit(one, path) for path in paths]
            errors = []
            with tqdm(
                total=len(futures), desc=f"Fetching {len(futures)} files", disable=not self.progress
            ) as bar:
                for future in futures:  # every file gets its chance before a failure stops the fetch
                    error = future.exception()
                    if error is not None:
                        errors.append(error)
                    bar.update(1)
        if errors:
            raise errors[0]

    def forget(self, paths: list[str]) -> None:
        """Delete local copies and huggingface_hub's note that they are complete, so they download again."""
        for path in paths:
            (self.root / path).unlink(missing_ok=True)
            (self.root / ".cache" / "huggingface" / "download" / f"{path}.metadata").unlink(missing_ok=True)

    def _errors(self, revision: str) -> _HubErrors:
        return _HubErrors(self, revision)


class _HubErrors:
    """Context manager: huggingface_hub / network exceptions -> `FetchError` with what to do next."""

    def __init__(self, hub: _Hub, revision: str) -> None:
        self.hub = hub
        self.revision = revision

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> Literal[False]:
        if exc is None or isinstance(exc, FetchError):
            return False
        import httpx2
        from huggingface_hub.errors import (
            GatedRepoError,
            HfHubHTTPError,
            LocalEntryNotFoundError,
            OfflineModeIsEnabled,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        repo, endpoint = self.hub.repo, self.hub.endpoint
        page = f"{endpoint}/datasets/{repo}"
        if _xet_failure(exc):
            raise FetchError(
                f"downloading through Xet storage failed ({_first_line(exc)}); files already in {self.hub.root} "
                "are kept: re-run the same command to resume, or set HF_HUB_DISABLE_XET=1 to download the same "
                "files over plain HTTPS (slower, but no Xet endpoint is needed; see docs/hub.md)"
            ) from exc
        if isinstance(exc, OfflineModeIsEnabled) or _offline_error(exc):
            raise FetchError(
                "huggingface_hub is in offline mode (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set): "
                "unset it to download"
            ) from None
        if isinstance(exc, GatedRepoError):
            raise FetchError(
                f"{repo} is gated: accept its conditions at {page} and set HF_TOKEN (or run `hf auth login`)"
            ) from None
        if isinstance(exc, RepositoryNotFoundError):
            raise FetchError(
                f"no dataset {repo} at {endpoint} (a private or gated one needs HF_TOKEN): {page}"
            ) from None
        if isinstance(exc, RevisionNotFoundError):
            raise FetchError(
                f"{repo} has no revision {self.revision!r} (a branch, tag or commit sha)"
            ) from None
        if isinstance(exc, HfHubHTTPError | httpx2.HTTPError | LocalEntryNotFoundError | OSError):
            raise FetchError(
                f"download from {endpoint} interrupted ({type(exc).__name__}: {_first_line(exc)}); "
                f"files already in {self.hub.root} are kept: re-run the same command to resume"
            ) from exc
        return False


def _xet_failure(error: BaseException) -> bool:
    """The error came out of huggingface_hub's Xet download (`xet_get`, the `hf_xet` client): the
    Rust client raises plain RuntimeErrors ("File reconstruction error: CAS Client Error ...")."""
    traceback = error.__traceback__
    while traceback is not None:
        code = traceback.tb_frame.f_code
        if code.co_name == "xet_get" or "hf_xet" in code.co_filename:
            return True
        traceback = traceback.tb_next
    return False


def _offline_error(error: BaseException) -> bool:
    """Offline mode shows up wrapped (e.g. in LocalEntryNotFoundError) when a download is refused."""
    from huggingface_hub.errors import OfflineModeIsEnabled

    seen = 0
    cause: BaseException | None = error
    while cause is not None and seen < 8:
        if isinstance(cause, OfflineModeIsEnabled):
            return True
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return False


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _card_license(readme: Path) -> str | None:
    """The `license:` of a dataset card's YAML header, if there is one."""
    if not readme.is_file():
        return None
    import yaml

    text = readme.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---"):
        return None
    header = text[3:].split("\n---", 1)[0]
    try:
        meta = yaml.safe_load(header)
    except yaml.YAMLError:
        return None
    value = meta.get("license") if isinstance(meta, dict) else None
    return str(value) if value else None
