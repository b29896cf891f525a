// Progressive enhancement only: the page is complete without this script.
(function () {
  "use strict";
  var box = document.getElementById("only-changed");
  if (box) {
    box.addEventListener("change", function () {
      document.body.classList.toggle("only-changed", box.checked);
    });
  }
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el && el.classList.contains("task")) {
      el.querySelectorAll("details").forEach(function (d) { d.open = true; });
    }
  }
  window.addEventListener("hashchange", openTarget);
  // Closed <details> do not print: open the per-domain tables for paper.
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details.delta-domains").forEach(function (d) { d.open = true; });
  });
  openTarget();
  var plots = document.querySelectorAll("[data-plot] svg").length;
  document.documentElement.setAttribute("data-tg-plots", String(plots));
  document.documentElement.setAttribute("data-tg-ready", "1");
})();
