"""Page support: what only the site needs.

The library (the rest of :mod:`attention_scaling`) computes; this subpackage
turns its results into what a page shows. Each page (or section) has one
function here that runs the page's experiments, checks what the prose says of
them and returns a typed record of named values for the page to glue; pytest
tests these functions, so a page holds prose, figures and glue only.

Also here: the one Markdown-table helper (:mod:`.tables`), and the site's
registries of claims (:mod:`.claims`), evidence (:mod:`.evidence`) and
citable items (:mod:`.citation`).

Nothing in the library imports from here.
"""

# The subpackage itself exports nothing: each page imports the module it needs.
__all__: list[str] = []
