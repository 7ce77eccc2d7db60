"""List theorems, lemmas and numbered equations in objects.inv as ``std:label``.

sphinx-proof and the math domain keep their labels to themselves, so
objects.inv would not list them and another project could not link to a
theorem or an equation through intersphinx (``:ref:`whysqrtdk:thm-...```).
Figures and exercises are ``std:label`` targets already.
"""

from __future__ import annotations

__all__ = ["export_labels", "setup"]


def export_labels(app, env) -> None:
    """``env-updated``: register theorems, lemmas and numbered equations as ``std:label`` targets."""
    std = env.get_domain("std")
    for label, info in getattr(env, "proof_list", {}).items():
        if label.startswith(("thm-", "lem-")):
            std.labels[label] = (info["docname"], label, f"{info['realtype'].capitalize()} {label}")
            std.anonlabels[label] = (info["docname"], label)
    for label, (docname, number) in env.get_domain("math").equations.items():
        std.labels[label] = (docname, f"equation-{label}", f"Equation {label}")
        std.anonlabels[label] = (docname, f"equation-{label}")


def setup(app):
    app.setup_extension("sphinx_proof")
    app.connect("env-updated", export_labels)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
