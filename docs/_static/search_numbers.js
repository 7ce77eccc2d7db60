/*
 * The search page offers a numbered item by its number: a search for
 * "Theorem 2.1", "Fig. 5.3", "Equation (2.3)" or "(2.3)" shows a link to
 * that item above the results. SITE_NUMBERS (kind and number in lower case,
 * without brackets: "equation 2.3" -> [address, name]) is written into the
 * search page by docs/_ext/labels.py on every build. Sphinx's own results
 * follow as usual.
 */
// The short forms the pages and courses write, and the kind each stands for.
const SHORT_KINDS = [
  [/^fig\.?\s*(?=\d)/, "figure "],
  [/^eqn?\.?\s*(?=[\d(])/, "equation "],
  [/^thm\.?\s*(?=\d)/, "theorem "],
  [/^lem\.?\s*(?=\d)/, "lemma "],
  [/^ex\.?\s*(?=\d)/, "exercise "],
  [/^\((\d+\.\d+)\)$/, "equation $1"],
];

const numberOf = (query) => {
  let number = query.toLowerCase().replace(/\s+/g, " ").trim().replace(/[.,;:]+$/, "");
  for (const [short, kind] of SHORT_KINDS) number = number.replace(short, kind);
  return number.replace(/[()]/g, "");
};

document.addEventListener("DOMContentLoaded", () => {
  const number = numberOf(new URLSearchParams(window.location.search).get("q") || "");
  const numbers = typeof SITE_NUMBERS === "undefined" ? {} : SITE_NUMBERS;
  const results = document.getElementById("search-results");
  // Own keys only: "constructor" is not an item.
  if (!Object.hasOwn(numbers, number) || !results) return;
  const [address, name] = numbers[number];
  const offer = document.createElement("p");
  offer.className = "search-number";
  const link = document.createElement("a");
  link.href = address;
  link.textContent = name;
  offer.append(link);
  results.before(offer);
});
