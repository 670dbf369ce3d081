"""Error types. The CLI maps them to exit codes: InputError -> 2, CandidateRejected -> 1."""


class KernelcraftError(Exception):
    """Base class of all errors kernelcraft raises on purpose."""


class InputError(KernelcraftError):
    """The user's input cannot be used (missing file, bad problem, unknown target)."""


class CandidateRejected(KernelcraftError):
    """A candidate was judged and found wrong; the message is the one-line reason."""


def one_line(exc: BaseException) -> str:
    """An exception as one line for a report or a message: its type and first line."""
    msg = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {msg[0] if msg else ''}".rstrip(": ")
