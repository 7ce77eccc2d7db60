"""The built site in a real browser: Debian's Chromium driven by Playwright.

Every page of ``_build/html`` is opened once, over HTTP from a local server
(as a host would serve it), in the light theme, then switched to the dark one
with the theme's menu. The visit records what a reader would run into in each:
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
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import hosting_checks
import lean_assets
from sitebuild import CHECKOUT_LOCK, CHROMIUM, QuietHandler, one_process_at_a_time, serve

if not CHROMIUM.exists():
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)
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
            self.context.add_init_script("localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');")
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
    menu item (:func:`_choose_dark_theme`), which changes colours only, and
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
        ``shifts`` (see ``RECORD_SHIFTS_JS``), ``first_deferred`` (see
        :func:`_first_deferred_on`), ``tab_stops`` (see :func:`_tab_stops`),
        ``left_out`` (see ``LEFT_OUT_JS``) and ``cut_off`` (see ``CUT_OFF_JS``).
    """
    visit = Visit(browser, root)
    stem = name.removesuffix(".html")
    try:
        page = visit.open(name)
        # Taken before anything else is done to the page: a full-page screenshot lays it out again.
        shifts = page.evaluate("window.layoutShifts")
        first_deferred = _first_deferred_on(page)
        # The checks below read every element as a reader sees it once it is on screen. At this
        # viewport docs/_static/offscreen.css (phones) defers nothing; were it to, axe would lose sight.
        _render_everything(page)
        light = page.evaluate(INSPECT_JS, RAW_TEX.pattern)
        light.update(shifts=shifts, first_deferred=first_deferred, screenshot=SCREENSHOTS / f"{stem}.png")
        light["left_out"] = page.evaluate(LEFT_OUT_JS, _left_out_selectors(_site_stylesheet()))
        light["cut_off"] = page.evaluate(CUT_OFF_JS)
        # A full-page capture of the API reference (over 40 000 px tall) can outlast the timeout on a busy
        # 2-core machine; the screenshot is for people to look at, so a tall page is captured to SHOT_HEIGHT.
        height = page.evaluate("document.documentElement.scrollHeight")
        width = page.viewport_size["width"]
        page.screenshot(path=light["screenshot"], full_page=True,
                        clip={"x": 0, "y": 0, "width": width, "height": min(height, SHOT_HEIGHT)})
        # Problems so far are the site's; axe's own requests come after. axe checks that a block that
        # scrolls can be reached from the keyboard: it reads the tab stops once they have come right.
        light["tab_stops"] = _tab_stops(page)
        light["problems"] = list(visit.problems)
        light["axe"] = _axe_violations(page)

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
    """Switch the open page to the dark theme: a click on the "Dark" item of the theme's menu in the header.

    The item is clicked from a script, so that no pointer rests on the menu's
    button and no focus returns to it: either shows the button's tooltip after
    a delay, which axe would then check half faded in.
    """
    page.evaluate("document.querySelector('.theme-change-button[data-mode=dark]').click()")
    page.wait_for_function("document.documentElement.dataset.theme === 'dark'")
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


def _render_everything(page):
    """Render what docs/_static/offscreen.css leaves unrendered off screen, as scrolling to it would.

    axe-core cannot tell the colours of text that is not rendered: on the
    saturation page about 160 text nodes went from "passes" to "incomplete".
    """
    page.add_style_tag(content="* { content-visibility: visible !important; }")


def _shifts_on_a_fresh_load(browser, root, name):
    """The layout shifts of one more first visit to page ``name``, in the light theme."""
    visit = Visit(browser, root)
    try:
        return visit.open(name).evaluate("window.layoutShifts")
    finally:
        visit.close()


def _site_stylesheet():
    """The theme's stylesheet as the site serves it, trimmed by docs/_ext/lean_assets.py."""
    return (HTML / "_static" / lean_assets.THEME_STYLESHEET).read_text(encoding="utf-8")


