"""The two exception families of aliasfuzz.

* :class:`InvalidArgument` is a user's mistake (a bad flag, a malformed program or corpus
  entry, an unknown pipeline). The CLI turns it into a one-line message and exit code 2.
* :class:`GenerationFailure` is a retriable failure of the generator (a draw that cannot
  be completed); strategies reject the example and Hypothesis tries another.

Anything else raised inside aliasfuzz is an internal bug and is never swallowed. Failures
of the systems under test are data (verdicts), not exceptions.
"""

import os


def clip(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` characters at a word boundary, ``...`` marking the
    cut (a headline that stopped mid-word, "requiring a storage s...", read as a typo:
    fresh user 32's B7); a word longer than most of the width is cut where it stands."""
    if len(text) <= width:
        return text
    cut = text[: max(width - 3, 0)]
    space = cut.rfind(" ")
    if space >= width * 0.6:
        cut = cut[:space]
    return cut.rstrip(" .,;:(") + "..."


def message(e: BaseException) -> str:
    """``str(e)`` without a leading repetition of its own type's name: TorchScript's
    interpreter re-raises ``RuntimeError("RuntimeError: ...")``, which printed as
    ``RuntimeError: RuntimeError: ...`` (fresh user 32's B7)."""
    text = str(e)
    prefix = f"{type(e).__name__}: "
    while text.lstrip().startswith(prefix):
        text = text.lstrip()[len(prefix):]
    return text


def one_line(e: BaseException, limit: int | None = None) -> str:
    """``"ErrorType: message"`` on one line for reports and explanations: the message's first
    non-empty line, joined with the next one when the first only introduces it (Dynamo's
    ``BackendCompilerFailed: backend='...' raised:`` puts the backend's own error on the
    following line); the message part cut to ``limit`` characters when given."""
    lines = [ln.strip() for ln in message(e).splitlines() if ln.strip()]
    text = ""
    if lines:
        two = lines[0].endswith(":") and len(lines) > 1
        text = f"{lines[0]} {lines[1]}" if two else lines[0]
        if len(lines) > 1 + two:
            text = _closed(text)
    return f"{type(e).__name__}: {clip(text, limit) if limit is not None else text}"


_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def _closed(text: str) -> str:
    """``text``, the first line of a longer message, with the brackets it leaves open closed
    by ``...``: Inductor's ``make_reindexer NYI on DtypeView(`` continues with a many-line
    IR dump, and a title that ended on the bare ``(`` read as cut by accident (fresh user
    47's B10); it reads ``DtypeView(...)``."""
    stack: list[str] = []
    for ch in text:
        if ch in _CLOSERS:
            stack.append(_CLOSERS[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
    return text + "..." + "".join(reversed(stack)) if stack else text


def not_a_folder(p: str | os.PathLike[str]) -> str:
    """The one-line error for ``p``, given where a corpus entry or corpus folder is
    expected: a file of an entry (``corpus/<id>/meta.json``) is named as such (fresh user 33
    read "no such corpus entry" of a file that exists). Imports no torch."""
    if os.path.exists(p):
        return f"{p}: is a file, not a folder; give the entry's folder ({os.path.dirname(p) or '.'})"
    return f"{p}: no such corpus entry or corpus folder"


class InvalidArgument(ValueError):
    """A user's mistake: bad input that aliasfuzz refuses with a clear one-line message."""


class GenerationFailure(Exception):
    """A generator draw that cannot be completed; retried, never reported."""
