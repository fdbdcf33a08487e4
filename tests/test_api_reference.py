"""``docs/api.md`` lists every public name with its current signature (it cannot drift)."""

import difflib

import pytest

from tests.api_reference import REFERENCE, extra_missing, is_internal, public_modules, render


def test_reference_matches_the_code():
    if any(extra_missing(m) for m in public_modules()):
        pytest.skip("an optional extra is missing; the reference is rendered with all of them")
    expected = render()
    written = REFERENCE.read_text(encoding="utf-8")
    diff = "".join(
        difflib.unified_diff(
            written.splitlines(True), expected.splitlines(True), "docs/api.md", "the code", n=1
        )
    )
    assert written == expected, (
        "docs/api.md is out of date; run `make api` and review the diff:\n" + diff[:4000]
    )


def test_every_public_module_is_listed():
    written = REFERENCE.read_text(encoding="utf-8")
    for module in public_modules():
        if is_internal(module):
            assert f"- `{module}` (" in written and f"## `{module}`" not in written
        else:
            assert f"## `{module}`" in written
    # The walk finds what a user imports, and no private module.
    assert "fairot.metrics" in public_modules()
    assert not any(part.startswith("_") for m in public_modules() for part in m.split("."))


@pytest.mark.parametrize(
    ("module", "internal"),
    [
        ("fairot.metrics", False),
        ("fairot.utils", False),
        ("fairot.utils.groups", True),
        ("fairot.torch.checks", True),
        ("fairot.experiments.frontier", True),
        ("fairot.cli", True),
        ("fairot.reporting", False),
    ],
)
def test_the_internal_modules_are_the_chosen_ones(module, internal):
    assert is_internal(module) is internal


def test_the_sphinx_reference_documents_the_same_modules():
    # make docs builds the reference from docs/api/*.rst: it covers the API modules of
    # docs/api.md, no more (the studies and internal modules stay out) and no fewer.
    pages = (REFERENCE.parent / "api").glob("*.rst")
    documented = {
        line.split("::", 1)[1].strip()
        for page in pages
        for line in page.read_text(encoding="utf-8").splitlines()
        if line.startswith(".. automodule::")
    }
    assert documented == {m for m in public_modules() if not is_internal(m)}
