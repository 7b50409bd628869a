"""A real HTTP server on 127.0.0.1 that speaks the Hugging Face Hub endpoints `huggingface_hub` downloads through.

Why: `expvid data fetch` is tested exactly as it runs against huggingface.co (the real
`snapshot_download`, real sockets, the Hub's status codes, error headers and redirects), never
the network. Point `HF_ENDPOINT` (or `endpoint=`) at `server.url`. Routes, as huggingface_hub 1.x/2.x
calls them:

- `GET /api/datasets/{ns}/{name}[/revision/{rev}]`: repo info; `sha` is the resolved commit.
- `GET /api/datasets/{ns}/{name}/tree/{rev}[/{path}]?recursive=&expand=&cursor=`: the file listing,
  paginated with a `Link: <...>; rel="next"` header like the Hub (`page_size` entries a page).
- `HEAD|GET /datasets/{ns}/{name}/resolve/{rev}/{path}`: small files answer 200 with `ETag` (the git
  blob id), `X-Repo-Commit` and `Content-Length`; LFS files (videos, archives, parquet, images) answer
  302 to a CDN URL on another host name (`localhost`, so huggingface_hub treats it as off-Hub, as it
  does cdn-lfs.hf.co) with `X-Linked-Etag` (sha256), `X-Linked-Size` and `X-Repo-Commit`.
- `GET /cdn/{sha256}`: the bytes, honouring `Range: bytes=N-` with 206 and `Content-Range`.
- Errors carry `X-Error-Code` (`RepoNotFound`, `RevisionNotFound`, `EntryNotFound`, `GatedRepo`).

Revisions are URL-encoded with `safe=""` by the client (`refs%2Fpr%2F1`), so paths are split on the
raw request path, not the decoded one. Faults for tests: `drop_once` (hang up mid-file after N
bytes), `fail` (an HTTP status for the next N downloads of a file), `throttle` (stream a file slowly
so a test can kill the client mid-file). Every request is recorded (`requests`).

Xet (`LoopbackHub(xet=True)`): real releases, ExpVid's included, store their large files in Xet, not
LFS. The Hub then lists them with a `xetHash` in the tree and answers `resolve` with `X-Xet-Hash`
and a `Link: <...xet-read-token/{sha}>; rel="xet-auth"`; huggingface_hub with `hf_xet` installed
fetches a token there (`X-Xet-Cas-Url`, `X-Xet-Access-Token`, `X-Xet-Token-Expiration`) and
downloads the file's chunks from the Xet content-addressed store (CAS) with its own protocol. The
loopback serves the metadata, the token route and, like the Hub, the whole file over plain HTTPS
behind the resolve redirect (what `HF_HUB_DISABLE_XET=1` or a client without `hf_xet` downloads);
it does not implement the CAS protocol (reconstruction terms, compressed xorb chunks): a client
that tries it gets 404 from `/cas/...`, the way an unreachable CAS fails. See docs/hub.md.

A tiny GitHub stand-in is included for releases a suite names on GitHub (`github_release`):
`GET /repos/{owner}/{repo}/commits/{ref}`
(API, returns `{"sha"}`) and `GET /raw/{owner}/{repo}/{ref}/{path}` (raw content).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote

from starlette.types import Receive, Scope, Send

from expvid.fakes.serving import FakeServer, ServerThread

#: Files the Hub stores through LFS in a typical dataset repo's `.gitattributes`.
LFS_SUFFIXES = (".mp4", ".mkv", ".MP4", ".webm", ".zip", ".tar", ".gz", ".parquet", ".png", ".jpg", ".jpeg")


class _Drop(Exception):
    """Raised after part of a body was sent, so uvicorn closes the connection mid-file."""


class _DropFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, _Drop)


logging.getLogger("uvicorn.error").addFilter(_DropFilter())


def git_blob_id(data: bytes) -> str:
    """The git object id of a blob: sha1 over "blob <size>\\0" + content (what the Hub's `oid` is)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def lfs_pointer(data: bytes) -> bytes:
    """The git-lfs pointer file the Hub keeps in git for an LFS-tracked file."""
    oid = hashlib.sha256(data).hexdigest()
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {len(data)}\n".encode()


@dataclass(frozen=True)
class HubFile:
    path: str
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def xet_hash(self) -> str:
        """A stand-in for the file's Xet hash (64 hex digits, as the Hub lists; not the real merkle hash)."""
        return hashlib.sha256(b"xet\0" + self.data).hexdigest()

    def tree_entry(self, xet: bool = False) -> dict[str, Any]:
        if not self.lfs:
            return {"type": "file", "oid": git_blob_id(self.data), "size": len(self.data), "path": self.path}
        pointer = lfs_pointer(self.data)
        entry = {
            "type": "file",
            "oid": git_blob_id(pointer),
            "size": len(self.data),
            "path": self.path,
            "lfs": {"oid": self.sha256, "size": len(self.data), "pointerSize": len(pointer)},
        }
        if xet:
            entry["xetHash"] = self.xet_hash
        return entry


@dataclass
class _Repo:
    repo_id: str
    refs: dict[str, str] = field(default_factory=dict)  # branch or tag -> commit sha
    commits: dict[str, dict[str, HubFile]] = field(default_factory=dict)
    gated_token: str | None = None


@dataclass(frozen=True)
class RecordedHubRequest:
    method: str
    path: str
    range: str | None
    status: int
    authorization: str | None


@dataclass
class _Fault:
    kind: str  # "drop" | "fail" | "throttle"
    remaining: int
    after_bytes: int = 0
    status: int = 500
    chunk: int = 0
    delay_s: float = 0.0


class LoopbackHub(FakeServer):
    """A loopback Hub; use as a context manager or call start() / stop()."""

    def __init__(self, *, host: str = "127.0.0.1", page_size: int = 1000, xet: bool = False) -> None:
        self.host = host
        self.page_size = page_size
        #: Large files announced as Xet-backed (see the module docstring).
        self.xet = xet
        self.port = 0
        self._repos: dict[str, _Repo] = {}
        self._github: dict[str, dict[str, dict[str, bytes]]] = {}  # owner/repo -> sha -> path -> bytes
        self._github_refs: dict[str, dict[str, str]] = {}
        self._faults: dict[str, list[_Fault]] = {}
        self._lock = threading.Lock()
        self._requests: list[RecordedHubRequest] = []
        self._bytes_sent: dict[str, int] = {}

    # -- content -----------------------------------------------------------------------------------

    def commit(
        self,
        repo_id: str,
        files: dict[str, bytes | Path],
        *,
        branch: str = "main",
        delete: tuple[str, ...] = (),
        gated_token: str | None = None,
    ) -> str:
        """Add `files` on top of `branch` (created if new) as one commit; returns the commit sha."""
        with self._lock:
            repo = self._repos.setdefault(repo_id, _Repo(repo_id))
            if gated_token is not None:
                repo.gated_token = gated_token
            parent = repo.refs.get(branch)
            tree = dict(repo.commits[parent]) if parent else {}
            for path in delete:
                tree.pop(path, None)
            for path, content in files.items():
                data = content.read_bytes() if isinstance(content, Path) else content
                tree[path] = HubFile(path, data, path.endswith(LFS_SUFFIXES))
            digest = hashlib.sha1(f"{repo_id}\n{parent}\n".encode(), usedforsecurity=False)
            for path in sorted(tree):
                digest.update(f"{path}\0{tree[path].sha256}\n".encode())
            sha = digest.hexdigest()
            repo.commits[sha] = tree
            repo.refs[branch] = sha
            return sha

    def tag(self, repo_id: str, name: str, sha: str) -> None:
        with self._lock:
            self._repos[repo_id].refs[name] = sha

    def github_commit(self, repo: str, files: dict[str, bytes], *, branch: str = "main") -> str:
        """A commit of a GitHub repository (owner/name) for the raw-file routes; returns its sha."""
        with self._lock:
            digest = hashlib.sha1(repo.encode(), usedforsecurity=False)
            for path in sorted(files):
                digest.update(f"{path}\0{hashlib.sha256(files[path]).hexdigest()}\n".encode())
            sha = digest.hexdigest()
            self._github.setdefault(repo, {})[sha] = dict(files)
            self._github_refs.setdefault(repo, {})[branch] = sha
            return sha

    # -- faults and inspection -------------------------------------------------------------------

    def drop_once(self, path: str, after_bytes: int) -> None:
        """The next download of `path` sends `after_bytes` bytes, then the connection is closed."""
        self._add_fault(path, _Fault("drop", 1, after_bytes=after_bytes))

    def fail(self, path: str, status: int = 500, times: int = 1) -> None:
        """The next `times` downloads of `path` (its content GET) answer `status`."""
        self._add_fault(path, _Fault("fail", times, status=status))

    def throttle(self, path: str, chunk: int, delay_s: float) -> None:
        """Every download of `path` streams `chunk` bytes at a time with `delay_s` between chunks."""
        self._add_fault(path, _Fault("throttle", 1_000_000, chunk=chunk, delay_s=delay_s))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def _add_fault(self, path: str, fault: _Fault) -> None:
        with self._lock:
            self._faults.setdefault(path, []).append(fault)

    @property
    def requests(self) -> list[RecordedHubRequest]:
        with self._lock:
            return list(self._requests)

    def reset_requests(self) -> None:
        with self._lock:
            self._requests.clear()
            self._bytes_sent.clear()

    def bytes_sent(self, path: str) -> int:
        """Content bytes sent for repo file `path` since start or `reset_requests()`."""
        with self._lock:
            return self._bytes_sent.get(path, 0)

    @property
    def cdn_url(self) -> str:
        """The same server under another host name, so the client sees an off-Hub redirect."""
        return f"http://localhost:{self.port}"

    #: GitHub's API is served at the root.
    github_api_url = FakeServer.url

    @property
    def github_raw_url(self) -> str:
        return f"{self.url}/raw"

    # -- lifecycle ---------------------------------------------------------------------------------

    def _server_thread(self) -> ServerThread:
        return ServerThread(
            self._app,
            host=self.host,
            name="loopback hub",
            log_level="critical",
            interface="asgi3",
            force_exit=True,
        )

    # -- the ASGI app ------------------------------------------------------------------------------

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        raw = scope.get("raw_path") or scope["path"].encode()
        path = raw.decode("latin-1").split("?", 1)[0]
        segments = [unquote(s) for s in path.strip("/").split("/")]
        query = parse_qs(scope.get("query_string", b"").decode())
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        method = scope["method"]
        reply = _Reply(send)
        try:
            if segments[:2] == ["api", "datasets"] and len(segments) >= 4:
                await self._api(segments[2:], query, headers, reply)
            elif segments[:1] == ["datasets"] and len(segments) >= 6 and segments[3] == "resolve":
                await self._resolve(method, segments[1:], headers, reply)
            elif segments[:1] == ["cdn"] and len(segments) == 3:
                await self._cdn(method, segments[1], segments[2], headers, reply)
            elif segments[:1] == ["repos"] and len(segments) == 5 and segments[3] == "commits":
                await self._github_commit(f"{segments[1]}/{segments[2]}", segments[4], reply)
            elif segments[:1] == ["raw"] and len(segments) >= 5:
                await self._github_raw(segments[1:], reply)
            else:
                await reply.error(404, "RepoNotFound", "no such route")
        finally:
            label = reply.label or path
            with self._lock:
                self._requests.append(
                    RecordedHubRequest(
                        method, label, headers.get("range"), reply.status, headers.get("authorization")
                    )
                )

    def _repo_commit(self, ns_name: list[str], revision: str) -> tuple[_Repo | None, str | None]:
        repo = self._repos.get("/".join(ns_name))
        if repo is None:
            return None, None
        if revision in repo.commits:
            return repo, revision
        return repo, repo.refs.get(revision)

    async def _api(
        self, rest: list[str], query: dict[str, list[str]], headers: dict[str, str], reply: _Reply
    ) -> int:
        ns_name, tail = rest[:2], rest[2:]
        revision = "main"
        if (tail[:1] == ["revision"] and len(tail) == 2) or (tail[:1] == ["tree"] and len(tail) >= 2):
            revision = tail[1]
        elif tail[:1] == ["xet-read-token"] and len(tail) == 2 and self.xet:
            expires = int(time.time()) + 3600
            token = {"accessToken": "xet-loopback-token", "exp": expires, "casUrl": f"{self.url}/cas"}
            return await reply.json(
                200,
                token,
                {
                    "x-xet-cas-url": f"{self.url}/cas",
                    "x-xet-access-token": "xet-loopback-token",
                    "x-xet-token-expiration": str(expires),
                },
            )
        elif tail:
            return await reply.error(404, "RepoNotFound", "no such route")
        repo, sha = self._repo_commit(ns_name, revision)
        if repo is None:
            return await reply.error(
                404 if headers.get("authorization") else 401, "RepoNotFound", "Repository not found"
            )
        if sha is None:
            return await reply.error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        files = repo.commits[sha]
        if tail[:1] == ["tree"]:
            prefix = "/".join(tail[2:])
            return await self._tree(repo, sha, files, prefix, query, reply)
        info = {
            "_id": hashlib.md5(repo.repo_id.encode(), usedforsecurity=False).hexdigest()[:24],
            "id": repo.repo_id,
            "author": repo.repo_id.split("/")[0],
            "sha": sha,
            "lastModified": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "private": False,
            "gated": "manual" if repo.gated_token else False,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "siblings": [{"rfilename": p} for p in sorted(files)],
            "createdAt": "2025-10-01T00:00:00.000Z",
            "usedStorage": sum(len(f.data) for f in files.values()),
        }
        return await reply.json(200, info)

    async def _tree(
        self,
        repo: _Repo,
        sha: str,
        files: dict[str, HubFile],
        prefix: str,
        query: dict[str, list[str]],
        reply: _Reply,
    ) -> int:
        recursive = query.get("recursive", ["false"])[0].lower() == "true"
        base = f"{prefix}/" if prefix else ""
        if prefix and not any(p.startswith(base) for p in files):
            return await reply.error(404, "EntryNotFound", f"{prefix} does not exist on {sha}")
        entries: dict[str, dict[str, Any]] = {}
        for path in sorted(files):
            if not path.startswith(base):
                continue
            rest = path[len(base) :].split("/")
            for depth in range(1, len(rest)):  # the folders on the way
                folder = base + "/".join(rest[:depth])
                if recursive or depth == 1:
                    entries.setdefault(
                        folder,
                        {"type": "directory", "oid": git_blob_id(folder.encode()), "size": 0, "path": folder},
                    )
            if recursive or len(rest) == 1:
                entries[path] = files[path].tree_entry(xet=self.xet)
        listing = [entries[key] for key in sorted(entries)]
        start = int(query.get("cursor", ["0"])[0])
        page = listing[start : start + self.page_size]
        extra = {}
        if start + self.page_size < len(listing):
            tree = f"{self.url}/api/datasets/{repo.repo_id}/tree/{quote(sha, safe='')}" + (
                f"/{quote(prefix, safe='')}" if prefix else ""
            )
            flag = "True" if recursive else "False"
            extra["link"] = (
                f'<{tree}?recursive={flag}&expand=False&cursor={start + self.page_size}>; rel="next"'
            )
        return await reply.json(200, page, extra)

    async def _resolve(self, method: str, rest: list[str], headers: dict[str, str], reply: _Reply) -> int:
        ns_name, revision, path = rest[:2], rest[3], "/".join(rest[4:])
        repo, sha = self._repo_commit(ns_name, revision)
        if repo is None:
            return await reply.error(401, "RepoNotFound", "Repository not found")
        if repo.gated_token and headers.get("authorization") != f"Bearer {repo.gated_token}":
            return await reply.error(
                403,
                "GatedRepo",
                f"Access to dataset {repo.repo_id} is restricted. You must have access to it.",
            )
        if sha is None:
            return await reply.error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        file = repo.commits[sha].get(path)
        common = {"x-repo-commit": sha}
        if file is None:
            return await reply.error(404, "EntryNotFound", "Entry not found", common)
        reply.label = f"/datasets/{repo.repo_id}/resolve/{revision}#{path}"
        if file.lfs:
            location = f"{self.cdn_url}/cdn/{file.sha256}/{quote(path, safe='')}"
            redirect = {
                **common,
                "location": location,
                "x-linked-etag": f'"{file.sha256}"',
                "x-linked-size": str(len(file.data)),
                "etag": f'"{git_blob_id(lfs_pointer(file.data))}"',
            }
            if self.xet:
                token_route = f"{self.url}/api/datasets/{repo.repo_id}/xet-read-token/{sha}"
                redirect["x-xet-hash"] = file.xet_hash
                redirect["link"] = f'<{token_route}>; rel="xet-auth"'
            return await reply.bytes(302, b"", redirect, head=method == "HEAD")
        meta = {**common, "etag": f'"{git_blob_id(file.data)}"'}
        if method == "HEAD":
            return await reply.bytes(200, b"", {**meta, "content-length": str(len(file.data))}, head=True)
        return await self._serve(path, file.data, headers, reply, meta)

    async def _cdn(
        self, method: str, sha256: str, quoted_path: str, headers: dict[str, str], reply: _Reply
    ) -> int:
        path = unquote(quoted_path)
        reply.label = f"/cdn#{path}"
        for repo in self._repos.values():
            for files in repo.commits.values():
                file = files.get(path)
                if file is not None and file.sha256 == sha256:
                    if method == "HEAD":
                        return await reply.bytes(200, b"", {"content-length": str(len(file.data))}, head=True)
                    return await self._serve(path, file.data, headers, reply, {"etag": f'"{sha256}"'})
        return await reply.bytes(404, b"not found", {})

    async def _serve(
        self, path: str, data: bytes, headers: dict[str, str], reply: _Reply, extra: dict[str, str]
    ) -> int:
        fault = self._take_fault(path)
        if fault is not None and fault.kind == "fail":
            return await reply.error(fault.status, "", f"injected {fault.status}")
        start = 0
        status = 200
        out = {**extra, "accept-ranges": "bytes", "content-type": "application/octet-stream"}
        spec = headers.get("range", "")
        if spec.startswith("bytes=") and spec[6:].endswith("-") and spec[6:-1].isdigit():
            start = int(spec[6:-1])
            if start >= len(data):
                return await reply.bytes(416, b"", {"content-range": f"bytes */{len(data)}"})
            status = 206
            out["content-range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        body = data[start:]
        out["content-length"] = str(len(body))
        await reply.start(status, out)
        if fault is not None and fault.kind == "drop":
            await reply.body(body[: fault.after_bytes], more=True)
            self._count(path, min(fault.after_bytes, len(body)))
            raise _Drop(f"loopback hub dropped {path} after {fault.after_bytes} bytes")
        if fault is not None and fault.kind == "throttle":
            for offset in range(0, len(body), fault.chunk):
                piece = body[offset : offset + fault.chunk]
                await reply.body(piece, more=offset + fault.chunk < len(body))
                self._count(path, len(piece))
                await asyncio.sleep(fault.delay_s)
            return status
        await reply.body(body, more=False)
        self._count(path, len(body))
        return status

    def _count(self, path: str, n: int) -> None:
        with self._lock:
            self._bytes_sent[path] = self._bytes_sent.get(path, 0) + n

    def _take_fault(self, path: str) -> _Fault | None:
        with self._lock:
            queue = self._faults.get(path, [])
            while queue and queue[0].remaining <= 0:
                queue.pop(0)
            if not queue:
                return None
            fault = queue[0]
            fault.remaining -= 1
            return fault

    async def _github_commit(self, repo: str, ref: str, reply: _Reply) -> int:
        sha = self._github_refs.get(repo, {}).get(ref) or (ref if ref in self._github.get(repo, {}) else None)
        if sha is None:
            return await reply.json(404, {"message": "No commit found for SHA: " + ref})
        return await reply.json(200, {"sha": sha, "commit": {"message": "loopback"}})

    async def _github_raw(self, rest: list[str], reply: _Reply) -> int:
        repo, ref, path = f"{rest[0]}/{rest[1]}", rest[2], "/".join(rest[3:])
        sha = self._github_refs.get(repo, {}).get(ref) or ref
        data = self._github.get(repo, {}).get(sha, {}).get(path)
        if data is None:
            return await reply.bytes(404, b"404: Not Found", {"content-type": "text/plain"})
        return await reply.bytes(200, data, {"content-type": "text/plain; charset=utf-8"})


class _Reply:
    """Sends one ASGI response and remembers its status for the request log."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.status = 0
        self.label: str | None = None

    async def start(self, status: int, headers: dict[str, str]) -> None:
        self.status = status
        encoded = [(k.encode(), v.encode()) for k, v in headers.items()]
        await self._send({"type": "http.response.start", "status": status, "headers": encoded})

    async def body(self, data: bytes, *, more: bool) -> None:
        await self._send({"type": "http.response.body", "body": data, "more_body": more})

    async def bytes(self, status: int, data: bytes, headers: dict[str, str], *, head: bool = False) -> int:
        out = dict(headers)
        out.setdefault("content-length", str(len(data)))
        await self.start(status, out)
        await self.body(b"" if head else data, more=False)
        return status

    async def json(self, status: int, payload: Any, extra: dict[str, str] | None = None) -> int:
        data = json.dumps(payload).encode()
        return await self.bytes(status, data, {"content-type": "application/json", **(extra or {})})

    async def error(self, status: int, code: str, message: str, extra: dict[str, str] | None = None) -> int:
        headers = {"x-error-message": message, **(extra or {})}
        if code:
            headers["x-error-code"] = code
        return await self.json(status, {"error": message}, headers)
