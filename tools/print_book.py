"""Print the built site as one PDF book (``make pdf``).

The book is the HTML site as a reader sees it, printed by Chromium: every
number, figure and theorem box is the one ``make html`` checked, with nothing
rebuilt for paper (the README says why this route and not Sphinx's LaTeX
builder). What this module adds is the binding:

1. The pages, in the order of the toctrees on ``index.html`` (the numbered
   chapters, then the reference pages), each printed on A4 in print media
   (``docs/_static/print.css``) and the light theme, with every figure
   loaded and every collapsed solution opened (the math is typeset in the
   build); two Chromiums print at once, and the parts are bound in order.
2. A title page and a table of contents with page numbers, printed from HTML
   written here.
3. One PDF, merged with pypdf: bookmarks for every chapter and its sections
   (Chromium's outline of each page), links between pages turned into links
   within the book, and a footer with the chapter and the page number stamped
   on every page but the title.

With ``--student-output`` it also binds the student's edition: the same book
with every exercise's solution left out. Only the pages that hold a solution
are printed a second time, without it.

The output depends only on the built site and the commit: the dates in the
PDF's metadata are ``SOURCE_DATE_EPOCH`` (by default the time of the last
commit), and the file carries no random identifier, so two runs on the same
build give the same bytes.

Usage: ``python tools/print_book.py --html _build/html --output _build/pdf/why-sqrt-dk.pdf``
``--student-output _build/pdf/why-sqrt-dk-student.pdf``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import html
import os
import shutil
import queue
import subprocess
import sys
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import sync_playwright
from pypdf import PdfReader, PdfWriter
from pypdf.generic import ArrayObject, DictionaryObject, NameObject, NullObject, NumberObject, TextStringObject

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

from provenance import built_from  # noqa: E402 (found through the line above)

# Chromium on the PATH (Debian's package installs /usr/bin/chromium), or the
# browser that the CHROMIUM environment variable names: the hosted builds,
# on Ubuntu, use Playwright's own Chromium (see .readthedocs.yaml).
CHROMIUM = Path(os.environ.get("CHROMIUM") or shutil.which("chromium") or "chromium-is-not-on-the-PATH")
# The flags tests/test_browser.py uses: nothing but the page, and --no-sandbox
# because CI runs as root, where Chromium's sandbox refuses to start.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Room at the foot of each page for the stamped footer (see _stamps_html).
MARGIN = {"top": "16mm", "bottom": "20mm", "left": "15mm", "right": "15mm"}
# The pages are laid out 1/0.8 times as wide as the paper and printed at 0.8:
# body text comes out at about 10 pt, as in a printed book, and derivations
# and tables as wide as the screen's article column fit without being cut.
SCALE = 0.8
# Typesetting the longest page (the API reference) takes a few seconds; a
# minute means something hangs.
TIMEOUT_MS = 60_000
# Chromiums printing at once: each prints one page of the site at a time, on
# its own core (the API reference alone is a quarter of the printing).
PRINTERS = max(1, min(2, os.cpu_count() or 1))
TITLE = "Why √dₖ"
SUBTITLE = "Why scaled dot-product attention divides its scores by √dₖ: executable, checked derivations"

# The width in CSS pixels of the paper's text column as Chromium lays it out:
# A4 less the side margins, divided by the scale. The page is measured at
# this width, so that what overflows on paper overflows here.
COLUMN_PX = round((210 - 30) / 25.4 * 96 / SCALE)
# Opens what the site collapses: <details> (dropdowns) and the exercise
# solutions that sphinx-togglebutton hides, so that paper shows them. Then
# shrinks each displayed formula wider than the column (the derivations'
# tables of steps, which scroll sideways on screen) until it fits.
_EXPAND = """() => {
  document.querySelectorAll("details").forEach((d) => { d.open = true; });
  document.querySelectorAll(".toggle-hidden").forEach((e) => e.classList.remove("toggle-hidden"));
  document.querySelectorAll("button.toggle-button").forEach((b) => b.remove());
  document.querySelectorAll("math[display=block]").forEach((m) => {
    if (m.scrollWidth > m.clientWidth + 1) m.style.zoom = (0.98 * m.clientWidth / m.scrollWidth).toFixed(3);
  });
}"""
# Figures load lazily on screen (docs/_ext/image_sizes.py); a printed page needs them all.
_LOAD_IMAGES = """() => document.querySelectorAll("img[loading=lazy]").forEach((img) => { img.loading = "eager"; })"""
_IMAGES_LOADED = "() => Array.from(document.images).every((img) => img.complete)"
# The headings of the page, in order, as the outline should name them.
# Chromium's own outline joins the lines of a wrapped heading without a space
# and drops its formulas; here a formula reads as its MathML text ("dk").
_HEADINGS = """() => Array.from(document.querySelectorAll(":is(h1, h2, h3, h4, h5, h6, [role=heading])"))
  .filter((e) => e.getClientRects().length > 0)
  .map((e) => {
    const copy = e.cloneNode(true);
    copy.querySelectorAll(".headerlink").forEach((link) => link.remove());
    copy.querySelectorAll("math").forEach((m) => {
      m.querySelectorAll("annotation").forEach((a) => a.remove());
      m.replaceWith(m.textContent);
    });
    return copy.textContent.replace(/\\s+/g, " ").trim();
  })"""
# The student's edition leaves out every solution (sphinx-exercise's solution
# admonitions); returns how many there were.
_SOLUTIONS = ".solution"
_DROP_SOLUTIONS = f"""() => {{
  const solutions = document.querySelectorAll("{_SOLUTIONS}");
  solutions.forEach((solution) => solution.remove());
  return solutions.length;
}}"""
#: What the title page says of each edition.
EDITIONS = {
    "instructor": "Instructor's edition: every exercise with its solution.",
    "student": "Student's edition: the exercises, without their solutions.",
}
# Math the build left untypeset in the article: printed, it would be raw TeX.
_RAW_MATH = "article[role=main] .math:not(:has(math))"


@dataclass(frozen=True)
class Part:
    """One page of the site in the book: its file, its title, its printed PDF (read once), per edition.

    ``student`` and ``student_headings`` are the page without its solutions:
    the same objects as ``pdf`` and ``headings`` when the page has none.
    """

    name: str
    title: str
    pdf: PdfReader
    headings: tuple[str, ...]
    student: PdfReader
    student_headings: tuple[str, ...]

    def edition(self, name: str) -> tuple[PdfReader, tuple[str, ...]]:
        """The printed page and its headings in the edition ``name`` (a key of :data:`EDITIONS`)."""
        return (self.pdf, self.headings) if name == "instructor" else (self.student, self.student_headings)


def _epoch() -> int | None:
    """SOURCE_DATE_EPOCH, else the time of the last commit, else None (no dates)."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return int(os.environ["SOURCE_DATE_EPOCH"])
    result = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=ROOT, capture_output=True, text=True)
    return int(result.stdout) if result.returncode == 0 and result.stdout.strip() else None


