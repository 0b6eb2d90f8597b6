// Drives the form page of the examples' agents in headless Chromium (Debian's, through
// playwright-core): a fresh form flags nothing and starts within its schema; titles come from
// the schema or the field's name in words; descriptions are Markdown, escaped; every kind of
// field reads back its data; fills and submits the fight form and sees the verdict as a card;
// submits an invalid trip and sees the error at its field; watches a streamed plan arrive card
// by card with the task's timeline; answers the agent's question; attaches a calendar; checks
// the recent tasks, a keyboard-only run, a phone's screen, and accessibility (axe-core). A
// screenshot of each state goes to OUT_DIR.
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
  // The messages the page sends, to see that each names its form's skill.
  const sent = [];
  page.on("request", (r) => {
    const body = r.method() === "POST" ? r.postData() : null;
    if (body && body.includes('"messageId"')) sent.push(JSON.parse(body));
  });

  // The fight form: fill, submit, see the winner and the probability under their titles.
  await page.goto(fight + "/ui");
  const form = page.locator('section[data-skill="fight-comparison"]');
  await form.waitFor();
  check((await page.locator("#agent-name").textContent()) === "Fight Club", "the card's name is the title");
  check((await form.locator("label").first().textContent()).startsWith("A"), "a field without a title is named by its name");
  await page.screenshot({ path: join(outDir, "form-ui-fresh.png"), fullPage: true });
  await form.locator('[name="a"]').fill("Lion");
  await form.locator('[name="b"]').fill("Tiger");
  await form.locator("button.submit").click();
  const winner = form.locator('dd[data-field="winner"]');
  await winner.waitFor({ timeout: 10000 });
  check((await winner.textContent()) === "Tiger", "the winner is shown");
  const named = sent.length > 0 && sent[0].params.message.metadata;
  check(
    !!named && named["https://github.com/a2a-card/a2a-card/extensions/skill/v1"].skill === "fight-comparison",
    "the fight form's message names its skill: " + JSON.stringify(named),
  );
  check((await form.locator('dd[data-field="probability"]').textContent()) === "0.56", "the probability is shown");
  const titles = await form.locator(".output dt").allTextContents();
  check(titles.some((t) => t.startsWith("Winner") && t.includes("The name of the winner")), "fields carry the output schema's titles and descriptions: " + titles.join(" | "));
  check((await form.locator("article.result").count()) === 1, "the typed result is one card");
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
  // A fresh form: nothing flagged, the number empty (not 0 below its minimum of 1), the optional
  // date an ordinary input marked optional (no `null` type selector).
  const shown = () => plan.locator(".field-error").evaluateAll((ms) => ms.filter((m) => !m.hidden && m.textContent.trim()).map((m) => m.textContent));
  check((await shown()).length === 0, "a fresh form flags nothing: " + (await shown()).join(" | "));
  check((await plan.locator('[name="days"]').inputValue()) === "", "a number without a default starts empty");
  check((await plan.locator('[name="days"]').getAttribute("min")) === "1", "the number's minimum is the input's");
  const dateField = plan.locator('.field[data-path="/start_date"]');
  check((await dateField.locator("input").count()) === 1 && (await dateField.locator("select").count()) === 0, "an optional field is an input, not a type selector");
  check((await dateField.locator(".optional").textContent()) === "optional", "an optional field says so");
  check((await dateField.locator("label .field-title").textContent()) === "Start date", "a field's title is its name in words: " + (await dateField.locator("label .field-title").textContent()));
  const rootLabels = await plan.evaluate((section) =>
    [...section.querySelectorAll("*")]
      .filter((e) => [...e.childNodes].some((n) => n.nodeType === 3 && /\broot\b|null/.test(n.textContent)))
      .map((e) => `<${e.tagName.toLowerCase()}> ${e.textContent.slice(0, 60)}`));
  check(rootLabels.length === 0, "no `root` or `null` on the form, seen or read aloud: " + rootLabels.join(" | "));
  const help = plan.locator('.field[data-path="/destination"] .help');
  check((await help.textContent()).includes("Where to go"), "a field's description is under it");
  const helpWeight = await help.evaluate((e) => getComputedStyle(e).fontWeight);
  check(helpWeight === "400", "a description reads as help, not as a heading: " + helpWeight);
  const described = await plan.locator('[name="destination"]').getAttribute("aria-describedby");
  check(described && described.split(" ").includes(await help.getAttribute("id")), "the description is the input's accessible description");
  check((await plan.locator('.field[data-path="/destination"] .required-mark').count()) === 1, "a required field is marked");
  // Markdown in descriptions: inline code shown as code, not as backticks.
  const code = await plan.locator(".description code").allTextContents();
  check(code.includes("text/calendar") && !(await plan.locator(".description").textContent()).includes("`"), "the skill's description is Markdown: " + code.join(" | "));
  // ... escaped: markup in a description stays text, and only safe links are links.
  const rendered = await page.evaluate(() => {
    const box = markdown("Use `<b>x</b>` **now** or _later_ <img src=x onerror=\"window.hacked=1\">; see [the docs](https://a2a-protocol.org) not [this](javascript:window.hacked=1)\n\nSecond *paragraph*.");
    return {
      tags: [...box.querySelectorAll("*")].map((e) => e.tagName.toLowerCase()).join(" "),
      links: [...box.querySelectorAll("a")].map((a) => a.getAttribute("href")),
      code: box.querySelector("code").textContent,
      text: box.textContent,
    };
  });
  check(rendered.tags === "p code strong em a p em", "Markdown gives code, strong, emphasis, links and paragraphs: " + rendered.tags);
  check(rendered.code === "<b>x</b>" && rendered.text.includes("<img src=x"), "markup in Markdown stays text");
  check(JSON.stringify(rendered.links) === JSON.stringify(["https://a2a-protocol.org"]), "only safe links are links: " + rendered.links.join(" "));
  // Every kind of field, from a schema of each shape schemars makes: a nested object, an
  // array of objects, an enum (plain and as `oneOf` of constants), booleans required and
  // optional, `Option<T>` as `anyOf` with null, and a default; the value read back is the data.
  const kinds = await page.evaluate(() => {
    const schema = {
      type: "object", required: ["stay", "rooms", "kind", "breakfast"],
      properties: {
        stay: { $ref: "#/$defs/Stay" },
        rooms: { type: "array", items: { type: "object", required: ["beds"], properties: { beds: { type: "integer", minimum: 1 } } } },
        kind: { oneOf: [{ const: "hotel", title: "A hotel" }, { const: "flat", title: "A flat" }] },
        size: { type: ["string", "null"], enum: ["small", "large", null] },
        breakfast: { type: "boolean" },
        pets: { type: ["boolean", "null"] },
        note: { anyOf: [{ type: "string", maxLength: 5 }, { type: "null" }] },
        currency: { type: "string", default: "EUR" },
      },
      $defs: { Stay: { type: "object", required: ["nights"], properties: { nights: { type: "integer", minimum: 1 }, from: { type: "string", format: "date" } } } },
    };
    const form = new SchemaForm(schema);
    document.body.append(form.node);
    const fresh = form.value();
    const freshErrors = [...form.node.querySelectorAll(".field-error")].filter((e) => !e.hidden).length;
    const data = { stay: { nights: 2, from: "2026-12-01" }, rooms: [{ beds: 2 }, { beds: 1 }], kind: "flat", size: "large", breakfast: true, pets: false, currency: "USD" };
    form.set(data);
    const back = form.value();
    const labels = [...form.node.querySelectorAll("label .field-title, legend .field-title")].map((l) => l.textContent);
    const controls = {
      kind: [...form.fields["/kind"].input.options].map((o) => o.textContent),
      pets: form.fields["/pets"].input.tagName + ":" + [...form.fields["/pets"].input.options].map((o) => o.textContent).join("/"),
      breakfast: form.fields["/breakfast"].input.type,
      from: form.fields["/stay/from"].input.type,
    };
    form.fields["/note"].set("too long");
    const note = form.fields["/note"].check() ? "" : form.fields["/note"].error.textContent;
    const at = form.fieldAt("/rooms/1/beds").pointer + " " + form.fieldAt("/stay/nights/extra").pointer;
    form.node.remove();
    return { fresh, freshErrors, back, labels, controls, note, at };
  });
  check(JSON.stringify(kinds.fresh) === JSON.stringify({ stay: {}, rooms: [], breakfast: false, currency: "EUR" }), "a fresh form holds only the defaults: " + JSON.stringify(kinds.fresh));
  check(kinds.freshErrors === 0, "a fresh form of every kind flags nothing");
  check(JSON.stringify(kinds.back) === JSON.stringify({ stay: { nights: 2, from: "2026-12-01" }, rooms: [{ beds: 2 }, { beds: 1 }], kind: "flat", size: "large", breakfast: true, pets: false, currency: "USD" }), "every kind of field gives back the data it was set to: " + JSON.stringify(kinds.back));
  check(kinds.labels.includes("Stay") && kinds.labels.includes("Nights") && kinds.labels.includes("Beds") && !kinds.labels.some((l) => /null|root/.test(l)), "nested fields are titled in words: " + kinds.labels.join(", "));
  check(JSON.stringify(kinds.controls) === JSON.stringify({ kind: ["Choose…", "A hotel", "A flat"], pets: "SELECT:Not set/Yes/No", breakfast: "checkbox", from: "date" }), "enums are selects with their titles, an optional boolean a choice, a date a date input: " + JSON.stringify(kinds.controls));
  check(kinds.note === "Must be at most 5 characters.", "an optional string keeps its own bounds: " + kinds.note);
  check(kinds.at === "/rooms/1/beds /stay/nights", "an error's pointer finds its field, or the nearest above: " + kinds.at);
  // Touched and left wrong: flagged at the field, as the user goes.
  await plan.locator('[name="days"]').focus();
  await plan.locator('[name="destination"]').focus();
  check((await plan.locator('.field-error[data-path="/days"]').textContent()) === "Required.", "a required field left empty is flagged once left");
  await plan.locator('[name="days"]').fill("30");
  await plan.locator('[name="days"]').blur();
  check((await plan.locator('.field-error[data-path="/days"]').textContent()).includes("at most 14"), "a number over its maximum is flagged as typed");
  check((await plan.locator('[name="days"]').getAttribute("aria-invalid")) === "true", "a flagged input is marked invalid");
  await page.screenshot({ path: join(outDir, "form-ui-touched.png"), fullPage: true });
  await plan.locator("button.example").first().click();
  check((await plan.locator('[name="destination"]').inputValue()) === "Lisbon", "an example fills the form");
  check((await shown()).length === 0, "a valid example leaves no error shown from before it: " + (await shown()).join(" | "));
  // The agent's own errors, at the fields they name.
  await plan.locator('[name="days"]').fill("30");
  await plan.locator("button.submit").click();
  const fieldError = plan.locator('.field-error[data-path="/days"]');
  await page.waitForFunction(() => /maximum|greater/.test(document.querySelector('section[data-skill="plan-trip"] .field-error[data-path="/days"]').textContent), null, { timeout: 10000 });
  check((await fieldError.textContent()).includes("14"), "the days field shows the agent's error: " + (await fieldError.textContent()));
  check((await plan.locator(".error").first().textContent()).includes("shown at the fields"), "the answer says where the errors are");
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
  check((await plan.locator("article.result header h3").first().textContent()) === "Result", "each streamed item is a card");
  const timeline = await plan.locator(".timeline li").evaluateAll((items) => items.map((i) => i.dataset.state));
  const order = ["submitted", "working", "completed"];
  const inOrder = timeline.every((s, i) => i === 0 || order.indexOf(s) >= order.indexOf(timeline[i - 1]));
  check(inOrder && timeline.includes("working") && timeline[timeline.length - 1] === "completed", "the task's timeline shows its states in order: " + timeline.join(" -> "));
  const dates = await plan.locator('dd[data-field="date"]').allTextContents();
  check(JSON.stringify(dates) === JSON.stringify(["2026-12-01", "2026-12-02", "2026-12-03"]), "the plan's days arrive in order: " + dates.join(", "));
  await page.screenshot({ path: join(outDir, "form-ui-stream.png"), fullPage: true });

  // A question: without its optional start date the plan asks for one; the answer, given in
  // the box the question opens, resumes the same task, and the timeline shows it all.
  await plan.locator("button.example").first().click();
  await plan.locator('[name="start_date"]').fill("");
  await plan.locator("button.submit").click();
  const question = plan.locator("form.question");
  await question.waitFor({ timeout: 10000 });
  check((await question.locator("label").textContent()).includes("Which day do you leave?"), "the agent's question is asked in the page");
  check((await plan.locator(".timeline li").last().getAttribute("data-state")) === "input required", "the timeline shows the task waiting for input");
  await page.screenshot({ path: join(outDir, "form-ui-question.png"), fullPage: true });
  await question.locator("input.answer").fill("2026-12-05");
  await question.locator("button.send-answer").click();
  await page.waitForFunction(() => document.querySelector('section[data-skill="plan-trip"] .progress').textContent === "Done.", null, { timeout: 15000 });
  const answered = await plan.locator('dd[data-field="date"]').allTextContents();
  check(answered[0] === "2026-12-05", "the answer resumes the task: " + answered.join(", "));
  const states = await plan.locator(".timeline li").evaluateAll((items) => items.map((i) => i.dataset.state));
  check(states.includes("input required") && states[states.length - 1] === "completed", "the timeline goes on after the answer: " + states.join(" -> "));

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
  // Keyboard only: from the top of the page, Tab reaches the fight form's fields and its
  // submit button, each focus visible, and Enter submits; no mouse anywhere.
  await page.goto(fight + "/ui");
  await form.waitFor();
  const tabTo = async (selector, limit = 40) => {
    for (let i = 0; i < limit; i++) {
      await page.keyboard.press("Tab");
      const there = await page.evaluate((sel) => {
        const el = document.activeElement;
        if (!el || !el.matches(sel)) return null;
        const style = getComputedStyle(el);
        const ring = (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== "none";
        return { visible: el.matches(":focus-visible") && ring };
      }, selector);
      if (there) return there;
    }
    return null;
  };
  const onA = await tabTo('section[data-skill="fight-comparison"] [name="a"]');
  check(onA !== null, "Tab reaches the first field of the fight form");
  check(onA && onA.visible, "the focused field shows a focus ring");
  await page.keyboard.type("Lion");
  const onB = await tabTo('section[data-skill="fight-comparison"] [name="b"]', 5);
  check(onB !== null, "the next Tab goes to the second field");
  await page.keyboard.type("Tiger");
  const onSubmit = await tabTo('section[data-skill="fight-comparison"] button.submit', 15);
  check(onSubmit !== null && onSubmit.visible, "Tab reaches the submit button, its focus visible");
  await page.keyboard.press("Enter");
  const keyed = form.locator('dd[data-field="winner"]');
  await keyed.waitFor({ timeout: 10000 });
  check((await keyed.textContent()) === "Tiger", "Enter on the focused submit button sends the form");
  await page.screenshot({ path: join(outDir, "form-ui-keyboard.png"), fullPage: true });

  // On a phone (390 x 844 CSS pixels): nothing wider than the screen, targets big enough to
  // tap (WCAG 2.2's 24 x 24 minimum), and the trip form works.
  const phone = await context.newPage();
  phone.on("pageerror", (e) => errors.push(String(e)));
  await phone.setViewportSize({ width: 390, height: 844 });
  for (const url of [fight + "/ui", trip + "/ui"]) {
    await phone.goto(url);
    await phone.locator("section.skill").first().waitFor();
    const layout = await phone.evaluate(() => {
      const width = document.documentElement.clientWidth;
      const wide = [...document.querySelectorAll("body *")]
        .filter((e) => e.getClientRects().length && e.getBoundingClientRect().right > width + 1)
        .map((e) => `<${e.tagName.toLowerCase()} class="${e.className}"> ${Math.round(e.getBoundingClientRect().right)}px`);
      const small = [...document.querySelectorAll("button, input, select, textarea, a[href]")]
        .filter((e) => e.getClientRects().length && e.type !== "hidden")
        .filter((e) => { const r = e.getBoundingClientRect(); return r.width < 24 || r.height < 24; })
        .map((e) => `<${e.tagName.toLowerCase()} ${e.name || e.className || e.textContent.trim().slice(0, 20)}> ${Math.round(e.getBoundingClientRect().width)}x${Math.round(e.getBoundingClientRect().height)}`);
      return { scroll: document.documentElement.scrollWidth, width, wide: wide.slice(0, 5), small: small.slice(0, 5) };
    });
    check(layout.scroll <= layout.width && layout.wide.length === 0, `no sideways scrolling on a phone at ${url}: page ${layout.scroll}px for ${layout.width}px; ${layout.wide.join(", ")}`);
    check(layout.small.length === 0, `every control is at least 24 x 24 on a phone at ${url}: ${layout.small.join(", ")}`);
  }
  const phonePlan = phone.locator('section[data-skill="plan-trip"]');
  await phonePlan.locator("button.example").first().click();
  await phonePlan.locator("button.submit").click();
  await phone.waitForFunction(() => document.querySelector('section[data-skill="plan-trip"] .progress').textContent === "Done.", null, { timeout: 15000 });
  check((await phonePlan.locator('dd[data-field="date"]').count()) === 3, "the trip form works on a phone");
  await phone.screenshot({ path: join(outDir, "form-ui-phone.png"), fullPage: true });
  await phone.close();

  // Accessibility: axe-core's WCAG 2 A and AA rules on each agent's page as it loads, and with
  // a field flagged.
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
  await page.locator('section[data-skill="plan-trip"] [name="days"]').fill("0");
  await page.locator('section[data-skill="plan-trip"] [name="days"]').blur();
  check((await page.locator('section[data-skill="plan-trip"] .field-error[data-path="/days"]').textContent()).includes("at least 1"), "a number under its minimum is flagged");
  const flagged = await page.evaluate(async () => {
    const result = await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] } });
    return result.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.length} node(s), e.g. ${v.nodes[0].target.join(" ")}`);
  });
  check(flagged.length === 0, "no accessibility violations with a field flagged: " + flagged.join("; "));
  check(errors.length === 0, "no script errors: " + errors.join("; "));
} catch (e) {
  failures.push(String(e));
  console.log("FAIL " + e);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failures.length ? 1 : 0);
