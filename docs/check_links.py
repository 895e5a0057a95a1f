"""Every internal link and image of the built site resolves: ``python docs/check_links.py docs/_build/html``.

Opened from disk, a page can only load what its relative links name; this checks each ``href`` and ``src``
without a scheme against the files of the build (and each ``#anchor`` against the ids of its page).
Exit status 1, with one line per broken link, when any is broken."""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key == "id" and value:
                self.ids.add(value)
            if key == "name" and tag == "a" and value:
                self.ids.add(value)
            if key in ("href", "src") and value is not None:
                self.links.append(value)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def broken_links(root: Path) -> list[str]:
    """``page: link`` for each internal link of the HTML under ``root`` whose file or anchor is missing."""
    pages = {p.resolve(): _parse(p) for p in root.rglob("*.html")}
    broken = []
    for path, page in sorted(pages.items()):
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//") or link.startswith("mailto:"):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{path.relative_to(root.resolve())}: {link}")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(root.resolve())}: {link} (no such anchor)")
    return broken


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else "docs/_build/html")
    if not (root / "index.html").exists():
        print(f"{root}: no built site (run make docs first)", file=sys.stderr)
        return 1
    broken = broken_links(root)
    for line in broken:
        print(f"broken link: {line}", file=sys.stderr)
    pages = len(list(root.rglob("*.html")))
    print(f"{pages} pages checked: {len(broken)} broken internal links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
