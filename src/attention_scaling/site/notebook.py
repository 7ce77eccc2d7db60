r"""What a page's downloaded notebook shows in place of the site's glue.

A page computes its numbers and figures in cells and *glues* them into the
prose with myst-nb, which hides them from the cells' outputs. The notebook a
reader downloads has no prose to glue into, and myst-nb is a build tool, not a
dependency of this package; so the site rewrites the notebook to import
:func:`glue` from here instead. It shows each glued value where it was made:
a figure or a table as itself, a number or a string as one line,
``name = value``. The outputs the build stored are turned into the same
ordinary outputs by :func:`ordinary_output`, so the downloaded notebook shows
what running it shows.
"""

from __future__ import annotations

from typing import Any

__all__ = ["glue", "labelled_bundle", "ordinary_output"]


def labelled_bundle(name: str, bundle: dict[str, Any]) -> dict[str, Any]:
    """The MIME bundle a notebook shows for a glued value.

    A bundle with nothing but ``text/plain`` (a number, a string) gets its
    name in front, ``name = value``, so that a reader can tell which number
    of the page it is; a richer bundle (a figure, Markdown, math) is shown as
    it is.

    Parameters
    ----------
    name : str
        The glue key, as the page's prose uses it.
    bundle : dict
        MIME type to data, as IPython formats the value.

    Returns
    -------
    dict
        A new bundle; ``bundle`` is not changed.

    Raises
    ------
    ValueError
        If ``bundle`` is empty.

    Examples
    --------
    >>> labelled_bundle("d_k", {"text/plain": "512"})
    {'text/plain': 'd_k = 512'}
    >>> sorted(labelled_bundle("fig-x", {"image/png": "iVBOR...", "text/plain": "<Figure>"}))
    ['image/png', 'text/plain']
    """
    if not bundle:
        raise ValueError(f"bundle for {name!r}: expected at least one MIME type, got none")
    if set(bundle) == {"text/plain"}:
        return {"text/plain": f"{name} = {bundle['text/plain']}"}
    return dict(bundle)


def ordinary_output(output: dict[str, Any]) -> dict[str, Any]:
    """A stored output of myst-nb's ``glue``, as the notebook shows it.

    myst-nb stores a glued value as a ``display_data`` output whose metadata
    names it (``scrapbook``) and whose MIME types carry a prefix that hides it
    from notebook viewers. This gives the output :func:`glue` makes for the
    same value when the notebook runs: the prefix gone, the value labelled by
    :func:`labelled_bundle`. Any other output is returned unchanged.

    Parameters
    ----------
    output : dict
        One output of a code cell, in nbformat 4.

    Returns
    -------
    dict
        The output to keep in the downloaded notebook.

    Examples
    --------
    >>> stored = {
    ...     "output_type": "display_data",
    ...     "metadata": {"scrapbook": {"name": "d_k", "mime_prefix": "application/papermill.record/"}},
    ...     "data": {"application/papermill.record/text/plain": "512"},
    ... }
    >>> ordinary_output(stored)
    {'output_type': 'display_data', 'metadata': {}, 'data': {'text/plain': 'd_k = 512'}}
    >>> ordinary_output({"output_type": "stream", "name": "stdout", "text": "hi"})["text"]
    'hi'
    """
    record = output.get("metadata", {}).get("scrapbook")
    if record is None:
        return output
    prefix = record.get("mime_prefix", "")
    bundle = {key[len(prefix):] if key.startswith(prefix) else key: value for key, value in output["data"].items()}
    metadata = {key: value for key, value in output["metadata"].items() if key != "scrapbook"}
    return {"output_type": "display_data", "metadata": metadata, "data": labelled_bundle(record["name"], bundle)}


def glue(name: str, variable: Any, display: bool = True) -> None:
    """Show a value that the page glues into its prose, in the notebook.

    The stand-in for ``myst_nb.glue`` in downloaded notebooks, with the same
    signature. A notebook has no prose to glue into, so the value is always
    shown, labelled by :func:`labelled_bundle`; ``display`` is accepted and
    ignored. It needs IPython, which every notebook kernel has.

    Parameters
    ----------
    name : str
        The glue key.
    variable : object
        Anything IPython can display: a number, a string, a Matplotlib
        Figure, ``IPython.display.Markdown``.
    display : bool, optional
        Ignored (myst-nb's flag for hiding the value).

    Examples
    --------
    >>> glue("d_k", 512, display=False)
    d_k = 512
    """
    from IPython.core.formatters import format_display_data
    from IPython.display import display as show

    bundle, metadata = format_display_data(variable)
    show(labelled_bundle(name, bundle), metadata=metadata or None, raw=True)
