"""The SymPy proofs: every theorem holds, and false claims are caught."""

import ast
import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
import sympy.stats

from attention_scaling import __main__ as cli
from attention_scaling import proofs
from attention_scaling.proofs import E, ProofError, RandomVariables, Var, check, d_k
from attention_scaling.proofs.display import reason_parts
from attention_scaling.site import import_pages
from attention_scaling.site.sources import label_pages
from page_sources import REPO
from test_statements import stated_theorems


# The private helpers and monkeypatch targets live in the chapter modules: a
# planted fault must replace the name that the theorem's own module calls.
engine, softmax_module = proofs.engine, proofs.softmax
long_sequences, qk_norm = proofs.long_sequences, proofs.logit_growth

# The sympy.stats cross-check dominates the run time; it is tested once, in
# test_dot_product_variance_agrees_with_sympy_stats.
FAST = {label: fn for label, fn in proofs.THEOREMS.items() if label != "thm-dot-product-variance"}
FAST_ENTRIES = {label: entry for label, entry in proofs.REGISTRY.items() if label != "thm-dot-product-variance"}


@pytest.mark.parametrize("label", list(FAST))
def test_theorem_holds_and_is_clean(label):
    proof = proofs.prove(label)
    assert proof.label == label
    assert proof.steps and proof.assumptions and proof.statement
    for step in proof.steps + proof.cross_checks:
        assert not sp.sympify(step.rhs).has(sp.Piecewise), step


def test_dot_product_variance_agrees_with_sympy_stats():
    proof = proofs.dot_product_variance()
    assert proof.result.rhs == d_k
    values = [step.rhs for step in proof.cross_checks]
    assert values == [1, 2, 3, 4] * 3  # Normal, Rademacher, Uniform; d_k = 1..4


def test_every_theorem_a_page_states_is_registered():
    # The converse, every registered theorem stated from its check, is tests/test_statements.py's.
    stated = set(stated_theorems())
    assert stated - set(proofs.THEOREMS) == set(), "stated on a page but not registered with attention_scaling.proofs.theorem"


def test_results_for_symbolic_d_k():
    general = proofs.dot_product_general_moments().result.rhs
    expected = d_k * (
        proofs.sigma_q**2 * proofs.sigma_k**2
        + proofs.mu_q**2 * proofs.sigma_k**2
        + proofs.mu_k**2 * proofs.sigma_q**2
    )
    assert sp.simplify(general - expected) == 0
    correlated = proofs.correlated_dot_product()
    assert sp.simplify(correlated.result.rhs - d_k * (1 + proofs.rho**2)) == 0
    assert sp.simplify(correlated.steps[-2].rhs - proofs.rho * d_k) == 0


# -- False claims are caught ------------------------------------------------------


def test_planted_false_scaling_claim_raises_naming_the_theorem():
    rv = RandomVariables()
    X = rv.add("X")
    c = sp.Symbol("c", real=True, nonzero=True)
    with pytest.raises(ProofError, match="^thm-scaled-variance: .*Var\\(X/c\\) = Var\\(X\\)/c"):
        check("thm-scaled-variance", Var(X / c), Var(X) / c, rv)


def test_false_dot_product_variance_with_nonzero_means_is_caught():
    rv = RandomVariables()
    q, k = rv.add_family("q", proofs.mu_q, 1), rv.add_family("k", proofs.mu_k, 1)
    i = sp.Symbol("i", integer=True, positive=True)
    dot = rv.define("S", sp.Sum(q[i] * k[i], (i, 1, d_k)))
    with pytest.raises(ProofError, match="^demo-means"):
        check("demo-means", Var(dot), d_k, rv)


def test_a_broken_definition_of_variance_fails_the_theorem(monkeypatch):
    # Var[Y] = E[Y^2] forgets the squared mean; the scaling theorem must notice.
    monkeypatch.setattr(RandomVariables, "variance", lambda self, expr: self.expectation(sp.sympify(expr) ** 2))
    with pytest.raises(ProofError, match="^lem-product-variance"):
        proofs.product_variance()


def test_a_broken_independence_rule_fails_the_theorem(monkeypatch):
    # Pretend a product of two variables has expectation 0 whatever their means.
    original = RandomVariables.expectation

    def broken(self, expr):
        value = original(self, expr)
        return value.subs(proofs.mu_q * proofs.mu_k, 0) if value.has(proofs.mu_q) else value

    monkeypatch.setattr(RandomVariables, "expectation", broken)
    with pytest.raises(ProofError, match="^thm-dot-product-general-moments"):
        proofs.dot_product_general_moments()


