// Drives the form page of the examples' agents in headless Chromium (Debian's, through
// playwright-core): fills and submits the fight form, sees the verdict; submits an invalid
// trip and sees the error at its field; watches a streamed plan arrive chunk by chunk; attaches
// a calendar; checks the recent tasks, the timeline, the labels and accessibility (axe-core).
// Usage: node form_ui.mjs FIGHT_CLUB_URL TRIP_PLANNER_URL OUT_DIR
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(new URL("../../ui/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const [fight, trip, outDir] = process.argv.slice(2);
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

try {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));

  // The fight form: fill, submit, see the winner and the probability under their titles.
  await page.goto(fight + "/ui");
  const form = page.locator('section[data-skill="fight-comparison"]');
  await form.waitFor();
  check((await page.locator("#agent-name").textContent()) === "Fight Club", "the card's name is the title");
  await form.locator('[name="root[a]"]').fill("Lion");
  await form.locator('[name="root[b]"]').fill("Tiger");
  await form.locator("button.submit").click();
  const winner = form.locator('dd[data-field="winner"]');
  await winner.waitFor({ timeout: 10000 });
  check((await winner.textContent()) === "Tiger", "the winner is shown");
  check((await form.locator('dd[data-field="probability"]').textContent()) === "0.56", "the probability is shown");
  const titles = await form.locator(".output dt").allTextContents();
  check(titles.some((t) => t.startsWith("Winner") && t.includes("The name of the winner")), "fields carry the output schema's titles and descriptions: " + titles.join(" | "));
  // The recent tasks (ListTasks) list the fight's task, completed.
  await page.waitForFunction(() => document.querySelector('#recent-tasks li[data-state="completed"]') !== null, null, { timeout: 10000 });
  const recent = await page.locator("#recent-tasks li").allTextContents();
  check(recent.length === 1 && recent[0].includes("completed"), "the recent tasks show the fight's task, completed: " + recent.join(" | "));
  await page.screenshot({ path: join(outDir, "form-ui-fight.png"), fullPage: true });

  // An invalid trip: the agent's violation is shown at the field at fault.
  await page.goto(trip + "/ui");
  const plan = page.locator('section[data-skill="plan-trip"]');
  await plan.waitFor();
  const exampleLabels = await plan.locator("button.example").allTextContents();
  check(exampleLabels[0] === "Lisbon, 3, 2026-12-01", "an example is named by its content: " + exampleLabels.join(" | "));
  const rootLabels = await plan.evaluate((section) =>
    [...section.querySelectorAll("*")]
      .filter((e) => [...e.childNodes].some((n) => n.nodeType === 3 && /\broot\b/.test(n.textContent)))
      .map((e) => `<${e.tagName.toLowerCase()}> ${e.textContent.slice(0, 60)}`));
  check(rootLabels.length === 0, "no `root` label on the form, seen or read aloud: " + rootLabels.join(" | "));
  const help = plan.locator("p.je-form-input-label").first();
  check((await help.textContent()).includes("Where to go"), "a field's description is under it");
  const helpWeight = await help.evaluate((e) => getComputedStyle(e).fontWeight + " " + e.outerHTML.slice(0, 120));
  check(helpWeight.startsWith("400 "), "a description reads as help, not as a heading: " + helpWeight);
  const requiredMark = await plan.locator("label.required").first().evaluate((e) => getComputedStyle(e, "::after").content);
  check(requiredMark.includes("*"), "a required field is marked: " + requiredMark);
  await plan.locator("button.example").first().click();
  check((await plan.locator('[name="root[destination]"]').inputValue()) === "Lisbon", "an example fills the form");
  await plan.locator('[name="root[days]"]').fill("30");
  await plan.locator("button.submit").click();
  const fieldError = plan.locator('.field-error[data-path="root.days"]');
  await fieldError.waitFor({ timeout: 10000 });
  check((await fieldError.textContent()).includes("14"), "the days field shows the agent's error");
  await page.screenshot({ path: join(outDir, "form-ui-invalid.png"), fullPage: true });

  // A streamed plan: chunks arrive one by one, before the task is done.
  await plan.locator("button.example").first().click();
  await plan.locator("button.submit").click();
  const chunks = plan.locator(".chunk");
  await chunks.first().waitFor({ timeout: 10000 });
  const early = await chunks.count();
  const statusEarly = await plan.locator(".progress").textContent();
  check(early < 3 && statusEarly !== "Done.", `the first chunk arrives before the last (${early} shown, status "${statusEarly}")`);
  await page.waitForFunction(() => document.querySelectorAll('section[data-skill="plan-trip"] .chunk').length === 3, null, { timeout: 15000 });
  await page.waitForFunction(() => document.querySelector('section[data-skill="plan-trip"] .progress').textContent === "Done.", null, { timeout: 15000 });
  const timeline = await plan.locator(".timeline li").evaluateAll((items) => items.map((i) => i.dataset.state));
  const order = ["submitted", "working", "completed"];
  const inOrder = timeline.every((s, i) => i === 0 || order.indexOf(s) >= order.indexOf(timeline[i - 1]));
  check(inOrder && timeline.includes("working") && timeline[timeline.length - 1] === "completed", "the task's timeline shows its states in order: " + timeline.join(" -> "));
  const dates = await plan.locator('dd[data-field="date"]').allTextContents();
  check(JSON.stringify(dates) === JSON.stringify(["2026-12-01", "2026-12-02", "2026-12-03"]), "the plan's days arrive in order: " + dates.join(", "));
  await page.screenshot({ path: join(outDir, "form-ui-stream.png"), fullPage: true });

  // A calendar file, chosen in the file input the skill's `text/calendar` mode gives: its busy
  // day is kept free in the plan.
  const calendar = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20261202\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
  check((await plan.locator("input.file-input").getAttribute("accept")) === "text/calendar", "the skill's file mode is the input's accept");
  await plan.locator("input.file-input").setInputFiles({ name: "busy.ics", mimeType: "text/calendar", buffer: Buffer.from(calendar) });
  await plan.locator("button.example").first().click();
  await plan.locator("button.submit").click();
  await page.waitForFunction(() => document.querySelector('section[data-skill="plan-trip"] .progress').textContent === "Done.", null, { timeout: 15000 });
  const plans = await plan.locator('dd[data-field="plan"]').allTextContents();
  check(plans.length === 3 && plans[1].includes("busy in your calendar") && !plans[0].includes("busy"), "the attached calendar's busy day is kept free: " + plans.join(" | "));
  await page.screenshot({ path: join(outDir, "form-ui-file.png"), fullPage: true });
  // Accessibility: axe-core's WCAG 2 A and AA rules on each agent's page as it loads (with the
  // form's first validation messages).
  for (const url of [fight + "/ui", trip + "/ui"]) {
    await page.goto(url);
    await page.locator("section.skill").first().waitFor();
    // Evaluated through the debugging protocol: the page's CSP (script-src 'self') stays on.
    await page.evaluate(readFileSync(require.resolve("axe-core/axe.min.js"), "utf8"));
    const found = await page.evaluate(async () => {
      const result = await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] } });
      return result.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.length} node(s), e.g. ${v.nodes[0].target.join(" ")}`);
    });
    check(found.length === 0, "no accessibility violations on " + url + ": " + found.join("; "));
  }
  check(errors.length === 0, "no script errors: " + errors.join("; "));
} catch (e) {
  failures.push(String(e));
  console.log("FAIL " + e);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failures.length ? 1 : 0);
