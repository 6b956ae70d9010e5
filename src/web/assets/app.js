/* app.js - muster's live UI: one page, no dependencies, nothing loaded
 * from the network.  Views (by the address's hash): #/queues, #/jobs,
 * #/job/KEY, #/cluster, #/node/NAME, #/fleet.  Data comes from /ui/api/
 * (paginated JSON) with the bearer token kept in sessionStorage; a
 * Server-Sent Events stream (/ui/api/stream, read with fetch so that it
 * carries the token) says when the scheduler's view changed, and the
 * current view then re-reads its data and redraws in place. */
(function () {
  "use strict";
  const $ = (sel, el) => (el || document).querySelector(sel);
  const main = $("#main");
  const tip = $("#tip");
  const state = { gen: 0, token: "", view: "", seq: 0, busy: false, again: false, last: 0, heat: null };
  const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"];

  /* --- token, theme -------------------------------------------------------- */
  function initToken() {
    const m = /(?:^|[#&])token=([^&]+)/.exec(location.hash);
    if (m) {
      sessionStorage.setItem("muster-token", decodeURIComponent(m[1]));
      history.replaceState(null, "", location.pathname + "#/queues");
    }
    state.token = sessionStorage.getItem("muster-token") || "";
  }
  function askToken() {
    const d = $("#token-dialog");
    if (d.open) return;
    d.showModal();
    $("#token-form").onsubmit = () => {
      state.token = $("#token-input").value.trim();
      sessionStorage.setItem("muster-token", state.token);
      d.close();
      startStream();
      route();
    };
  }
  function initTheme() {
    const saved = localStorage.getItem("muster-theme");
    const dark = saved ? saved === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
    document.documentElement.dataset.theme = dark ? "dark" : "light";
    $("#theme").onclick = () => {
      const t = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
      document.documentElement.dataset.theme = t;
      localStorage.setItem("muster-theme", t);
      redraw();
    };
  }
  const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

  /* --- helpers -------------------------------------------------------------- */
  const esc = (s) => String(s == null ? "" : s).replace(/[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  const num = (x, d) => (x == null ? "–" : Number(x).toLocaleString(undefined, { maximumFractionDigits: d == null ? 1 : d }));
  function bytes(b) {
    if (!b) return "0";
    const u = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let i = 0;
    while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return num(b, 1) + " " + u[i];
  }
  const RES = [{ k: "gpu", l: "GPUs", f: (x) => num(x, 2) }, { k: "cpu", l: "CPUs", f: (x) => num(x, 1) },
    { k: "mem", l: "Memory", f: bytes }];
  function ago(ms) {
    if (!ms) return "–";
    let s = Math.round((Date.now() - ms) / 1000);
    const fut = s < 0;
    s = Math.abs(s);
    const t = s < 60 ? s + " s" : s < 3600 ? Math.round(s / 60) + " min" : s < 172800 ? (s / 3600).toFixed(1) + " h" : Math.round(s / 86400) + " d";
    return fut ? "in " + t : t + " ago";
  }
  const when = (ms) => (ms ? new Date(ms).toLocaleString() : "–");
  const hhmm = (ms, sec) => new Date(ms).toLocaleTimeString([], sec ? { hour: "2-digit", minute: "2-digit", second: "2-digit" } : { hour: "2-digit", minute: "2-digit" });
  const badge = (s) => `<span class="badge ${esc(s)}">${esc(s)}</span>`;
  const jobLink = (key, label) => `<a href="#/job/${encodeURIComponent(key)}">${esc(label)}</a>`;
  const nodeLink = (n) => (n ? `<a href="#/node/${encodeURIComponent(n)}">${esc(n)}</a>` : `<span class="muted">–</span>`);

  /* Reads an endpoint; an answer that arrives after the view changed is
   * dropped (throws "stale"), so a late refresh never draws over a new view. */
  async function api(path) {
    const gen = state.gen;
    const r = await fetch("/ui/api/" + path, { headers: state.token ? { Authorization: "Bearer " + state.token } : {} });
    if (r.status === 401) { askToken(); throw new Error("token needed"); }
    const body = await r.json().catch(() => ({ error: "bad answer (" + r.status + ")" }));
    if (gen !== state.gen) throw new Error("stale");
    if (!r.ok) { const e = new Error(body.error || "HTTP " + r.status); e.status = r.status; throw e; }
    return body;
  }

  /* Tooltips: any element with data-tip (HTML) shows it on hover/focus. */
  function showTip(html, x, y) {
    tip.innerHTML = html;
    tip.querySelectorAll("[data-c]").forEach((e) => { e.style.background = e.dataset.c; });
    tip.hidden = false;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = Math.min(x + 14, innerWidth - w - 8) + "px";
    tip.style.top = Math.min(y + 14, innerHeight - h - 8) + "px";
  }
  const hideTip = () => { tip.hidden = true; };
  document.addEventListener("mouseover", (e) => {
    const t = e.target.closest && e.target.closest("[data-tip]");
    if (t) showTip(t.dataset.tip, e.clientX, e.clientY);
  });
  document.addEventListener("mouseout", (e) => { if (e.target.closest && e.target.closest("[data-tip]")) hideTip(); });
  document.addEventListener("focusin", (e) => {
    const t = e.target.closest && e.target.closest("[data-tip]");
    if (t) { const r = t.getBoundingClientRect(); showTip(t.dataset.tip, r.left, r.bottom); }
  });
  document.addEventListener("focusout", hideTip);

  /* --- header and live stream -------------------------------------------- */
  function chips(s) {
    const g = s.gpus, total = g.reduce((a, b) => a + b, 0);
    if (s.nodes != null) state.nodes = s.nodes;
    $("#chips").innerHTML =
      `<span>nodes <b>${num(state.nodes, 0)}</b></span>` +
      `<span>GPUs used <b>${num(g[1], 0)}</b> / ${num(total, 0)}</span>` +
      `<span>running <b id="chip-running">${num(s.running, 0)}</b></span>` +
      `<span>pending <b id="chip-pending">${num(s.pending, 0)}</b></span>`;
    if (s.title) { $("#title").textContent = s.title; document.title = s.title; }
  }
  function live(on, text) {
    $("#live-dot").className = "dot " + (on ? "on" : "off");
    $("#live-text").textContent = text;
  }
  let backoff = 1000;
  let streamCtl = null;
  async function startStream() {
    if (streamCtl) streamCtl.abort();
    streamCtl = new AbortController();
    try {
      const r = await fetch("/ui/api/stream", { signal: streamCtl.signal,
        headers: state.token ? { Authorization: "Bearer " + state.token } : {} });
      if (r.status === 401) { live(false, "token needed"); askToken(); return; }
      if (!r.ok || !r.body) throw new Error("stream " + r.status);
      live(true, "live");
      backoff = 1000;
      const rd = r.body.getReader(), dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await rd.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const msg = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = msg.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5)).join("\n");
          if (data) onTick(JSON.parse(data));
        }
      }
      throw new Error("stream ended");
    } catch (e) {
      if (e.name === "AbortError") return;
      live(false, "reconnecting");
      setTimeout(startStream, backoff);
      backoff = Math.min(backoff * 2, 15000);
    }
  }
  function onTick(t) {
    state.last = t.at;
    live(true, "live · " + hhmm(t.at));
    chips({ nodes: state.nodes, gpus: t.gpus, running: t.running, pending: t.pending });
    if (t.seq !== state.seq) { state.seq = t.seq; refresh(); }
  }
  /* Re-reads the current view's data, at most one request at a time. */
  async function refresh() {
    if (state.busy) { state.again = true; return; }
    state.busy = true;
    try { await current.load(false); } catch (e) { /* shown by the view */ }
    state.busy = false;
    if (state.again) { state.again = false; setTimeout(refresh, 250); }
  }

  /* --- charts ---------------------------------------------------------------- */
  /* A stacked area chart (SVG) of series [{name, values, color}] over t;
   * hovering shows the values at the nearest point. */
  function stacked(el, t, series, fmt, opts) {
    opts = opts || {};
    const W = el.clientWidth || 600, H = opts.height || 220, L = 52, R = 10, T = 10, B = 24;
    if (!t.length) { el.innerHTML = `<div class="empty">No history yet: a point is kept every ${opts.step || "minute"}.</div>`; return; }
    const n = t.length, tops = new Array(n).fill(0);
    const stacks = series.map((s) => s.values.map((v, i) => (tops[i] += v || 0)));
    /* a round top and 1-2-5 steps, so the axis reads 0, 5, 10, 15, 20 */
    const top = Math.max(1e-9, opts.max || 0, ...tops), p10 = Math.pow(10, Math.floor(Math.log10(top / 6)));
    const ystep = [1, 2, 2.5, 5, 10].map((m) => m * p10).find((s) => top / s <= 6);
    const max = ystep * Math.ceil(top / ystep - 1e-9);
    const t0 = t[0], t1 = Math.max(t[n - 1], t0 + 1);
    const x = (ms) => L + ((ms - t0) / (t1 - t0)) * (W - L - R);
    const y = (v) => T + (1 - v / max) * (H - T - B);
    let paths = "";
    for (let k = series.length - 1; k >= 0; k--) {
      const up = stacks[k], lo = k ? stacks[k - 1] : null;
      let d = "M" + x(t[0]) + "," + y(up[0]);
      for (let i = 1; i < n; i++) d += "L" + x(t[i]) + "," + y(up[i]);
      for (let i = n - 1; i >= 0; i--) d += "L" + x(t[i]) + "," + y(lo ? lo[i] : 0);
      paths += `<path d="${d}Z" fill="${series[k].color}" fill-opacity="${opts.line ? 0 : 0.8}" stroke="${series[k].color}" stroke-width="1.2"/>`;
    }
    let lines = "";
    (opts.lines || []).forEach((ln) => {
      let d = "";
      ln.values.forEach((v, i) => { d += (i ? "L" : "M") + x(t[i]) + "," + y(v); });
      lines += `<path d="${d}" fill="none" stroke="${ln.color}" stroke-width="1.5" stroke-dasharray="${ln.dash || ""}"/>`;
    });
    let axis = "";
    for (let g = 0; g * ystep <= max + 1e-9; g++) {
      const v = g * ystep;
      axis += `<line class="axis" x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}"/><text x="${L - 6}" y="${y(v) + 4}" text-anchor="end">${esc(fmt(v))}</text>`;
    }
    for (let g = 0; g <= 4; g++) {
      const ms = t0 + ((t1 - t0) * g) / 4;
      axis += `<text x="${x(ms)}" y="${H - 6}" text-anchor="${g === 0 ? "start" : g === 4 ? "end" : "middle"}">${hhmm(ms, t1 - t0 < 600000)}</text>`;
    }
    el.innerHTML = `<svg width="${W}" height="${H}" role="img" aria-label="${esc(opts.label || "chart")}">${axis}${paths}${lines}<line class="cursor" x1="0" x2="0" y1="${T}" y2="${H - B}" stroke="${css("--muted")}" visibility="hidden"/></svg>` +
      `<div class="legend">${series.concat(opts.lines || []).map((s) => `<span><span class="sw" data-c="${s.color}"></span>${esc(s.name)}</span>`).join("")}</div>`;
    el.querySelectorAll(".sw[data-c]").forEach((s) => { s.style.background = s.dataset.c; });
    const svg = el.querySelector("svg"), cur = svg.querySelector(".cursor");
    svg.addEventListener("mousemove", (e) => {
      const r = svg.getBoundingClientRect(), mx = e.clientX - r.left;
      let i = 0; /* the nearest point */
      for (let k = 1; k < n; k++) if (Math.abs(x(t[k]) - mx) < Math.abs(x(t[i]) - mx)) i = k;
      cur.setAttribute("x1", x(t[i])); cur.setAttribute("x2", x(t[i])); cur.setAttribute("visibility", "visible");
      const rows = series.concat(opts.lines || []).map((s) => `<tr><td><span class="sw" data-c="${s.color}"></span>${esc(s.name)}</td><td class="num">${esc(fmt(s.values[i] || 0))}</td></tr>`).join("");
      showTip(`<b>${when(t[i])}</b><table>${rows}</table>`, e.clientX, e.clientY);
    });
    svg.addEventListener("mouseleave", () => { cur.setAttribute("visibility", "hidden"); hideTip(); });
  }

  /* A horizontal bar: used against fair share (solid mark) and deserved
   * (dashed mark), scaled to scale. */
  function quotaBar(used, fair, des, scale) {
    const W = 140, H = 12, s = (v) => Math.max(0, Math.min(W, (v / (scale || 1)) * W));
    return `<svg width="${W}" height="${H}" aria-hidden="true"><rect class="bar-bg" width="${W}" height="${H}" rx="2"/>` +
      `<rect class="bar-used" width="${s(used)}" height="${H}" rx="2"/>` +
      (des > 0 ? `<line class="bar-des" x1="${s(des)}" x2="${s(des)}" y1="0" y2="${H}"/>` : "") +
      `<line class="bar-fair" x1="${s(fair)}" x2="${s(fair)}" y1="0" y2="${H}"/></svg>`;
  }

  /* --- views ------------------------------------------------------------------ */
  const views = {};
  let current = { load: async () => {} };

  views.queues = {
    res: 0,
    async load(first) {
      if (first) {
        main.innerHTML = `<h1>Queues</h1><p class="sub">Deserved quota, fair share and what each queue uses now; pending and running jobs. Bars: used (blue), fair share (solid mark), deserved (dashed mark).</p>
          <div class="panel"><table id="qt"><thead></thead><tbody></tbody></table></div>
          <div class="panel" id="qpools" hidden><h2>Node pools</h2><p class="sub">GPUs per pool, and each queue's GPUs in it: used / fair share / deserved, and its limit there.</p><table id="pt"><thead></thead><tbody></tbody></table></div>
          <div class="panel"><div class="filters"><h2>Usage over the last 24 hours</h2>
          <label>resource <select id="qres">${RES.map((r, i) => `<option value="${i}">${r.l}</option>`).join("")}</select></label></div>
          <div id="qchart"></div></div>`;
        $("#qres").value = String(this.res);
        $("#qres").onchange = (e) => { this.res = +e.target.value; this.load(false); };
      }
      const d = await api("queues?res=" + RES[this.res].k);
      this.draw(d);
    },
    draw(d) {
      const byParent = {};
      d.queues.forEach((q) => { (byParent[q.parent || ""] = byParent[q.parent || ""] || []).push(q); });
      const rows = [];
      const walk = (p, depth) => (byParent[p] || []).sort((a, b) => a.name.localeCompare(b.name)).forEach((q) => { rows.push([q, depth]); walk(q.name, depth + 1); });
      walk("", 0);
      d.queues.forEach((q) => { if (!rows.some((r) => r[0] === q)) rows.push([q, 0]); });
      /* bars share one scale per resource, set by the leaf queues (a parent's
       * bar may run full: its numbers are beside it) */
      const leafs = d.queues.filter((q) => !byParent[q.name]);
      const scale = [0, 1, 2].map((r) => Math.max(1e-9, ...(leafs.length ? leafs : d.queues).map((q) => Math.max(q.used[r], q.fair[r], q.deserved[r]))));
      $("#qt thead").innerHTML = `<tr><th>Queue</th><th class="num">Priority</th>${RES.map((r) => `<th>${r.l}: used / fair share / deserved</th>`).join("")}<th class="num">Pending</th><th class="num">Running</th></tr>`;
      $("#qt tbody").innerHTML = rows.map(([q, depth]) => {
        const cells = RES.map((r, i) => {
          const t = `<b>${esc(q.name)}</b> · ${r.l}<table><tr><td>used</td><td class="num">${r.f(q.used[i])}</td></tr><tr><td>fair share</td><td class="num">${r.f(q.fair[i])}</td></tr><tr><td>deserved</td><td class="num">${r.f(q.deserved[i])}</td></tr><tr><td>limit</td><td class="num">${q.limit[i] > 0 ? r.f(q.limit[i]) : "none"}</td></tr></table>`;
          return `<td tabindex="0" data-tip="${esc(t)}"><span class="treecell">${quotaBar(q.used[i], q.fair[i], q.deserved[i], scale[i])}<span class="mono">${r.f(q.used[i])} / ${r.f(q.fair[i])} / ${r.f(q.deserved[i])}</span></span></td>`;
        }).join("");
        const pad = "\u2003".repeat(depth) + (depth ? "└ " : "");
        return `<tr data-queue="${esc(q.name)}"><td><span class="muted">${pad}</span><a class="qname" href="#/jobs?queue=${encodeURIComponent(q.name)}">${esc(q.name)}</a></td><td class="num">${q.priority}</td>${cells}` +
          `<td class="num"><a class="qpending" href="#/jobs?queue=${encodeURIComponent(q.name)}&state=pending">${q.pending}</a></td>` +
          `<td class="num"><a class="qrunning" href="#/jobs?queue=${encodeURIComponent(q.name)}&state=running">${q.running}</a></td></tr>`;
      }).join("") || `<tr><td colspan="7" class="empty">No queues yet.</td></tr>`;
      const pools = d.pools || [];
      $("#qpools").hidden = !pools.length;
      const gf = RES[0].f;
      $("#pt thead").innerHTML = `<tr><th>Pool</th><th>Queue</th><th>GPUs: used / fair share / deserved</th><th class="num">Limit</th></tr>`;
      $("#pt tbody").innerHTML = pools.map((p) => p.queue
        ? `<tr data-pool="${esc(p.pool)}" data-queue="${esc(p.queue)}"><td></td><td><a class="qname" href="#/jobs?queue=${encodeURIComponent(p.queue)}">${esc(p.queue)}</a></td><td><span class="treecell">${quotaBar(p.used, p.fair, p.deserved, Math.max(1e-9, p.used, p.fair, p.deserved))}<span class="mono">${gf(p.used)} / ${gf(p.fair)} / ${gf(p.deserved)}</span></span></td><td class="num">${p.limit >= 0 ? gf(p.limit) : "none"}</td></tr>`
        : `<tr data-pool="${esc(p.pool)}"><td><b>${esc(p.pool)}</b></td><td class="muted">${p.nodes} nodes</td><td class="mono">${gf(p.used)} of ${gf(p.gpus)} in use</td><td></td></tr>`).join("");
      const leaves = d.queues.filter((q) => !byParent[q.name]);
      const series = leaves.map((q, i) => ({ name: q.name, values: d.history.series[q.name] || [], color: PALETTE[i % PALETTE.length] }));
      stacked($("#qchart"), d.history.t, series, RES[this.res].f, { label: "usage per queue", height: 240 });
    },
  };

  views.jobs = {
    async load(first, params) {
      if (params) this.p = params;
      const p = this.p;
      if (first) {
        main.innerHTML = `<h1>Jobs</h1><p class="sub">Every job the scheduler knows, paginated on the server. Select a row for its pods, devices and why it waits.</p>
          <div class="panel"><form class="filters" id="jf">
          <label>queue <select name="queue"><option value="">all</option></select></label>
          <label>state <select name="state"><option value="">all</option><option>pending</option><option>running</option><option>finished</option></select></label>
          <label>namespace <select name="ns"><option value="">all</option></select></label>
          <label>type <select name="type"><option value="">all</option></select></label>
          <label>name <input type="search" name="q" placeholder="contains…"></label>
          <label>per page <select name="limit"><option>25</option><option>50</option><option>100</option><option>200</option></select></label>
          </form><table id="jt"><thead></thead><tbody></tbody></table>
          <div class="pager"><span id="jcount"></span><button class="ghost" id="jprev" type="button">← Previous</button><button class="ghost" id="jnext" type="button">Next →</button></div></div>`;
        const f = $("#jf");
        f.onchange = f.oninput = () => {
          const q = new URLSearchParams(p);
          for (const el of f.elements) { if (el.value) q.set(el.name, el.value); else q.delete(el.name); }
          q.delete("offset");
          history.replaceState(null, "", "#/jobs?" + q.toString());
          this.p = q; this.load(false);
        };
        $("#jprev").onclick = () => this.page(-1);
        $("#jnext").onclick = () => this.page(1);
      }
      const q = new URLSearchParams(p);
      if (!q.get("limit")) q.set("limit", "50");
      const d = await api("jobs?" + q.toString());
      this.d = d;
      this.draw(d, q, first);
    },
    page(dir) {
      const q = new URLSearchParams(this.p), lim = this.d.limit;
      q.set("offset", Math.max(0, this.d.offset + dir * lim));
      history.replaceState(null, "", "#/jobs?" + q.toString());
      this.p = q; this.load(false);
    },
    draw(d, q, first) {
      const f = $("#jf");
      const fill = (name, vals) => {
        const s = f.elements[name], keep = q.get(name) || "";
        const want = ["", ...vals];
        if (s.options.length !== want.length || [...s.options].some((o, i) => o.value !== want[i]))
          s.innerHTML = want.map((v) => `<option value="${esc(v)}">${v ? esc(v) : "all"}</option>`).join("");
        s.value = keep;
      };
      fill("queue", d.facets.queues); fill("ns", d.facets.namespaces); fill("type", d.facets.types);
      if (first) { f.elements.state.value = q.get("state") || ""; f.elements.q.value = q.get("q") || ""; f.elements.limit.value = q.get("limit") || "50"; }
      const sort = q.get("sort") || "submitted", order = q.get("order") || (sort === "submitted" ? "desc" : "asc");
      const cols = [["name", "Job"], ["ns", "Namespace"], ["queue", "Queue"], ["state", "State"], [null, "Type"], ["pods", "Pods"], ["gpus", "GPUs"], ["priority", "Priority"], ["submitted", "Submitted"], ["expected", "Expected start"], [null, "Why pending"]];
      $("#jt thead").innerHTML = "<tr>" + cols.map(([k, l]) => {
        const num_ = ["pods", "gpus", "priority"].includes(k) ? ' class="num"' : "";
        if (!k) return `<th${num_}>${l}</th>`;
        const s = k === sort ? ` aria-sort="${order === "asc" ? "ascending" : "descending"}"` : "";
        return `<th${num_}><button type="button" data-sort="${k}"${s}>${l}</button></th>`;
      }).join("") + "</tr>";
      $("#jt thead").querySelectorAll("button[data-sort]").forEach((b) => {
        b.onclick = () => {
          const nq = new URLSearchParams(this.p), k = b.dataset.sort;
          nq.set("order", k === sort && order === "asc" ? "desc" : k === sort ? "asc" : k === "submitted" ? "desc" : "asc");
          nq.set("sort", k); nq.delete("offset");
          history.replaceState(null, "", "#/jobs?" + nq.toString());
          this.p = nq; this.load(false).then(() => { const nb = $(`#jt button[data-sort="${k}"]`); if (nb) nb.focus(); });
        };
      });
      $("#jt tbody").innerHTML = d.items.map((j) => `<tr data-key="${esc(j.key)}">
        <td>${jobLink(j.key, j.name)}</td><td>${esc(j.ns)}</td><td>${esc(j.queue)}</td><td>${badge(j.state)}</td><td>${esc(j.type)}</td>
        <td class="num">${j.bound}/${j.pods}</td><td class="num">${num(j.gpus, 2)}</td><td class="num">${j.priority}</td>
        <td data-tip="${esc(when(j.submitted))}">${ago(j.submitted)}</td>
        <td>${j.expected ? `<span data-tip="${esc(when(j.expected) + " (from " + (j.expectedFrom || "?") + ")")}">${ago(j.expected)}</span>` : '<span class="muted">–</span>'}</td>
        <td class="why muted" ${j.reason ? `data-tip="${esc(esc(j.reason))}"` : ""}>${j.state === "pending" ? `<b>${esc(j.why || "")}</b> ${esc(j.reason || "")}` : ""}</td></tr>`).join("") ||
        `<tr><td colspan="11" class="empty">No jobs match.</td></tr>`;
      const to = Math.min(d.total, d.offset + d.items.length);
      $("#jcount").textContent = d.total ? `${num(d.offset + 1, 0)}–${num(to, 0)} of ${num(d.total, 0)}` : "0 jobs";
      $("#jprev").disabled = d.offset === 0;
      $("#jnext").disabled = to >= d.total;
    },
  };

  views.job = {
    async load(first, key) {
      if (key) this.key = key;
      let d;
      try { d = await api("job?key=" + encodeURIComponent(this.key)); } catch (e) {
        if (e.message === "stale") throw e;
        main.innerHTML = `<h1>Job</h1><div class="panel error">${esc(e.message)}</div><p><a href="#/jobs">← all jobs</a></p>`;
        return;
      }
      const j = d.job;
      const why = j.state === "pending" || j.bound < j.pods ? `<div class="panel"><h2>Why it waits</h2><div class="reason" id="reason"><span class="why">${esc(j.why || "")}</span>: ${esc(j.reason || "no reason recorded yet")}</div>
        <p>${j.expected ? `Expected to start <b>${ago(j.expected)}</b> (${esc(when(j.expected))}), from ${esc(j.expectedFrom || "")}.` : "No expected start known yet (nothing running is expected to end soon enough, or no estimate)."}</p></div>` : "";
      const pods = d.pods.map((p) => `<tr><td class="mono">${esc(p.name)}</td><td>${esc(p.phase)}</td><td>${nodeLink(p.node)}</td>
        <td class="mono">${p.gpus.length ? p.gpus.join(",") : "–"}</td><td class="num">${p.gpuMilli ? num(p.gpuMilli / 1000, 3) : p.gpus.length ? "whole" : "–"}</td>
        <td class="num">${p.numa >= 0 ? p.numa : "–"}</td><td class="num">${p.nic >= 0 ? p.nic : "–"}</td></tr>`).join("");
      const evs = (list) => list.map((e) => `<tr><td data-tip="${esc(when(e.at))}">${ago(e.at)}</td><td>${esc(e.kind)}</td><td class="wrap">${esc(e.msg || "")}</td></tr>`).join("");
      main.innerHTML = `<p><a href="#/jobs">← all jobs</a></p><h1>${esc(j.name)} ${badge(j.state)}</h1><p class="sub mono">${esc(j.key)}</p>
        ${why}
        <div class="grid2"><div class="panel"><h2>Job</h2><dl class="kv">
          <dt>namespace</dt><dd>${esc(j.ns)}</dd><dt>queue</dt><dd><a href="#/jobs?queue=${encodeURIComponent(j.queue)}">${esc(j.queue)}</a></dd>
          <dt>kind / type</dt><dd>${esc(j.kind)} / ${esc(j.type)}</dd><dt>pods</dt><dd>${j.bound} of ${j.pods} bound, minMember ${j.minMember}</dd>
          <dt>GPUs</dt><dd>${num(j.gpus, 3)}</dd><dt>priority</dt><dd>${j.priority}${j.preemptible ? ", preemptible" : ", not preemptible"}</dd>
          <dt>submitted</dt><dd>${esc(when(j.submitted))} (${ago(j.submitted)})</dd><dt>started</dt><dd>${j.started ? esc(when(j.started)) : "–"}</dd>
          <dt>preemptions</dt><dd>${j.preemptions}</dd></dl></div>
        <div class="panel"><h2>Preemption history</h2>${d.preemptions.length ? `<table><tbody>${evs(d.preemptions)}</tbody></table>` : `<p class="muted">Never preempted${j.preemptions ? ` while this page's history was kept (${j.preemptions} before)` : ""}.</p>`}</div></div>
        <div class="panel"><h2>Pods (${d.npods})</h2><table><thead><tr><th>Pod</th><th>Phase</th><th>Node</th><th>GPU indices</th><th class="num">GPU share</th><th class="num">NUMA</th><th class="num">NIC</th></tr></thead><tbody>${pods || '<tr><td colspan="7" class="empty">No pods yet.</td></tr>'}</tbody></table></div>
        <div class="panel"><h2>Events</h2>${d.events.length ? `<table><tbody>${evs(d.events)}</tbody></table>` : '<p class="muted">No events since the UI started.</p>'}</div>`;
    },
  };

  views.node = {
    async load(first, name) {
      if (name) this.name = name;
      let d;
      try { d = await api("node?name=" + encodeURIComponent(this.name)); } catch (e) {
        if (e.message === "stale") throw e;
        main.innerHTML = `<h1>Node</h1><div class="panel error">${esc(e.message)}</div>`;
        return;
      }
      const n = d.node, st = ["free", "used", "fragmented", "reserved", "down"], cls = ["free", "used", "frag", "resv", "down"];
      main.innerHTML = `<p><a href="#/cluster">← cluster</a></p><h1>${esc(n.name)}</h1><p class="sub">${esc(n.levels || "no topology labels")} · ${esc(n.gpuModel || "no GPU model")} · ${n.ready ? "ready" : "cordoned or not ready"}</p>
        <div class="panel"><h2>GPUs</h2><div class="legend">${[...n.gpus].map((c, i) => `<span tabindex="0" data-tip="GPU ${i}: ${st[+c]}"><span class="sw ${cls[+c]}"></span>${i}</span>`).join("")}</div>
        <dl class="kv"><dt>CPU</dt><dd>${num(n.cpuUsed)} of ${num(n.cpuAlloc)} cores</dd><dt>memory</dt><dd>${bytes(n.memUsed)} of ${bytes(n.memAlloc)}</dd><dt>pods</dt><dd>${n.pods}</dd></dl></div>
        <div class="panel"><h2>Pods</h2><table><thead><tr><th>Pod</th><th>Job</th><th>Phase</th><th>GPU indices</th><th class="num">NUMA</th><th class="num">NIC</th></tr></thead><tbody>
        ${d.pods.map((p) => `<tr><td class="mono">${esc(p.name)}</td><td>${jobLink(p.job, p.job)}</td><td>${esc(p.phase)}</td><td class="mono">${p.gpus.join(",") || "–"}</td><td class="num">${p.numa >= 0 ? p.numa : "–"}</td><td class="num">${p.nic >= 0 ? p.nic : "–"}</td></tr>`).join("") || '<tr><td colspan="6" class="empty">No pods here.</td></tr>'}</tbody></table></div>`;
    },
  };

  /* The heat map: racks as rows of node tiles, each tile a 4-wide grid of
   * GPU cells, drawn on one canvas; hover for a node, arrows and Enter to
   * move and open. */
  const heat = {
    layout(d, width) {
      const nodes = d.nodes, maxg = Math.max(1, ...nodes.map((n) => n[2].length));
      const total = nodes.reduce((a, n) => a + n[2].length, 0);
      const cell = total > 20000 ? 3 : total > 5000 ? 4 : total > 1000 ? 6 : 10;
      const gap = cell > 5 ? 1 : 0;
      const cols = Math.min(maxg, 4), rows = Math.ceil(maxg / cols);
      const tw = cols * (cell + gap) + 3, th = rows * (cell + gap) + 3;
      const labelW = 84, perRow = Math.max(1, Math.floor((width - labelW - 8) / tw));
      const boxes = [];
      let y = 4, i = 0;
      const racks = [];
      while (i < nodes.length) {
        const rk = nodes[i][1];
        let j = i;
        while (j < nodes.length && nodes[j][1] === rk) j++;
        racks.push({ name: d.racks[rk] || "(no rack)", y: y });
        for (let k = i; k < j; k++) {
          const c = (k - i) % perRow, r = Math.floor((k - i) / perRow);
          boxes.push({ n: nodes[k], x: labelW + c * tw, y: y + r * th });
        }
        y += Math.ceil((j - i) / perRow) * th + 6;
        i = j;
      }
      return { boxes, racks, cell, gap, cols, tw, th, height: y + 4, width };
    },
    draw(canvas, L, sel) {
      const dpr = window.devicePixelRatio || 1;
      canvas.width = L.width * dpr; canvas.height = L.height * dpr;
      canvas.style.width = L.width + "px"; canvas.style.height = L.height + "px";
      const g = canvas.getContext("2d");
      g.scale(dpr, dpr);
      const colors = [css("--free"), css("--used"), css("--frag"), css("--resv"), css("--down")];
      g.fillStyle = css("--muted");
      g.font = "11px system-ui, sans-serif";
      g.textBaseline = "top";
      L.racks.forEach((r) => g.fillText(r.name.length > 12 ? r.name.slice(0, 11) + "…" : r.name, 4, r.y + 1));
      for (let s = 0; s < 5; s++) { /* one fillStyle per state: fast at 40,000 cells */
        g.fillStyle = colors[s];
        const ch = String(s);
        for (const b of L.boxes) {
          const cells = b.n[2];
          for (let k = 0; k < cells.length; k++) if (cells[k] === ch)
            g.fillRect(b.x + (k % L.cols) * (L.cell + L.gap), b.y + Math.floor(k / L.cols) * (L.cell + L.gap), L.cell, L.cell);
        }
      }
      if (sel >= 0 && L.boxes[sel]) {
        const b = L.boxes[sel];
        g.strokeStyle = css("--ink"); g.lineWidth = 1.5;
        g.strokeRect(b.x - 1.5, b.y - 1.5, L.tw - 0.5, L.th - 0.5);
      }
    },
    at(L, x, y) {
      for (let i = 0; i < L.boxes.length; i++) {
        const b = L.boxes[i];
        if (x >= b.x - 1 && x < b.x + L.tw - 1 && y >= b.y - 1 && y < b.y + L.th - 1) return i;
      }
      return -1;
    },
    tipOf(d, b) {
      const n = b.n, c = [0, 0, 0, 0, 0];
      for (const ch of n[2]) c[+ch]++;
      const st = ["free", "used", "fragmented", "reserved", "down"];
      return `<b>${esc(n[0])}</b> · ${esc(d.racks[n[1]] || "")}<table>${st.map((s, i) => c[i] ? `<tr><td><span class="sw ${["free", "used", "frag", "resv", "down"][i]}"></span>${s}</td><td class="num">${c[i]}</td></tr>` : "").join("")}<tr><td>pods</td><td class="num">${n[3]}</td></tr></table>`;
    },
  };

  views.cluster = {
    sel: -1,
    async load(first) {
      if (first) {
        main.innerHTML = `<h1>Cluster</h1><p class="sub">Racks, then nodes, then GPUs. Hover a node for its numbers; click it (or Tab to the map, then arrows and Enter) for its pods.</p>
          <div class="panel"><div class="stats" id="cstats"></div>
          <div class="legend"><span><span class="sw used"></span>used</span><span><span class="sw frag"></span>fragmented (free but stranded on a partly used node, or shared)</span><span><span class="sw resv"></span>reserved for a backfill reservation</span><span><span class="sw free"></span>free</span><span><span class="sw down"></span>down (cordoned or not ready)</span></div>
          <div class="heat-wrap"><canvas class="heat" id="heat" tabindex="0" aria-label="GPU heat map: arrows move between nodes, Enter opens one"></canvas></div><p class="muted" id="heatinfo"></p></div>
          <div class="panel"><h2>Utilisation and fragmentation over the last 24 hours</h2><div id="cchart"></div></div>`;
        const cv = $("#heat");
        cv.addEventListener("mousemove", (e) => {
          const L = state.heat; if (!L) return;
          const r = cv.getBoundingClientRect(), i = heat.at(L, e.clientX - r.left, e.clientY - r.top);
          if (i >= 0) showTip(heat.tipOf(this.d, L.boxes[i]), e.clientX, e.clientY); else hideTip();
        });
        cv.addEventListener("mouseleave", hideTip);
        cv.addEventListener("click", (e) => {
          const L = state.heat; if (!L) return;
          const r = cv.getBoundingClientRect(), i = heat.at(L, e.clientX - r.left, e.clientY - r.top);
          if (i >= 0) location.hash = "#/node/" + encodeURIComponent(L.boxes[i].n[0]);
        });
        cv.addEventListener("keydown", (e) => {
          const L = state.heat; if (!L || !L.boxes.length) return;
          const per = Math.max(1, Math.floor((L.width - 92) / L.tw));
          const mv = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: per, ArrowUp: -per }[e.key];
          if (mv) {
            e.preventDefault();
            this.sel = Math.max(0, Math.min(L.boxes.length - 1, (this.sel < 0 ? 0 : this.sel + mv)));
            heat.draw(cv, L, this.sel);
            const b = L.boxes[this.sel], r = cv.getBoundingClientRect();
            showTip(heat.tipOf(this.d, b), r.left + b.x, r.top + b.y);
          } else if (e.key === "Enter" && this.sel >= 0) {
            location.hash = "#/node/" + encodeURIComponent(L.boxes[this.sel].n[0]);
          }
        });
      }
      const [d, c] = await Promise.all([api("heatmap"), api("cluster")]);
      this.d = d;
      this.draw(d, c);
    },
    draw(d, c) {
      const g = c.gpus, total = g.reduce((a, b) => a + b, 0) || 1;
      const pct = (v) => num((100 * v) / total, 1) + "%";
      $("#cstats").innerHTML = [["GPUs", num(total, 0)], ["used", pct(g[1])], ["fragmented", pct(g[2])], ["reserved", pct(g[3])], ["free", pct(g[0])], ["down", num(g[4], 0)],
        ["nodes", num(c.nodes, 0)], ["CPU used", num(c.cpuUsed, 0) + " / " + num(c.cpu, 0)], ["memory used", bytes(c.memUsed) + " / " + bytes(c.mem)]]
        .map(([l, v]) => `<div class="stat"><div class="v">${v}</div><div class="l">${l}</div></div>`).join("");
      const cv = $("#heat"), wrap = cv.parentElement;
      const t0 = performance.now();
      const L = heat.layout(d, Math.max(400, wrap.clientWidth - 2));
      heat.draw(cv, L, this.sel);
      state.heat = L;
      const ms = performance.now() - t0;
      cv.dataset.drawMs = ms.toFixed(1);
      $("#heatinfo").textContent = `${num(d.nodes.length, 0)} nodes in ${num(d.racks.length, 0)} racks · ${num(total, 0)} GPUs drawn in ${ms.toFixed(0)} ms` + (c.levels.length ? ` · topology levels: ${c.levels[0].split(" ").map((kv) => kv.split("=")[0]).join(" › ")} › node` : "");
      const h = c.history, tot = h.total.map((v) => v || 1);
      const p = (a) => a.map((v, i) => (100 * v) / tot[i]);
      stacked($("#cchart"), h.t, [{ name: "used", values: p(h.used), color: css("--used") }, { name: "fragmented", values: p(h.fragmented), color: css("--frag") }, { name: "reserved", values: p(h.reserved), color: css("--resv") }],
        (v) => num(v, 1) + "%", { label: "utilisation", height: 200, max: 100 });
    },
  };

  views.fleet = {
    async load() {
      const d = await api("fleet");
      if (!d.fleet) {
        main.innerHTML = `<h1>Fleet</h1><div class="panel"><p class="empty" id="nofleet">No fleet. ${esc(d.message)}</p></div>`;
        return;
      }
      main.innerHTML = `<h1>Fleet</h1><div class="panel"><h2>Clusters</h2><table><thead><tr><th>Cluster</th><th>State</th><th class="num">GPUs used</th><th class="num">Pending</th><th class="num">Running</th></tr></thead><tbody>
        ${d.clusters.map((c) => `<tr><td>${esc(c.name)}</td><td>${esc(c.state)}</td><td class="num">${num(c.gpusUsed, 0)} / ${num(c.gpus, 0)}</td><td class="num">${c.pending}</td><td class="num">${c.running}</td></tr>`).join("")}</tbody></table></div>
        <div class="panel"><h2>Where jobs went (${d.placements.total})</h2><table><tbody>${d.placements.items.map((p) => `<tr><td>${jobLink(p.job, p.job)}</td><td>${esc(p.cluster)}</td></tr>`).join("")}</tbody></table></div>`;
    },
  };

  /* --- routing ------------------------------------------------------------------ */
  function route() {
    hideTip();
    const h = location.hash || "#/queues";
    const [path, query] = h.slice(1).split("?");
    const parts = path.split("/").filter(Boolean);
    const name = parts[0] || "queues";
    const arg = parts.length > 1 ? decodeURIComponent(parts.slice(1).join("/")) : null;
    const v = views[name] || views.queues;
    state.view = name;
    state.gen++;
    document.querySelectorAll("nav a").forEach((a) => {
      const on = a.dataset.view === name || (name === "job" && a.dataset.view === "jobs") || (name === "node" && a.dataset.view === "cluster");
      if (on) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
    });
    current = { load: (first) => v.load(first, null) };
    const t0 = performance.now();
    v.load(true, name === "jobs" ? new URLSearchParams(query || "") : arg).then(() => {
      document.body.dataset.ready = name;
      document.body.dataset.loadMs = (performance.now() - t0).toFixed(1);
      if (!document.body.dataset.firstMs) document.body.dataset.firstMs = performance.now().toFixed(1);
    }).catch((e) => {
      if (e.message === "stale") return;
      if (e.message !== "token needed") main.innerHTML = `<div class="panel error">${esc(e.message)}</div>`;
      document.body.dataset.ready = "error";
    });
  }
  function redraw() { if (current) current.load(false).catch(() => {}); }
  let rz = 0;
  addEventListener("resize", () => { clearTimeout(rz); rz = setTimeout(redraw, 200); });
  addEventListener("hashchange", route);

  initToken();
  initTheme();
  route();
  startStream();
  api("summary").then(chips).catch(() => {});
  setInterval(() => api("summary").then(chips).catch(() => {}), 30000);
})();