STABLE = "thm-stable-softmax-bounds"


def test_false_softmax_bounds_are_caught():
    a1, a2 = sp.symbols("a_1 a_2", nonnegative=True)
    denominator = 1 + 1 / (1 + a1) + 1 / (1 + a2)  # three terms in (0, 1], one of them 1
    engine.check_inequality(STABLE, denominator, 3, r"\le")
    with pytest.raises(ProofError, match=f"^{STABLE}: SymPy cannot show"):
        engine.check_inequality(STABLE, denominator, 2, r"\le")  # D <= n - 1 is false
    with pytest.raises(ProofError, match=f"^{STABLE}"):
        engine.check_inequality(STABLE, denominator, 2, r"\ge")  # false once a_1 and a_2 are large
    t = sp.Symbol("t", real=True)
    with pytest.raises(ProofError, match=f"^{STABLE}: solveset gives"):
        engine.check_solutions(STABLE, t, sp.exp(t) > 1, sp.S.Reals, sp.S.EmptySet)  # true for every t > 0


def test_a_wrong_shifted_form_fails_the_bounds_theorem(monkeypatch):
    # Plant a softmax that forgot the exponential in its numerator.
    def broken(self, **hints):
        j = sp.Symbol("j", integer=True, positive=True)
        return self.logits[self.index] / sp.Sum(sp.exp(self.logits[j]), (j, 1, self.length))

    monkeypatch.setattr(softmax_module.SoftmaxWeight, "doit", broken)
    with pytest.raises(ProofError, match=f"^{STABLE}"):
        proofs.stable_softmax_bounds()


def test_inequality_checks_refuse_an_unknown_relation():
    with pytest.raises(ValueError, match="relation"):
        engine.check_inequality(STABLE, 1, 2, "=<")


def test_leftover_piecewise_is_refused():
    x = sp.Symbol("x", real=True)
    with pytest.raises(ProofError, match="Piecewise"):
        check("demo", sp.Piecewise((x, x > 0), (0, True)), x)


# -- The moment algebra against sympy.stats ---------------------------------------


def test_expectation_matches_sympy_stats_for_gaussians():
    normal = sympy.stats.Normal("N", 0, 1)
    gaussian = {power: sympy.stats.moment(normal, power) for power in range(3, 7)}
    rv = RandomVariables()
    X, Y = rv.add("X", 0, 1, gaussian), rv.add("Y", 0, 1, gaussian)
    A, B = sympy.stats.Normal("A", 0, 1), sympy.stats.Normal("B", 0, 1)
    for polynomial in [(X + 2 * Y) ** 2 * X**2, (X - Y) ** 4, X**3 * Y + 5]:
        reference = polynomial.subs({X: A, Y: B}, simultaneous=True)
        assert sp.simplify(rv.expectation(polynomial) - sympy.stats.E(reference)) == 0


def test_a_family_sum_matches_a_fixed_size_expansion():
    rv = RandomVariables()
    X = rv.add_family("X", 1, 2)
    i = sp.Symbol("i", integer=True, positive=True)
    total = sp.Sum(X[i], (i, 1, 4))
    direct = RandomVariables()
    Ys = [direct.add(f"Y_{n}", 1, 2) for n in range(4)]
    assert rv.evaluate(Var(total)) == direct.evaluate(Var(sum(Ys))) == 8
    assert rv.evaluate(E(total)) == 4


def test_random_variables_refuse_bad_declarations():
    rv = RandomVariables()
    X, Y = rv.add("X"), rv.add("Y", 0, 2)
    with pytest.raises(ValueError, match="already declared"):
        rv.add("X")
    with pytest.raises(ValueError, match="powers >= 3"):
        rv.add("Z", higher={2: 1})
    with pytest.raises(ValueError, match="already declared"):
        rv.add_family("Y")
    with pytest.raises(ValueError, match="already declared"):
        rv.define("X", Y)


def test_unknown_label():
    with pytest.raises(KeyError, match="no theorem labelled 'thm-nope'"):
        proofs.prove("thm-nope")


# -- The registry -------------------------------------------------------------------