def _toc(page, html_dir: Path) -> list[tuple[str, str]]:
    """The pages in reading order: ``index.html``, then every toctree entry of the index."""
    page.goto((html_dir / "index.html").as_uri())
    links = page.eval_on_selector_all(
        "article[role=main] .toctree-wrapper a.reference.internal",
        "els => els.map((e) => [e.getAttribute('href'), e.textContent.trim()])",
    )
    title = page.eval_on_selector("article[role=main] h1", "e => e.textContent").strip("¶# \n")
    entries = [("index.html", title)]
    for href, text in links:
        name = href.split("#")[0]
        if name and name not in {entry[0] for entry in entries}:
            entries.append((name, text))
    return entries


def _print_page(page, url: str, pdf: Path, student: Path) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """Print one page of the site, typeset and expanded, to ``pdf``, and without its solutions to ``student``.

    Returns the page's headings, and the student's page's headings, or None
    (and nothing is written to ``student``) when the page holds no solution.
    """
    page.goto(url, wait_until="load")
    raw = page.locator(_RAW_MATH).count()
    if raw:
        raise RuntimeError(f"{url}: {raw} formulas were not typeset")
    page.evaluate(_LOAD_IMAGES)
    page.wait_for_function(_IMAGES_LOADED, timeout=TIMEOUT_MS)
    page.evaluate(_EXPAND)
    headings = tuple(page.evaluate(_HEADINGS))
    page.pdf(path=pdf, format="A4", margin=MARGIN, scale=SCALE, print_background=True, outline=True, tagged=True)
    if not page.evaluate(_DROP_SOLUTIONS):
        return headings, None
    page.pdf(path=student, format="A4", margin=MARGIN, scale=SCALE, print_background=True, outline=True, tagged=True)
    return headings, tuple(page.evaluate(_HEADINGS))


