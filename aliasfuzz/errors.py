"""The two exception families of aliasfuzz.

* :class:`InvalidArgument` is a user's mistake (a bad flag, a malformed program or corpus
  entry, an unknown pipeline). The CLI turns it into a one-line message and exit code 2.
* :class:`GenerationFailure` is a retriable failure of the generator (a draw that cannot
  be completed); strategies reject the example and Hypothesis tries another.

Anything else raised inside aliasfuzz is an internal bug and is never swallowed. Failures
of the systems under test are data (verdicts), not exceptions.
"""


class InvalidArgument(ValueError):
    """A user's mistake: bad input that aliasfuzz refuses with a clear one-line message."""


class GenerationFailure(Exception):
    """A generator draw that cannot be completed; retried, never reported."""
