"""The store (attention_scaling.store): a registered proof or a page's data is computed once per source of the package."""

import contextlib
import dataclasses
import importlib
import multiprocessing
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

import attention_scaling
from attention_scaling import store as store_module
from attention_scaling.proofs import ProofError, engine, forget_results, prove
from attention_scaling.store import ENVIRONMENT, Store, run_stored, source_digest, stored
from proof_memory import no_stored_data, results_of_this_block_only


@contextlib.contextmanager
def store_named(directory, writable=True):
    """ATTENTION_SCALING_STORE set to ``directory`` for the block (not monkeypatch: see conftest)."""
    saved = os.environ.get(ENVIRONMENT), store_module.WRITABLE
    os.environ[ENVIRONMENT], store_module.WRITABLE = str(directory), writable
    try:
        yield
    finally:
        if saved[0] is None:
            os.environ.pop(ENVIRONMENT, None)
        else:
            os.environ[ENVIRONMENT] = saved[0]
        store_module.WRITABLE = saved[1]


class Counted:
    """A stand-in for a registered proof of the package, counting its runs."""

    def __init__(self, result=("a", "result"), error=None):
        self.runs, self.result, self.error = 0, result, error
        self.__module__, self.__qualname__ = "attention_scaling.proofs.standin", "Counted"

    def __call__(self, *args, **kwargs):
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


class Slow(Counted):
    """A stand-in that takes a while and writes a line to ``log`` each time it runs, in whichever process."""

    def __init__(self, log: Path):
        super().__init__()
        self.log = log

    def __call__(self, *args, **kwargs):
        with open(self.log, "a") as log:
            log.write(f"{os.getpid()}\n")
        time.sleep(0.5)
        return super().__call__(*args, **kwargs)


