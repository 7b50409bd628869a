"""What services raise; the web layer maps each to one HTTP status."""

from __future__ import annotations

from dataclasses import dataclass


class PlatformError(Exception):
    """Base class of the platform's expected failures."""


class NotFound(PlatformError):
    """No such object *for this user*: items of other annotators are reported as missing, not
    forbidden, so that guessing ids reveals nothing."""


class Forbidden(PlatformError):
    """The user's role does not allow this action."""


class InvalidInput(PlatformError):
    """The submitted data breaks a rule; every problem is listed for the form.

    `code` names a kind of problem a client can act on (e.g. "cannot_rebuild": the step-list
    correction is fine but leaves this question impossible, so the right outcome is to reject it
    and keep the correction).
    """

    def __init__(self, problems: list[str], *, code: str | None = None) -> None:
        self.problems = problems
        self.code = code
        super().__init__("; ".join(problems))


class Conflict(PlatformError):
    """The item changed since the user loaded it (optimistic locking) or is no longer open."""

    def __init__(self, message: str, *, current_version: int | None = None) -> None:
        self.current_version = current_version
        super().__init__(message)


@dataclass(frozen=True)
class Actor:
    """Who is acting: a signed-in user, or the system (imports, CLI, automatic settlement)."""

    id: int | None
    name: str
    role: str
    disciplines: tuple[str, ...] = ()

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


SYSTEM = Actor(id=None, name="system", role="admin")
