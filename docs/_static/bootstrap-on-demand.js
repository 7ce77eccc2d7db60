/* The theme's Bootstrap, loaded when the reader first reaches for what it runs.
 *
 * pydata-sphinx-theme's scripts/bootstrap.js (81 kB) runs the two menus of
 * the header (download, colour mode), the tooltips of the header's buttons
 * and the back-to-top button; nothing else on a page needs it. Evaluated at
 * load, as the theme has it, it is a long task of its own after the first
 * paint: 97-135 ms in Chromium traces of three loads of subtraction-vs-division
 * on a phone (CPU x4), counted in make bench's mobile blocking time.
 * docs/_templates/static/webpack-macros.html loads this script in
 * its place, and this script loads Bootstrap the first time the pointer
 * rests on or the focus reaches one of those controls, or the page scrolls
 * (the back-to-top button shows on scrolling back up).
 *
 * Bootstrap sets itself up as it arrives (the theme's bootstrap.js makes
 * the tooltips and wires the back-to-top button once the page is ready).
 * What happened before it arrived is handed on: a menu clicked opens, and
 * the control under the pointer or with the focus shows its tooltip.
 */
(() => {
  const CONTROLS = "[data-bs-toggle]";
  const MENU = '[data-bs-toggle="dropdown"]';
  const source = new URL("scripts/bootstrap.js", document.currentScript.src).href;
  // The menus clicked before Bootstrap arrived, in order (two clicks open and close).
  const clicked = [];
  let requested = false;

  function onControl(event) {
    if (event.target instanceof Element && event.target.closest(CONTROLS)) load();
  }

  function onClick(event) {
    const menu = event.target instanceof Element && event.target.closest(MENU);
    // Once window.bootstrap is set, Bootstrap's own listener on the document takes the click.
    if (menu && !window.bootstrap) {
      clicked.push(menu);
      load();
    }
  }

  // The page's own scroll only (window, no capture): the theme scrolls its sidebar to the current page as it loads.
  const triggers = [["pointerover", onControl, true], ["focusin", onControl, true], ["scroll", load, false]];

  function load() {
    if (requested) return;
    requested = true;
    for (const [type, listener, capture] of triggers) removeEventListener(type, listener, {capture});
    const script = document.createElement("script");
    script.src = source;
    script.addEventListener("load", arrived);
    document.head.append(script);
  }

  function arrived() {
    removeEventListener("click", onClick, {capture: true});
    for (const menu of clicked) bootstrap.Dropdown.getOrCreateInstance(menu).toggle();
    // Bootstrap's tooltips wait for the pointer to come over or the focus to come in; it already has.
    const hovered = [...document.querySelectorAll(":hover")].pop();
    if (hovered && hovered.closest(CONTROLS)) hovered.dispatchEvent(new MouseEvent("mouseover", {bubbles: true}));
    const focused = document.activeElement;
    if (focused && focused.closest(CONTROLS)) focused.dispatchEvent(new FocusEvent("focusin", {bubbles: true}));
  }

  for (const [type, listener, capture] of triggers) addEventListener(type, listener, {capture, passive: true});
  addEventListener("click", onClick, {capture: true});
})();