def _launch(playwright):
    """Debian's Chromium, started with :data:`CHROMIUM_ARGS`."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


def _new_page(browser):
    """A page laid out at the paper's column width, in print media and the light theme."""
    page = browser.new_page(color_scheme="light", viewport={"width": COLUMN_PX, "height": 1200})
    # What is visible, and so in the outline, is decided in print media.
    page.emulate_media(media="print")
    page.set_default_timeout(TIMEOUT_MS)
    return page


def _print_queued(page, html_dir: Path, work: Path, entries: queue.Queue) -> dict[int, Part]:
    """Print, on ``page``, the site pages taken from ``entries`` until none is left; the parts by number."""
    parts = {}
    while True:
        try:
            number, name, title = entries.get_nowait()
        except queue.Empty:
            return parts
        began = time.perf_counter()
        pdf, student = work / f"{number:02d}-{Path(name).stem}.pdf", work / f"{number:02d}-{Path(name).stem}-student.pdf"
        headings, student_headings = _print_page(page, (html_dir / name).as_uri(), pdf, student)
        printed = PdfReader(pdf)
        if student_headings is None:
            parts[number] = Part(name, title, printed, headings, printed, headings)
        else:
            parts[number] = Part(name, title, printed, headings, PdfReader(student), student_headings)
        print(f"    {name}: {len(printed.pages)} pages ({time.perf_counter() - began:.1f} s)", flush=True)


def _another_printer(html_dir: Path, work: Path, entries: queue.Queue) -> dict[int, Part]:
    """:func:`_print_queued` in a Chromium of this thread's own (Playwright's synchronous API belongs to one thread)."""
    with sync_playwright() as playwright:
        browser = _launch(playwright)
        try:
            return _print_queued(_new_page(browser), html_dir, work, entries)
        finally:
            browser.close()


def _print_site(page, html_dir: Path, work: Path, toc: list[tuple[str, str]], printers: int = PRINTERS) -> list[Part]:
    """Every page of ``toc`` printed to ``work``: on ``page`` and in ``printers - 1`` other Chromiums at once.

    The parts come back in the order of ``toc``, whichever Chromium printed each.
    """
    entries = queue.Queue()
    # Largest first, so that the longest print (the API reference) does not start last and leave the others waiting.
    for number, (name, title) in sorted(enumerate(toc), key=lambda entry: -(html_dir / entry[1][0]).stat().st_size):
        entries.put((number, name, title))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, printers - 1)) as pool:
        others = [pool.submit(_another_printer, html_dir, work, entries) for _ in range(printers - 1)]
        try:
            parts = _print_queued(page, html_dir, work, entries)
            for other in others:
                parts.update(other.result())
        except BaseException:
            # A page failed: the other printers stop after the page they are on, and the error is reported.
            while True:
                try:
                    entries.get_nowait()
                except queue.Empty:
                    break
            raise
    return [parts[number] for number in range(len(toc))]