@functools.cache
def _left_out_selectors(stylesheet):
    """The theme's selectors that ``stylesheet`` (a trimmed copy of the theme's) leaves out.

    Each in a form that matches every element it could style, in any state:
    arguments go and pseudo-classes and pseudo-elements match anything
    (``.a:not(.b):hover::before`` becomes ``.a:is(*):is(*):is(*)``).
    """
    theme = lean_assets.theme_static() / lean_assets.THEME_STYLESHEET
    left_out = lean_assets.selectors(theme.read_text(encoding="utf-8")) - lean_assets.selectors(stylesheet)
    forms = set()
    for selector in left_out:
        while (bare := re.sub(r"\([^()]*\)", "", selector)) != selector:
            selector = bare
        forms.add(re.sub(r"::?[-\w]+", ":is(*)", selector))
    return sorted(forms)


# Runs in the page: the left-out selectors that match an element of it, and any the browser cannot read.
LEFT_OUT_JS = """(selectors) => {
  const matched = [], unread = [];
  for (const selector of selectors) {
    try { if (document.querySelector(selector)) matched.push(selector); } catch (error) { unread.push(selector); }
  }
  return {matched, unread};
}"""


# Runs in the page; returns plain data for the tests to assert on.
INSPECT_JS = """rawTexPattern => {
  const article = document.querySelector("article.bd-article");
  const box = el => { const r = el.getBoundingClientRect(); return [r.width, r.height]; };
  const describe = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
      (el.getAttribute("src") ? "[src=" + el.getAttribute("src") + "]" : "");
  // Figures: every image and every outermost inline SVG in the article, but
  // not the icons of buttons and toggles, nor what sits in a collapsed
  // dropdown (a hidden solution) until the reader opens it.
  const figures = Array.from(article.querySelectorAll("img, svg"))
    .filter(el => !el.parentElement.closest("svg"))
    .filter(el => !el.matches(".svg-inline--fa, .tb-icon") && !el.closest("button, summary"))
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
      dataTheme: document.documentElement.dataset.theme,
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


@each_page
def test_no_rule_the_site_left_out_of_the_theme_would_style_the_page(report, name):
    # lean_assets.py drops the theme's rules that name a class no element can carry; were it wrong,
    # a dropped selector would match an element here.
    left_out = report(name, "light")["left_out"]
    assert not left_out["matched"] and not left_out["unread"], left_out


# The sidebars hide what is wider than they are: each of them, or an element in them, whose content is
# wider than its box and does not show the overflow, as "tag.class: content width > box width".
CUT_OFF_JS = """() => [...document.querySelectorAll(
    ".bd-sidebar-primary, .bd-sidebar-primary *, .bd-sidebar-secondary, .bd-sidebar-secondary *")]
  .filter((element) => element.scrollWidth > element.clientWidth + 1 && getComputedStyle(element).overflowX !== "visible")
  .map((element) => `${element.tagName.toLowerCase()}.${[...element.classList].join(".")}: ${element.scrollWidth} > ${element.clientWidth}`)"""


@each_page
def test_nothing_in_the_sidebars_is_cut_off(report, name):
    cut_off = report(name, "light")["cut_off"]
    assert not cut_off, f"{name}: {cut_off}"


def _cut_off_with_a_long_name_in_the_contents(browser, server, replace=None):
    """``CUT_OFF_JS`` on a page whose contents gained an entry as long as the API's longest; ``replace`` as for :func:`_opened`."""
    with _opened(browser, server, "scaling.html", VIEWPORT, replace, asset="theme-fixes.css") as page:
        page.evaluate("""() => {
          const entry = document.querySelector(".bd-sidebar-secondary li.toc-entry").cloneNode(false);
          entry.innerHTML = '<a class="reference internal nav-link" href="#"><code class="docutils literal notranslate">'
            + '<span class="pre">scaled_dot_product_attention()</span></code></a>';
          document.querySelector(".bd-sidebar-secondary nav ul").append(entry);
        }""")
        return page.evaluate(CUT_OFF_JS)


