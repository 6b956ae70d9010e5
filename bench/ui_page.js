// ui_page.js - the live UI's pages in headless Chromium against a running
// server (bench_ui --serve), figures only.  For each view (Queues, Jobs,
// Cluster) it loads the page fresh 3 times and prints, as JSON lines, the
// median time from navigation start to the view drawn with its data
// (document.body.dataset.firstMs, set by app.js), and for the Cluster view
// the heat map's draw time (canvas data-draw-ms) and GPUs drawn.
// Usage: node bench/ui_page.js http://127.0.0.1:PORT
"use strict";
const { launch } = require("../tests/e2e/lib/cdp.js");
const U = process.argv[2];
const med = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
(async () => {
  for (const [name, hash] of [["queues", "#/queues"], ["jobs", "#/jobs"], ["cluster", "#/cluster"]]) {
    const first = [], draw = [];
    let info = "";
    for (let i = 0; i < 3; i++) {
      const p = await launch({ width: 1440, height: 900 });
      await p.goto(U + "/ui/" + hash);
      await p.waitFor(`document.body.dataset.ready === ${JSON.stringify(name)}`, 30000);
      first.push(+(await p.eval("document.body.dataset.firstMs")));
      /* where the time went: the slowest data request's end, and the script's */
      const rt = await p.eval(`(() => { const e = performance.getEntriesByType("resource");
        const api = e.filter(x => x.name.includes("/ui/api/") && !x.name.includes("stream"));
        const js = e.find(x => x.name.endsWith("/ui/app.js"));
        return { api_end: Math.max(0, ...api.map(x => x.responseEnd)), api_ms: Math.max(0, ...api.map(x => x.duration)),
                 js_end: js ? js.responseEnd : 0 }; })()`);
      (first.rt = first.rt || []).push(rt);
      if (name === "cluster") {
        draw.push(+(await p.eval("document.querySelector('#heat').dataset.drawMs")));
        info = await p.eval("document.querySelector('#heatinfo').textContent");
        // the tab stays responsive: a timer set now fires on time
        const lag = await p.eval("new Promise(r => { const t = performance.now(); setTimeout(() => r(performance.now() - t), 0); })");
        draw.lag = Math.max(draw.lag || 0, lag);
      }
      if (p.errors.length) console.log(JSON.stringify({ bench: "ui-page-" + name, errors: p.errors }));
      await p.close();
    }
    const o = { bench: "ui-page-" + name, first_ready_ms_median: med(first), runs: first,
      data_request_ms_median: med(first.rt.map((r) => r.api_ms)), script_loaded_ms_median: med(first.rt.map((r) => r.js_end)) };
    if (draw.length) Object.assign(o, { heatmap_draw_ms_median: med(draw), timer_lag_ms_max: draw.lag, info });
    console.log(JSON.stringify(o));
  }
})().catch((e) => { console.error(e); process.exit(1); });
