"""A suite's question files from a GitHub repository (`GitHubRelease`), pinned to a commit.

For a release that is not on the Hub (the suite names the repository and files). The ref (branch,
tag or sha) is resolved to a commit sha through the GitHub API (`GET /repos/{repo}/commits/{ref}`)
and the files are read from raw.githubusercontent.com at that sha, so `fetch.json` names the exact
bytes. `EXPVID_GITHUB_API` / `EXPVID_GITHUB_RAW` point both at a mirror (or the loopback server in
tests); `GITHUB_TOKEN` is sent when set (rate limits). The media are not fetched: the command prints
the suite's note on where to get them, and verifies any already placed where its loader looks.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from expvid.hub.fetch_types import Echo, FetchError, FetchOutcome, FetchRequest, versions
from expvid.hub.record import FetchRecord, SourceInfo, Verification, read_fetch_record
from expvid.hub.verify import check_media, media_files
from expvid.media.cache import hash_file
from expvid.schema import DataError
from expvid.suites.release_layout import GitHubRelease

GITHUB_API = "https://api.github.com"
GITHUB_RAW = "https://raw.githubusercontent.com"


def fetch_github_release(
    request: FetchRequest, suite: Any, release: GitHubRelease, *, echo: Echo = lambda _: None
) -> FetchOutcome:
    """Fetch `release`'s files for `suite` into `request.out` and record what was fetched."""
    import httpx2

    if request.levels or request.languages:
        raise DataError(f"--levels and --language do not apply to {release.label}")
    names = [spec.name for spec in suite.tasks]
    previous = read_fetch_record(request.out) if request.out.is_dir() else None
    wanted = list(request.tasks or names)
    if request.tasks and previous is not None and previous.suite == suite.name:
        wanted = list(dict.fromkeys([*previous.tasks, *wanted]))
    bad = [t for t in wanted if t not in names]
    if bad:
        raise DataError(
            f"unknown {release.label} {release.task_noun}(s) {bad}; {release.task_noun}s are: {', '.join(names)}"
        )
    repo = request.repo_id or release.repo
    api = os.environ.get("EXPVID_GITHUB_API", GITHUB_API).rstrip("/")
    raw = os.environ.get("EXPVID_GITHUB_RAW", GITHUB_RAW).rstrip("/")
    headers = {"Accept": "application/vnd.github+json", "User-Agent": "expvid"}
    if os.environ.get("GITHUB_TOKEN"):
        headers["Authorization"] = f"Bearer {os.environ['GITHUB_TOKEN']}"
    root = request.out.expanduser().resolve()
    root.mkdir(parents=True, exist_ok=True)
    try:
        with httpx2.Client(headers=headers, timeout=60, follow_redirects=True) as client:
            answer = client.get(f"{api}/repos/{repo}/commits/{request.revision}")
            if answer.status_code == 404 or answer.status_code == 422:
                raise FetchError(f"{repo} has no commit, branch or tag {request.revision!r}")
            answer.raise_for_status()
            sha = str(answer.json()["sha"])
            echo(f"{repo} @ {request.revision} -> {sha}")
            total = 0
            for path in release.files:
                response = client.get(f"{raw}/{repo}/{sha}/{path}")
                if response.status_code == 404:
                    raise FetchError(f"{repo}@{sha[:12]} has no {path}")
                response.raise_for_status()
                target = root / Path(path).name
                tmp = target.with_suffix(".tmp")
                tmp.write_bytes(response.content)
                tmp.replace(target)
                total += len(response.content)
    except httpx2.HTTPError as error:
        raise FetchError(f"download from {raw} interrupted ({error}); re-run the same command") from None

    try:
        questions = suite.load(root, tasks=wanted, check_media=False)
    except DataError as error:
        raise FetchError(f"the fetched {release.label} files do not load: {error}") from None
    problems = [str(p) for p in questions.problems]
    referenced = media_files(questions)[0]
    videos = [path for path in referenced if path.is_file()]  # media placed so far
    checked = check_media(root, videos, [], probe=request.probe)
    problems += checked.problems
    note = release.external_media.format(root=root, n=len(referenced))
    record = FetchRecord(
        suite=suite.name,
        source=SourceInfo(kind="github", repo=repo, endpoint=raw, url=f"https://github.com/{repo}"),
        revision_requested=request.revision,
        revision=sha,
        tasks=wanted,
        files=len(release.files),
        bytes=total,
        annotations={Path(p).name: hash_file(root / Path(p).name) for p in release.files},
        fingerprint=questions.fingerprint(),
        license=release.license,
        versions=versions(),
        verification=Verification.of(len(questions), checked, problems, probed=request.probe),
        external_media=note,
    )
    record.write(root)
    echo(note)
    echo(f"{len(videos)} of {len(referenced)} media file(s) already in place")
    return FetchOutcome(record=record, root=root, problems=problems, downloaded_files=len(release.files))
