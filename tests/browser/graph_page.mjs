// The graph page as a person sees it, in Debian's Chromium (headless,
// driven by playwright-core): for each page and each theme, a screenshot
// and what a person would check — labels large enough to read at the first
// view or after focusing, every edge label on its edge, no text in the
// colour it sits on, clicks that show the right rule or agent, zoom.
//
//   node graph_page.mjs SPEC.json
//
// SPEC: {"chromium": PATH, "out": DIR, "pages": [{"name", "file", "click_edge",
// "focus"}]}. Prints one JSON report on stdout; exits 1 when a check fails.
import { readFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
mkdirSync(spec.out, { recursive: true });
const failures = [];
const report = { pages: [] };

function check(ok, what) {
  if (!ok) failures.push(what);
  return ok;
}

// In the page: every text's size on screen and colour against what it
// sits on, and every edge label's distance from its own line.
function measure() {
  const parse = (c) => {
    const m = c.match(/rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3]), m[4] === undefined ? 1 : Number(m[4])] : null;
  };
  const luminance = (rgb) => {
    const [r, g, b] = rgb.slice(0, 3).map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const contrast = (a, b) => {
    const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
  const page = parse(getComputedStyle(document.body).backgroundColor);
  const active = document.querySelector("#canvas > svg:not([hidden])");
  const texts = [];
  for (const t of active.querySelectorAll("text")) {
    const box = t.getBoundingClientRect();
    if (box.width === 0) continue;
    const style = getComputedStyle(t);
    const scale = t.getScreenCTM().a;
    // The shape under the text: its group's (node, label, badge), else the page.
    const rect = t.parentNode.querySelector(":scope > rect, :scope > circle");
    let under = page;
    if (rect) {
      const fill = parse(getComputedStyle(rect).fill);
      const opacity = Number(getComputedStyle(rect).opacity);
      if (fill && fill[3] > 0 && opacity > 0.5) under = fill;
    }
    const colour = parse(style.fill);
    texts.push({
      text: t.textContent,
      px: parseFloat(style.fontSize) * scale,
      contrast: contrast(colour, under),
      visible: box.right > 0 && box.bottom > 0 && box.left < innerWidth && box.top < innerHeight,
      edgeLabel: !!t.closest(".edge"),
    });
  }
  const offEdge = [];
  for (const edge of active.querySelectorAll(".edge")) {
    const line = edge.querySelector("path.line");
    const label = edge.querySelector(".label rect");
    const cx = Number(label.getAttribute("x")) + Number(label.getAttribute("width")) / 2;
    const cy = Number(label.getAttribute("y")) + Number(label.getAttribute("height")) / 2;
    const length = line.getTotalLength();
    let best = Infinity;
    for (let k = 0; k <= 300; k++) {
      const p = line.getPointAtLength((length * k) / 300);
      best = Math.min(best, Math.hypot(p.x - cx, p.y - cy));
    }
    if (best > 3) offEdge.push({ edge: edge.getAttribute("data-edge"), distance: best });
  }
  const htmlTexts = [];
  for (const el of document.querySelectorAll("header, header *, #details, #details *")) {
    if (!el.childNodes.length || ![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
    const style = getComputedStyle(el);
    let bgEl = el;
    let bg = parse(style.backgroundColor);
    while ((!bg || bg[3] === 0) && bgEl.parentElement) {
      bgEl = bgEl.parentElement;
      bg = parse(getComputedStyle(bgEl).backgroundColor);
    }
    htmlTexts.push({ text: el.textContent.trim().slice(0, 40), contrast: contrast(parse(style.color), bg || page) });
  }
  return { texts, offEdge, htmlTexts };
}

const browser = await chromium.launch({
  executablePath: spec.chromium,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
try {
  for (const page of spec.pages) {
    for (const theme of ["light", "dark"]) {
      const name = `${page.name}-${theme}`;
      const context = await browser.newContext({ viewport: { width: 1200, height: 800 }, colorScheme: theme });
      try {
      const tab = await context.newPage();
      tab.setDefaultTimeout(10000);
      const errors = [];
      tab.on("pageerror", (e) => errors.push(String(e)));
      tab.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
      await tab.goto("file://" + page.file);
      await tab.waitForSelector("#overview .node");
      const result = { name, screenshots: [] };
      const shot = async (suffix) => {
        const file = join(spec.out, `${name}${suffix}.png`);
        await tab.screenshot({ path: file });
        result.screenshots.push(file);
      };
      await shot("");
      const first = await tab.evaluate(measure);
      const data = await tab.evaluate(() => JSON.parse(document.getElementById("graph-data").textContent));
      // Readable at the first view: the edge labels in view at least 11 px.
      const inView = first.texts.filter((t) => t.visible && t.edgeLabel);
      result.first_view_smallest_label_px = Math.min(...inView.map((t) => t.px));
      check(inView.length > 0, `${name}: no edge label in the first view`);
      check(result.first_view_smallest_label_px >= 11, `${name}: edge labels ${result.first_view_smallest_label_px.toFixed(1)} px at the first view`);
      for (const t of first.texts.concat(first.htmlTexts)) {
        check(t.contrast >= 3, `${name}: text "${t.text}" has contrast ${t.contrast.toFixed(2)} with what it sits on`);
      }
      check(first.offEdge.length === 0, `${name}: labels off their edge: ${JSON.stringify(first.offEdge)}`);
      result.texts = first.texts.length;
      result.edges = data.edges.length;
      result.nodes = data.nodes.length;

      // Zoom in: the drawing grows.
      const before = await tab.locator("#viewport").getAttribute("transform");
      await tab.click("#zoom-in");
      const after = await tab.locator("#viewport").getAttribute("transform");
      const scaleOf = (t) => Number(/scale\(([\d.]+)\)/.exec(t)[1]);
      check(scaleOf(after) > scaleOf(before), `${name}: zoom in did not zoom (${before} -> ${after})`);
      await tab.click("#fit");

      // A click on a rule shows where it is written, and its findings.
      if (page.click_edge !== undefined) {
        const edge = data.edges[page.click_edge];
        await tab.locator(`#overview [data-edge="${page.click_edge}"] .label`).click();
        const shown = await tab.locator("#details").innerText();
        const where = `${edge.at.path}:${edge.at.line}:${edge.at.column}`;
        check(shown.includes(`rule ${edge.rule}:`) && shown.includes(where),
          `${name}: clicking rule ${edge.rule} shows "${shown}", not its place ${where}`);
        for (const f of edge.findings) {
          check(shown.includes(f.code), `${name}: rule ${edge.rule}'s finding ${f.code} is not shown: "${shown}"`);
        }
        result.clicked = { rule: edge.rule, shown };
      }

      // Overlays: the run's rules drawn as its path, never-fired rules apart,
      // and a click on a rule of the run says at which hop it was taken.
      if (data.run) {
        const taken = data.edges.filter((e) => e.hops.length > 0);
        const drawn = await tab.locator("#overview .edge.on-run").count();
        check(taken.length > 0 && drawn === taken.length, `${name}: ${drawn} rules drawn on the run's path, ${taken.length} taken`);
        const hops = taken.reduce((n, e) => n + e.hops.length, 0);
        check(hops === data.run.hops, `${name}: ${hops} hops drawn of the run's ${data.run.hops}`);
        const k = data.edges.indexOf(taken[0]);
        await tab.locator(`#overview [data-edge="${k}"] .label`).click();
        const shown = await tab.locator("#details").innerText();
        check(shown.includes(`took it at hop ${taken[0].hops.join(", ")}`), `${name}: the run's hop is not shown: "${shown}"`);
        result.run_hops = hops;
      }
      if (data.coverage_scenarios !== null) {
        const never = data.edges.filter((e) => e.hits === 0).length;
        const drawn = await tab.locator("#overview .edge.never-fired").count();
        check(drawn === never, `${name}: ${drawn} rules drawn as never fired, ${never} never fired`);
        check(data.edges.some((e) => e.hits !== null), `${name}: no coverage on any rule`);
        result.never_fired = never;
      }

      // Focus on an agent: its rules in and out, every label readable.
      if (page.focus) {
        await tab.selectOption("#focus", page.focus);
        await tab.waitForSelector("#focus-view:not([hidden]) .node");
        await shot("-focus");
        const focused = await tab.evaluate(measure);
        const index = data.nodes.findIndex((n) => n.label === page.focus && (n.kind === "agent" || n.kind === "unknown"));
        const rules = data.edges.filter((e) => e.to === index || e.from === index).length;
        const drawn = await tab.locator("#focus-view .edge").count();
        check(drawn === rules, `${name}: focus on ${page.focus} draws ${drawn} rules of its ${rules}`);
        const labels = focused.texts.filter((t) => t.edgeLabel);
        result.focus_smallest_label_px = Math.min(...labels.map((t) => t.px));
        check(result.focus_smallest_label_px >= 11, `${name}: focused labels ${result.focus_smallest_label_px.toFixed(1)} px`);
        for (const t of focused.texts) {
          check(t.contrast >= 3, `${name} (focus): text "${t.text}" has contrast ${t.contrast.toFixed(2)}`);
        }
        check(focused.offEdge.length === 0, `${name} (focus): labels off their edge: ${JSON.stringify(focused.offEdge)}`);
        const heading = await tab.locator("#details h2").innerText();
        check(heading === page.focus, `${name}: focus shows "${heading}" in the details`);
        // Back to the whole graph.
        await tab.selectOption("#focus", "");
        check(await tab.locator("#overview").isVisible(), `${name}: the whole graph does not come back`);
      }
      check(errors.length === 0, `${name}: script errors ${JSON.stringify(errors)}`);
      report.pages.push(result);
      } catch (error) {
        // A step that cannot be done (an element that never takes the click) is a failed check.
        check(false, `${name}: ${String(error).split("\n")[0]}`);
      } finally {
        await context.close();
      }
    }
  }
} finally {
  await browser.close();
}
report.failures = failures;
console.log(JSON.stringify(report, null, 2));
process.exit(failures.length ? 1 : 0);
