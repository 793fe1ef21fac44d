"""``aliasfuzz check FILE``: judge a case-format file per pipeline (exit codes: :mod:`.cli`).

One line per pipeline (its verdict, whether the ``expect`` block holds, the failed check,
the explanation). The pipelines are ``--pipelines``, else those of the ``expect`` block:
with ``--pipelines`` the file needs none, and a pipeline without an ``expect`` line gives
its verdict alone, which never makes ``check`` exit 1 (nothing is contradicted).
``--repro DIR`` writes a standalone ``repro.py`` per finding (:mod:`._repro_case`). Every
problem with the file is one line and exit 2, and so is a hang (:func:`_watchdog`).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from pathlib import Path

from aliasfuzz.campaign.cli import _add_plugin_flag, activate_plugins
from aliasfuzz.errors import InvalidArgument

__all__ = ["add_parser", "load_checked_case"]


def _user_error(path: Path, what: str, e: BaseException) -> InvalidArgument:
    text = str(e).strip().splitlines()
    return InvalidArgument(
        f"{path}: {what} raised {type(e).__name__}" + (f": {text[0]}" if text else "")
    )


def _case_path(path: str) -> Path:
    """``path`` as a case file that exists; :class:`InvalidArgument` for a folder or a
    missing file (no torch needed to say so)."""
    p = Path(path)
    if p.is_dir():
        raise InvalidArgument(f"{p}: is a directory, not a case file")
    if not p.is_file():
        raise InvalidArgument(f"{p}: no such case file")
    return p


def load_checked_case(path: str, expect_block: bool = True):
    """Load the case file ``path`` up front for ``check``; every problem one line naming it.

    Raises :class:`InvalidArgument` for a directory or missing file, a file that is not
    UTF-8 Python or not in the case format (one without an ``expect:`` block is, when
    ``expect_block`` is false: ``--pipelines`` names the pipelines), and for any exception
    (``SystemExit`` included) raised by the file at import or by its ``inputs()``: the case
    is the user's code, so its errors are the user's, not a contradicted ``expect`` (exit 1).
    """
    p = _case_path(path)
    from aliasfuzz.oracle.cases import load_case, parse_header
    try:
        parse_header(p.read_text(encoding="utf-8"), expect_block)
    except UnicodeDecodeError:
        raise InvalidArgument(f"{p}: not UTF-8 text") from None
    except InvalidArgument as e:
        raise InvalidArgument(f"{p}: {e}") from None
    try:
        case = load_case(p, expect_block)
    except InvalidArgument:
        raise
    except (Exception, SystemExit) as e:
        raise _user_error(p, "importing it", e) from None
    if hasattr(case.module, "inputs"):  # absent: a cuda case without a GPU (skipped)
        try:
            case.module.inputs()
        except (Exception, SystemExit) as e:
            raise _user_error(p, "its inputs()", e) from None
    return case


def _pipelines(text: str | None) -> list[str] | None:
    """``--pipelines`` as a list, None when not given (the ``expect`` block's then).

    Raises :class:`InvalidArgument` (one line, as ``run`` says it) for an empty item or an
    unknown pipeline, naming it and the known ones; torch is not imported for it.
    """
    if not text:
        return None
    from aliasfuzz.campaign.options import BUILTIN_PIPELINES, _split, _unknown_pipeline

    names = list(_split(text, "--pipelines"))
    for name in names:
        # it was the case file's error, "no 'expect:' block" or "unknown pipeline" without
        # the known ones, after the case had been imported (a fresh user's B4)
        unknown = _unknown_pipeline(name, BUILTIN_PIPELINES)
        if unknown:
            raise InvalidArgument(unknown)
    return names


#: the real ``os._exit``: :func:`_no_exit` replaces it while the user's case runs
_EXIT = os._exit


@contextlib.contextmanager
def _no_exit(path: str):
    """While the user's case file is imported and judged, ``os._exit`` raises instead of
    ending the process: a case that called ``os._exit(0)`` at import made ``check`` print
    nothing and exit 0, as if judged (fresh user 49's B7). Raises
    :class:`InvalidArgument` (one line, exit 2) naming the call."""
    def refuse(code: int = 0) -> None:
        raise InvalidArgument(f"{path}: the case called os._exit({code}); a case file must "
                              "not end the process that judges it")

    os._exit = refuse
    try:
        yield
    finally:
        os._exit = _EXIT


def _cmd_check(args) -> int:
    pipelines = _pipelines(args.pipelines)  # first: whatever the file is, the name is wrong
    _case_path(args.file)  # before torch is imported: seconds on a busy host
    if args.repro is not None:
        from aliasfuzz.campaign.options import check_writable_dir

        check_writable_dir(args.repro, "--repro")
    from aliasfuzz.campaign import _judge

    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise InvalidArgument("--timeout must be a finite number > 0 of seconds")
    cancel = _watchdog(args.timeout, f"check of {args.file} did not finish within "
                       f"{args.timeout:g} s (a hang at import or in a pipeline)")
    try:
        activate_plugins(args.plugin or ())
        with _no_exit(args.file):
            case = load_checked_case(args.file, expect_block=pipelines is None)
            rows = _judge.judge_case(args.file, pipelines)
    finally:
        cancel()  # check also runs inside other processes (tests): never fire later
    bad = 0
    for r in rows:
        exp, got = r.get("expected"), r["verdict"]
        if got == "skipped" or exp is None:
            mark = ""
        elif exp == got:
            mark = " (as expected)"
        else:
            mark = f" (CONTRADICTS expect: {exp})"
            bad += 1
        # the check's name, as run's finding lines and the README's tables say it
        check = f" check={r['check']}" if got != "ok" and r.get("check") else ""
        print(f"{r['pipeline']}: {got}{mark}{check} {r.get('explanation', '')}".rstrip())
    if args.repro is not None:
        _write_case_repros(args.file, case, rows, Path(args.repro))
    return 1 if bad else 0


#: Verdicts of ``check`` that are no finding: nothing to reproduce.
_NO_REPRO = ("ok", "skipped", "unknown", "unsupported", "invalid-program")


def _write_case_repros(path: str, case, rows: list[dict], out: Path) -> None:
    """``<out>/<case>-<pipeline>/repro.py`` for each row whose verdict is a finding, with
    the corpus's renderer (:mod:`aliasfuzz.campaign._repro_case`); one line each, saying
    where, or why there is none."""
    from aliasfuzz.campaign._repro_case import render_case_repro

    for r in rows:
        if r["verdict"] in _NO_REPRO:
            continue
        text = render_case_repro(path, case, r)
        if text is None:
            print(f"repro: none for {r['pipeline']} ({r['verdict']}, check {r.get('check')}): "
                  "the corpus's renderer cannot show it from a case file; the case file "
                  f"itself reproduces it: aliasfuzz check {path} --pipelines {r['pipeline']}")
            continue
        folder = out / f"{Path(path).stem}-{r['pipeline']}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "repro.py").write_text(text)
        print(f"repro: {folder / 'repro.py'}")


def _watchdog(seconds: float, message: str):
    """End this process with ``message`` and exit 2 after ``seconds``: a user's case that
    hangs (at import, or in a pipeline) must not hang ``check``. A daemon timer prints the
    one-line error; faulthandler, whose watchdog needs no GIL, backs it up a little later
    for a hang inside C code that holds the GIL (it dumps the stacks and exits 1)."""
    import faulthandler
    import threading

    def fire() -> None:
        print(f"aliasfuzz: error: {message}", file=sys.stderr, flush=True)
        _EXIT(2)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        faulthandler.dump_traceback_later(seconds + 10, exit=True, file=sys.__stderr__)
    except (AttributeError, OSError, ValueError):  # no real stderr (e.g. captured): timer only
        pass

    def cancel() -> None:
        timer.cancel()
        faulthandler.cancel_dump_traceback_later()

    return cancel


def add_parser(sub) -> None:
    p = sub.add_parser("check", help="judge a case-format .py file per pipeline")
    p.add_argument("file", help="a file in the shared/cases format")
    p.add_argument("--pipelines", help="comma list (default: those in its expect block; "
                   "given, the file needs none)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds for the whole check (600); a hang is a one-line error, exit 2")
    p.add_argument("--repro", metavar="DIR",
                   help="write DIR/<case>-<pipeline>/repro.py for each finding, a standalone "
                   "script as a corpus entry's (exit 1 while the bug shows, 0 fixed)")
    _add_plugin_flag(p)
    p.set_defaults(func=_cmd_check)
