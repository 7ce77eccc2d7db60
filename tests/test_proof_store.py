"""The proof store (attention_scaling.proofs.store): a registered result runs once per source of the package."""

import contextlib
import dataclasses
import os
import shutil
from pathlib import Path

import pytest

from attention_scaling.proofs import ProofError, engine, forget_results, prove
from attention_scaling.proofs import store as proof_store
from attention_scaling.proofs.store import ENVIRONMENT, Store, run_stored, source_digest
from proof_memory import results_of_this_block_only


@contextlib.contextmanager
def store_named(directory, writable=True):
    """ATTENTION_SCALING_PROOF_STORE set to ``directory`` for the block (not monkeypatch: see conftest)."""
    saved = os.environ.get(ENVIRONMENT), proof_store.WRITABLE
    os.environ[ENVIRONMENT], proof_store.WRITABLE = str(directory), writable
    try:
        yield
    finally:
        if saved[0] is None:
            os.environ.pop(ENVIRONMENT, None)
        else:
            os.environ[ENVIRONMENT] = saved[0]
        proof_store.WRITABLE = saved[1]


class Counted:
    """A stand-in for a registered proof of the package, counting its runs."""

    def __init__(self, result=("a", "result"), error=None):
        self.runs, self.result, self.error = 0, result, error
        self.__module__, self.__qualname__ = "attention_scaling.proofs.standin", "Counted"

    def __call__(self):
        self.runs += 1
        if self.error:
            raise self.error
        return self.result


def test_a_second_process_reads_the_result_instead_of_proving_it(tmp_path):
    proof = Counted()
    with store_named(tmp_path):
        first = run_stored(proof, (), {})
        again = run_stored(proof, (), {})  # each call looks in the store, as a new process would
    assert (first, again, proof.runs) == (proof.result, proof.result, 1)
    assert len(list(tmp_path.rglob("*.pickle"))) == 1


def test_without_a_store_every_call_runs(tmp_path):
    proof = Counted()
    with store_named(""):
        run_stored(proof, (), {})
        run_stored(proof, (), {})
    assert proof.runs == 2


def test_a_failure_and_a_function_outside_the_package_are_never_kept(tmp_path):
    failing = Counted(error=ProofError("planted: does not reduce"))
    outside = Counted()
    outside.__module__ = "tests.test_proof_store"
    with store_named(tmp_path):
        for _ in range(2):
            with pytest.raises(ProofError):
                run_stored(failing, (), {})
        run_stored(outside, (), {})
        run_stored(outside, (), {})
    assert (failing.runs, outside.runs, list(tmp_path.rglob("*.pickle"))) == (2, 2, [])


def test_the_test_session_reads_the_store_but_keeps_nothing(tmp_path):
    proof = Counted()
    with store_named(tmp_path, writable=proof_store.WRITABLE):
        run_stored(proof, (), {})
        run_stored(proof, (), {})
    assert (proof_store.WRITABLE, proof.runs, list(tmp_path.rglob("*.pickle"))) == (False, 2, [])


def test_an_edit_anywhere_in_the_package_starts_afresh(tmp_path):
    package = tmp_path / "attention_scaling"
    shutil.copytree(Path(engine.__file__).parents[1], package, ignore=shutil.ignore_patterns("__pycache__"))
    before = source_digest(package)
    assert before == source_digest.__wrapped__(package) == source_digest()
    (package / "tuning.py").write_text((package / "tuning.py").read_text() + "\n# an edit\n")
    assert source_digest.__wrapped__(package) != before


def test_a_test_that_patches_does_not_read_the_store(tmp_path):
    label = "thm-scaled-variance"
    run = engine.REGISTRY[label].run.__wrapped__
    planted = Store(tmp_path)
    # A wrong result in the store, as if a patched run had kept it.
    planted.save(Store.key(run, (), {}), prove("thm-dot-product-variance"))
    with store_named(tmp_path, writable=False):
        before = dict(engine._RESULTS)
        try:
            forget_results()
            read = prove(label)  # read from the store: the planted result
            with results_of_this_block_only():
                patched = prove(label)  # what conftest does for a test that uses monkeypatch
        finally:
            forget_results()
            engine._RESULTS.update(before)
    assert read.label == "thm-dot-product-variance"
    assert patched.label == label


def test_a_stored_proof_reads_back_equal_and_its_steps_stay_sealed(tmp_path):
    # Pickled steps used to come back with a copy of the seal, and dataclasses.replace
    # (what tests/test_evidence.py does to plant a wrong step) refused them.
    label = "thm-scaled-variance"
    run = engine.REGISTRY[label].run.__wrapped__
    store = Store(tmp_path)
    assert store.save(Store.key(run, (), {}), prove(label))
    loaded = store.load(Store.key(run, (), {}))
    assert loaded == prove(label) and [step.latex() for step in loaded.steps] == [step.latex() for step in prove(label).steps]
    assert dataclasses.replace(loaded.steps[-1], reason="planted").reason == "planted"
