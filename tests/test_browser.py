"""The built site in a real browser: Debian's Chromium driven by Playwright.

Every page of ``_build/html`` is opened once, over HTTP from a local server
(as a host would serve it), in the light theme, then switched to the dark one
with the theme's switch. The visit records what a reader would run into in each:
console errors, failed or off-site requests, untypeset math, broken figures,
a broken heading outline and accessibility violations found by axe-core. The
tests below then assert on those records, so that each page x check is its
own test id while each page is loaded only once. Screenshots land in
``_build/screenshots``.

Nothing is fetched from outside: any request that leaves the site is blocked
and counted as a failure, and axe-core's script is the one ``make test``
installs with npm, pinned by ``tests/axe/package-lock.json`` (its path in
the ``AXE_JS`` variable that the Makefile sets). CI runs
``make html`` first; run on its own, this module builds the site if it finds
none.
"""

import functools
import json
import os
import re
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote_plus, urlsplit

import pytest

import hosting_checks
from sitebuild import CHECKOUT_LOCK, CHROMIUM, QuietHandler, one_process_at_a_time, serve

if not CHROMIUM.exists():
    pytest.skip("no chromium on the PATH (Debian: apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")

REPO = Path(__file__).resolve().parents[1]
HTML = REPO / "_build" / "html"
SCREENSHOTS = REPO / "_build" / "screenshots"
# The pinned axe-core: the lock names its version, make test installs it and says where.
AXE_LOCK = REPO / "tests" / "axe" / "package-lock.json"
AXE_VERSION = json.loads(AXE_LOCK.read_text())["packages"]["node_modules/axe-core"]["version"]
if "AXE_JS" in os.environ:
    AXE_JS = Path(os.environ["AXE_JS"])
    if not AXE_JS.is_file():
        # Under make, a missing file is a broken install, not a reason to skip every browser test.
        raise RuntimeError(f"AXE_JS names {AXE_JS}, which does not exist: run make test, which installs axe-core")
else:
    AXE_JS = REPO / ".venv" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
    if not AXE_JS.is_file():
        pytest.skip(f"axe-core is not installed at {AXE_JS} (make test installs it with npm)", allow_module_level=True)
# Every test here reads the built site, so `make check` leaves the module out.
pytestmark = pytest.mark.site

# Flags that keep Chromium from talking to anything but the page: no
# component updates, sync or other background traffic. --no-sandbox because
# CI runs as root, where Chromium's sandbox refuses to start.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 900}
# A phone's screen (Lighthouse's mobile preset), where more blocks scroll sideways.
PHONE = {"width": 412, "height": 823}
# Rendered math, figures and the axe report are ready well within this.
TIMEOUT_MS = 20_000
# The tallest screenshot taken, in CSS pixels: the first screens of a longer page.
SHOT_HEIGHT = 12_000

# TeX that MathJax should have replaced; left in the visible text, it means a
# formula was not typeset. Code is not searched: an example may print LaTeX.
RAW_TEX = re.compile(r"\$\$|\\\(|\\\)|\\\[|\\\]|\\begin\{")


def _site_pages():
    """Names of the pages to check, one test id each.

    Returns
    -------
    list of str
        The built pages (``index.html``, ...) without ``search.html``, which
        has its own test; a page left over from an older build is checked too,
        as it would be published. Before the first build, the pages that the
        sources in ``docs/`` will become.
    """
    if (HTML / "index.html").exists():
        pages = {path.name for path in HTML.glob("*.html")}
    else:
        pages = {f"{path.stem}.html" for path in (REPO / "docs").glob("*.md")}
    return sorted(pages - {"search.html"})


PAGES = _site_pages()
page_ids = [name.removesuffix(".html") for name in PAGES]
each_page = pytest.mark.parametrize("name", PAGES, ids=page_ids)


# -- Fixtures --------------------------------------------------------------------


@pytest.fixture(scope="session")
def html(repo_html, testrun_uid):
    """The built site's directory (tests/conftest.py builds it if missing), screenshots emptied.

    Emptied once per run, by the first of make test's workers to get here
    (the run's id is left in the directory): the others keep what it wrote.
    """
    run = SCREENSHOTS / ".run"
    with one_process_at_a_time(CHECKOUT_LOCK):
        if not (run.is_file() and run.read_text() == testrun_uid):
            shutil.rmtree(SCREENSHOTS, ignore_errors=True)
            SCREENSHOTS.mkdir(parents=True)
            run.write_text(testrun_uid)
    return repo_html


