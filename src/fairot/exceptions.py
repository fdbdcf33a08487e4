"""Errors that fairot raises for its own failure kinds (the bottom floor: imports nothing).

- :class:`UntrustedModelError` — a saved model holds types that :func:`fairot.load_model` will
  not construct (anything outside fairot's own classes and the scikit-learn/NumPy types that
  fairot models contain).
"""

__all__ = ["UntrustedModelError"]


class UntrustedModelError(ValueError):
    """A model file lists types that are not allowed to be loaded.

    Attributes
    ----------
    types : list of str
        The offending type names, as the file lists them.
    """

    def __init__(self, message: str, types: list[str]) -> None:
        super().__init__(message)
        self.types = list(types)