def test_a_long_name_in_the_contents_wraps(browser, server):
    assert _cut_off_with_a_long_name_in_the_contents(browser, server) == []


def test_cut_off_check_catches_a_long_name_without_the_fix(browser, server):
    # The planted fault: theme-fixes.css's rule for code in the contents matches nothing, so the name stays on one line.
    fault = (".bd-toc code.literal span.pre", ".no-such-element")
    assert _cut_off_with_a_long_name_in_the_contents(browser, server, fault)


def test_no_rule_left_out_would_style_what_scripts_show(browser, server):
    # Classes that scripts add: a tooltip (Bootstrap builds its class, `bs-${name}-auto`), the search
    # dialog, the download menu, and the navigation drawer of a narrow screen.
    def left_out(page):
        found = page.evaluate(LEFT_OUT_JS, _left_out_selectors(_site_stylesheet()))
        return found["matched"] + found["unread"]

    visit = Visit(browser, server)
    try:
        page = visit.open("scaling.html")
        page.hover(".header-article-items button.primary-toggle")
        page.wait_for_selector(".tooltip.show")
        assert not left_out(page), "tooltip"
        page.click("button.dropdown-toggle")
        page.wait_for_selector(".dropdown-menu.show")
        assert not left_out(page), "download menu"
        page.keyboard.press("Escape")
        page.keyboard.press("Control+k")
        page.wait_for_selector("dialog#pst-search-dialog[open]")
        assert not left_out(page), "search dialog"
        page.keyboard.press("Escape")
        page.set_viewport_size({"width": 412, "height": 823})
        # The themes open the drawer from the first .primary-toggle of the page, the header's
        # (hidden at every width here; the visible one in the article header is not wired up).
        page.evaluate("document.querySelector('.primary-toggle').click()")
        page.wait_for_selector("dialog#pst-primary-sidebar-modal[open]")
        assert not left_out(page), "navigation drawer"
    finally:
        visit.close()


def test_left_out_check_catches_a_class_that_a_script_builds(browser, server):
    # The planted fault: a trim that reads the classes of the pages and not those of their scripts.
    # Bootstrap names a tooltip's class in a template literal, `bs-${this.constructor.NAME}-auto`.
    theme = (lean_assets.theme_static() / lean_assets.THEME_STYLESHEET).read_text(encoding="utf-8")
    pages = [page.read_text(encoding="utf-8") for page in HTML.glob("*.html")]
    planted = lean_assets.trim_unused_rules(theme, lean_assets.ClassesInUse(pages, scripts=[]))
    visit = Visit(browser, server)
    visit.rewrite("**/pydata-sphinx-theme.css*", lambda stylesheet: planted)
    try:
        page = visit.open("scaling.html")
        page.hover(".header-article-items button.primary-toggle")
        page.wait_for_selector(".tooltip.show")
        matched = page.evaluate(LEFT_OUT_JS, _left_out_selectors(planted))["matched"]
    finally:
        visit.close()
    assert any(".bs-tooltip-auto" in selector for selector in matched), matched


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


def test_axe_is_the_pinned_version_and_catches_text_too_pale_to_read(browser, server):
    # The planted fault: the article's paragraphs in light grey on the white page (contrast about 1.4:1).
    with _planted(browser, server, "scaling.html", "<style>article p { color: #ddd !important; }</style>") as page:
        violations = _axe_violations(page, only=COLOUR_RULES)
        assert page.evaluate("axe.version") == AXE_VERSION
    assert any(line.startswith("color-contrast (serious)") for line in violations), violations


