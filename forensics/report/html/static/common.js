// forensics pages: what every page shares. No network, no libraries.
"use strict";
// Print the numbers behind each chart (folded on screen) and every folded log section that matched a search.
window.addEventListener("beforeprint", () => {
  document.querySelectorAll("details.chart-data:not([open])").forEach((d) => { d.open = true; d.dataset.printOpened = "1"; });
});
window.addEventListener("afterprint", () => {
  document.querySelectorAll("details[data-print-opened]").forEach((d) => { d.open = false; delete d.dataset.printOpened; });
});
// Open the folds around an element and bring it into view.
function reveal(el) {
  for (let p = el.parentElement; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
  el.scrollIntoView({ block: "center" });
}
