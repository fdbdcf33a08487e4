"""The Markdown documentation links only inside the repository, to files and anchors that exist."""

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def github_slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = unicodedata.normalize("NFC", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    in_code = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        match = None if in_code else HEADING.match(line)
        if match:
            slug = github_slug(match.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(page: Path):
    in_code = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if not in_code:
            yield from LINK.findall(line)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_stay_in_the_repository_and_resolve(page):
    for target in links(page):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        assert ROOT in resolved.parents or resolved == ROOT, (
            f"{page.name}: {target} leaves the repo"
        )
        assert resolved.exists(), f"{page.name}: {target} does not exist"
        if anchor and resolved.suffix == ".md":
            assert anchor in anchors(resolved), f"{page.name}: no heading for #{anchor}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_headings_carry_no_custom_anchor_syntax(page):
    # `## Title {#id}` is Pandoc/Python-Markdown syntax; GitHub prints it as text.
    bad = [line for line in page.read_text(encoding="utf-8").splitlines() if HEADING.match(line)]
    assert not [line for line in bad if re.search(r"\{#[\w-]+\}\s*$", line)], page.name


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_reference_to_files_outside_the_repository(page):
    assert "../shared" not in page.read_text(encoding="utf-8"), page.name


def test_no_placeholder_urls_in_the_project_metadata():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "example.invalid" not in text and "example.com" not in text
