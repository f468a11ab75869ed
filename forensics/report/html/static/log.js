// The page of one log: links to a line open its fold; the search box searches every line, folded ones too.
(function () {
  const lines = Array.from(document.querySelectorAll("#logtext .ln"));
  const box = document.getElementById("search"), hits = document.getElementById("hits");
  let found = [], cur = -1;
  function goHash() {
    const id = decodeURIComponent(location.hash.slice(1));
    const el = id && document.getElementById(id);
    if (el) reveal(el);
  }
  window.addEventListener("hashchange", goHash);
  goHash();
  function show(i) {
    if (!found.length) return;
    if (cur >= 0) found[cur].classList.remove("cur");
    cur = (i + found.length) % found.length;
    found[cur].classList.add("cur");
    reveal(found[cur]);
    hits.textContent = `${cur + 1} of ${found.length} lines`;
  }
  function search() {
    const q = box.value.trim().toLowerCase();
    found.forEach((el) => el.classList.remove("hit", "cur"));
    found = []; cur = -1;
    if (!q) { hits.textContent = ""; return; }
    for (const el of lines) if (el.textContent.toLowerCase().includes(q)) { el.classList.add("hit"); found.push(el); }
    hits.textContent = found.length ? `${found.length} lines` : "no line matches";
    if (found.length) show(0);
  }
  let timer = 0;
  box.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(search, 150); });
  box.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); show(cur + (e.shiftKey ? -1 : 1)); } });
  document.getElementById("next").addEventListener("click", () => show(cur + 1));
  document.getElementById("prev").addEventListener("click", () => show(cur - 1));
})();
