// Drives the operators' console in headless Chromium (Debian's, through playwright-core): a
// caller without the token is refused and shown where to sign in; signed in, the task list
// shows the seeded tasks with their states and skills; a durable task's page shows its journal
// (steps, a sleep, an answer); a working task is cancelled from its page; a keyboard-only run;
// a phone's screen; axe-core's WCAG 2 A and AA rules on every page. A screenshot of each state
// goes to OUT_DIR.
// Usage: node console_ui.mjs BASE_URL TOKEN SHIPPED_TASK WAITING_TASK WORKING_TASK OUT_DIR
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(new URL("../../ui/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const [base, token, shipped, waiting, working, outDir] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), "a2a-card-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
const failures = [];
function check(ok, what) {
  console.log((ok ? "ok   " : "FAIL ") + what);
  if (!ok) failures.push(what);
}
const axe = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
async function accessible(page, what) {
  // Evaluated through the debugging protocol: the page's CSP (script-src 'self') stays on.
  await page.evaluate(axe);
  const found = await page.evaluate(async () => {
    const result = await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] } });
    return result.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.length} node(s), e.g. ${v.nodes[0].target.join(" ")}`);
  });
  check(found.length === 0, "no accessibility violations on " + what + ": " + found.join("; "));
}
const taskUrl = (id) => `${base}/console/tasks/${encodeURIComponent(id)}`;

try {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));

  // Without the token: refused (401), nothing of the tasks, a way to sign in.
  const refused = await page.goto(base + "/console");
  check(refused.status() === 401, "a caller without the token is refused: " + refused.status());
  const refusedText = await page.textContent("body");
  check(!refusedText.includes(shipped), "the refusal shows no task");
  await page.click("text=Sign in with the console's token");
  await page.locator("#token").waitFor();
  await accessible(page, "the sign-in page");
  await page.screenshot({ path: join(outDir, "console-ui-signin.png"), fullPage: true });
  await page.fill("#token", token);
  await page.click("button[type=submit]");
  await page.locator("table.tasks").waitFor();

  // The list: the three tasks, each with its state and skill; counts by state.
  const rows = await page.locator("table.tasks tbody tr").count();
  check(rows === 3, "the list shows the three tasks: " + rows);
  const state = async (id) => page.locator(`tr[data-task="${id}"]`).getAttribute("data-state");
  check((await state(shipped)) === "completed", "the shipped parcel is completed");
  check((await state(waiting)) === "input-required", "the other waits for its address");
  check((await state(working)) === "working", "the stocktake is working");
  check((await page.locator(`tr[data-task="${working}"] td[data-label="Skill"]`).textContent()) === "stocktake", "the skill is shown");
  check((await page.locator(".counts a.state-completed .n").textContent()) === "1", "one completed, counted");
  await accessible(page, "the task list");
  await page.screenshot({ path: join(outDir, "console-ui-list.png"), fullPage: true });

  // Filtered by skill.
  await page.selectOption('select[name="skill"]', "ship");
  await page.click(".filters button[type=submit]");
  await page.waitForURL(/skill=ship/);
  check((await page.locator("table.tasks tbody tr").count()) === 2, "two parcels when filtered by skill");

  // The shipped parcel's journal: its steps, the sleep, the answer; its output as data.
  await page.goto(taskUrl(shipped));
  const journal = page.locator("table.journal");
  await journal.waitFor();
  const entries = await journal.locator("tbody tr").allTextContents();
  check(entries.some((e) => e.includes("reserve-slot")), "the journal shows step reserve-slot: " + entries.join(" | "));
  check(entries.some((e) => e.includes("weigh")), "the journal shows step weigh");
  check((await journal.locator("tr.sleep").count()) === 1, "the journal shows the sleep");
  check((await journal.locator("tr.answer").textContent()).includes("Lisbon"), "the journal shows the answer");
  check((await journal.locator("tr.step").count()) === 3, "three steps journaled");
  check((await page.locator('dd[data-field="label"]').textContent()) === "books to Lisbon", "the output is shown as data");
  check((await page.locator("#live").getAttribute("data-running")) === "false", "an ended task is not refreshed");
  await accessible(page, "a durable task's page");
  await page.screenshot({ path: join(outDir, "console-ui-journal.png"), fullPage: true });

  // The waiting parcel: refreshed while it runs.
  await page.goto(taskUrl(waiting));
  check((await page.locator("#live").getAttribute("data-running")) === "true", "a running task's page refreshes");
  const refreshed = await page.waitForResponse((r) => r.url().includes("part=live"), { timeout: 10000 }).then(() => true, () => false);
  check(refreshed, "the page fetches its live part");

  // Cancel the stocktake from its page.
  await page.goto(taskUrl(working));
  await page.click("#cancel");
  await page.locator(".note").waitFor();
  check((await page.locator(".note").textContent()).includes("cancelled"), "the cancel is confirmed");
  check((await page.locator("#task-state").textContent()) === "canceled", "the task is canceled");
  check((await page.locator("#cancel").count()) === 0, "no cancel button on an ended task");
  await accessible(page, "a cancelled task's page");
  await page.screenshot({ path: join(outDir, "console-ui-cancel.png"), fullPage: true });

  // The replicas and limits.
  await page.goto(base + "/console/replicas");
  check((await page.locator("table.replicas tbody tr").count()) >= 1, "the replicas are listed");
  await accessible(page, "the replicas page");

  // The keyboard alone: skip link, then on to the first task, opened with Enter.
  await page.goto(base + "/console");
  await page.keyboard.press("Tab");
  check(await page.evaluate(() => document.activeElement.classList.contains("skip")), "the first Tab reaches the skip link");
  let reached = false;
  for (let i = 0; i < 40 && !reached; i++) {
    await page.keyboard.press("Tab");
    reached = await page.evaluate(() => !!document.activeElement.closest("table.tasks"));
  }
  check(reached, "Tab reaches the task list");
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  check(outline !== "none", "the focused link shows its focus: " + outline);
  await page.screenshot({ path: join(outDir, "console-ui-keyboard.png"), fullPage: true });
  await page.keyboard.press("Enter");
  await page.waitForURL(/\/console\/tasks\//);
  check(true, "Enter opens the task");

  // A phone: nothing wider than the screen.
  const phone = await context.newPage();
  phone.on("pageerror", (e) => errors.push(String(e)));
  await phone.setViewportSize({ width: 390, height: 844 });
  for (const url of [base + "/console", taskUrl(shipped)]) {
    await phone.goto(url);
    const layout = await phone.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
    check(layout.scroll <= layout.width, `no sideways scrolling on a phone at ${url}: ${layout.scroll}px for ${layout.width}px`);
  }
  await phone.goto(base + "/console");
  await phone.screenshot({ path: join(outDir, "console-ui-phone.png"), fullPage: true });
  await phone.close();
  check(errors.length === 0, "no script errors: " + errors.join("; "));
} catch (e) {
  failures.push(String(e));
  console.log("FAIL " + e);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failures.length ? 1 : 0);
