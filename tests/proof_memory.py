"""What a test that patches may see of the registered proofs remembered in this process."""

import contextlib

from attention_scaling.proofs import engine, forget_results


@contextlib.contextmanager
def results_of_this_block_only():
    """Run the block with no registered proof remembered; then forget what it ran and remember what was before.

    What was remembered before the block ran unpatched and still holds after
    it; what the block ran may have run under a planted fault, so it must not
    serve anyone else.
    """
    before = dict(engine._RESULTS)
    forget_results()
    try:
        yield
    finally:
        forget_results()
        engine._RESULTS.update(before)
