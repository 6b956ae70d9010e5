// cdp.js - drives the system's headless Chromium through the DevTools
// protocol over a pipe (--remote-debugging-pipe: JSON messages ended by a
// NUL byte on file descriptors 3 and 4), so the browser tests need no npm
// package and no network.  Exports launch(), which resolves to a page
// object: goto(url), eval(expr), waitFor(expr, ms), screenshot(file),
// errors (console errors and uncaught exceptions seen), close().
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

function findChromium() {
  for (const p of [process.env.CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"])
    if (p && fs.existsSync(p)) return p;
  return null;
}

async function launch(opts) {
  opts = opts || {};
  const bin = findChromium();
  if (!bin) throw new Error("no chromium found (scripts/install-deps.sh installs Debian's chromium)");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mu-cdp-"));
  const w = opts.width || 1440, h = opts.height || 900;
  const proc = spawn(bin, ["--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
    "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
    "--disable-background-networking", "--disable-sync", "--user-data-dir=" + dir, `--window-size=${w},${h}`,
    "about:blank"], { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (d) => { stderr += d; if (stderr.length > 20000) stderr = stderr.slice(-10000); });
  const out = proc.stdio[3], inp = proc.stdio[4];
  let id = 0, buf = Buffer.alloc(0);
  const pending = new Map(), listeners = [];
  inp.on("data", (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    let i;
    while ((i = buf.indexOf(0)) >= 0) {
      const msg = JSON.parse(buf.slice(0, i).toString("utf8"));
      buf = buf.slice(i + 1);
      if (msg.id && pending.has(msg.id)) {
        const { ok, fail } = pending.get(msg.id);
        pending.delete(msg.id);
        if (msg.error) fail(new Error(msg.error.message)); else ok(msg.result);
      } else listeners.forEach((f) => f(msg));
    }
  });
  const exited = new Promise((res) => proc.on("exit", res));
  const send = (method, params, sessionId) => new Promise((ok, fail) => {
    const m = { id: ++id, method, params: params || {} };
    if (sessionId) m.sessionId = sessionId;
    pending.set(m.id, { ok, fail });
    out.write(JSON.stringify(m) + "\0");
  });
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  const s = (method, params) => send(method, params, sessionId);
  const errors = [];
  listeners.push((m) => {
    if (m.sessionId !== sessionId) return;
    if (m.method === "Runtime.consoleAPICalled" && (m.params.type === "error" || m.params.type === "assert"))
      errors.push("console." + m.params.type + ": " + m.params.args.map((a) => a.value || a.description || "").join(" "));
    else if (m.method === "Runtime.exceptionThrown")
      errors.push("exception: " + (m.params.exceptionDetails.exception ? m.params.exceptionDetails.exception.description : m.params.exceptionDetails.text));
    else if (m.method === "Log.entryAdded" && m.params.entry.level === "error")
      errors.push("log: " + m.params.entry.text + (m.params.entry.url ? " (" + m.params.entry.url + ")" : ""));
  });
  await s("Page.enable");
  await s("Runtime.enable");
  await s("Log.enable");
  await s("Emulation.setDeviceMetricsOverride", { width: w, height: h, deviceScaleFactor: 1, mobile: false });
  const page = {
    errors,
    send: s,
    async goto(url) { await s("Page.navigate", { url }); },
    async eval(expr) {
      const r = await s("Runtime.evaluate", { expression: expr, returnByValue: true, awaitPromise: true });
      if (r.exceptionDetails) throw new Error("eval " + expr.slice(0, 80) + ": " + (r.exceptionDetails.exception ? r.exceptionDetails.exception.description : r.exceptionDetails.text));
      return r.result.value;
    },
    async waitFor(expr, ms) {
      const end = Date.now() + (ms || 10000);
      for (;;) {
        let v = null;
        try { v = await page.eval(expr); } catch (e) { /* page still loading */ }
        if (v) return v;
        if (Date.now() > end) throw new Error("timed out waiting for " + expr);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async screenshot(file, full) {
      const p = { format: "png" };
      if (full) {
        const m = await s("Page.getLayoutMetrics");
        p.clip = { x: 0, y: 0, width: w, height: Math.min(4000, Math.ceil(m.cssContentSize.height)), scale: 1 };
        p.captureBeyondViewport = true;
      }
      const r = await s("Page.captureScreenshot", p);
      fs.writeFileSync(file, Buffer.from(r.data, "base64"));
    },
    async close() {
      try { await Promise.race([send("Browser.close"), new Promise((r) => setTimeout(r, 2000))]); } catch (e) { /* gone */ }
      const t = setTimeout(() => proc.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(t);
      fs.rmSync(dir, { recursive: true, force: true });
    },
    stderr: () => stderr,
  };
  return page;
}

module.exports = { launch, findChromium };
