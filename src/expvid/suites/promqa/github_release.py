"""ProMQA's QA files from its GitHub release (`kimihiroh/promqa`, `data/`), pinned to a commit.

ProMQA is not on the Hub: `data/examples.json` and `data/graphs.json` live in the authors'
repository. The ref (branch, tag or sha) is resolved to a commit sha through the GitHub API
(`GET /repos/{repo}/commits/{ref}`) and the files are read from raw.githubusercontent.com at that
sha, so `fetch.json` names the exact bytes. `EXPVID_GITHUB_API` / `EXPVID_GITHUB_RAW` point both at
a mirror (or the loopback server in tests); `GITHUB_TOKEN` is sent when set (rate limits). The
recordings are CaptainCook4D's and are not fetched: the command prints where to get them, and
verifies any already placed under `videos/`.
"""

from __future__ import annotations

import os
from pathlib import Path

from expvid.hub.fetch import Echo, FetchError, FetchOutcome, FetchRequest, _sha256, _versions
from expvid.hub.record import FetchRecord, SourceInfo, Verification, read_fetch_record
from expvid.hub.verify import check_media, media_files
from expvid.schema import DataError

GITHUB_API = "https://api.github.com"
GITHUB_RAW = "https://raw.githubusercontent.com"
PROMQA_GITHUB = "kimihiroh/promqa"
PROMQA_FILES: tuple[str, ...] = ("data/examples.json", "data/graphs.json")
PROMQA_RECORDINGS = (
    "ProMQA's recordings are CaptainCook4D's and are not redistributed with the QA files. Download them with "
    "https://github.com/CaptainCook4D/downloader (the ProMQA authors use: python download_gopro_data.py "
    "--data2d --resolution4K; see https://captaincook4d.github.io/captain-cook/ for the licence), then put "
    "each recording at {root}/videos/<recording_id>.mp4 (or <recording_id>_4K.mp4, or resolution_4k/). "
    "{n} recording(s) are referenced by the fetched questions."
)


def fetch_promqa(request: FetchRequest, *, echo: Echo = lambda _: None) -> FetchOutcome:
    import httpx2

    from expvid.suites.promqa.loader import load_promqa
    from expvid.suites.promqa.spec import QUESTION_TYPES

    if request.levels or request.languages:
        raise DataError("--levels applies to ExpVid and --language to SFE only")
    names = [name for name, _ in QUESTION_TYPES]
    previous = read_fetch_record(request.out) if request.out.is_dir() else None
    wanted = list(request.tasks or names)
    if request.tasks and previous is not None and previous.suite == "promqa":
        wanted = list(dict.fromkeys([*previous.tasks, *wanted]))
    bad = [t for t in wanted if t not in names]
    if bad:
        raise DataError(f"unknown ProMQA question type(s) {bad}; types are: {', '.join(names)}")
    repo = request.repo_id or PROMQA_GITHUB
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
            for path in PROMQA_FILES:
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
        questions = load_promqa(root, tasks=wanted, check_media=False)
    except DataError as error:
        raise FetchError(f"the fetched ProMQA files do not load: {error}") from None
    problems = [str(p) for p in questions.problems]
    recordings = sorted({str(item.meta.get("recording_id")) for item in questions.items})
    videos = [path for path in media_files(questions)[0] if path.is_file()]  # recordings placed so far
    checked = check_media(root, videos, [], probe=request.probe)
    problems += checked.problems
    note = PROMQA_RECORDINGS.format(root=root, n=len(recordings))
    record = FetchRecord(
        suite="promqa",
        source=SourceInfo(kind="github", repo=repo, endpoint=raw, url=f"https://github.com/{repo}"),
        revision_requested=request.revision,
        revision=sha,
        tasks=wanted,
        files=len(PROMQA_FILES),
        bytes=total,
        annotations={Path(p).name: _sha256(root / Path(p).name) for p in PROMQA_FILES},
        fingerprint=questions.fingerprint(),
        license="Apache-2.0 (CaptainCook4D annotations, human verification); QA pairs generated with GPT-4o",
        versions=_versions(),
        verification=Verification(
            complete=not problems,
            items=len(questions),
            media_present=checked.present,
            media_readable=checked.readable,
            probed=request.probe,
            n_problems=len(problems),
            problems=problems[:50],
        ),
        external_media=note,
    )
    record.write(root)
    echo(note)
    echo(f"{len(videos)} of {len(recordings)} recording(s) already in place")
    return FetchOutcome(record=record, root=root, problems=problems, downloaded_files=len(PROMQA_FILES))
