/* The theme makes each code block and output that scrolls sideways or down
 * focusable (tabindex 0), so that a keyboard can scroll it, and the others not
 * (-1). It measures all of them as the page opens, which lays out every section
 * of a long page in one task. The built copy of its script calls lazyTabStop
 * instead (docs/_ext/lazy_layout.py): the same test, made on each element when
 * it first comes within three screens of the viewport, and again whenever the
 * theme asks (on a resize, or when the page changes). */
(() => {
  const measure = new IntersectionObserver((entries) => {
    for (const { target, isIntersecting } of entries) {
      if (isIntersecting) {
        const scrolls = target.scrollWidth > target.clientWidth || target.scrollHeight > target.clientHeight;
        target.tabIndex = scrolls ? 0 : -1;
        measure.unobserve(target);
      }
    }
  }, { rootMargin: "300% 0px" });
  window.lazyTabStop = (element) => {
    measure.unobserve(element);
    measure.observe(element);
  };
})();