def _run_in_processes(function, directory: Path, count: int) -> list[int]:
    """Exit codes of ``count`` processes forked at once, each calling ``run_stored(function)`` with the store at ``directory``."""

    def one():
        with store_named(directory):
            os._exit(0 if run_stored(function, (), {}) == function.result else 1)

    processes = [multiprocessing.get_context("fork").Process(target=one) for _ in range(count)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
    return [process.exitcode for process in processes]


def test_processes_that_ask_for_a_result_at_once_compute_it_once(tmp_path):
    # A build's two page kernels and its doctests ask for the same evidence rows at the same time.
    log = tmp_path / "runs.log"
    proof = Slow(log)
    assert _run_in_processes(proof, tmp_path / "store", 3) == [0, 0, 0]
    assert len(log.read_text().splitlines()) == 1


def test_a_store_that_only_reads_takes_no_lock(tmp_path):
    proof = Counted()
    with store_named(tmp_path, writable=False):
        run_stored(proof, (), {})
    assert list(tmp_path.rglob("*")) == []


def test_without_a_store_every_call_runs(tmp_path):
    proof = Counted()
    with store_named(""):
        run_stored(proof, (), {})
        run_stored(proof, (), {})
    assert proof.runs == 2


def test_a_failure_and_a_function_outside_the_package_are_never_kept(tmp_path):
    failing = Counted(error=ProofError("planted: does not reduce"))
    outside = Counted()
    outside.__module__ = "tests.test_store"
    with store_named(tmp_path):
        for _ in range(2):
            with pytest.raises(ProofError):
                run_stored(failing, (), {})
        run_stored(outside, (), {})
        run_stored(outside, (), {})
    assert (failing.runs, outside.runs, list(tmp_path.rglob("*.pickle"))) == (2, 2, [])


def test_the_test_session_reads_the_store_but_keeps_nothing(tmp_path):
    proof = Counted()
    with store_named(tmp_path, writable=store_module.WRITABLE):
        run_stored(proof, (), {})
        run_stored(proof, (), {})
    assert (store_module.WRITABLE, proof.runs, list(tmp_path.rglob("*.pickle"))) == (False, 2, [])


def test_an_edit_anywhere_in_the_package_starts_afresh(tmp_path):
    package = tmp_path / "attention_scaling"
    shutil.copytree(Path(attention_scaling.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
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


@dataclasses.dataclass(frozen=True)
class Sweep:
    """A page's data as the package returns it: arrays in a dataclass."""

    d_k: np.ndarray
    variance: np.ndarray


def test_a_pages_data_is_kept_and_read_back_with_its_arrays(tmp_path):
    sweep = Sweep(np.array([16, 64, 256]), np.array([1.02, 0.98, 1.01]))
    simulation = Counted(result=sweep)
    with store_named(tmp_path):
        run_stored(simulation, (), {"seed": 1})
        again = run_stored(simulation, (), {"seed": 1})
        other_seed = run_stored(simulation, (), {"seed": 2})
    assert simulation.runs == 2  # once per seed
    assert np.array_equal(again.variance, sweep.variance) and again.d_k.dtype == sweep.d_k.dtype
    assert other_seed is sweep


def test_a_call_whose_arguments_are_not_plain_values_or_whose_result_cannot_be_pickled_is_not_kept(tmp_path):
    # An array's text is abridged: two arrays could name the same call.
    simulation = Counted(result=Sweep(np.zeros(2), np.ones(2)))
    local = Counted(result=lambda x: x)
    with store_named(tmp_path):
        for _ in range(2):
            run_stored(simulation, (np.linspace(0.0, 1.0, 2000),), {})
            assert run_stored(local, (), {}) is local.result
    assert (simulation.runs, local.runs, list(tmp_path.rglob("*.pickle"))) == (2, 2, [])


def test_a_test_that_patches_computes_the_pages_data_afresh_and_may_still_read_proofs(tmp_path):
    simulation = Counted(result=Sweep(np.zeros(2), np.ones(2)))
    data = stored(simulation)
    proof = Counted()
    proof.__qualname__ = "CountedProof"
    with store_named(tmp_path):
        data(), data(), run_stored(proof, (), {})
        with no_stored_data():  # what conftest does for a test marked proofs_unpatched
            data(), run_stored(proof, (), {})
    assert (simulation.runs, proof.runs) == (2, 1)


def test_an_upgrade_of_numpy_starts_afresh(monkeypatch):
    package = Path(attention_scaling.__file__).parent
    before = source_digest.__wrapped__(package)
    real = store_module.version
    monkeypatch.setattr(store_module, "version", lambda name: "0.0" if name == "numpy" else real(name))
    assert source_digest.__wrapped__(package) != before


def _data_functions() -> dict:
    """Every ``*_data`` function defined in a public module of the package, by its dotted name."""
    functions = {}
    for path in Path(attention_scaling.__file__).parent.glob("[!_]*.py"):
        module = importlib.import_module(f"attention_scaling.{path.stem}")
        for name, value in vars(module).items():
            if name.endswith("_data") and getattr(value, "__module__", None) == module.__name__:
                functions[f"{module.__name__}.{name}"] = value
    return functions


def test_every_data_function_of_the_package_is_stored():
    functions = _data_functions()
    assert len(functions) >= 14
    unstored = [name for name, function in functions.items() if getattr(function, "__wrapped__", None) is None]
    assert unstored == []


def test_the_tunings_the_training_page_runs_itself_are_stored():
    # The page calls tune_learning_rates (not tuned_learning_rates_data) so that the reader sees the call.
    from attention_scaling import tuning

    assert getattr(tuning.tune_learning_rates, "__wrapped__", None) is not None
    assert 'tune_learning_rates(optimizer="adam")' in (Path(__file__).parents[1] / "docs" / "training.md").read_text()


def test_a_file_system_without_locks_still_computes_and_keeps(tmp_path, monkeypatch):
    def refuse(*args):
        raise OSError(37, "No locks available")

    monkeypatch.setattr(store_module.fcntl, "flock", refuse)
    proof = Counted()
    with store_named(tmp_path):
        first = run_stored(proof, (), {})
        again = run_stored(proof, (), {})
    assert (first, again, proof.runs) == (proof.result, proof.result, 1)
