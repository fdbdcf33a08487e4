"""Whether an error message is one of fairot's message constants with its placeholders filled."""

import re
from collections.abc import Iterable


def message_constants(modules: Iterable, prefix: str = "", suffix: str = "") -> list[str]:
    """The string constants of ``modules`` named ``<prefix>…<suffix>``."""
    return [
        getattr(module, name)
        for module in modules
        for name in dir(module)
        if name.startswith(prefix)
        and name.endswith(suffix)
        and name.isupper()
        and isinstance(getattr(module, name), str)
    ]


def fills_template(message: str, templates: Iterable[str]) -> bool:
    """Whether ``message`` is one of ``templates`` with any text in each ``{placeholder}``."""
    for template in templates:
        pattern = ".*".join(re.escape(part) for part in re.split(r"\{[^}]*\}", template))
        if re.fullmatch(pattern, message, re.S):
            return True
    return False
