#!/usr/bin/env python3
"""Checks the links of the book and the README: every relative link names a file that exists,
and every #anchor names a heading of its page. Also checks that every code block says its
language (a bare fence would be compiled as Rust by the doctests that include the pages).

Anchors are read from the book as mdBook built it (the `id`s of its HTML pages), so the check
agrees with what a reader's browser finds. Run after `mdbook build book`:

    python3 scripts/check-book-links.py [BUILD_DIR]     (default: target/book)

Exits 1 listing every broken link, 0 when all resolve. Links with a scheme (https:, mailto:)
are not followed: there is no network here, and they are not the book's own.
"""
import html.parser
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "book", "src")
LINK = re.compile(r"(?<!\!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")


class Ids(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)


def links_of(path):
    """(line number, target) of each Markdown link outside code."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if fenced:
                continue
            for match in LINK.finditer(INLINE_CODE.sub("", line)):
                yield number, match.group(1)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "book")
    if not os.path.isdir(build):
        sys.exit(f"{build}: no built book (run `mdbook build book` first)")
    ids = {}

    def anchors(html_path):
        if html_path not in ids:
            parser = Ids()
            with open(html_path, encoding="utf-8") as f:
                parser.feed(f.read())
            ids[html_path] = parser.ids
        return ids[html_path]

    sources = [os.path.join(ROOT, "README.md")]
    for directory, _, files in os.walk(SRC):
        sources += [os.path.join(directory, name) for name in sorted(files) if name.endswith(".md")]
    broken = []
    checked = 0
    for source in sources:
        for number, target in links_of(source):
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue
            checked += 1
            where = f"{os.path.relpath(source, ROOT)}:{number}: {target}"
            path, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(source), path)) if path else source
            if not os.path.exists(resolved):
                broken.append(f"{where}: no file {os.path.relpath(resolved, ROOT)}")
                continue
            if not anchor:
                continue
            if not resolved.endswith(".md"):
                broken.append(f"{where}: an anchor into a file that is not a page")
                continue
            if resolved.startswith(SRC + os.sep):
                page = os.path.join(build, os.path.relpath(resolved, SRC)[:-3] + ".html")
                if not os.path.exists(page):
                    broken.append(f"{where}: the page is not in SUMMARY.md (not built)")
                elif anchor not in anchors(page):
                    broken.append(f"{where}: no heading with the id `{anchor}`")
            else:
                # A page outside the book (the README): anchors as GitHub makes them.
                with open(resolved, encoding="utf-8") as f:
                    slugs = {
                        re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
                        for m in re.finditer(r"^#+\s+(.*)$", f.read(), re.M)
                    }
                if anchor not in slugs:
                    broken.append(f"{where}: no heading with the id `{anchor}`")
    for source in sources:
        fenced = False
        with open(source, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                match = FENCE.match(line)
                if not match:
                    continue
                if not fenced and not line.strip()[3:].strip():
                    broken.append(f"{os.path.relpath(source, ROOT)}:{number}: a code block without a language")
                fenced = not fenced
    for line in broken:
        print(line)
    print(f"book links: {checked} checked, {len(broken)} broken")
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
