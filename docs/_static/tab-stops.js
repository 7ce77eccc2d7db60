/* A tab stop on each block that scrolls, set as pydata-sphinx-theme sets it, in short slices.
 *
 * A code block, cell output or table container that scrolls gets
 * tabindex="0", so that a keyboard can reach and scroll it; one that does
 * not scroll gets tabindex="-1". The theme's script does this for the whole
 * page in one task when the page has loaded, and again after a resize or a
 * change to the article, reading the scroll size of every block: on a phone
 * that lays out, at once, every block that offscreen.css left unrendered.
 * docs/_ext/tab_stops.py takes that work out of the theme's script; this
 * script does the same work, on the same blocks and at the same moments,
 * in slices of at most SLICE_MS, handing the page back to the reader in
 * between.
 */
(() => {
  // The theme's list.
  const BLOCKS = [
    "pre", ".nboutput > .output_area", ".cell_output > .output", ".jp-RenderedHTMLCommon",
    ".pst-scrollable-table-container",
  ].join(", ");
  // A long task is one over 50 ms; a slice stops looking at blocks after this many.
  const SLICE_MS = 10;
  let queue = [];
  let next = 0;

  function slice() {
    const end = performance.now() + SLICE_MS;
    while (next < queue.length && performance.now() < end) {
      const block = queue[next++];
      block.tabIndex = block.scrollWidth > block.clientWidth || block.scrollHeight > block.clientHeight ? 0 : -1;
    }
    if (next < queue.length) setTimeout(slice);
  }

  function update() {
    const idle = next >= queue.length;
    queue = [...document.querySelectorAll(BLOCKS)];
    next = 0;
    if (idle) setTimeout(slice);
  }

  // After a resize or a change to the article, once it has been quiet for 300 ms (the theme's wait).
  let timer;
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(update, 300);
  };

  function start() {
    update();
    addEventListener("resize", later);
    const article = document.getElementById("main-content");
    if (article) new MutationObserver(later).observe(article, {subtree: true, childList: true});
  }

  if (document.readyState === "complete") start();
  else addEventListener("load", start);
})();
