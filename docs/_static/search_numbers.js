/*
 * The search page offers a numbered item by its number: a search for
 * "Theorem 2.1", "theorem 2.1" or "Equation (2.3)" shows a link to that
 * item above the results. SITE_NUMBERS (number in lower case, without
 * brackets -> [address, name]) is written into the search page by
 * docs/_ext/labels.py on every build. Sphinx's own results follow as usual.
 */
document.addEventListener("DOMContentLoaded", () => {
  const query = new URLSearchParams(window.location.search).get("q") || "";
  const number = query.toLowerCase().replace(/[()]/g, "").replace(/\s+/g, " ").trim();
  const found = typeof SITE_NUMBERS === "undefined" ? undefined : SITE_NUMBERS[number];
  const results = document.getElementById("search-results");
  if (!found || !results) return;
  const [address, name] = found;
  const offer = document.createElement("p");
  offer.className = "search-number";
  const link = document.createElement("a");
  link.href = address;
  link.textContent = name;
  offer.append(link);
  results.before(offer);
});
