/*
 * The interactive three-regimes figure (attention_scaling.site.regimes.explorer_figure).
 * Every state is drawn at build time; this shows the one the controls select:
 * the group of each chart and the summary whose data-state is "d-policy",
 * where d indexes the figure's d_k values and policy the scale.
 */
document.querySelectorAll(".regimes-explorer").forEach((figure) => {
  const slider = figure.querySelector('input[type="range"]');
  const output = figure.querySelector("output");
  const dValues = figure.dataset.dValues.split(" ");
  const show = () => {
    const policy = figure.querySelector('input[type="radio"]:checked').value;
    const state = `${slider.value}-${policy}`;
    output.value = dValues[slider.value];
    slider.setAttribute("aria-valuetext", `dₖ = ${dValues[slider.value]}`);
    figure.querySelectorAll("g[data-state]").forEach((group) => {
      group.style.display = group.dataset.state === state ? "" : "none";
    });
    figure.querySelectorAll("p[data-state]").forEach((summary) => {
      summary.hidden = summary.dataset.state !== state;
    });
  };
  figure.addEventListener("input", show);
  show();
});