@pytest.fixture(scope="session")
def server(html):
    """Base URL of ``_build/html`` served on 127.0.0.1 at a free port."""
    httpd, root = serve(html)
    yield root
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the whole session (starting one takes a second)."""
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def report(browser, server):
    """What a visit to a page found, computed once per page.

    Returns
    -------
    callable
        ``report(name, theme)`` with ``theme`` "light" or "dark", returning
        that theme's dict from :func:`_inspect`.
    """
    cache = {}

    def get(name, theme):
        if name not in cache:
            try:
                cache[name] = _inspect(browser, server, name)
            except Exception as error:  # a timeout, say: fail each check once, fast
                cache[name] = error
        if isinstance(cache[name], Exception):
            pytest.fail(f"visiting {name} failed: {cache[name]}")
        return cache[name][theme]

    return get


# -- Visiting a page -------------------------------------------------------------


class Visit:
    """A page opened in a fresh browser context, with what went wrong on the way.

    Parameters
    ----------
    browser : playwright.sync_api.Browser
        The session's browser.
    root : str
        The site's base URL (``http://127.0.0.1:PORT/`` or ``file:///.../``);
        any request outside it is blocked and recorded.
    theme : {"light", "dark"}
        "light" is a first visit on a system in light mode. "dark" is a
        reader who picked the dark theme: it is put into localStorage before
        any script runs, where the theme's own switch stores that choice.
    """

    def __init__(self, browser, root, theme="light", viewport=VIEWPORT):
        self.root = root
        self.problems = []
        # A fresh context per visit: no localStorage or cache carried over.
        self.context = browser.new_context(viewport=viewport, color_scheme="light")
        if theme == "dark":
            self.context.add_init_script("localStorage.setItem('theme', 'dark');")
        self.context.add_init_script(RECORD_SHIFTS_JS)
        self.context.route("**/*", self._only_the_site)
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.page.on("console", self._on_console)
        self.page.on("pageerror", lambda error: self.problems.append(f"uncaught exception: {error}"))
        self.page.on("requestfailed", lambda request: self.problems.append(f"request failed: {request.url} ({request.failure})"))
        self.page.on("response", self._on_response)

    def _only_the_site(self, route):
        url = route.request.url
        if url.startswith(self.root) or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self.problems.append(f"off-site request blocked: {url}")
            route.abort("blockedbyclient")

    def _on_console(self, message):
        if message.type in ("error", "assert"):
            self.problems.append(f"console {message.type}: {message.text}")

    def _on_response(self, response):
        if response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {response.url}")

    def open(self, path):
        """Load ``path`` and wait until math, fonts and images are rendered."""
        self.page.goto(self.root + path, wait_until="load")
        # Math is typeset in the build; figures load lazily, so the ones below the first screen are asked for here.
        self.page.evaluate("""() => document.querySelectorAll("img[loading=lazy]").forEach((img) => { img.loading = "eager"; })""")
        self.page.evaluate("document.fonts.ready.then(() => true)")
        self.page.wait_for_function("Array.from(document.images).every(img => img.complete)")
        return self.page

    def rewrite(self, url, edit):
        """Serve what ``url`` (an address or a glob) matches with ``edit(text) -> text`` applied: a fault planted on its way."""

        def fulfill(route):
            response = route.fetch()
            route.fulfill(response=response, body=edit(response.text()))

        self.context.route(url, fulfill)

    def close(self):
        self.context.close()


@contextmanager
def _planted(browser, root, name, head):
    """Page ``name`` opened with ``head`` (a planted fault: a style or a script) put at the end of its head."""

    def plant(text):
        assert "</head>" in text, f"{name} has no </head> to plant before"
        return text.replace("</head>", head + "</head>", 1)

    visit = Visit(browser, root)
    try:
        visit.rewrite(root + name, plant)
        yield visit.open(name)
    finally:
        visit.close()


def _inspect(browser, root, name):
    """Open one page, then switch it to the dark theme, and record everything the per-page tests check.

    The page is opened as on a first visit, in the light theme; once the
    light checks are done, it is switched to the dark theme by the theme's own
    switch (:func:`_choose_dark_theme`), which changes colours only, and
    the checks about colour run again. That a choice stored by an earlier visit
    is applied as the page loads is the theme's script in every page's head,
    tested once, by :func:`test_a_dark_theme_chosen_before_is_applied_as_the_page_loads`.

    Parameters
    ----------
    browser : playwright.sync_api.Browser
    root : str
        The served site's base URL.
    name : str
        The page's file name, e.g. ``"index.html"``.

    Returns
    -------
    dict
        ``{"light": ..., "dark": ...}``. Each holds ``problems`` (console
        errors, failed and off-site requests), ``figures``, ``colors`` (see
        the JavaScript below), ``axe`` (serious and critical violations) and
        ``screenshot``. The light one also holds ``math``, ``headings``,
        ``shifts`` (see ``RECORD_SHIFTS_JS``), ``cut_off`` (see ``CUT_OFF_JS``),
        ``phone_scrolling`` (axe's check that what scrolls on a phone can be reached by keyboard) and
        ``reasons_out_of_view`` (see ``REASONS_OUT_OF_VIEW_JS``, on the desktop and on a phone).
    """
    visit = Visit(browser, root)
    stem = name.removesuffix(".html")
    try:
        page = visit.open(name)
        # Taken before anything else is done to the page: a full-page screenshot lays it out again.
        shifts = page.evaluate("window.layoutShifts")
        light = page.evaluate(INSPECT_JS, RAW_TEX.pattern)
        light.update(shifts=shifts, screenshot=SCREENSHOTS / f"{stem}.png")
        light["cut_off"] = page.evaluate(CUT_OFF_JS)
        light["reasons_out_of_view"] = page.evaluate(REASONS_OUT_OF_VIEW_JS)
        # A full-page capture of the API reference (over 40 000 px tall) can outlast the timeout on a busy
        # 2-core machine; the screenshot is for people to look at, so a tall page is captured to SHOT_HEIGHT.
        height = page.evaluate("document.documentElement.scrollHeight")
        width = page.viewport_size["width"]
        page.screenshot(path=light["screenshot"], full_page=True,
                        clip={"x": 0, "y": 0, "width": width, "height": min(height, SHOT_HEIGHT)})
        # Problems so far are the site's; axe's own requests come after.
        light["problems"] = list(visit.problems)
        light["axe"] = _axe_violations(page)
        # On a phone more blocks scroll sideways (code, tables, formulas): each must be reachable by keyboard.
        page.set_viewport_size(PHONE)
        light["phone_scrolling"] = _axe_violations(page, only=["scrollable-region-focusable"])
        light["reasons_out_of_view"] += page.evaluate(REASONS_OUT_OF_VIEW_JS)
        page.set_viewport_size(VIEWPORT)

        seen = len(visit.problems)
        _choose_dark_theme(page)
        dark = page.evaluate(INSPECT_JS, RAW_TEX.pattern)
        dark["screenshot"] = SCREENSHOTS / f"{stem}-dark.png"
        # The dark theme changes colours only, which its first screen shows (axe checks the contrast
        # of the whole page below); a full-page capture would add one to three seconds per page.
        page.screenshot(path=dark["screenshot"])
        dark["problems"] = visit.problems[seen:]
        # The markup was checked in light.
        dark["axe"] = _axe_violations(page, only=COLOUR_RULES)
        return {"light": light, "dark": dark}
    finally:
        visit.close()


def _choose_dark_theme(page):
    """Switch the open page to the dark theme with Furo's switch, the button beside the article's title.

    Each click moves the switch on (auto, then the other of light and dark,
    then back): on a system in light mode, the first click gives dark. It is
    clicked from a script, so that no pointer rests on it.
    """
    page.evaluate("""() => {
      const toggle = [...document.querySelectorAll('button.theme-toggle')].find((button) => button.checkVisibility());
      for (let clicks = 0; clicks < 3 && document.body.dataset.theme !== 'dark'; clicks++) toggle.click();
    }""")
    page.wait_for_function("document.body.dataset.theme === 'dark'")
    # Some of the theme's colours change with a transition: axe reads them once they have arrived.
    page.evaluate("""Promise.all(document.getAnimations().filter((animation) => animation instanceof CSSTransition)
                                   .map((animation) => animation.finished)).then(() => true)""")


# Runs before the page's own scripts: every layout shift not caused by the reader, when it happened and
# what moved, from where to where (x, y, width, height in CSS pixels).
RECORD_SHIFTS_JS = """
window.layoutShifts = [];
new PerformanceObserver((list) => {
  for (const shift of list.getEntries()) {
    if (shift.hadRecentInput) continue;
    const rect = (r) => [r.x, r.y, r.width, r.height].map(Math.round);
    const moved = shift.sources.map((source) => ({
      node: source.node ? source.node.nodeName + "." + (source.node.className || "") : "?",
      from: rect(source.previousRect),
      to: rect(source.currentRect),
    }));
    window.layoutShifts.push({time: shift.startTime, value: shift.value, moved});
  }
}).observe({type: "layout-shift", buffered: true});
"""


def _shifts_on_a_fresh_load(browser, root, name):
    """The layout shifts of one more first visit to page ``name``, in the light theme."""
    visit = Visit(browser, root)
    try:
        return visit.open(name).evaluate("window.layoutShifts")
    finally:
        visit.close()


# Runs in the page; returns plain data for the tests to assert on.
INSPECT_JS = """rawTexPattern => {
  const article = document.querySelector("article[role=main]");
  const box = el => { const r = el.getBoundingClientRect(); return [r.width, r.height]; };
  const describe = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
      (el.getAttribute("src") ? "[src=" + el.getAttribute("src") + "]" : "");
  // Figures: every image and every outermost inline SVG in the article, but
  // not the icons of buttons and toggles, nor what sits in a collapsed
  // dropdown (a hidden solution) until the reader opens it.
  const figures = Array.from(article.querySelectorAll("img, svg"))
    .filter(el => !el.parentElement.closest("svg"))
    .filter(el => !el.matches(".tb-icon") && !el.closest("button, summary"))
    .filter(el => !el.closest("details:not([open]), .toggle-hidden"))
    .map(el => ({
      what: describe(el),
      size: box(el),
      natural: el.tagName === "IMG" ? el.naturalWidth : null,
      alt: el.tagName === "IMG" ? (el.getAttribute("alt") || "").trim() : null,
    }));
  const mathElements = Array.from(article.querySelectorAll(".math"));
  // The text a reader sees (document.body.innerText without code blocks).
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let prose = "";
  while (walker.nextNode()) {
    const parent = walker.currentNode.parentElement;
    if (!parent.closest("pre, code, script, style") && parent.checkVisibility()) prose += walker.currentNode.data;
  }
  return {
    article: article !== null,
    math: {
      elements: mathElements.length,
      untypeset: mathElements.filter(el => !el.querySelector("math")).length,
      typeset: document.querySelectorAll("math").length,
      // Drawn in the site's math font, not a fallback: the font loaded and has what the formulas need.
      fontLoaded: document.fonts.check('16px "STIX Two Math subset"'),
      rawTex: prose.match(new RegExp(rawTexPattern, "g")) || [],
    },
    figures,
    headings: Array.from(article.querySelectorAll("h1, h2, h3, h4, h5, h6"))
      .map(h => [Number(h.tagName[1]), h.textContent.replace(/#$/, "").trim()]),
    colors: {
      dataTheme: document.body.dataset.theme,
      text: getComputedStyle(article).color,
      background: getComputedStyle(document.body).backgroundColor,
    },
  };
}"""


# The axe-core rules about colour, all that differs between light and dark.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]


def _axe_violations(page, only=None):
    """Serious and critical axe-core violations on the open page.

    The pinned axe-core (:data:`AXE_JS`) is injected from disk, so nothing is
    fetched, once per page: the dark theme's run uses the light one's.

    Parameters
    ----------
    page : playwright.sync_api.Page
    only : list of str, optional
        Run just these axe rules; all of them by default.

    Returns
    -------
    list of str
        One line per violation: rule id, impact, help text and targets.
    """
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE_JS))
    options = {"resultTypes": ["violations"]}
    if only:
        options["runOnly"] = {"type": "rule", "values": only}
    result = page.evaluate("options => axe.run(document, options)", options)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[node['target'] for node in v['nodes']]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def _luminance(css_color):
    """Relative luminance (WCAG 2) of a computed CSS ``rgb()``/``rgba()`` colour.

    Parameters
    ----------
    css_color : str
        As ``getComputedStyle`` returns it, e.g. ``"rgb(206, 214, 221)"``.

    Returns
    -------
    float
        0 for black, 1 for white.

    Examples
    --------
    >>> round(_luminance("rgb(255, 255, 255)"), 3), _luminance("rgba(0, 0, 0, 1)")
    (1.0, 0.0)
    """
    red, green, blue = (int(part) / 255 for part in re.findall(r"[\d.]+", css_color)[:3])

    def linear(channel):
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


def _figure_problems(figures):
    """Figures that a reader would not see, as readable lines."""
    problems = []
    for figure in figures:
        width, height = figure["size"]
        if width <= 0 or height <= 0:
            problems.append(f"{figure['what']} is rendered {width}x{height}")
        if figure["natural"] is not None and figure["natural"] <= 0:
            problems.append(f"{figure['what']} did not load (naturalWidth 0)")
        if figure["alt"] is not None and not figure["alt"]:
            problems.append(f"{figure['what']} has no alt text")
    return problems


# -- Every page, light theme ---------------------------------------------------


def test_every_source_page_is_checked():
    # A page missing here was added to docs/ after the last build.
    expected = {f"{path.stem}.html" for path in (REPO / "docs").glob("*.md")}
    assert expected <= set(PAGES), f"pages with no browser tests (run make html): {sorted(expected - set(PAGES))}"


@each_page
def test_page_loads_cleanly_and_stays_on_the_site(report, name):
    problems = report(name, "light")["problems"]
    assert not problems, "\n".join(problems)


@each_page
def test_math_is_typeset(report, name):
    math = report(name, "light")["math"]
    assert math["untypeset"] == 0, f"{math['untypeset']} of {math['elements']} formulas were not typeset"
    if math["elements"]:
        assert math["typeset"] > 0, "the page has math but no MathML"
        assert math["fontLoaded"], "the math font did not load"
    assert not math["rawTex"], f"raw TeX left in the visible text: {sorted(set(math['rawTex']))}"


# How long the math font is held back below: well after the page's first paint (with
# font-display: block, a font this late had the formulas laid out again).
LATE_FONT_SECONDS = 1.5


def test_math_whose_font_arrives_late_moves_nothing(browser, server):
    # On a busy machine the preloaded math font can arrive after the first paint; then a formula
    # laid out in a fallback font was laid out again in its own, and the text around it moved
    # (CLS 0.14 on the correlation page in one CI run). Here the font is held back on purpose.
    visit = Visit(browser, server)

    def late(route):
        time.sleep(LATE_FONT_SECONDS)
        route.continue_()

    visit.context.route("**/static-math.woff2", late)  # the newest route decides first
    try:
        page = visit.open("correlation.html")
        page.wait_for_timeout(300)
        assert page.evaluate("window.layoutShifts") == [] and not visit.problems, visit.problems
    finally:
        visit.close()


@each_page
def test_nothing_moves_as_the_page_loads(report, browser, server, name):
    # Cumulative layout shift 0 (issue 17): late fonts, unsized images, late theme styles or scripts would
    # move the text, on every load. A busy machine (CI runs the browser beside other tests) now and then
    # paints a half-parsed page or an odd frame, and records a shift that the next load does not have:
    # so a page fails when two fresh loads shift as well.
    shifts = report(name, "light")["shifts"]
    if shifts:
        again = [_shifts_on_a_fresh_load(browser, server, name) for _ in range(2)]
        assert not all(again), [shifts, *again]


# A fault to plant: a script that puts a paragraph at the top of the article after the page has loaded
# and painted, as a late banner, font or image would move what is below it.
LATE_PARAGRAPH_JS = """<script>addEventListener("load", () => setTimeout(() =>
  document.querySelector("article").insertAdjacentHTML("afterbegin", "<p>Late.</p>"), 300));</script>"""


def test_shift_check_catches_a_paragraph_that_comes_late(browser, server):
    # The planted fault: LATE_PARAGRAPH_JS in the page's head. It must shift every load, as the page
    # test requires of a fault.
    def load():
        with _planted(browser, server, "scaling.html", LATE_PARAGRAPH_JS) as page:
            page.wait_for_function("document.querySelector('article > p:first-child')?.textContent === 'Late.'")
            # The shift is recorded in the next frame.
            page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
            return page.evaluate("window.layoutShifts")

    loads = [load() for _ in range(3)]
    assert all(loads), loads


# The sidebars hide what is wider than they are: each of them, or an element in them, whose content is
# wider than its box and does not show the overflow, as "tag.class: content width > box width".
CUT_OFF_JS = """() => [...document.querySelectorAll(".sidebar-drawer, .sidebar-drawer *, .toc-drawer, .toc-drawer *")]
  .filter((element) => element.scrollWidth > element.clientWidth + 1 && getComputedStyle(element).overflowX !== "visible")
  .map((element) => `${element.tagName.toLowerCase()}.${[...element.classList].join(".")}: ${element.scrollWidth} > ${element.clientWidth}`)"""


# The reason of each step in a proof's table of steps that the reader cannot see without scrolling sideways:
# beyond the right edge of the column (or of the screen), or wider than its own cell.
REASONS_OUT_OF_VIEW_JS = """() => [...document.querySelectorAll("table.step-table tbody tr")].flatMap((row) => {
  const reason = row.lastElementChild, box = reason.getBoundingClientRect();
  const edge = Math.min((row.closest(".table-wrapper") || row.closest("table")).getBoundingClientRect().right, innerWidth);
  return box.right > edge + 1 || reason.scrollWidth > reason.clientWidth + 1
    ? [`${innerWidth} px: "${reason.textContent.trim().slice(0, 40)}" ends at ${Math.round(box.right)}, the column at ${Math.round(edge)}`]
    : [];
})"""


@each_page
def test_every_step_reason_is_in_view_on_the_desktop_and_on_a_phone(report, name):
    out_of_view = report(name, "light")["reasons_out_of_view"]
    assert not out_of_view, f"{name}: " + "\n".join(out_of_view)


def test_reason_check_catches_reasons_beside_a_wide_formula(browser, server):
    # The planted fault: the tables' three columns side by side again, as before the site's stylesheet stacked them.
    # On a phone, where every table of the page is wider than the screen with three columns.
    unstacked = "table.step-table tr { display: table-row; } table.step-table tr > * { grid-column: auto; }"
    visit = Visit(browser, server, viewport=PHONE)
    try:
        page = visit.open("saturation.html")
        page.add_style_tag(content=unstacked)
        out_of_view = page.evaluate(REASONS_OUT_OF_VIEW_JS)
    finally:
        visit.close()
    assert any(line.startswith(f'{PHONE["width"]} px: "algebra"') for line in out_of_view), out_of_view


@each_page
def test_nothing_in_the_sidebars_is_cut_off(report, name):
    cut_off = report(name, "light")["cut_off"]
    assert not cut_off, f"{name}: {cut_off}"


def _cut_off_with_a_long_name_in_the_contents(browser, server, head=""):
    """``CUT_OFF_JS`` on a page whose contents gained an entry as long as the API's longest; ``head`` planted as for :func:`_planted`."""
    with _planted(browser, server, "scaling.html", head) as page:
        page.evaluate("""() => {
          const list = document.querySelector(".toc-tree ul ul");
          list.insertAdjacentHTML("beforeend", '<li><a class="reference internal" href="#"><code class="docutils literal notranslate">'
            + '<span class="pre">scaled_dot_product_attention_with_a_longer_name()</span></code></a></li>');
        }""")
        return page.evaluate(CUT_OFF_JS)


def test_a_long_name_in_the_contents_wraps(browser, server):
    assert _cut_off_with_a_long_name_in_the_contents(browser, server) == []


def test_cut_off_check_catches_a_long_name_kept_on_one_line(browser, server):
    # The planted fault: code in the contents kept on one line and cut at the edge of the sidebar.
    nowrap = "<style>.toc-tree code, .toc-tree span.pre { white-space: nowrap !important; } .toc-tree a { overflow: hidden; }</style>"
    assert _cut_off_with_a_long_name_in_the_contents(browser, server, nowrap)


@each_page
def test_figures_render_with_alt_text(report, name):
    problems = _figure_problems(report(name, "light")["figures"])
    assert not problems, "\n".join(problems)


@each_page
def test_headings_form_an_outline(report, name):
    headings = report(name, "light")["headings"]
    levels = [level for level, _ in headings]
    assert levels.count(1) == 1, f"the article should have exactly one h1: {headings}"
    assert levels[0] == 1, f"the article should start with its h1: {headings}"
    for (before, _), (level, text) in zip(headings, headings[1:]):
        assert level <= before + 1, f"h{before} is followed by h{level} ({text!r}): a level is skipped"


@pytest.mark.parametrize("theme", ["light", "dark"])
@each_page
def test_no_serious_accessibility_violations(report, name, theme):
    violations = report(name, theme)["axe"]
    assert not violations, "\n".join(violations)


@each_page
def test_what_scrolls_on_a_phone_can_be_reached_from_the_keyboard(report, name):
    violations = report(name, "light")["phone_scrolling"]
    assert not violations, "\n".join(violations)


def test_phone_check_catches_a_table_that_scrolls_without_a_tab_stop(browser, server):
    # The planted fault: the tab stops that docs/_ext/accessible_html.py gives tables' wrappers taken out, on a
    # page whose tables scroll on a phone and hold no link (which would be a tab stop of its own).
    visit = Visit(browser, server, viewport=PHONE)
    untabbed = lambda text: re.sub(r'(<div class="table-wrapper[^"]*") tabindex="0"', r"\1", text)  # noqa: E731
    visit.rewrite(server + "worked-examples.html", untabbed)
    try:
        page = visit.open("worked-examples.html")
        violations = _axe_violations(page, only=["scrollable-region-focusable"])
    finally:
        visit.close()
    assert any("table-wrapper" in line for line in violations), violations


@pytest.mark.parametrize("address", ["saturation.html#thm-gap-probability", "dot-product-variance.html#ex-std-512"])
def test_a_link_to_a_label_lands_on_it_on_a_phone(browser, server, address):
    # Far down a long page on a phone: the label must be on the first screen once the page has settled,
    # and nothing may have moved on the way (content-visibility: auto on the blocks far from the screen
    # once broke both: the browser placed the label by the blocks' guessed heights).
    visit = Visit(browser, server, viewport=PHONE)
    try:
        page = visit.open(address)
        page.evaluate("new Promise((done) => setTimeout(done, 1000))")
        top = page.evaluate("document.getElementById(location.hash.slice(1)).getBoundingClientRect().top")
        # On the first screen: the fault this guards against put it 1,500 to 3,400 px away.
        assert 0 <= top < PHONE["height"], f"{address}: the label is {top} px from the top of the screen"
        assert page.evaluate("window.layoutShifts") == []
    finally:
        visit.close()


def test_axe_is_the_pinned_version_and_catches_text_too_pale_to_read(browser, server):
    # The planted fault: the article's paragraphs in light grey on the white page (contrast about 1.4:1).
    with _planted(browser, server, "scaling.html", "<style>article p { color: #ddd !important; }</style>") as page:
        violations = _axe_violations(page, only=COLOUR_RULES)
        assert page.evaluate("axe.version") == AXE_VERSION
    assert any(line.startswith("color-contrast (serious)") for line in violations), violations


def test_dark_contrast_check_catches_text_too_dark_to_read(browser, server):
    # The planted fault: in the dark theme only, the article's paragraphs in dark grey on the dark page. The
    # page visits find it once the theme's switch has made the page dark, and not before: the switch took.
    style = "<style>body[data-theme=dark] article p { color: #333 !important; }</style>"
    with _planted(browser, server, "scaling.html", style) as page:
        in_light = _axe_violations(page, only=COLOUR_RULES)
        _choose_dark_theme(page)
        in_dark = _axe_violations(page, only=COLOUR_RULES)
    assert not in_light, in_light
    assert any(line.startswith("color-contrast (serious)") for line in in_dark), in_dark


def test_the_switch_to_dark_waits_for_the_colours_to_arrive(browser, server):
    # The planted fault: the article's text changes colour over two seconds, as the theme's buttons do over
    # 0.15 s (a dark 404 page once failed axe on a search button read half-way). Read at once, the text
    # would still be dark on the dark page.
    with _planted(browser, server, "scaling.html", "<style>article p { transition: color 2s linear; }</style>") as page:
        _choose_dark_theme(page)
        text = page.evaluate("getComputedStyle(document.querySelector('article p')).color")
    assert _luminance(text) > 0.5, f"article text {text} was read before its transition ended"


@pytest.mark.parametrize("theme", ["light", "dark"])
@each_page
def test_screenshot_is_written(report, name, theme):
    screenshot = report(name, theme)["screenshot"]
    assert screenshot.stat().st_size > 10_000, f"{screenshot} is suspiciously small"


# -- Every page, dark theme ------------------------------------------------------


@each_page
def test_dark_mode_is_dark_and_readable(report, name):
    dark = report(name, "dark")
    assert not dark["problems"], "\n".join(dark["problems"])
    _assert_dark(dark["colors"])
    problems = _figure_problems(dark["figures"])
    assert not problems, "\n".join(problems)


def test_a_dark_theme_chosen_before_is_applied_as_the_page_loads(browser, server):
    # The theme's switch stores the reader's choice; the theme's script applies it on the next page opened.
    # The per-page tests choose the theme on the open page, with the switch.
    visit = Visit(browser, server, theme="dark")
    try:
        page = visit.open("scaling.html")
        _assert_dark(page.evaluate(INSPECT_JS, RAW_TEX.pattern)["colors"])
        assert not visit.problems, "\n".join(visit.problems)
    finally:
        visit.close()


def _assert_dark(colors):
    """Fail unless ``colors`` (see ``INSPECT_JS``) are the dark theme's: light text on a dark page."""
    assert colors["dataTheme"] == "dark", colors
    assert _luminance(colors["text"]) > 0.5, f"article text {colors['text']} is not light"
    assert _luminance(colors["background"]) < 0.2, f"page background {colors['background']} is not dark"


# -- Single pages ------------------------------------------------------------------


def test_index_works_from_disk(browser, html):
    # The README promises the site opens from the file system, no server.
    visit = Visit(browser, html.as_uri() + "/")
    try:
        page = visit.open("index.html")
        assert page.locator("math").count() > 0, "no MathML from file://"
        assert page.locator("article[role=main] .math:not(:has(math))").count() == 0
        assert page.locator("article[role=main] h1").inner_text().strip()
        assert not visit.problems, "\n".join(visit.problems)
    finally:
        visit.close()


def test_search_finds_a_term_from_the_pages(browser, server):
    visit = Visit(browser, server)
    try:
        page = visit.open("search.html?q=Jacobian")
        results = page.locator("#search-results ul.search li a")
        results.first.wait_for()
        assert results.count() >= 1
        assert not visit.problems, "\n".join(visit.problems)
    finally:
        visit.close()


def _contents_part(caption):
    """The page names (``graph``, ...) of the part of docs/index.md's contents under ``caption``."""
    part = re.search(rf":caption: {caption}\n(?::.*\n)*\n((?:[^\n`]+\n)+)```", (REPO / "docs" / "index.md").read_text())
    return part[1].split()


# Sphinx's summary once its search has finished, with results or without.
SEARCH_FINISHED_JS = ("() => /^(Search finished|Your search did not match)/.test("
                      "document.querySelector('#search-results .search-summary')?.innerText)")


def _search(browser, server, query):
    """The addresses (``saturation.html#...``) the search page lists for ``query``, best first."""
    visit = Visit(browser, server)
    try:
        page = visit.open("search.html?q=" + quote_plus(query))
        page.wait_for_function(SEARCH_FINISHED_JS, timeout=TIMEOUT_MS)
        found = page.locator("#search-results ul.search li > a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
        assert not visit.problems, "\n".join(visit.problems)
        return found
    finally:
        visit.close()


@pytest.mark.parametrize("query", ["jacobian", "softmax", "variance", "why sqrt dk"])
def test_search_lists_chapters_before_reference_pages_and_the_api_last(browser, server, query):
    # docs/_ext/search_scorer.js: Sphinx alone lists API entries first for "jacobian".
    pages = [urlsplit(address).path.removesuffix(".html") for address in _search(browser, server, query)]
    chapters = {"index", *_contents_part("Chapters")}
    assert pages and pages[0] in chapters, f"{query!r}: the first result is {pages[:1]}, not a chapter"
    last_chapter = max(place for place, name in enumerate(pages) if name in chapters)
    first_other = min((place for place, name in enumerate(pages) if name not in chapters), default=len(pages))
    assert last_chapter < first_other, f"{query!r}: a reference page among the chapters: {pages}"
    if "api" in pages:
        assert set(pages[pages.index("api"):]) == {"api"}, f"{query!r}: the API reference is not last: {pages}"
    if query == "why sqrt dk":
        assert pages[0] == "index", f"the home page answers {query!r}, but the first result is {pages[0]}"


def test_search_offers_nothing_for_words_that_are_not_numbers(browser, server):
    # "constructor" is a property of every JavaScript object, not an item of the site.
    for query in ["constructor", "theorem", "Theorem 99.9"]:
        visit = Visit(browser, server)
        try:
            page = visit.open("search.html?q=" + quote_plus(query))
            page.wait_for_function(SEARCH_FINISHED_JS, timeout=TIMEOUT_MS)
            assert page.locator("p.search-number").count() == 0, query
            assert not visit.problems, "\n".join(visit.problems)
        finally:
            visit.close()


def test_search_scorer_knows_the_reference_part_of_the_contents():
    # A reference page the scorer does not name would rank among the chapters.
    scorer = (REPO / "docs" / "_ext" / "search_scorer.js").read_text()
    listed = re.search(r"referencePages: \[([^\]]*)\]", scorer)
    assert listed and re.findall(r'"([\w-]+)"', listed[1]) == _contents_part("Reference"), (
        "docs/_ext/search_scorer.js's referencePages must list the contents' Reference part, in order")


PUBLISHED = dict(line.split(" ", 1) for line in (REPO / "tests" / "published_numbers.txt").read_text().splitlines()
                 if line and not line.startswith("#"))


@pytest.mark.parametrize(("label", "short"), [("thm-dot-product-variance", "thm 2.1"), ("fig-variance-vs-dk", "Fig. 5.1"),
                                              ("eq-dot-product-variance", "(2.3)"), ("ex-bf16-range", "Ex. 11.2.")])
@pytest.mark.parametrize("form", ["as published", "short"])
def test_search_offers_a_result_by_its_number(browser, server, label, short, form):
    # "Theorem 2.1", "Equation (2.3)", "Fig. 5.1", "(2.3)": a number as a course cites it (docs/_static/search_numbers.js).
    assert short.rstrip(".").split()[-1].strip("()") in PUBLISHED[label], f"{short!r} is not {PUBLISHED[label]!r}"
    visit = Visit(browser, server)
    try:
        page = visit.open("search.html?q=" + quote_plus(PUBLISHED[label] if form == "as published" else short))
        offer = page.locator("p.search-number a")
        offer.wait_for(timeout=TIMEOUT_MS)
        anchor = f"equation-{label}" if label.startswith("eq-") else label
        assert urlsplit(offer.get_attribute("href")).fragment == anchor, offer.get_attribute("href")
        assert offer.inner_text().startswith(PUBLISHED[label]), offer.inner_text()
        # It stands above Sphinx's results, the first link a reader meets there.
        assert page.evaluate("() => document.querySelector('p.search-number').nextElementSibling.id") == "search-results"
        target = page.url.split("?")[0].rsplit("/", 1)[0] + "/" + offer.get_attribute("href")
        assert f'id="{anchor}"' in page.request.get(target).text(), f"no #{anchor} on {target}"
        assert not visit.problems, "\n".join(visit.problems)
    finally:
        visit.close()


def test_the_regimes_explorer_follows_the_keyboard(browser, server):
    # docs/_static/regimes_explorer.js: the slider and the scale choice, by keyboard only.
    visit = Visit(browser, server)
    try:
        page = visit.open("regimes.html")
        figure = page.locator(".regimes-explorer")
        summary = figure.locator(".explorer-summary p:not([hidden])")
        shown = lambda: figure.locator("g[data-state]").evaluate_all(
            "groups => groups.filter(g => getComputedStyle(g).display !== 'none').map(g => g.dataset.state)")
        assert summary.count() == 1 and shown() == ["2-1", "2-1"], shown()
        slider = figure.locator('input[type="range"]')
        slider.focus()
        page.keyboard.press("ArrowRight")
        assert shown() == ["3-1", "3-1"] and summary.inner_text().startswith("dₖ = 256"), summary.inner_text()
        assert slider.get_attribute("aria-valuetext") == "dₖ = 256" and figure.locator("output").inner_text() == "256"
        # Unscaled at the widest d_k, the largest weight is near 1.
        page.keyboard.press("End")
        figure.locator('input[type="radio"][value="0"]').focus()
        page.keyboard.press("Space")
        assert shown() == ["5-0", "5-0"], shown()
        largest = float(re.search(r"is (\d\.\d+) on average", summary.inner_text())[1])
        assert summary.inner_text().startswith("dₖ = 4096") and largest > 0.9, summary.inner_text()
        assert not visit.problems, "\n".join(visit.problems)
    finally:
        visit.close()


# What docs/_static/print.css (and Furo's own print rules) must hide on paper.
HIDDEN_IN_PRINT = [
    ".sidebar-drawer",
    ".toc-drawer",
    ".mobile-header",
    ".content-icon-container",
    ".back-to-top",
    ".related-pages",
    ".headerlink",
]


def test_print_shows_the_article_alone(browser, server, html):
    # The index (saved as a PDF to look at) and the first page with figures.
    with_figures = [name for name in PAGES if "<figure" in (html / name).read_text()]
    for name in ["index.html"] + with_figures[:1]:
        visit = Visit(browser, server)
        try:
            page = visit.page
            page.emulate_media(media="print")
            visit.open(name)
            for selector in HIDDEN_IN_PRINT:
                shown = [el.is_visible() for el in page.locator(selector).all()]
                assert not any(shown), f"{name}: {selector} is visible in print"
            assert page.locator("article[role=main] h1").is_visible(), f"{name}: the title is hidden in print"
            # The article takes the paper's width: the sidebars' columns are gone too, not only their content.
            article, viewport = page.locator("article[role=main]").bounding_box(), page.viewport_size
            assert article["width"] > 0.85 * viewport["width"], f"{name}: the article is {article['width']} px of {viewport['width']} in print"
            kept = page.locator("article[role=main] :is(img, figure, math)")
            assert kept.count() > 0 and all(el.is_visible() for el in kept.all()), f"{name}: math or a figure is hidden in print"
            # A figure or displayed equation is never split across two pages.
            whole = page.locator("article[role=main] :is(figure, math[display=block])")
            breaks = {el.evaluate("el => getComputedStyle(el).breakInside") for el in whole.all()}
            assert breaks <= {"avoid"}, f"{name}: break-inside {breaks} on figures or equations"
            if name == "index.html":
                pdf = SCREENSHOTS / "index-print.pdf"
                page.pdf(path=pdf, format="A4")
                assert pdf.read_bytes().startswith(b"%PDF") and pdf.stat().st_size > 10_000
            assert not visit.problems, "\n".join(visit.problems)
        finally:
            visit.close()


# -- Hosting: metadata, favicon, sitemap, the 404 page, copy buttons -------------
# tests/hosting_checks.py holds the checks of the metadata and the sitemap;
# tests/test_hosting.py runs them on a copy built with a base URL as well.

SOURCE_PAGES = hosting_checks.source_pages(REPO)
each_source_page = pytest.mark.parametrize("name", SOURCE_PAGES, ids=[name.removesuffix(".html") for name in SOURCE_PAGES])


@each_source_page
def test_page_has_description_social_metadata_and_favicon(html, name):
    base = hosting_checks.base_url(html)
    problems = hosting_checks.metadata_problems(hosting_checks.page_head(html / name), name, base, html)
    assert not problems, "\n".join(problems)


def test_metadata_check_catches_a_missing_description_and_a_stray_url(html):
    # Planted faults in the index's head: its description removed, and an
    # og:url left in a build that knows no base URL (or a wrong one in one that does).
    head = hosting_checks.page_head(html / "index.html")
    del head.meta["description"]
    head.meta["og:url"] = ["index.html"]
    problems = "\n".join(hosting_checks.metadata_problems(head, "index.html", hosting_checks.base_url(html), html))
    assert "no meta description" in problems
    assert "og:url" in problems


def test_sitemap_lists_every_page_or_is_absent_without_a_base_url(html):
    base = hosting_checks.base_url(html)
    problems = hosting_checks.sitemap_problems(html, base, SOURCE_PAGES)
    assert not problems, "\n".join(problems)


def test_the_favicon_is_served_and_requested_without_a_404(browser, server):
    visit = Visit(browser, server)
    requested = []
    visit.page.on("request", lambda request: requested.append(request.url))
    try:
        page = visit.open("index.html")
        icon = page.evaluate("document.querySelector('link[rel~=icon]')?.href")
        assert icon and icon.startswith(server), f"no favicon link on the site: {icon}"
        response = page.request.get(icon)
        assert response.status == 200 and response.headers["content-type"].startswith("image/svg+xml")
        # A browser that finds no icon link asks for /favicon.ico, which is a 404.
        assert not any(url.endswith("/favicon.ico") for url in requested), "the browser fell back to /favicon.ico"
        assert not visit.problems, "\n".join(visit.problems)
    finally:
        visit.close()


class _HostHandler(QuietHandler):
    """Serves the site under ``prefix`` and 404.html for anything missing, as Read the Docs and GitHub Pages do."""

    prefix = "/"

    def translate_path(self, path):
        if not path.startswith(self.prefix):
            return str(Path(self.directory) / "no such file")
        return super().translate_path("/" + path[len(self.prefix):])

    def send_error(self, code, message=None, explain=None):
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.exists():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


@pytest.fixture(scope="session")
def host(html):
    """``(root, prefix)``: the site served under the path it is published at, with its 404 page for missing files."""
    prefix = urlsplit(hosting_checks.base_url(html)).path or "/"
    httpd, root = serve(html, type("Handler", (_HostHandler,), {"prefix": prefix}))
    yield root, prefix
    httpd.shutdown()
    httpd.server_close()


# Deeper than any page of the site, so that a relative link would miss.
MISSING = "chapter/section/no-such-page.html"
CONSOLE_404 = "console error: Failed to load resource: the server responded with a status of 404 (Not Found)"


def _not_found_problems(browser, root, prefix, plant=None):
    """What goes wrong on the 404 page served for a missing page three folders deep.

    ``plant(html) -> html`` rewrites the 404 page on its way to the browser,
    to plant a fault.
    """
    visit = Visit(browser, root)
    address = root + prefix.lstrip("/") + MISSING
    if plant is not None:
        visit.rewrite(address, plant)
    try:
        page = visit.open(prefix.lstrip("/") + MISSING)
        # The missing page's own 404 is the point (Chromium also logs it, without its
        # address, on the console); any other 404 adds both lines again.
        problems = list(visit.problems)
        for expected in (f"HTTP 404: {address}", CONSOLE_404):
            if expected in problems:
                problems.remove(expected)
        if "Page not found" not in page.locator("article h1").inner_text():
            problems.append("the 404 page has no 'Page not found' heading")
        if page.evaluate("getComputedStyle(document.body).fontFamily").startswith("Times"):
            problems.append("the theme's stylesheet did not load")
        links = page.evaluate("Array.from(document.querySelectorAll('.sidebar-drawer a[href]'), a => a.href.split('#')[0])")
        links = sorted({link for link in links if link.startswith(root)})
        if not links:
            problems.append("the 404 page links to no page of the site")
        for link in links:
            status = page.request.get(link).status
            if status != 200:
                problems.append(f"the 404 page links to {link}, which answers {status}")
        return problems
    finally:
        visit.close()


def test_404_page_works_from_any_depth(browser, host):
    root, prefix = host
    problems = _not_found_problems(browser, root, prefix)
    assert not problems, "\n".join(problems)


def test_404_check_catches_relative_links(browser, host):
    # The planted fault: the 404 page's links made relative, as they would be
    # without sphinx-notfound-page; from three folders down they all miss.
    root, prefix = host
    problems = _not_found_problems(browser, root, prefix,
                                   plant=lambda text: text.replace(f'href="{prefix}', 'href="').replace(f'src="{prefix}', 'src="'))
    assert any("HTTP 404" in problem for problem in problems), problems


def test_copy_buttons_on_code_cells_and_bibtex_not_on_outputs(browser, server, html):
    with_cells = [name for name in PAGES if 'class="cell_output' in (html / name).read_text()]
    assert with_cells, "no page has a cell with an output"
    for name, blocks in (("cite.html", "div.highlight-bibtex"), (with_cells[0], "div.cell_input")):
        visit = Visit(browser, server)
        try:
            page = visit.open(name)
            page.wait_for_selector("button.copybtn", state="attached")
            code = page.locator(f"{blocks} div.highlight pre").count()
            buttons = page.locator(f"{blocks} button.copybtn").count()
            assert code > 0 and buttons == code, f"{name}: {buttons} copy buttons on {code} blocks in {blocks}"
            assert page.locator(".cell_output button.copybtn").count() == 0, f"{name}: a cell output has a copy button"
            assert not visit.problems, "\n".join(visit.problems)
        finally:
            visit.close()


# Records what a copy button puts on the clipboard: ClipboardJS copies the
# selection of a hidden textarea, the copy event's target.
RECORD_COPY_JS = """document.addEventListener('copy', event => {
  const area = event.target;
  window.copiedText = area && 'value' in area ? area.value.substring(area.selectionStart, area.selectionEnd)
                                              : document.getSelection().toString();
}, true);"""


def _copied_example(browser, server, plant=None):
    """``(shown, copied)``: the first doctest example of the API page as shown, and what its copy button copies.

    ``plant(js) -> js`` rewrites sphinx-copybutton's script on its way to the browser.
    """
    visit = Visit(browser, server)
    # The API reference is the longest page; on a busy machine it can take longer than TIMEOUT_MS to load.
    visit.page.set_default_timeout(3 * TIMEOUT_MS)
    visit.context.add_init_script(RECORD_COPY_JS)
    if plant is not None:
        visit.rewrite("**/_static/copybutton.js*", plant)
    try:
        page = visit.open("api.html")
        block = page.locator("div.highlight pre", has_text=">>> ").first
        shown = block.inner_text()
        block.hover()
        page.locator(f"button.copybtn[data-clipboard-target='#{block.get_attribute('id')}']").click()
        page.wait_for_function("window.copiedText !== undefined")
        return shown, page.evaluate("window.copiedText")
    finally:
        visit.close()


def _copy_problems(shown, copied):
    """What a copied example carries that a reader would not want to paste: prompts and printed output."""
    expected = [line[4:] for line in shown.splitlines() if line.startswith((">>> ", "... "))]
    # Blank lines between examples are kept (copybutton_copy_empty_lines); they paste harmlessly.
    lines = [line for line in copied.splitlines() if line.strip()]
    return [] if lines == expected else [f"copied {copied!r}, expected the code alone: {expected!r}"]


def test_copying_an_example_leaves_prompts_and_output_behind(browser, server):
    shown, copied = _copied_example(browser, server)
    assert ">>> " in shown and "\n" in shown.strip(), shown
    problems = _copy_problems(shown, copied)
    assert not problems, "\n".join(problems)


def test_copy_check_catches_prompts_in_the_copy(browser, server):
    # The planted fault: sphinx-copybutton's defaults back in its script (no
    # prompt pattern, only line numbers excluded), so the example is copied as
    # shown, prompts and output included.
    def defaults(js):
        assert "'.linenos, .gp, .go'" in js and "'>>> " in js, "the planted fault no longer matches copybutton.js"
        return re.sub(r"'>>> [^']*'", "''", js).replace("'.linenos, .gp, .go'", "'.linenos'")

    shown, copied = _copied_example(browser, server, plant=defaults)
    assert _copy_problems(shown, copied), copied
