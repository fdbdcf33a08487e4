"""Checking a ``device`` argument against the devices this machine has.

Internal surface (for :mod:`fairot.torch`'s trainer and estimator): ``check_device``,
``MSG_DEVICE``.
"""

from __future__ import annotations

import torch

MSG_DEVICE = (
    "device must be 'cpu', 'cuda', 'cuda:N' with 0 <= N < torch.cuda.device_count() (CUDA "
    "devices need torch.cuda.is_available()), 'mps' (when torch.backends.mps.is_available()) "
    "or a torch.device of these; got {value!r}{reason}. On this machine: "
    "torch.cuda.is_available()={cuda}, torch.cuda.device_count()={count}, "
    "torch.backends.mps.is_available()={mps}."
)


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def check_device(device) -> torch.device:
    """The ``torch.device`` that ``device`` names, or an error saying what this machine offers.

    Parameters
    ----------
    device : str or torch.device
        ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"mps"``, or a ``torch.device`` of these.

    Returns
    -------
    torch.device

    Raises
    ------
    TypeError
        If ``device`` is neither a string nor a ``torch.device``.
    ValueError
        If it names a device type other than cpu, cuda and mps, a CUDA device without CUDA or
        past ``torch.cuda.device_count()``, or MPS where it is not available.
    """
    # Asked before anything touches CUDA: torch's own errors for a missing GPU are an
    # AssertionError deep in its lazy initialisation, which names neither the argument nor
    # what the machine has.
    cuda = torch.cuda.is_available()
    count = torch.cuda.device_count() if cuda else 0
    mps = _mps_available()

    def error(reason: str, kind: type[Exception] = ValueError) -> Exception:
        return kind(MSG_DEVICE.format(value=device, reason=reason, cuda=cuda, count=count, mps=mps))

    # An integer is refused: torch.device(0) would silently mean "cuda:0".
    if isinstance(device, str):
        try:
            resolved = torch.device(device)
        except (RuntimeError, ValueError):
            raise error(" (not a device torch knows)") from None
    elif isinstance(device, torch.device):
        resolved = device
    else:
        raise error(f" (of type {type(device).__name__})", TypeError)
    if resolved.type == "cpu":
        if resolved.index not in (None, 0):
            raise error(" (the CPU has index 0 only)")
    elif resolved.type == "cuda":
        if not cuda:
            raise error(" (CUDA is not available)")
        if resolved.index is not None and resolved.index >= count:
            raise error(f" (CUDA device {resolved.index} does not exist)")
    elif resolved.type == "mps":
        if not mps:
            raise error(" (MPS is not available)")
        if resolved.index not in (None, 0):
            raise error(" (MPS has index 0 only)")
    else:
        raise error(f" (device type {resolved.type!r} is not supported)")
    return resolved