DERIVATIONS = {label for label, entry in proofs.REGISTRY.items() if entry.kind == "derivation"}


def test_importing_the_package_registers_every_entry_in_order():
    # A fresh interpreter: in this one the tests have imported the chapter modules
    # themselves, which would hide a module that the package forgets to import.
    script = (
        "import pkgutil, sys\n"
        "import attention_scaling.proofs as proofs\n"
        "print(list(proofs.REGISTRY))\n"
        "print(sorted(m.name for m in pkgutil.iter_modules(proofs.__path__)"
        " if f'attention_scaling.proofs.{m.name}' not in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    registered, not_imported = (ast.literal_eval(line) for line in result.stdout.splitlines())
    # The registry here also holds what pages register in their own modules (import_pages), after these.
    assert registered == list(proofs.REGISTRY)[:len(registered)]
    assert all(proofs.REGISTRY[label].run.__module__.startswith("attention_scaling.site.")
               for label in list(proofs.REGISTRY)[len(registered):])
    assert not_imported == []
    # The entries come module by module, in the order proofs/__init__.py imports the modules.
    tree = ast.parse(Path(proofs.__file__).read_text(encoding="utf-8"))
    imported = [node.module for node in tree.body if isinstance(node, ast.ImportFrom)]
    modules = [proofs.REGISTRY[label].run.__module__ for label in registered]
    in_order = list(dict.fromkeys(modules))
    assert in_order == [module for module in imported if module in in_order], in_order
    assert modules == sorted(modules, key=in_order.index), "a module's entries are registered together"


def test_theorems_and_names_are_the_theorem_entries_of_the_registry():
    assert list(proofs.THEOREMS) == list(proofs.THEOREM_NAMES) == [l for l in proofs.REGISTRY if l not in DERIVATIONS]
    for label, entry in proofs.REGISTRY.items():
        assert entry.label == label and entry.kind in {"theorem", "derivation"} and entry.name
        if entry.kind == "theorem":
            assert proofs.THEOREMS[label] is entry.run and proofs.THEOREM_NAMES[label] == entry.name
    with pytest.raises(KeyError):
        proofs.THEOREM_NAMES["logit-growth-quadratic"]  # a derivation is not a theorem


def test_prove_all_runs_every_registered_entry_once(monkeypatch):
    calls = []

    def recorder(label):
        def run():
            calls.append(label)
            return label

        return run

    registered = list(proofs.REGISTRY)
    stubs = {label: dataclasses.replace(entry, run=recorder(label)) for label, entry in proofs.REGISTRY.items()}
    monkeypatch.setattr(engine, "REGISTRY", stubs)
    outcomes = proofs.prove_all()
    assert [label for label, _, _ in outcomes] == calls == registered
    assert all(outcome == label for label, outcome, _ in outcomes)
    assert list(proofs.THEOREMS) == [l for l in registered if l not in DERIVATIONS]  # the views follow


def test_the_page_sections_named_by_the_derivations_exist():
    sections = set(label_pages(REPO / "docs"))
    assert DERIVATIONS and DERIVATIONS <= sections, DERIVATIONS - sections


# -- Command line -------------------------------------------------------------------


# The command lists whatever is registered: a few quick entries, a theorem and both derivations, stand
# for the registry (every registered result is proved by test_theorem_holds_and_is_clean).
CLI_ENTRIES = {label: proofs.REGISTRY[label] for label in ("thm-scaled-variance", *sorted(DERIVATIONS))}


def test_cli_prove_lists_every_registered_entry(monkeypatch, capsys):
    monkeypatch.setattr(engine, "REGISTRY", dict(CLI_ENTRIES))
    assert cli.main(["prove", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    for label in CLI_ENTRIES:
        assert f"{label}" in out
    assert f"{len(CLI_ENTRIES)} of {len(CLI_ENTRIES)} registered results hold" in out
    header = next(line for line in out.splitlines() if line.startswith("theorem or derivation"))
    assert header.split()[3:] == ["holds", "checked", "cited", "argued", "measured", "seconds"]
    for label, entry in CLI_ENTRIES.items():
        row = next(line for line in out.splitlines() if line.startswith(label + " "))
        counts = proofs.step_counts(entry.run())
        assert row.split()[2:6] == [str(counts[kind]) for kind in proofs.KINDS], row


def test_cli_prove_fails_on_a_false_theorem(monkeypatch, capsys):
    def false_theorem():
        rv = RandomVariables()
        X = rv.add("X")
        check("thm-planted", Var(2 * X), 2 * Var(X), rv)

    planted = proofs.Registered("thm-planted", "A false theorem", "theorem", false_theorem)
    monkeypatch.setattr(engine, "REGISTRY", {"thm-planted": planted, **CLI_ENTRIES})
    assert cli.main(["prove"]) == 1
    captured = capsys.readouterr()
    assert "thm-planted" in captured.out and "NO" in captured.out
    assert "FAILED: thm-planted" in captured.err


def test_cli_without_command_is_an_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main([])
    assert exit_info.value.code == 2
    assert "required: command" in capsys.readouterr().err


def test_monte_carlo_agrees_with_the_theorem():
    from attention_scaling.simulate import dot_product_samples, variance_estimate

    for size in (1, 16, 256):
        estimate = variance_estimate(dot_product_samples(size, 40_000, seed=size))
        assert estimate.contains(size), (size, estimate)
    assert not variance_estimate(np.arange(1000.0)).contains(1.0)


def test_prove_all_in_processes_gives_the_serial_outcomes_in_registry_order(monkeypatch):
    entries = {label: FAST_ENTRIES[label] for label in ("thm-scaled-variance", "logit-growth-quadratic", "thm-dispersion")}

    def false_theorem():
        rv = RandomVariables()
        X = rv.add("X")
        check("thm-planted", Var(2 * X), 2 * Var(X), rv)

    planted = proofs.Registered("thm-planted", "A false theorem", "theorem", false_theorem)
    # The planted entry exists only in this process's registry: the workers see it because they are forked.
    monkeypatch.setattr(engine, "REGISTRY", {**entries, "thm-planted": planted})
    serial, forked = proofs.prove_all(), proofs.prove_all(jobs=2)
    assert [label for label, _, _ in forked] == [label for label, _, _ in serial] == [*entries, "thm-planted"]
    for (_, one, _), (_, other, _) in zip(serial[:-1], forked[:-1]):
        assert proofs.step_counts(one) == proofs.step_counts(other)
        assert getattr(one, "statement", None) == getattr(other, "statement", None)
    assert isinstance(forked[-1][1], proofs.ProofError) and "thm-planted" in str(forked[-1][1])


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True, "2"])
def test_prove_all_rejects_a_bad_number_of_jobs(jobs):
    with pytest.raises(ValueError, match="jobs must be a whole number"):
        proofs.prove_all(jobs=jobs)


def test_cli_prove_takes_a_number_of_jobs(monkeypatch, capsys):
    monkeypatch.setattr(engine, "REGISTRY", {"thm-scaled-variance": FAST_ENTRIES["thm-scaled-variance"]})
    assert cli.main(["prove", "--jobs", "2"]) == 0
    assert "1 of 1 registered results hold" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stopped:
        cli.main(["prove", "--jobs", "0"])
    assert stopped.value.code == 2 and "at least 1" in capsys.readouterr().err


# Mathematics written as text: a relation, a script, a command, a fraction, an
# arrow, a Greek letter, a root or a power. In a reason it goes between $ signs.
MATH_AS_TEXT = re.compile(r"[=<>^_\\{}|≥≤≠→←√²³·⊙∑Σ′]|->|\w\s?/\s?[\w(]|\)\s?/|[α-ωΑ-Ω]")


def test_the_mathematics_in_every_reason_is_typeset():
    # Issue 55: "(1 - tanh^2 = sech^2)" beside typeset steps. A reason's words are
    # words; its mathematics, between $ signs, is typeset as math on the page.
    import_pages()
    loose = []
    for label, outcome, *_ in proofs.prove_all():
        steps = getattr(outcome, "steps", (outcome,)) + getattr(outcome, "cross_checks", ())
        for step in steps:
            words = " … ".join(piece for math, piece in reason_parts(step.reason) if not math)
            if MATH_AS_TEXT.search(words):
                loose.append(f"{label}: {step.reason!r}")
    assert not loose, "write the mathematics of these reasons between $ signs:\n" + "\n".join(loose)


def test_a_reason_with_an_unpaired_dollar_sign_is_refused_where_it_is_written():
    with pytest.raises(ValueError, match=r"odd number of them"):
        check("demo", 1, 1, reason="costs $5")
