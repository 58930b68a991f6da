// Render every <span class="math" data-tex="…"> with the bundled KaTeX. trust: false keeps
// \href, \url, \includegraphics and \html* commands inert; errors show as red source text.
(function () {
  function render() {
    if (typeof katex === "undefined") return;
    document.querySelectorAll("span.math[data-tex]").forEach(function (el) {
      try {
        katex.render(el.getAttribute("data-tex"), el, {
          trust: false,
          throwOnError: false,
          strict: "ignore",
          maxExpand: 1000,
          maxSize: 20,
          displayMode: el.classList.contains("display"),
        });
        el.classList.add("rendered");
      } catch (e) {
        el.classList.add("math-error");
      }
    });
    document.body.setAttribute("data-math", "done");
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", render);
  } else {
    render();
  }
})();