def test_dark_contrast_check_catches_text_too_dark_to_read(browser, server):
    # The planted fault: in the dark theme only, the article's paragraphs in dark grey on the dark page. The
    # page visits find it once the theme's menu has switched the page to dark, and not before: the switch took.
    style = "<style>html[data-theme=dark] article p { color: #333 !important; }</style>"
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
    # The theme's menu stores the reader's choice; the same script in the head of every page applies it on
    # the next page opened. The per-page tests choose the theme on the open page, with the menu.
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
        assert page.locator("article.bd-article .math:not(:has(math))").count() == 0
        assert page.locator("article.bd-article h1").inner_text().strip()
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


# What docs/_static/print.css must hide on paper.
HIDDEN_IN_PRINT = [
    ".bd-sidebar-primary",
    ".bd-sidebar-secondary",
    ".bd-header-article",
    ".article-header-buttons",
    ".search-button",
    ".prev-next-area",
    "#jb-print-toc",
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
            assert page.locator("article.bd-article h1").is_visible(), f"{name}: the title is hidden in print"
            kept = page.locator("article.bd-article :is(img, figure, math)")
            assert kept.count() > 0 and all(el.is_visible() for el in kept.all()), f"{name}: math or a figure is hidden in print"
            # A figure or displayed equation is never split across two pages.
            whole = page.locator("article.bd-article :is(figure, math[display=block])")
            breaks = {el.evaluate("el => getComputedStyle(el).breakInside") for el in whole.all()}
            assert breaks <= {"avoid"}, f"{name}: break-inside {breaks} on figures or equations"
            if name == "index.html":
                pdf = SCREENSHOTS / "index-print.pdf"
                page.pdf(path=pdf, format="A4")
                assert pdf.read_bytes().startswith(b"%PDF") and pdf.stat().st_size > 10_000
            assert not visit.problems, "\n".join(visit.problems)
        finally:
            visit.close()


# -- Off screen, rendered later (docs/_static/offscreen.css) ----------------------

OFFSCREEN_CSS = "offscreen.css"
# A phone, where offscreen.css applies.
PHONE = {"width": 412, "height": 823}
# The widest and tallest screen that offscreen.css applies to (its media query): there the third
# subsection, where it starts, is nearest the top of the page.
LAST_SCREEN_IT_APPLIES_TO = {"width": 959, "height": 1200}


@contextmanager
def _opened(browser, server, name, viewport, replace=None, asset=OFFSCREEN_CSS):
    """Page ``name`` opened at ``viewport``; with ``replace`` = (old, new), a fault planted in ``asset`` (in _static) as served."""

    def plant(text):
        assert replace[0] in text, f"{replace[0]!r} is not in {asset}"
        return text.replace(*replace)

    visit = Visit(browser, server, viewport=viewport)
    try:
        if replace:
            visit.rewrite(f"**/_static/{asset}*", plant)
        yield visit.open(name)
    finally:
        visit.close()


# The top of the first element that content-visibility: auto may leave unrendered, in CSS pixels
# from the top of the screen, or null if there is none.
FIRST_DEFERRED_JS = """() => {
  const deferred = [...document.querySelectorAll("article.bd-article *")]
    .find((el) => getComputedStyle(el).contentVisibility === "auto");
  return deferred ? deferred.getBoundingClientRect().top : null;
}"""


def _first_deferred_on(page):
    """``FIRST_DEFERRED_JS`` on the open page resized to ``LAST_SCREEN_IT_APPLIES_TO``; the page's own size is restored after.

    The first element that may be deferred has none before it, so where it
    starts does not depend on the size the page was laid out at before.
    """
    viewport = page.viewport_size
    page.set_viewport_size(LAST_SCREEN_IT_APPLIES_TO)
    try:
        return page.evaluate(FIRST_DEFERRED_JS)
    finally:
        page.set_viewport_size(viewport)


@each_page
def test_nothing_on_the_first_screen_is_left_unrendered(report, name):
    # Chromium draws a deferred element on the first screen at its guessed height, then at its own:
    # a layout shift. At the corner of offscreen.css's media query, the first such element is below the screen.
    top = report(name, "light")["first_deferred"]
    assert top is None or top >= LAST_SCREEN_IT_APPLIES_TO["height"], f"{name}: a deferred element starts at {top:.0f} px"


def test_first_screen_check_catches_a_paragraph_deferred_on_it(browser, server):
    # The planted fault: the rule from the first subsection on.
    fault = ("section > section ~ section ~ section", "section > section")
    with _opened(browser, server, "dot-product-variance.html", VIEWPORT, fault) as page:
        top = _first_deferred_on(page)
    assert top is not None and top < LAST_SCREEN_IT_APPLIES_TO["height"], top


# Whether the contents of the first and the last paragraph of the article are rendered, before and
# after the reader scrolls to the last. Element.checkVisibility counts what content-visibility: auto
# skips, the contents of an element (a formula in it, say), as not visible.
RENDERED_JS = """async () => {
  const paragraphs = [...document.querySelectorAll("article.bd-article section > p")].filter((p) => p.firstElementChild);
  window.scrollTo(0, 0);
  const rendered = (el) => el.firstElementChild.checkVisibility({contentVisibilityAuto: true});
  const first = paragraphs[0], last = paragraphs[paragraphs.length - 1];
  const atLoad = [rendered(first), rendered(last)];
  last.scrollIntoView({block: "center"});
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  return {first: atLoad[0], last: atLoad[1], lastAfterScrolling: rendered(last)};
}"""


def _rendered_paragraphs(browser, server, replace=None):
    with _opened(browser, server, "saturation.html", PHONE, replace) as page:
        return page.evaluate(RENDERED_JS)


def test_text_off_screen_is_rendered_when_it_comes_near(browser, server):
    # On a phone the first screen is rendered at once; the end of a long page once the reader scrolls to it.
    assert _rendered_paragraphs(browser, server) == {"first": True, "last": False, "lastAfterScrolling": True}


def test_rendering_check_catches_a_page_that_renders_everything_at_once(browser, server):
    # The planted fault: no content-visibility. The check above would then see the last paragraph rendered at load.
    assert _rendered_paragraphs(browser, server, ("content-visibility: auto;", ""))["last"] is True


# A link put at the start of the first deferred paragraph, focused from the keyboard: the theme draws
# its focus ring 0.1875rem outside the link, so outside the paragraph too, where content-visibility
# would clip it.
FOCUS_AT_THE_EDGE_JS = """async () => {
  const paragraph = [...document.querySelectorAll("article.bd-article section > p")]
    .find((p) => getComputedStyle(p).contentVisibility === "auto");
  paragraph.insertAdjacentHTML("afterbegin", '<a id="edge-link" href="#">Edge</a> ');
  paragraph.scrollIntoView({block: "center"});
  // The deferred blocks that come near the screen are rendered over the next frames, at their own
  // heights, and the paragraph moves with them: it is measured once it has not moved for ten frames.
  const frame = () => new Promise((done) => requestAnimationFrame(done));
  for (let still = 0, frames = 0, top = null; still < 10 && frames < 300; frames++) {
    await frame();
    const now = paragraph.getBoundingClientRect().top;
    still = now === top ? still + 1 : 0;
    top = now;
  }
  const box = paragraph.getBoundingClientRect();
  return {x: Math.max(0, box.x - 12), y: box.y - 12, width: 80, height: 44};
}"""


def _focus_ring_as_drawn_and_unclipped(browser, server, replace=None):
    """Screenshots of a focused link at a paragraph's edge: as the site draws it, then with the paragraph not contained."""
    with _opened(browser, server, "scaling.html", PHONE, replace) as page:
        clip = page.evaluate(FOCUS_AT_THE_EDGE_JS)
        page.focus("#edge-link")
        page.keyboard.press("Shift")  # a key press: the focus is shown as for a keyboard user
        assert page.evaluate("document.querySelector('#edge-link').matches(':focus-visible')")
        drawn = page.screenshot(clip=clip, animations="disabled")
        page.evaluate("document.querySelector('#edge-link').parentElement.style.contentVisibility = 'visible'")
        unclipped = page.screenshot(clip=clip, animations="disabled")
        return drawn, unclipped


def test_a_focus_ring_at_the_edge_of_a_paragraph_is_drawn_whole(browser, server):
    drawn, unclipped = _focus_ring_as_drawn_and_unclipped(browser, server)
    assert drawn == unclipped, "the focus ring of a link at a paragraph's edge is cut off"


def test_focus_ring_check_catches_a_ring_cut_off(browser, server):
    # The planted fault: no clip margin, so content-visibility clips at the paragraph's edge.
    drawn, unclipped = _focus_ring_as_drawn_and_unclipped(browser, server, ("overflow-clip-margin: 0.5rem;", ""))
    assert drawn != unclipped


# -- Tab stops on the blocks that scroll (docs/_static/tab-stops.js) --------------

# The blocks that the theme gives a tab stop, each with whether it scrolls, its tabindex attribute and
# whether that is the theme's rule: "0" for a block that scrolls, "-1" for one that does not.
TAB_STOPS_JS = """() => [...document.querySelectorAll(
    "pre, .nboutput > .output_area, .cell_output > .output, .jp-RenderedHTMLCommon, .pst-scrollable-table-container")]
  .map((block) => {
    const scrolls = block.scrollWidth > block.clientWidth || block.scrollHeight > block.clientHeight;
    const tabindex = block.getAttribute("tabindex");
    return {scrolls, tabindex, right: tabindex === (scrolls ? "0" : "-1")};
  })"""


def _wrong_tab_stops(blocks):
    """The blocks of ``TAB_STOPS_JS`` whose tab stop is not the theme's rule."""
    return [block for block in blocks if not block["right"]]


def _tab_stops(page, wait_ms=5_000):
    """``TAB_STOPS_JS`` on the open page once no block's tab stop is wrong, or as they are after ``wait_ms``.

    The script sets them in slices after load, and again 300 ms after a
    resize (the per-page checks resize the page and back): the check is that
    they come right, not when.
    """
    try:
        page.wait_for_function(f"() => ({TAB_STOPS_JS})().every((block) => block.right)", timeout=wait_ms)
    except sync_api.TimeoutError:
        pass
    return page.evaluate(TAB_STOPS_JS)


@each_page
def test_a_block_that_scrolls_has_a_tab_stop_and_one_that_does_not_has_none(report, name):
    wrong = _wrong_tab_stops(report(name, "light")["tab_stops"])
    assert not wrong, f"{name}: {wrong}"


def test_on_a_phone_some_blocks_scroll_and_get_a_tab_stop(browser, server):
    # On a phone the saturation page's code cells are wider than the screen and its short outputs are not:
    # both branches of the rule are taken.
    with _opened(browser, server, "saturation.html", PHONE) as page:
        blocks = _tab_stops(page)
    wrong = _wrong_tab_stops(blocks)
    assert not wrong, wrong
    assert {block["scrolls"] for block in blocks} == {True, False}


def test_tab_stop_check_catches_a_site_that_sets_none(browser, server):
    # The planted fault: docs/_static/tab-stops.js served empty. The theme's own pass at load is taken
    # out of its script (docs/_ext/tab_stops.py), so no block gets a tab stop.
    visit = Visit(browser, server, viewport=PHONE)
    visit.rewrite("**/_static/tab-stops.js*", lambda script: "")
    try:
        blocks = _tab_stops(visit.open("saturation.html"), wait_ms=2_000)
    finally:
        visit.close()
    assert blocks and all(block["tabindex"] is None for block in blocks), blocks


# -- The theme's script, once the page is parsed ----------------------------------
# docs/_templates/static/webpack-macros.html adds the theme's script to the page when DOMContentLoaded
# fires: it runs in a task of its own, not in the one that runs the deferred scripts and the handlers
# of DOMContentLoaded, and before the load event, which waits for it.

THEME_SCRIPT = "scripts/pydata-sphinx-theme.js"
# An init script, so registered before any of the page's: the first handler of DOMContentLoaded.
PARSED_JS = "addEventListener('DOMContentLoaded', () => { window.parsed = true; });"
# Put before the theme's script as it is served: how far the page had got when the script ran.
WHEN_THEME_RAN_JS = "window.themeRan = {parsed: window.parsed === true, loaded: document.readyState === 'complete'};\n"
# The page's loader of the theme's script (docs/_templates/static/webpack-macros.html); group 1 is its source, in JSON.
THEME_LOADER = re.compile(r'<script>addEventListener\("DOMContentLoaded", .*?\{src: ("[^"]+")\}\)\)\);</script>')


def _when_the_theme_ran(browser, server, loader=None):
    """How far scaling.html had got when the theme's script ran; with ``loader(src) -> html``, the page's loader replaced."""

    def plant(text):
        page, count = THEME_LOADER.subn(lambda found: loader(json.loads(found[1])), text)
        assert count == 1, "scaling.html has no loader of the theme's script to replace"
        return page

    visit = Visit(browser, server)
    try:
        visit.context.add_init_script(PARSED_JS)
        visit.rewrite(f"**/_static/{THEME_SCRIPT}*", lambda script: WHEN_THEME_RAN_JS + script)
        if loader:
            visit.rewrite(server + "scaling.html", plant)
        page = visit.open("scaling.html")
        page.wait_for_function("window.themeRan !== undefined")
        return page.evaluate("window.themeRan")
    finally:
        visit.close()


def test_the_themes_script_runs_once_the_page_is_parsed_and_before_load(browser, server):
    assert _when_the_theme_ran(browser, server) == {"parsed": True, "loaded": False}


def test_theme_script_check_catches_a_script_run_with_the_deferred_ones(browser, server):
    # The planted fault: the theme's script deferred, as the theme has it.
    assert _when_the_theme_ran(browser, server, lambda src: f'<script defer src="{src}"></script>') == {"parsed": False, "loaded": False}


def test_theme_script_check_catches_a_script_run_after_load(browser, server):
    # The planted fault: the script added to the page only once it has loaded.
    late = lambda src: f'<script>addEventListener("load", () => document.body.append(Object.assign(document.createElement("script"), {{src: "{src}"}})));</script>'  # noqa: E731
    assert _when_the_theme_ran(browser, server, late) == {"parsed": True, "loaded": True}


# -- Bootstrap on demand ---------------------------------------------------------
# docs/_static/bootstrap-on-demand.js loads the theme's Bootstrap when the reader first reaches for a
# control it runs, instead of at load; what the reader did before it arrived is handed on.

LOADER = "bootstrap-on-demand.js"
BOOTSTRAP_RAN_JS = "typeof window.bootstrap !== 'undefined'"
BOOTSTRAP_ASKED_FOR_JS = "performance.getEntriesByType('resource').some((entry) => entry.name.includes('/scripts/bootstrap.js'))"
DOWNLOAD_MENU = ".dropdown-download-buttons"


def _bootstrap_at_load(browser, server, replace=None):
    """Whether Bootstrap ran, and whether it was asked for, by the time a page has loaded and rendered, no reader input.

    The page is one on which the theme scrolls its navigation sidebar to the
    current page's link as it loads (the link is in the screen's lower half).
    """
    with _opened(browser, server, "training.html", VIEWPORT, replace, asset=LOADER) as page:
        assert page.evaluate("document.querySelector('.bd-sidebar').scrollTop") > 0
        # Until nothing is in flight: a loader that asked late is seen, and no response is cut off by the close.
        page.wait_for_load_state("networkidle")
        return page.evaluate(BOOTSTRAP_RAN_JS), page.evaluate(BOOTSTRAP_ASKED_FOR_JS)


def test_bootstrap_is_not_run_at_load(browser, server):
    assert _bootstrap_at_load(browser, server) == (False, False)


def test_bootstrap_check_catches_a_loader_that_loads_at_once(browser, server):
    # The planted fault: the loader asks for Bootstrap as it starts.
    fault = ("  for (const [type, listener, capture] of triggers) addEventListener(", "  load();\n  for (const [type, listener, capture] of triggers) addEventListener(")
    assert _bootstrap_at_load(browser, server, fault) == (True, True)


def test_bootstrap_check_catches_a_loader_that_counts_the_sidebars_scroll(browser, server):
    # The planted fault: the loader listens for scroll events in the capture phase, where those of
    # the sidebar (which do not bubble) reach it too.
    fault = ('["scroll", load, false]', '["scroll", load, true]')
    assert _bootstrap_at_load(browser, server, fault) == (True, True)


def test_a_pointer_on_a_button_brings_bootstrap_and_the_buttons_tooltip(browser, server):
    with _opened(browser, server, "scaling.html", VIEWPORT) as page:
        page.hover(".header-article-items button.primary-toggle")
        page.wait_for_selector(".tooltip.show")
        assert page.evaluate(BOOTSTRAP_RAN_JS)


def _menu_clicked_before_bootstrap(browser, server, replace=None):
    """Whether the download menu is open once Bootstrap has arrived, after a click on it that came first.

    The click comes from a script, with no pointer over the button and no
    focus on it: only the click asks for Bootstrap.
    """
    with _opened(browser, server, "scaling.html", VIEWPORT, replace, asset=LOADER) as page:
        assert not page.evaluate(BOOTSTRAP_RAN_JS)
        page.evaluate(f"document.querySelector('{DOWNLOAD_MENU} button').click()")
        page.wait_for_function(BOOTSTRAP_RAN_JS)
        return page.evaluate(f"document.querySelector('{DOWNLOAD_MENU} .dropdown-menu').classList.contains('show')")


def test_a_menu_clicked_before_bootstrap_arrives_opens_when_it_does(browser, server):
    assert _menu_clicked_before_bootstrap(browser, server)


def test_menu_check_catches_a_click_that_is_lost(browser, server):
    # The planted fault: the loader does not hand on the clicks that came before Bootstrap.
    fault = ("for (const menu of clicked) bootstrap.Dropdown.getOrCreateInstance(menu).toggle();", "")
    assert not _menu_clicked_before_bootstrap(browser, server, fault)


def test_the_keyboard_reaches_the_colour_menu(browser, server):
    # Focus on the colour-mode button brings Bootstrap and the button's tooltip; Enter opens the menu
    # (the theme hides the tooltip while it is open).
    with _opened(browser, server, "scaling.html", VIEWPORT) as page:
        page.focus(".theme-switch-button")
        page.wait_for_selector(".tooltip.show")
        page.keyboard.press("Enter")
        page.wait_for_selector(".theme-switch-container .dropdown-menu.show")


# Scroll the page to a height and wait for the scroll event (the theme's listener, added before, has run).
SCROLL_TO_JS = "(top) => new Promise((done) => { addEventListener('scroll', done, {once: true}); scrollTo(0, top); })"


def test_scrolling_brings_the_back_to_top_button(browser, server):
    # On a phone: sphinx-book-theme hides the button on a wide screen.
    with _opened(browser, server, "scaling.html", PHONE) as page:
        page.evaluate(SCROLL_TO_JS, 3000)
        page.wait_for_function(BOOTSTRAP_RAN_JS)
        # The theme shows the button on a scroll back up, below the header: it compares each scroll
        # with the one before, which its first one after Bootstrap arrived does not have.
        for top in (2500, 2000):
            page.evaluate(SCROLL_TO_JS, top)
        assert page.evaluate("getComputedStyle(document.getElementById('pst-back-to-top')).display") == "block"


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
        links = page.evaluate("Array.from(document.querySelectorAll('nav a[href]'), a => a.href.split('#')[0])")
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
