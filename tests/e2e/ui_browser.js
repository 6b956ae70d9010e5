// ui_browser.js - the live UI in a real browser (headless Chromium over
// the DevTools protocol, tests/e2e/lib/cdp.js), against a running
// `muster scheduler` and the `muster up` it schedules for.
// Usage: node ui_browser.js SCHEDULER_URL TOKEN API_URL OUT_DIR API_TOKEN
// (muster up speaks TLS: NODE_EXTRA_CA_CERTS names its certificate)
// Checks, one line each ("ok NAME" or "FAIL NAME: why"):
//   - the Queues view lists exactly the Queue objects of the API, with the
//     pending and running counts of their status (written by the scheduler);
//   - the Jobs view counts as many jobs as the API has batch/v1 Jobs;
//   - a pending job's page shows the reason /explain gives for it;
//   - the Cluster view draws every GPU; the Fleet view says there is none;
//   - no console error or uncaught exception on any page.
// Screenshots go to OUT_DIR (queues.png, jobs.png, job.png, cluster.png).
// Ends with "browser done".
"use strict";
const { launch } = require("./lib/cdp.js");
const [U, TOKEN, API, OUT, API_TOKEN] = process.argv.slice(2);
let page = null;
const ok = (n) => console.log("ok " + n);
const fail = (n, why) => console.log("FAIL " + n + ": " + why);
const check = (n, cond, why) => (cond ? ok(n) : fail(n, why));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function getJSON(url, auth) {
  const r = await fetch(url, { headers: auth ? { Authorization: "Bearer " + auth } : {} });
  if (!r.ok) throw new Error(url + ": HTTP " + r.status);
  return r.json();
}
async function show(hash) {
  await page.eval(`delete document.body.dataset.ready; location.hash = ${JSON.stringify(hash)}; 1`);
  await page.waitFor("document.body.dataset.ready", 10000);
}

(async () => {
  // The API's view, once the scheduler has written every queue's status.
  let queues = null;
  for (let i = 0; i < 50; i++) {
    const q = await getJSON(API + "/apis/muster.io/v1alpha1/queues", API_TOKEN);
    const st = q.items.map((x) => x.status || {});
    if (st.every((s) => s.pendingJobs != null) && st.reduce((a, s) => a + s.pendingJobs + s.runningJobs, 0) === 4) { queues = q.items; break; }
    await sleep(200);
  }
  if (!queues) { fail("queue-status", "the scheduler did not write the Queue status within 10 s"); queues = (await getJSON(API + "/apis/muster.io/v1alpha1/queues", API_TOKEN)).items; }
  const apiJobs = (await getJSON(API + "/apis/batch/v1/namespaces/default/jobs", API_TOKEN)).items;
  const explain = await getJSON(U + "/explain?job=default/huge-a", TOKEN);

  page = await launch({ width: 1440, height: 900 });
  await page.goto(U + "/ui/#token=" + TOKEN);
  await page.waitFor("document.body.dataset.ready === 'queues'", 10000);
  const first = +(await page.eval("document.body.dataset.firstMs"));
  console.log("first page ready after " + first.toFixed(0) + " ms");
  check("token-kept-out-of-address", !(await page.eval("location.href")).includes(TOKEN), "the token stayed in the address bar");

  const rows = await page.eval(`[...document.querySelectorAll("tr[data-queue]")].map(r => ({
      name: r.dataset.queue, pending: +r.querySelector(".qpending").textContent, running: +r.querySelector(".qrunning").textContent }))`);
  const pageNames = rows.map((r) => r.name).filter((n) => n !== "default").sort();
  const apiNames = queues.map((q) => q.metadata.name).sort();
  check("queue-names", JSON.stringify(pageNames) === JSON.stringify(apiNames), `page ${pageNames} vs API ${apiNames}`);
  for (const q of queues) {
    const r = rows.find((x) => x.name === q.metadata.name) || {};
    check("queue-counts-" + q.metadata.name, r.pending === q.status.pendingJobs && r.running === q.status.runningJobs,
      `page pending ${r.pending} running ${r.running}, API status ${q.status.pendingJobs}/${q.status.runningJobs}`);
  }
  await sleep(300);
  await page.screenshot(OUT + "/queues.png");

  await show("#/jobs");
  await page.waitFor("document.querySelectorAll('#jt tbody tr[data-key]').length > 0", 5000);
  const count = await page.eval("document.querySelector('#jcount').textContent");
  check("job-count", count === `1–${apiJobs.length} of ${apiJobs.length}`, `page says "${count}", API has ${apiJobs.length} Jobs`);
  const sorted = await page.eval(`(async () => { document.querySelector('button[data-sort="name"]').click();
      for (let i = 0; i < 100; i++) { const b = document.querySelector('button[data-sort="name"]');
        if (b && b.getAttribute('aria-sort') === 'ascending') break; await new Promise(r => setTimeout(r, 50)); }
      return [...document.querySelectorAll('#jt tbody tr[data-key]')].map(r => r.dataset.key); })()`);
  check("jobs-sort-by-name", JSON.stringify(sorted) === JSON.stringify([...sorted].sort()) && sorted.length === apiJobs.length, "rows " + sorted);
  await page.screenshot(OUT + "/jobs.png");

  await show("#/job/" + encodeURIComponent("j:default/huge-a"));
  const reason = await page.eval("(document.querySelector('#reason') || {}).textContent || ''");
  check("pending-reason", explain.message && reason.includes(explain.message), `page "${reason}" vs /explain "${explain.message}"`);
  await page.screenshot(OUT + "/job.png", true);

  await show("#/cluster");
  await page.waitFor("document.querySelector('#heat').dataset.drawMs", 5000);
  const info = await page.eval("document.querySelector('#heatinfo').textContent");
  check("heat-map-gpus", info.includes("32 GPUs drawn"), info);
  await page.screenshot(OUT + "/cluster.png");

  await show("#/fleet");
  check("fleet-none", await page.eval("!!document.querySelector('#nofleet')"), "no 'No fleet' message");

  // Keyboard: Tab reaches the views' links.
  await page.send("Input.dispatchKeyEvent", { type: "keyDown", key: "Tab", code: "Tab", windowsVirtualKeyCode: 9 });
  await page.send("Input.dispatchKeyEvent", { type: "keyUp", key: "Tab", code: "Tab", windowsVirtualKeyCode: 9 });
  check("keyboard-focus", await page.eval("document.activeElement && document.activeElement !== document.body"), "Tab focused nothing");

  check("no-console-errors", page.errors.length === 0, JSON.stringify(page.errors));
  await page.close();
  console.log("browser done");
})().catch(async (e) => {
  fail("browser", e.stack || String(e));
  if (page) { console.log(page.stderr().slice(-2000)); await page.close(); }
  process.exit(1);
});
