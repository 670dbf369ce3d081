"""kernelcraft: PyTorch programs to verified, tuned Triton kernels."""

from kernelcraft.errors import CandidateRejected, InputError, KernelcraftError

__version__ = "0.1.0"

__all__ = ["CandidateRejected", "InputError", "KernelcraftError", "__version__"]
