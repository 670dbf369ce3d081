"""Error types. The CLI maps them to exit codes: InputError -> 2, CandidateRejected -> 1."""


class KernelcraftError(Exception):
    """Base class of all errors kernelcraft raises on purpose."""


class InputError(KernelcraftError):
    """The user's input cannot be used (missing file, bad problem, unknown target)."""


class CandidateRejected(KernelcraftError):
    """A candidate was judged and found wrong; the message is the one-line reason."""