def _front_html(parts: list[Part], starts: list[int], release: str, epoch: int | None, edition: str) -> str:
    """The title page and the table of contents, as one HTML document."""
    date = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%d %B %Y") if epoch else ""
    rows = "\n".join(
        f'<tr><td class="entry">{html.escape(part.title)}</td><td class="page">{start}</td></tr>'
        for part, start in zip(parts, starts)
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{TITLE}</title><style>
@page {{ size: A4; margin: 25mm 25mm 25mm 25mm; }}
body {{ font-family: "DejaVu Sans", sans-serif; color: #222; }}
.title {{ height: 240mm; break-after: page; display: flex; flex-direction: column; justify-content: center; }}
h1 {{ font-size: 48pt; margin: 0 0 8mm 0; }}
.subtitle {{ font-size: 16pt; line-height: 1.4; margin-bottom: 12mm; }}
.edition {{ font-size: 13pt; margin-bottom: 30mm; }}
.meta {{ font-size: 11pt; color: #555; line-height: 1.6; }}
h2 {{ font-size: 20pt; margin: 0 0 8mm 0; }}
table {{ width: 100%; border-collapse: collapse; font-size: 11pt; }}
td {{ padding: 1.6mm 0; border-bottom: 0.2mm dotted #999; }}
td.page {{ text-align: right; width: 15mm; }}
</style></head><body>
<section class="title">
<h1>{TITLE}</h1>
<div class="subtitle">{html.escape(SUBTITLE)}</div>
<div class="edition">{html.escape(EDITIONS[edition])}</div>
<div class="meta">The attention-scaling package and site, {html.escape(built_from(ROOT, release))}<br>{date}</div>
</section>
<section><h2>Contents</h2><table>{rows}</table></section>
</body></html>"""


def _stamps_html(footers: list[str]) -> str:
    """One A4 sheet per page of the book, blank but for its footer (empty: no footer)."""
    sheets = "\n".join(f'<div class="sheet"><div class="foot">{text}</div></div>' for text in footers)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><style>
@page {{ size: A4; margin: 0; }}
body {{ margin: 0; font-family: "DejaVu Sans", sans-serif; font-size: 8.5pt; color: #555; }}
.sheet {{ height: 296mm; position: relative; break-after: page; }}
.foot {{ position: absolute; bottom: 9mm; left: 15mm; right: 15mm; display: flex; justify-content: space-between; }}
</style></head><body>{sheets}</body></html>"""


def _print_html(page, document: str, pdf: Path, **options) -> int:
    """Print an HTML document written here; returns its number of pages."""
    page.set_content(document, wait_until="load")
    page.pdf(path=pdf, prefer_css_page_size=True, print_background=True, **options)
    return len(PdfReader(pdf).pages)


def _link_pages(writer: PdfWriter, html_dir: Path, starts: dict[str, int]) -> None:
    """Make links between pages of the site point into the book, and drop other local links.

    Chromium prints a link to another page as a URI on the build machine
    (``file:///.../_build/html/scaling.html#...``); in the book it jumps to the
    first page of that chapter. A link to something the book does not hold (a
    notebook download, a source file) would lead nowhere on the reader's
    machine, so it is removed; links to the web stay.
    """
    prefix = html_dir.as_uri() + "/"
    for page in writer.pages:
        annotations = page.get("/Annots")
        if annotations is None:
            continue
        kept = ArrayObject()
        for reference in annotations.get_object():
            annotation = reference.get_object()
            action = annotation.get("/A")
            uri = action.get_object().get("/URI") if action is not None else None
            if uri is None or not str(uri).startswith("file:"):
                kept.append(reference)
                continue
            target = urllib.parse.unquote(str(uri)[len(prefix) :].split("#")[0]) if str(uri).startswith(prefix) else ""
            if target in starts:
                goto = ArrayObject([writer.pages[starts[target]].indirect_reference, NameObject("/XYZ"), NullObject(), NullObject(), NumberObject(0)])
                annotation[NameObject("/A")] = DictionaryObject({NameObject("/S"): NameObject("/GoTo"), NameObject("/D"): goto})
                kept.append(reference)
        page[NameObject("/Annots")] = kept


def _outline_items(writer: PdfWriter) -> list:
    """Every bookmark of ``writer``, in reading order (each before its children)."""
    items = []

    def walk(item):
        while item is not None:
            item = item.get_object()
            items.append(item)
            walk(item.get("/First"))
            item = item.get("/Next")

    outlines = writer.root_object.get("/Outlines")
    if outlines is not None:
        walk(outlines.get_object().get("/First"))
    return items


def _name_bookmarks(writer: PdfWriter, titles: list[str]) -> None:
    """Give the bookmarks the headings' titles, when they are the same headings."""
    items = _outline_items(writer)
    if len(items) != len(titles):
        print(f"    bookmarks keep Chromium's titles: {len(items)} bookmarks, {len(titles)} headings", flush=True)
        return
    for item, title in zip(items, titles):
        item[NameObject("/Title")] = TextStringObject(title)


def _sheets(page, parts: list[Part], edition: str, work: Path, release: str, epoch: int | None) -> list[int]:
    """Print the front matter and the footer sheet of one edition into ``work``; returns each part's first page."""
    lengths = [len(part.edition(edition)[0].pages) for part in parts]
    # The contents' own length moves every start; print it until it is stable.
    front_pages = 2
    while True:
        starts = [front_pages + sum(lengths[:i]) + 1 for i in range(len(parts))]
        printed = _print_html(page, _front_html(parts, starts, release, epoch, edition), work / f"front-{edition}.pdf")
        if printed == front_pages:
            break
        front_pages = printed
    footers = [""]
    footers += [f"<span>Contents</span><span>{n}</span>" for n in range(2, front_pages + 1)]
    for part, start, length in zip(parts, starts, lengths):
        label = html.escape(part.title)
        footers += [f"<span>{label}</span><span>{start + i}</span>" for i in range(length)]
    printed = _print_html(page, _stamps_html(footers), work / f"stamps-{edition}.pdf")
    if printed != len(footers):
        raise RuntimeError(f"the footer sheet has {printed} pages, expected {len(footers)}")
    return starts


def _bind(parts: list[Part], edition: str, starts: list[int], work: Path, html_dir: Path, epoch: int | None,
          output: Path) -> int:
    """Bind one edition from its printed parts and sheets into ``output``; returns its number of pages."""
    writer = PdfWriter()
    writer.append(work / f"front-{edition}.pdf", import_outline=False)
    writer.add_outline_item(title="Contents", page_number=1)
    for part in parts:
        writer.append(part.edition(edition)[0], import_outline=True)
    _name_bookmarks(writer, ["Contents"] + [heading for part in parts for heading in part.edition(edition)[1]])
    stamps = PdfReader(work / f"stamps-{edition}.pdf")
    for page, stamp in zip(writer.pages, stamps.pages):
        page.merge_page(stamp)
    _link_pages(writer, html_dir, {part.name: start - 1 for part, start in zip(parts, starts)})
    metadata = {"/Title": TITLE, "/Subject": f"{SUBTITLE} {EDITIONS[edition]}", "/Author": "The Why √dₖ authors",
                "/Creator": "make pdf: Chromium and pypdf"}
    if epoch is not None:
        metadata["/CreationDate"] = metadata["/ModDate"] = time.strftime("D:%Y%m%d%H%M%SZ", time.gmtime(epoch))
    writer.add_metadata(metadata)
    writer.page_mode = "/UseOutlines"
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("wb") as stream:
        writer.write(stream)
    return len(writer.pages)


def build(html_dir: Path, outputs: dict[str, Path], release: str) -> dict[str, int]:
    """Print the site once and bind each edition in ``outputs`` (a key of :data:`EDITIONS` to its PDF); pages of each."""
    unknown = sorted(set(outputs) - set(EDITIONS))
    if unknown:
        raise ValueError(f"unknown editions {unknown}: the editions are {sorted(EDITIONS)}")
    work = next(iter(outputs.values())).parent / "parts"
    work.mkdir(parents=True, exist_ok=True)
    for stale in work.glob("*.pdf"):
        stale.unlink()
    epoch = _epoch()
    with sync_playwright() as playwright:
        browser = _launch(playwright)
        try:
            page = _new_page(browser)
            parts = _print_site(page, html_dir, work, _toc(page, html_dir))
            starts = {edition: _sheets(page, parts, edition, work, release, epoch) for edition in outputs}
        finally:
            browser.close()
    return {edition: _bind(parts, edition, starts[edition], work, html_dir, epoch, output)
            for edition, output in outputs.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html", help="the built site (make html)")
    parser.add_argument("--output", type=Path, default=ROOT / "_build" / "pdf" / "why-sqrt-dk.pdf",
                        help="the instructor's edition, with the solutions")
    parser.add_argument("--student-output", type=Path, help="also the student's edition, without the solutions, here")
    args = parser.parse_args(argv)
    if not (args.html / "index.html").exists():
        parser.error(f"no built site in {args.html}: run make html first")
    if not CHROMIUM.exists():
        parser.error(f"no Chromium at {CHROMIUM} (on Debian: apt-get install chromium; or set CHROMIUM to a browser)")
    import attention_scaling

    outputs = {"instructor": args.output.resolve()}
    if args.student_output is not None:
        outputs["student"] = args.student_output.resolve()
    began = time.perf_counter()
    pages = build(args.html.resolve(), outputs, attention_scaling.__version__)
    for edition, output in outputs.items():
        print(f"==> Wrote {output}: the {edition}'s edition, {pages[edition]} pages")
    print(f"    in {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
