"""What a test that patches may see of the registered proofs remembered in this process, and of the store."""

import contextlib
import os

from attention_scaling.proofs import engine, forget_results
from attention_scaling import store
from attention_scaling.store import ENVIRONMENT


@contextlib.contextmanager
def no_stored_data():
    """Run the block computing every page's data afresh: the store holds what the unpatched source computed."""
    saved, store.DATA = store.DATA, False
    try:
        yield
    finally:
        store.DATA = saved


@contextlib.contextmanager
def results_of_this_block_only():
    """Run the block with no registered proof remembered or stored; then forget what it ran and remember what was before.

    What was remembered before the block ran unpatched and still holds after
    it; what the block ran may have run under a planted fault, so it must not
    serve anyone else.
    """
    before = dict(engine._RESULTS)
    forget_results()
    # Nor from the store, proofs and data alike: it holds results of the unpatched source.
    saved = os.environ.pop(ENVIRONMENT, None)
    try:
        yield
    finally:
        forget_results()
        engine._RESULTS.update(before)
        if saved is not None:
            os.environ[ENVIRONMENT] = saved
