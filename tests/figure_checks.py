"""What every figure of the site must show, checked by the figure tests wherever its data is made."""

from matplotlib.figure import Figure

from attention_scaling.site.figures import FIGURES


def assert_labelled_axes(figure, name):
    """Fail unless ``figure``, drawn as the registered figure ``name``, has its grid, labels, titles and legends."""
    assert isinstance(figure, Figure)
    plots = [ax for ax in figure.axes if ax.get_label() != "<colorbar>"]
    assert len(plots) == FIGURES[name].nrows * FIGURES[name].ncols
    # In a grid, labels and titles may be shared along a row or column.
    assert any(ax.get_xlabel() for ax in plots) and any(ax.get_ylabel() for ax in plots), name
    assert all(ax.get_title() or ax.get_ylabel() for ax in plots), name
    for ax in plots:
        # Several series on one axes need a legend to tell them apart.
        if len(ax.get_lines()) > 1:
            assert ax.get_legend() is not None or any(other.get_legend() for other in plots), (name, ax)
