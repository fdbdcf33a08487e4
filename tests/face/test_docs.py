"""docs/face.md's plain-PyTorch loop runs as written and does what the text says."""

import re
from pathlib import Path

import torch

FACE_MD = Path(__file__).resolve().parents[2] / "docs" / "face.md"


def _block(after: str) -> str:
    text = FACE_MD.read_text(encoding="utf-8")
    section = text[text.index(after) :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_plain_pytorch_loop_trains_and_leaves_the_margins_alone():
    threads = torch.get_num_threads()
    namespace: dict = {}
    try:
        code = _block("### In your own PyTorch loop")
        start = code.index("for step in range(")
        # run the setup, note the margins and the first loss, then the loop
        exec(compile(code[:start], str(FACE_MD), "exec"), namespace)  # noqa: S102
        loss, model = namespace["loss"], namespace["model"]
        x, y, g = namespace["x"], namespace["y"], namespace["g"]
        margins = loss.margins.detach().clone()
        with torch.no_grad():
            before = float(loss(model(x), y, g))
        exec(compile(code[start:], str(FACE_MD), "exec"), namespace)  # noqa: S102
        with torch.no_grad():
            after = float(loss(model(x), y, g))
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(loss.margins.detach(), margins)
    assert after < 0.8 * before
