#!/usr/bin/env python3
"""python3 check_references.py [ROOT]      check the repository at ROOT (default: this one)
python3 check_references.py --self-test   check the checker on scratch trees

CTest `docs/references` (label `docs`): no file of the repository may cite a document the
repository does not contain. It scans every text file (the `git ls-files` list, plus new files
git does not ignore, when ROOT is a git work tree; else every file outside build/ and .git/) for

  1. the missing specification: its file name (SPEC followed by ".md"), or the word SPEC written
     as a citation ("the SPEC table", "(SPEC)", "SPEC'd");
  2. relative Markdown links and link definitions in *.md files, `[text](path)` and
     `[text]: path`, whose target does not exist (relative to the .md file; a leading / means the
     repository root); fenced code blocks and `inline code` are not links;
  3. mentions of Markdown documents anywhere (comments, scripts, docs), such as
     `docs/semantics.md` or `README.md`, that exist neither relative to the root nor relative to
     the mentioning file;
  4. in *.md files (README.md and docs/*.md among them), the #anchor of a relative link
     (`[text](path#anchor)`, `[text](#anchor)` within the same file) that names no heading of the
     linked Markdown file. Anchors follow GitHub's rules: the heading's text without its inline
     markup, lowercased, punctuation dropped (letters, digits, `_`, `-` and spaces kept), each
     space turned into `-`; a repeated heading gets `-1`, `-2`, ...; `<a name="x">` / `id="x"`
     anchors count too. The match is exact (case included), so a link works wherever it is read. Anchors of non-Markdown targets (`file.cpp#L10`) are not checked.

URLs (anything with a scheme, `https://...`, `mailto:...`) are never checked, nor is this file
(its documentation and self-test cite missing documents on purpose). Each finding is
printed as `file:line: what`; the exit status is 1 if there is any, else 0.
`--self-test` (CTest `docs/check_references_selftest`) runs the checker on small trees with known
problems and known non-problems and fails if it misses or invents one.
"""
import os
import re
import subprocess
import sys
import tempfile
from urllib.parse import unquote

# Built from parts, so that this file does not cite the document it looks for.
MISSING_SPEC = "SPEC" + ".md"
SPEC_WORD = re.compile(r"(?<![A-Za-z0-9_])SPEC(?:'d|'s)?(?![A-Za-z0-9_.])")

URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*:(?://)?[^\s)\]>\"'`]+")
INLINE_CODE = re.compile(r"`+[^`]*`+")
INLINE_LINK = re.compile(r"!?\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
LINK_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
MD_MENTION = re.compile(r"(?<![A-Za-z0-9_./-])((?:\.{1,2}/)*(?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.md)(?![A-Za-z0-9_/])")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
ATX_HEADING = re.compile(r"^\s{0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$")
SETEXT_UNDERLINE = re.compile(r"^\s{0,3}(=+|-+)\s*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*?(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
LINK_OR_IMAGE = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
HTML_TAG = re.compile(r"<[^>]+>")

SKIPPED_DIRS = {".git", "build", ".cache", "__pycache__"}


def repository_files(root):
    """Relative paths of the files to scan."""
    inside = subprocess.run(["git", "-C", root, "rev-parse", "--is-inside-work-tree"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if inside.returncode == 0 and inside.stdout.strip() == "true":
        listed = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"],
                                stdout=subprocess.PIPE, check=True)
        names = [n for n in listed.stdout.decode("utf-8", "replace").split("\0") if n]
        # The user's documents are checked even if a .gitignore rule hid one of them.
        names.append("README.md")
        docs = os.path.join(root, "docs")
        if os.path.isdir(docs):
            names += [f"docs/{n}" for n in os.listdir(docs) if n.endswith(".md")]
        return sorted(n for n in set(names) if os.path.isfile(os.path.join(root, n)))
    found = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in files:
            found.append(os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/"))
    return sorted(found)


def read_text(path):
    """The file's lines, or None for a binary or non-UTF-8 file."""
    with open(path, "rb") as f:
        data = f.read()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None


def target_exists(root, referrer, target, relative_to_referrer):
    """Whether `target` (a path, maybe with #fragment) names an existing file or directory."""
    path = target.split("#", 1)[0].split("?", 1)[0]
    if not path:
        return True  # a fragment of the same document
    candidates = []
    if path.startswith("/"):
        candidates.append(os.path.join(root, path.lstrip("/")))
    else:
        if relative_to_referrer:
            candidates.append(os.path.join(root, os.path.dirname(referrer), path))
        else:
            candidates.append(os.path.join(root, path))
            candidates.append(os.path.join(root, os.path.dirname(referrer), path))
    return any(os.path.exists(os.path.normpath(c)) for c in candidates)


def github_anchor(heading):
    """The anchor GitHub gives a heading with this text (before de-duplication)."""
    text = LINK_OR_IMAGE.sub(r"\1", heading)
    text = HTML_TAG.sub("", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # \w: Unicode letters and digits, and _
    return text.replace(" ", "-")


def markdown_anchors(lines):
    """Every anchor a Markdown document defines: its headings' and its HTML anchors."""
    anchors = set()
    seen = {}
    fence = None
    previous = ""
    for line in lines:
        opening = FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            previous = ""
            continue
        if opening:
            fence = opening.group(1)
            previous = ""
            continue
        heading = None
        atx = ATX_HEADING.match(line)
        if atx:
            heading = atx.group(2) or ""
        elif (SETEXT_UNDERLINE.match(line) and previous.strip() and
              not previous.lstrip().startswith(("|", "-", "*", "+", ">", "#"))):
            heading = previous.strip()
        if heading is not None:
            anchor = github_anchor(heading)
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            anchors.add(anchor if count == 0 else f"{anchor}-{count}")
        for name in HTML_ANCHOR.findall(line):
            anchors.add(name)
        previous = "" if heading is not None else line
    return anchors


class AnchorCache:
    """The anchors of each Markdown file of the tree, read once."""

    def __init__(self, root):
        self.root = root
        self.by_path = {}

    def of(self, path):
        path = os.path.normpath(path)
        if path not in self.by_path:
            lines = read_text(path) if os.path.isfile(path) else None
            self.by_path[path] = markdown_anchors(lines) if lines is not None else None
        return self.by_path[path]


def link_target_path(root, referrer, target):
    """The file a relative link (without its #anchor) names, relative to the linking file."""
    path = target.split("#", 1)[0].split("?", 1)[0]
    if not path:
        return os.path.join(root, referrer)
    if path.startswith("/"):
        return os.path.join(root, path.lstrip("/"))
    return os.path.join(root, os.path.dirname(referrer), path)


def check_anchor(root, rel, target, anchors):
    """A finding if `target`'s #anchor names no heading of the Markdown file it links to."""
    if "#" not in target:
        return None
    path, anchor = target.split("#", 1)
    if not anchor:
        return None
    linked = link_target_path(root, rel, path)
    if not linked.lower().endswith(".md") or not os.path.isfile(linked):
        return None  # only Markdown files have headings; a missing file is reported already
    known = anchors.of(linked)
    if known is None or anchor in known:
        return None
    if unquote(anchor) in known:  # a percent-encoded anchor (non-ASCII heading)
        return None
    shown = path or "this file"
    return f"link to {target}: {shown} has no heading with the anchor #{anchor}"


def check_file(root, rel, lines, anchors=None):
    findings = []
    is_markdown = rel.lower().endswith(".md")
    fence = None
    for number, line in enumerate(lines, 1):
        where = f"{rel}:{number}"

        # 1. The missing specification, anywhere (code blocks included).
        if MISSING_SPEC in line:
            findings.append(f"{where}: cites {MISSING_SPEC}, which this repository does not contain")
        elif SPEC_WORD.search(line):
            findings.append(f"{where}: cites the specification (\"SPEC\"), which this repository "
                            f"does not contain")

        # Markdown: no links inside fenced code blocks.
        if is_markdown:
            opening = FENCE.match(line)
            if fence:
                if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                    fence = None
                continue
            if opening:
                fence = opening.group(1)
                continue

        without_urls = URL.sub(" ", line)
        text = INLINE_CODE.sub(" ", without_urls) if is_markdown else without_urls

        # 2. Relative Markdown links.
        link_targets = set()
        if is_markdown:
            targets = [m.group(2) for m in INLINE_LINK.finditer(text)]
            definition = LINK_DEFINITION.match(text)
            if definition:
                targets.append(definition.group(1))
            for target in targets:
                if URL.match(target):
                    continue
                if not target.startswith("#"):
                    link_targets.add(target.split("#", 1)[0])
                    if not target_exists(root, rel, target, relative_to_referrer=True):
                        findings.append(f"{where}: link to {target}, which does not exist")
                        continue
                if anchors is not None:
                    problem = check_anchor(root, rel, target, anchors)
                    if problem:
                        findings.append(f"{where}: {problem}")

        # 3. Mentions of Markdown documents (in a .md file, also inside inline code).
        for mention in MD_MENTION.findall(without_urls):
            if mention in link_targets or mention == MISSING_SPEC:
                continue
            if not target_exists(root, rel, mention, relative_to_referrer=False):
                findings.append(f"{where}: mentions {mention}, which does not exist")
    return findings


def check_tree(root):
    findings = []
    myself = os.path.realpath(__file__)
    anchors = AnchorCache(root)
    for rel in repository_files(root):
        path = os.path.join(root, rel)
        if os.path.realpath(path) == myself:
            continue  # its docstring and self-test cite missing documents on purpose
        lines = read_text(path)
        if lines is not None:
            findings.extend(check_file(root, rel, lines, anchors))
    return findings


# ---- self-test ---------------------------------------------------------------------------------

def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def self_test():
    failures = []

    def expect(name, files, expected):
        """`expected`: the set of (file:line, fragment) findings the tree must produce."""
        with tempfile.TemporaryDirectory() as root:
            for rel, text in files.items():
                write(root, rel, text)
            found = check_tree(root)
        unexplained = [f for f in found if not any(f.startswith(loc + ":") and frag in f
                                                   for loc, frag in expected)]
        missed = [(loc, frag) for loc, frag in expected
                  if not any(f.startswith(loc + ":") and frag in f for f in found)]
        ok = not unexplained and not missed
        print(("ok:    " if ok else "WRONG: ") + name)
        for f in unexplained:
            print(f"         unexpected finding: {f}")
        for loc, frag in missed:
            print(f"         missed: {loc} ({frag})")
        if not ok:
            failures.append(name)

    spec = MISSING_SPEC
    expect("a clean tree passes", {
        "README.md": "# x\n\nSee [semantics](docs/semantics.md#dispatch), [the license](LICENSE),\n"
                     "[a section](#x), [the site](https://example.com/docs/missing.md),\n"
                     "<https://example.com/NOTES.md>, mailto:someone@example.com and `docs/semantics.md`.\n"
                     "```cpp\nauto f = [](std::string_view s) { return s; };  // [x](nowhere.md)\n```\n"
                     "Inline code `[&](auto& x)` is no link; *.md files are checked.\n"
                     "[ref]: docs/semantics.md\n",
        "LICENSE": "text\n",
        "docs/semantics.md": "## Dispatch\n\nBack to the [README](../README.md) or [top](/README.md).\n",
        "src/a.cpp": "// see docs/semantics.md and README.md; https://example.com/x/SPECS.md\n"
                     "int SPEC_VERSION = 1;  // SPECIFIC, INSPECT\n",
    }, [])
    expect("a link to a missing file fails", {
        "README.md": "ok\nSee [the guide](docs/guide.md) and [img](img/logo.png).\n",
    }, [("README.md:2", "docs/guide.md"), ("README.md:2", "img/logo.png")])
    expect("a link is relative to the linking file", {
        "docs/a.md": "[b](b.md) [readme](README.md)\n",
        "docs/b.md": "x\n",
        "README.md": "x\n",
    }, [("docs/a.md:1", "link to README.md")])
    expect("a link to a missing anchor fails, in another file and in the same file", {
        "README.md": "# hookset\n\n## Quick start\n\nSee [the guide](docs/guide.md#stateful-hooks),\n"
                     "[below](#quick-start), [gone](#set-up) and [typo](docs/guide.md#statefull-hooks).\n"
                     "[ref]: docs/guide.md#composition\n",
        "docs/guide.md": "# Guide\n\n## Stateful hooks\n\n[back](../README.md#quick-start) "
                         "[wrong](../README.md#quickstart)\n",
    }, [("README.md:6", "#set-up"), ("README.md:6", "#statefull-hooks"),
        ("README.md:7", "#composition"), ("docs/guide.md:5", "#quickstart")])
    expect("anchors follow GitHub's rules", {
        "docs/ref.md": "# Reference\n\n## 1. Slots\n\n## 20. Boost.Asio\n\n"
                       "### CMake, installed package: `find_package`\n\n"
                       "## Observing: per-hook events and traces\n\n"
                       "## Examples\n\n## Examples\n\n"
                       "## See [the guide](guide.md) now ##\n\n"
                       "Setext heading\n--------------\n\n"
                       "<a name=\"custom-spot\"></a>\n\n"
                       "```md\n## Not a heading (in code)\n```\n",
        "docs/guide.md": "[a](ref.md#1-slots) [b](ref.md#20-boostasio) "
                         "[c](ref.md#cmake-installed-package-find_package)\n"
                         "[d](ref.md#observing-per-hook-events-and-traces) [e](ref.md#examples) "
                         "[f](ref.md#examples-1) [g](ref.md#see-the-guide-now)\n"
                         "[h](ref.md#setext-heading) [i](ref.md#custom-spot) [j](ref.md#Examples)\n"
                         "[k](ref.md#not-a-heading-in-code) [l](ref.md#examples-2)\n"
                         "[m](../src/a.cpp#L3) [n](ref.md)\n",
        "src/a.cpp": "int a;\n",
    }, [("docs/guide.md:3", "#Examples"), ("docs/guide.md:4", "#not-a-heading-in-code"),
        ("docs/guide.md:4", "#examples-2")])
    expect("a link definition to a missing file fails", {
        "README.md": "[guide]: docs/guide.md\n",
    }, [("README.md:1", "docs/guide.md")])
    expect("the missing specification is found anywhere", {
        "README.md": f"```\n// {spec} \"Dispatch\"\n```\n",
        "tests/t.cpp": f"// Dispatch ({spec} \"Dispatch\"): x\n// per the SPEC table\n",
        "bench/r.py": "# a std::vector (SPEC), the SPEC'd shape\n",
    }, [("README.md:2", "cites"), ("tests/t.cpp:1", "cites"), ("tests/t.cpp:2", "cites"),
        ("bench/r.py:1", "cites")])
    expect("a mention of a missing .md document fails, URLs do not", {
        "src/x.hpp": "// the rules are in docs/design.md (and at https://example.com/docs/design.md)\n",
        "scripts/s.sh": "# see ../NOTES.md\n",
        "notes.txt": "CONTRIBUTING.md says so\n",
    }, [("src/x.hpp:1", "docs/design.md"), ("scripts/s.sh:1", "../NOTES.md"),
        ("notes.txt:1", "CONTRIBUTING.md")])
    expect("build/ and binary files are not scanned (outside git)", {
        "build/gen.md": "[x](missing.md)\n",
        "ok.md": "fine\n",
    }, [])

    # The command line: exit status 1 and file:line on stdout.
    with tempfile.TemporaryDirectory() as root:
        write(root, "README.md", "[gone](gone.md)\n")
        run = subprocess.run([sys.executable, os.path.abspath(__file__), root],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ok = run.returncode == 1 and "README.md:1:" in run.stdout
        print(("ok:    " if ok else "WRONG: ") + "the command fails and prints file:line")
        if not ok:
            print(run.stdout)
            failures.append("command line")

    print(f"{'FAIL' if failures else 'PASS'} check_references self-test: {len(failures)} problem(s)")
    return 1 if failures else 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    root = os.path.abspath(argv[1] if len(argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    findings = check_tree(root)
    for finding in findings:
        print(finding)
    if findings:
        print(f"FAIL docs/references: {len(findings)} reference(s) to documents this repository "
              f"does not contain")
        return 1
    print("PASS docs/references: every cited document exists")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
