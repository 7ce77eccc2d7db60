/*
 * How the search box ranks what it finds (conf.py's html_search_scorer).
 *
 * Sphinx scores every match and shows the highest first; its defaults rank a
 * match in the API reference (one entry per library function) above a
 * chapter that explains the same term. A reader who types "jacobian" wants
 * the chapter first. So a match keeps Sphinx's score on a chapter, drops
 * by REFERENCE_DROP on a page of the contents' "Reference" part, except
 * where the query is that page's title or one of its section titles, and
 * drops by API_DROP on the API reference, always. API_DROP is larger than
 * any score Sphinx gives an API entry (a full name match on an object of
 * priority 0, 11 + 15) by more than REFERENCE_DROP, so every chapter comes
 * first and every reference page before the API. Among chapters that
 * match equally, the home page, which answers the site's question in one
 * paragraph, comes first ("why sqrt dk" is "sqrt dk" to Sphinx: "why" is an
 * English stop word).
 *
 * A search for a number ("Theorem 2.1") is answered above these results,
 * by docs/_static/search_numbers.js.
 *
 * Setting Scorer replaces Sphinx's default object, so the weights below are
 * the ones Sphinx documents in searchtools.js, kept unchanged.
 */
var Scorer = {
  // The contents' "Reference" part (docs/index.md); tests/test_browser.py
  // checks that this list and that part agree.
  referencePages: ["notation", "graph", "api", "bibliography", "cite", "contributing"],
  apiPage: "api",
  homePage: "index",

  score: ([docname, title, anchor, descr, score, filename, kind]) => {
    const REFERENCE_DROP = 15;
    const API_DROP = 45;
    if (docname === Scorer.apiPage) return score - API_DROP;
    if (kind === "title") return score;
    if (docname === Scorer.homePage) return score + 1;
    return Scorer.referencePages.includes(docname) ? score - REFERENCE_DROP : score;
  },

  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
