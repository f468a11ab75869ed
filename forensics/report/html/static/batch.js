// The batch page's incident table: unpacked from the page, sorted, filtered, a page of rows at a time;
// a row's link opens the incident's detail (its evidence lines and early warnings).
(async function () {
  const PAGE = 100;
  const el = document.getElementById("incident-data");
  const tbody = document.querySelector("#incidents tbody");
  const shown = document.getElementById("shown"), detail = document.getElementById("detail");
  let D;
  try {
    const bytes = atob(el.textContent.trim()), bin = new Uint8Array(bytes.length);
    for (let i = 0; i < bytes.length; i++) bin[i] = bytes.charCodeAt(i);
    const stream = new Blob([bin]).stream().pipeThrough(new DecompressionStream("gzip"));
    D = JSON.parse(await new Response(stream).text());
  } catch (err) {
    shown.textContent = "This browser cannot unpack the incident table (it needs DecompressionStream).";
    return;
  }
  const n = D.n;
  const val = (key, i) => { const c = D[key]; if (Array.isArray(c)) return c[i]; const k = c.c[i]; return k < 0 ? null : c.v[k]; };
  // Sort keys: strings by the rank of their value among the distinct values (computed on the first sort
  // by that column, with one collator: a locale comparison per pair took 19 s for 92,000 sources),
  // numbers as they are.
  const rank = {}, collator = new Intl.Collator(undefined, { numeric: true });
  function ranks(key) {
    if (!rank[key]) {
      const c = D[key], order = c.v.map((v, j) => j).sort((a, b) => collator.compare(c.v[a], c.v[b]));
      const r = new Int32Array(c.v.length); order.forEach((j, pos) => { r[j] = pos; }); rank[key] = r;
    }
    return rank[key];
  }
  const sortVal = (key, i) => { const c = D[key]; if (Array.isArray(c)) return c[i]; const k = c.c[i]; return k < 0 ? null : ranks(key)[k]; };
  let rows = Array.from({ length: n }, (_, i) => i), page = 0, sortKey = null, dir = 1;
  const fmtTime = (s) => s == null ? "" : new Date(s * 1000).toISOString().slice(0, 19).replace("T", " ");
  const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]);
  const num = (v) => v == null ? "" : Number(v).toLocaleString("en");
  function render() {
    const last = Math.max(0, Math.ceil(rows.length / PAGE) - 1);
    page = Math.min(Math.max(page, 0), last);
    const html = [];
    for (const i of rows.slice(page * PAGE, page * PAGE + PAGE)) {
      const inc = val("incident", i);
      html.push(`<tr data-row="${i}"><td><a href="#incident-${i}">${esc(val("source", i))}</a></td>` +
        `<td class="num">${inc == null ? "" : inc}</td><td>${fmtTime(val("start", i))}</td>` +
        `<td><span class="v-${esc(val("verdict", i) || "")}">${esc(val("verdict", i) || (val("error", i) ? "unreadable" : ""))}</span></td>` +
        `<td>${esc(val("root_cause", i))}</td><td>${esc(val("phase", i))}</td><td><code>${esc(val("signature", i))}</code></td>` +
        `<td class="num">${num(val("first_lead", i))}</td><td class="num">${num(val("duration", i))}</td>` +
        `<td>${esc(val("host", i))}</td><td>${esc(val("unit", i))}</td></tr>`);
    }
    tbody.innerHTML = html.join("");
    const a = rows.length ? page * PAGE + 1 : 0, b = Math.min(rows.length, (page + 1) * PAGE);
    shown.textContent = `rows ${a.toLocaleString("en")}–${b.toLocaleString("en")} of ${rows.length.toLocaleString("en")}` +
      (rows.length < n ? ` (filtered from ${n.toLocaleString("en")})` : "");
    document.getElementById("back").disabled = document.getElementById("first").disabled = page === 0;
    document.getElementById("fwd").disabled = document.getElementById("last").disabled = page >= last;
  }
  function sortBy(key) {
    dir = sortKey === key ? -dir : 1; sortKey = key;
    rows.sort((x, y) => {
      const a = sortVal(key, x), b = sortVal(key, y);
      if (a == null || b == null) return a == null ? (b == null ? x - y : 1) : -1;  // empty cells last
      return (a < b ? -dir : a > b ? dir : x - y);
    });
    document.querySelectorAll("#incidents th").forEach((th) =>
      th.setAttribute("aria-sort", th.dataset.key === key ? (dir > 0 ? "ascending" : "descending") : "none"));
    page = 0; render();
  }
  const FILTER_KEYS = ["source", "root_cause", "phase", "signature", "host", "unit", "verdict"];
  function filter(q) {
    q = q.trim().toLowerCase();
    if (!q) { rows = Array.from({ length: n }, (_, i) => i); }
    else {
      const hit = FILTER_KEYS.map((k) => new Uint8Array(D[k].v.map((v) => v.toLowerCase().includes(q) ? 1 : 0)));
      rows = [];
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < FILTER_KEYS.length; j++) { const c = D[FILTER_KEYS[j]].c[i]; if (c >= 0 && hit[j][c]) { rows.push(i); break; } }
      }
    }
    if (sortKey) { const k = sortKey; dir = -dir; sortKey = null; sortBy(k); } else { page = 0; render(); }
  }
  function parse(s) { try { const v = JSON.parse(s || "[]"); return Array.isArray(v) ? v : []; } catch (e) { return []; } }
  function showDetail(i) {
    const ev = parse(val("evidence", i)), ew = parse(val("early_warnings", i));
    if (!ev.length && val("evidence_line", i) != null) ev.push({ line: val("evidence_line", i), text: val("evidence_text", i), role: "cause" });
    const facts = [["verdict", val("verdict", i)], ["root cause", val("root_cause", i)], ["confidence", val("confidence", i)],
      ["decided by", val("decided_by", i)], ["signature", val("signature", i)], ["phase", val("phase", i)],
      ["started (UTC)", fmtTime(val("start", i))], ["failed after (s)", val("ttf", i)], ["host", val("host", i)],
      ["unit", val("unit", i)], ["server", val("server", i)], ["lines in the source", val("lines", i)], ["unreadable", val("error", i)]]
      .filter(([, v]) => v != null && v !== "").map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join("");
    const evHtml = ev.length ? ev.map((e) => `<li><strong>line ${esc(e.line)}</strong> (${esc(e.role || "evidence")}): <code>${esc(e.text)}</code></li>`).join("") : "<li class=muted>none</li>";
    const ewHtml = ew.length ? ew.map((w) => `<li><strong>line ${esc(w.line)}</strong>` +
      (w.lead_seconds != null ? `, ${esc(w.lead_seconds)} s before the failure` : "") +
      (w.signature ? ` (<code>${esc(w.signature)}</code>)` : "") + `: <code>${esc(w.text)}</code></li>`).join("") : "<li class=muted>none</li>";
    detail.innerHTML = `<h3>${esc(val("source", i))}, incident ${esc(val("incident", i))}</h3><div class="verdict"><dl>${facts}</dl></div>` +
      `<h3>Evidence</h3><ul class="evidence">${evHtml}</ul><h3>Early warnings</h3><ul class="warnings">${ewHtml}</ul>` +
      `<p><a href="#incidents-section">back to the table</a></p>`;
    detail.hidden = false; detail.dataset.row = i; detail.focus(); detail.scrollIntoView({ block: "start" });
  }
  function onHash() {
    const m = /^#incident-(\d+)$/.exec(location.hash);
    if (m && +m[1] < n) showDetail(+m[1]); else detail.hidden = true;
  }
  document.querySelectorAll("#incidents th").forEach((th) => {
    th.setAttribute("aria-sort", "none");
    th.addEventListener("click", () => sortBy(th.dataset.key));
    th.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(th.dataset.key); } });
  });
  let timer = 0;
  document.getElementById("filter").addEventListener("input", (e) => { clearTimeout(timer); timer = setTimeout(() => filter(e.target.value), 200); });
  document.getElementById("first").addEventListener("click", () => { page = 0; render(); });
  document.getElementById("back").addEventListener("click", () => { page--; render(); });
  document.getElementById("fwd").addEventListener("click", () => { page++; render(); });
  document.getElementById("last").addEventListener("click", () => { page = 1e9; render(); });
  window.addEventListener("hashchange", onHash);
  render(); onHash();
  document.documentElement.dataset.ready = "1";  // the table is drawn (tests wait for this)
  performance.mark("forensics-table-ready");  // bench/html_page.py reads when
})();
