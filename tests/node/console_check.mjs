// The browser console of `demo-app serve`, driven in headless Chromium by Playwright. Each step
// prints `ok STEP` and saves a screenshot; the first failure prints `FAILED STEP: why` and exits 1.
//
//   node console_check.mjs --open URL --auth URL --admin TOKEN --viewer TOKEN --issuer URL --jwt TOKEN --shots DIR
//   node console_check.mjs --forms URL --forms-pid PID --forms-cli PATH --shots DIR
//   node console_check.mjs --items URL --shots DIR
//
// `--open` is a demo server without authentication, `--auth` one with an auth file where TOKEN
// `admin` has the role admin and `viewer` none; the second has an audit log and an agent, and
// also takes the access tokens of the OAuth issuer `--issuer`, such as `--jwt` (subject grace,
// scope devices:read), while adding a device needs devices:write.
// `--forms` is the test fixture's server, whose `itinerary` tool takes an array of objects;
// `--forms-pid` its process, stopped for the last step, `--forms-cli` its binary, which runs
// the command line the console shows (under the app's name, in DIR/bin).
// `--items` is a server of the test suite's resources and prompts (`tests/suite/items.rs`).

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";

const { values: opt } = parseArgs({
  options: {
    open: { type: "string" }, auth: { type: "string" }, admin: { type: "string" }, forms: { type: "string" },
    "forms-pid": { type: "string" }, "forms-cli": { type: "string" }, viewer: { type: "string" }, shots: { type: "string" },
    items: { type: "string" }, issuer: { type: "string" }, jwt: { type: "string" },
  },
});
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";
if (!existsSync(executablePath)) {
  console.log(`FAILED launch: no Chromium at ${executablePath}; install Debian's chromium package (apt-get install chromium) or set CHROMIUM`);
  process.exit(1);
}
mkdirSync(opt.shots, { recursive: true });

let step = "launch";
let shot = 0;
const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-quic"],
});
const failures = [];
const fail = (why) => { throw new Error(why); };
const check = (cond, why) => { if (!cond) fail(why); };

async function visibleTools(base, token) {
  const response = await fetch(`${base}/tools`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return (await response.json()).tools.map((t) => t.name).sort();
}

async function listed(page) {
  await page.waitForSelector("#tools [data-tool]");
  return (await page.$$eval("#tools [data-tool]", (els) => els.map((e) => e.dataset.tool))).sort();
}

async function run(name, body, page) {
  step = name;
  try {
    await body();
  } finally {
    shot += 1;
    await page.screenshot({ path: `${opt.shots}/${String(shot).padStart(2, "0")}-${name}.png`, fullPage: true }).catch(() => {});
  }
  console.log(`ok ${name}`);
}

try {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  const consoleErrors = [];
  // Chromium reports each 4xx answer as a console error; the calls that get them are the test's.
  page.on("console", (m) => { if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) consoleErrors.push(m.text()); });
  const missing = [];
  page.on("response", (r) => { if (r.status() === 404) missing.push(r.url()); });
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  const foreign = [];
  const own = [opt.open, opt.auth, opt.forms, opt.items].filter(Boolean).map((u) => new URL(u).host);
  page.on("request", (r) => { if (!own.includes(new URL(r.url()).host)) foreign.push(r.url()); });
  if (opt.forms) await forms(page);
  else if (opt.items) await items(page);
  else await demo(page);

  step = "clean";
  check(consoleErrors.length === 0, `errors in the page: ${consoleErrors.join(" | ")}`);
  check(foreign.length === 0, `requests to other origins: ${foreign.join(", ")}`);
  check(missing.length === 0, `not found: ${missing.join(", ")}`);
  console.log("ok clean");
} catch (e) {
  failures.push(`FAILED ${step}: ${e.message}`);
} finally {
  await browser.close();
}
if (failures.length) {
  console.log(failures.join("\n"));
  process.exit(1);
}
console.log("done");

/** The fixture's `itinerary`: an array of objects, an enum, a boolean, a violation deep inside. */
async function forms(page) {
  const stop = (i, field) => `.field[data-pointer="/stops/${i}/${field}"]`;
  await run("nested-form", async () => {
    await page.goto(opt.forms);
    await page.click('[data-tool="itinerary"]');
    const options = await page.$$eval('.field[data-pointer="/mode"] select option', (os) => os.map((o) => o.textContent));
    check(JSON.stringify(options) === JSON.stringify(["(choose)", "train: By rail", "bus: By road"]), `mode options ${options}`);
    check(await page.getAttribute('.field[data-pointer="/rail_pass"] input', "type") === "checkbox", "rail_pass is not a checkbox");
    for (let i = 0; i < 3; i++) await page.click("text=Add stops item");
    await page.fill(`${stop(0, "city")} input`, "Lyon");
    await page.fill(`${stop(0, "nights")} input`, "2");
    await page.fill(`${stop(1, "city")} input`, "Aosta");
    await page.fill(`${stop(1, "nights")} input`, "9");
    await page.fill(`${stop(2, "city")} input`, "Turin");
    await page.fill(`${stop(2, "nights")} input`, "0");
    await page.click("text=Remove stops 2");
    check(await page.inputValue(`${stop(1, "city")} input`) === "Turin", "removing an item lost the values after it");
    check(await page.$(stop(2, "city")) === null, "the removed item is still there");
    await page.selectOption('.field[data-pointer="/mode"] select', { label: "train: By rail" });
  }, page);

  await run("nested-violation-beside-its-field", async () => {
    await page.click("#tool button[type=submit]");
    await page.waitForSelector(`${stop(1, "nights")} .violation:not(:empty)`);
    const said = await page.textContent(`${stop(1, "nights")} .violation`);
    check(said.includes("minimum of 1"), `the second stop's nights say ${said}`);
    check(await page.textContent(`${stop(0, "nights")} .violation`) === "", "the first stop got a violation");
  }, page);

  await run("missing-fields-beside-their-fields", async () => {
    await page.fill(`${stop(0, "nights")} input`, "");
    await page.selectOption('.field[data-pointer="/mode"] select', { label: "(choose)" });
    await page.click("#tool button[type=submit]");
    await page.waitForSelector(`${stop(0, "nights")} .violation:not(:empty)`);
    const nights = await page.textContent(`${stop(0, "nights")} .violation`);
    check(nights.includes("required"), `the first stop's nights say ${nights}`);
    const mode = await page.textContent('.field[data-pointer="/mode"] .violation');
    check(mode.includes("required"), `the mode says ${mode}`);
    check(await page.getAttribute('.field[data-pointer="/mode"] select', "aria-invalid") === "true", "the mode is not marked invalid");
    check(await page.textContent(`${stop(0, "city")} .violation`) === "", "the first stop's city got a violation");
    check(await page.textContent("#tool .violation.general") === "", "a missing field was not placed beside its field");
    await page.fill(`${stop(0, "nights")} input`, "2");
    await page.selectOption('.field[data-pointer="/mode"] select', { label: "train: By rail" });
  }, page);

  // The field comes from the violation's keyword and property, never from its words.
  await run("violations-placed-by-keyword-and-property", async () => {
    const violations = [
      { path: "/stops/0", keyword: "required", property: "city", message: "il manque la ville" },
      { path: "/stops/1/nights", keyword: "minimum", message: "trop peu" },
      { path: "/extra", keyword: "additionalProperties", property: "extra", message: "champ inconnu" },
    ];
    await page.route("**/tools/itinerary", (route) => route.fulfill({
      status: 422,
      contentType: "application/json",
      body: JSON.stringify({ tool: "itinerary", status: "error", meta: { request_id: "req-routed" },
        error: { type: "invalid_arguments", message: "invalid arguments: 3 violations", retryable: true, details: { violations } } }),
    }));
    try {
      await page.click("#tool button[type=submit]");
      await page.waitForSelector(`${stop(0, "city")} .violation:not(:empty)`);
      const city = await page.textContent(`${stop(0, "city")} .violation`);
      check(city === "il manque la ville", `the first stop's city says ${city}`);
      check(await page.textContent(`${stop(1, "nights")} .violation`) === "trop peu", "the second stop's nights say nothing");
      check(await page.textContent('fieldset[data-pointer="/stops/0"] > .violation') === "", "the missing city landed on its stop");
      const general = await page.textContent("#tool .violation.general");
      check(general === "/extra: champ inconnu", `the form's general violations say ${general}`);
    } finally {
      await page.unroute("**/tools/itinerary");
    }
  }, page);

  await run("nested-result-as-a-table", async () => {
    await page.fill(`${stop(1, "nights")} input`, "3");
    await page.check('.field[data-pointer="/rail_pass"] input');
    await page.click("#tool button[type=submit]");
    await page.waitForSelector(".result.ok table");
    const rows = await page.$$eval(".result.ok table tbody tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    check(JSON.stringify(rows) === JSON.stringify([["Lyon", "2"], ["Turin", "3"]]), `rows ${JSON.stringify(rows)}`);
    const text = await page.textContent(".result.ok");
    check(text.includes("total_nights5") && text.includes("rail_passtrue"), `result ${text}`);
  }, page);

  await run("command-is-the-tools-subcommand", async () => {
    const command = await page.textContent(".result pre.command");
    const who = await (await fetch(`${opt.forms}/whoami`)).json();
    check(command.startsWith(`${who.name} itinerary --params-json '{"stops":[`), `the command is ${command}`);
    // The command as shown, run by a shell with the app's binary on the PATH by the app's name.
    const cli = opt["forms-cli"];
    if (cli) {
      const bin = join(opt.shots, "bin");
      mkdirSync(bin, { recursive: true });
      rmSync(join(bin, who.name), { force: true });
      symlinkSync(cli, join(bin, who.name));
      const out = execFileSync("/bin/sh", ["-c", command], {
        encoding: "utf8",
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      });
      check(out.includes("Turin") && out.includes("total_nights"), `the command printed ${out}`);
    }
  }, page);

  await run("server-stopped-shows-an-error", async () => {
    check(opt["forms-pid"], "no --forms-pid to stop");
    process.kill(Number(opt["forms-pid"]), "SIGKILL");
    for (let i = 0; ; i++) {
      try {
        await fetch(`${opt.forms}/whoami`);
      } catch {
        break;
      }
      check(i < 50, "the server still answers after it was stopped");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await page.click("#tool button[type=submit]");
    await page.waitForSelector(".result.error .error-message");
    const said = await page.textContent(".result.error .error-message");
    check(said.includes("could not be reached"), `the page says ${said}`);
    check(await page.isEnabled("#tool button[type=submit]"), "Run stays disabled after the failed call");
  }, page);
}

/** The suite's resources and prompts: text, an image, a download, a template, a prompt. */
async function items(page) {
  const field = (pointer) => `.field[data-pointer="${pointer}"]`;
  await run("items-listed-beside-tools", async () => {
    await page.goto(opt.items);
    await page.waitForSelector("#tab-resources:not([hidden])");
    check(await page.isVisible("#tab-prompts"), "no Prompts tab");
    await page.click("#tab-resources");
    await page.waitForSelector('#resources [data-resource="docs://readme"]');
    const uris = await page.$$eval("#resources [data-resource]", (els) => els.map((e) => e.dataset.resource));
    check(uris.includes("files://notes/a.txt") && !uris.includes("secrets://key"), `listed ${uris}`);
    check(await page.isVisible('#resources [data-template="files://{path*}"]'), "no template listed");
  }, page);

  await run("resource-text-shown", async () => {
    await page.click('#resources [data-resource="docs://readme"]');
    await page.waitForSelector("#resource .result.ok pre.resource-text");
    const text = await page.textContent("#resource pre.resource-text");
    check(text.includes("Über alles"), `the text is ${text}`);
  }, page);

  await run("resource-image-shown", async () => {
    await page.click('#resources [data-resource="images://logo"]');
    await page.waitForSelector("#resource img.resource-image");
    const width = await page.$eval("#resource img.resource-image", async (img) => { await img.decode(); return img.naturalWidth; });
    check(width === 1, `the image is ${width} pixels wide`);
  }, page);

  await run("resource-bytes-downloaded", async () => {
    await page.click('#resources [data-resource="archive://data.bin"]');
    await page.waitForSelector("#resource a.download");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#resource a.download")]);
    check(download.suggestedFilename() === "data.bin", `downloaded as ${download.suggestedFilename()}`);
    const path = await download.path();
    const bytes = [...readFileSync(path)];
    check(JSON.stringify(bytes) === "[0,1,2,3,255]", `downloaded ${bytes}`);
  }, page);

  await run("template-completed-and-read", async () => {
    await page.click('#resources [data-template="files://{path*}"]');
    await page.fill(`${field("/path")} input`, "notes/");
    await page.waitForFunction(() => document.querySelectorAll("#resource datalist option").length === 2);
    await page.fill(`${field("/path")} input`, "notes/a b.txt");
    await page.click("#resource button[type=submit]");
    await page.waitForSelector("#resource .result.ok pre.resource-text");
    const text = await page.textContent("#resource pre.resource-text");
    check(text === "contents of notes/a b.txt", `the text is ${text}`);
  }, page);

  await run("template-escape-beside-its-field", async () => {
    await page.fill(`${field("/path")} input`, "../../etc/passwd");
    await page.click("#resource button[type=submit]");
    await page.waitForSelector("#resource .result.error");
    const said = await page.textContent(`${field("/path")} .violation`);
    check(said.includes(".."), `beside the field: ${said}`);
    check(await page.getAttribute(`${field("/path")} input`, "aria-invalid") === "true", "the field is not marked");
  }, page);

  await run("prompt-messages-shown", async () => {
    await page.click("#tab-prompts");
    await page.click('#prompts [data-prompt="review"]');
    await page.fill(`${field("/code")} input`, "fn main() {}");
    await page.fill(`${field("/language")} input`, "r");
    await page.waitForFunction(() => [...document.querySelectorAll("#prompt datalist option")].some((o) => o.value === "rust"));
    await page.fill(`${field("/language")} input`, "rust");
    await page.fill(`${field("/strictness")} input`, "3");
    await page.click("#prompt button[type=submit]");
    await page.waitForSelector('#prompt .message[data-role="assistant"]');
    const user = await page.textContent('#prompt .message[data-role="user"] pre');
    check(user === "Review this rust at strictness 3:\nfn main() {}", `the user's message is ${user}`);
  }, page);

  await run("prompt-violations-beside-their-fields", async () => {
    await page.fill(`${field("/code")} input`, "");
    await page.fill(`${field("/strictness")} input`, "very");
    await page.click("#prompt button[type=submit]");
    await page.waitForSelector("#prompt .result.error");
    const missing = await page.textContent(`${field("/code")} .violation`);
    check(missing.length > 0, "nothing beside the missing `code`");
    // The prompt runs only with its required arguments: its own parse error comes once they are.
    await page.fill(`${field("/code")} input`, "x");
    await page.click("#prompt button[type=submit]");
    await page.waitForFunction(() => document.querySelector('.field[data-pointer="/strictness"] .violation').textContent !== "");
    const said = await page.textContent(`${field("/strictness")} .violation`);
    check(said.includes("from 1 to 3"), `beside strictness: ${said}`);
  }, page);
}

/** The demo app: callers, a violation, a call, a confirmation, the activity and the chat. */
async function demo(page) {

  await run("anonymous-lists-its-tools", async () => {
    const start = Date.now();
    await page.goto(opt.open);
    const names = await listed(page);
    const usable = Date.now() - start;
    const expected = await visibleTools(opt.open);
    check(JSON.stringify(names) === JSON.stringify(expected), `listed ${names} but GET /tools has ${expected}`);
    check((await page.textContent("#identity")).includes("Anonymous"), "identity not shown as anonymous");
    const weight = await page.evaluate(() => performance.getEntriesByType("resource").reduce((n, e) => n + e.transferSize, 0)
      + performance.getEntriesByType("navigation")[0].transferSize);
    console.log(`measure first load ${weight} bytes, usable in ${usable} ms`);
  }, page);

  await run("signed-out-asks-for-a-token", async () => {
    await page.goto(opt.auth);
    await page.waitForSelector("#sign-in:not([hidden])");
    const said = await page.textContent("#identity");
    check(said.includes("needs a token"), "no token prompt");
    check(said.includes(`Get one from ${opt.issuer}`), `the console does not say where to get a token: ${said}`);
  }, page);

  await run("token-shows-its-scopes", async () => {
    await page.fill("#token", opt.jwt);
    await page.click("#sign-in button[type=submit]");
    await page.waitForFunction(() => document.querySelector("#identity").textContent.includes("Signed in"));
    const said = await page.textContent("#identity");
    check(said.includes(`${opt.issuer}#grace`) && said.includes("scopes: devices:read"), `identity: ${said}`);
    // Listed all the same, marked with the scope it needs; a call says which scope is missing.
    check((await page.textContent('[data-tool="device_add"]')).includes("scope devices:write"), "no scope badge on device_add");
    check(!(await page.textContent('[data-tool="device_list"]')).includes("scope"), "a scope badge on device_list");
    await page.click('[data-tool="device_add"]');
    await page.fill('.field[data-pointer="/workspace"] input', "scoped");
    await page.click("#tool button[type=submit]");
    await page.waitForSelector("#tool .error-message");
    const refused = await page.textContent("#tool .error-message");
    check(refused.includes("needs the scope devices:write"), `the refusal says ${refused}`);
    await page.click("#sign-out");
  }, page);

  let viewerTools;
  await run("viewer-sees-fewer-tools", async () => {
    await page.fill("#token", opt.viewer);
    await page.click("#sign-in button[type=submit]");
    await page.waitForFunction(() => document.querySelector("#identity").textContent.includes("Signed in"));
    viewerTools = await listed(page);
    const expected = await visibleTools(opt.auth, opt.viewer);
    check(JSON.stringify(viewerTools) === JSON.stringify(expected), `listed ${viewerTools} but GET /tools has ${expected}`);
    check(!viewerTools.includes("device_revoke"), "a caller without the admin role sees device_revoke");
    check(await page.isHidden("#tab-activity"), "the activity tab is offered to a caller without the admin role");
    const audit = await fetch(`${opt.auth}/audit`, { headers: { authorization: `Bearer ${opt.viewer}` } });
    check(audit.status === 403, `GET /audit answers a caller without the admin role with ${audit.status}`);
  }, page);

  await run("admin-sees-every-tool", async () => {
    await page.click("#sign-out");
    await page.fill("#token", opt.admin);
    await page.click("#sign-in button[type=submit]");
    await page.waitForFunction(() => document.querySelector("#identity").textContent.includes("admin"));
    const names = await listed(page);
    const expected = await visibleTools(opt.auth, opt.admin);
    check(JSON.stringify(names) === JSON.stringify(expected), `listed ${names} but GET /tools has ${expected}`);
    check(names.includes("device_revoke") && names.length > viewerTools.length, "admin and viewer lists do not differ");
    check(await page.isVisible('[data-tool="device_revoke"] .badge.destructive'), "no destructive badge");
  }, page);

  const ttl = '.field[data-pointer="/ttl_seconds"]';
  await run("violation-beside-its-field", async () => {
    await page.fill("#search", "device");
    await page.click('[data-tool="device_add"]');
    await page.fill(`${ttl} input`, "5");
    await page.click("#tool button[type=submit]");
    await page.waitForSelector(`${ttl} .violation:not(:empty)`);
    const said = await page.textContent(`${ttl} .violation`);
    check(said.includes("minimum of 30"), `the TTL field says ${said}`);
    check(await page.getAttribute(`${ttl} input`, "aria-invalid") === "true", "the TTL input is not marked invalid");
    check((await page.textContent('.field[data-pointer="/workspace"] .violation')) === "", "a violation landed on another field");
  }, page);

  let code;
  await run("valid-call-shows-the-code", async () => {
    await page.fill(`${ttl} input`, "120");
    await page.fill('.field[data-pointer="/workspace"] input', "browser");
    await page.click("#tool button[type=submit]");
    await page.waitForSelector(".result.ok dl.tree");
    code = await page.$eval(".result.ok dl.tree", (dl) => [...dl.children].find((c, i, all) => c.tagName === "DT" && c.textContent === "code").nextElementSibling.textContent);
    check(/^[0-9]{6}$/.test(code), `no code in the result: ${code}`);
    check((await page.textContent(".result .meta")).includes("req-"), "no request id shown");
    const command = await page.textContent(".result pre.command");
    check(command.startsWith("demo-app device-add --params-json '{"), `the command line is ${command}`);
  }, page);

  let device;
  await run("pair-with-a-secret-field", async () => {
    await page.click('[data-tool="device_pair"]');
    check(await page.getAttribute('.field[data-pointer="/code"] input', "type") === "password", "the secret is not a password input");
    await page.fill('.field[data-pointer="/code"] input', code);
    await page.fill('.field[data-pointer="/device_name"] input', "browser phone");
    await page.click("#tool button[type=submit]");
    await page.waitForSelector(".result.ok dl.tree");
    device = await page.$eval(".result.ok dl.tree", (dl) => [...dl.children].find((c) => c.tagName === "DT" && c.textContent === "device_id").nextElementSibling.textContent);
    check(/^dev_[0-9a-f]{16}$/.test(device), `no device id: ${device}`);
  }, page);

  await run("task-asks-and-ends-in-the-page", async () => {
    await page.fill("#search", "device");
    await page.click('[data-tool="device_export"]');
    check(await page.isVisible('[data-tool="device_export"] .badge'), "no badge on device_export");
    await page.fill('.field[data-pointer="/page_size"] input', "1");
    await page.fill('.field[data-pointer="/pace_ms"] input', "200");
    await page.click("#tool button[type=submit]");
    await page.waitForSelector('.result.task .task-status[data-status="input_required"]');
    await page.check('.task-question .field[data-pointer="/include_revoked"] input');
    await page.click('.task-question button.primary');
    await page.waitForSelector(".result.ok dl.tree");
    const text = await page.textContent(".result.ok");
    check(text.includes("include_revokedtrue") && text.includes("devices1"), `the task's result: ${text}`);
    check((await page.getAttribute(".result.task .task-status", "data-status")) === "completed", "the task is not shown completed");
  }, page);

  await run("task-cancelled-from-the-page", async () => {
    await page.selectOption('.field[data-pointer="/include_revoked"] select', "true");
    await page.fill('.field[data-pointer="/pace_ms"] input', "10000");
    await page.fill('.field[data-pointer="/page_size"] input', "1");
    // Two devices at least, so that the export waits between its pages.
    const add = await fetch(`${opt.auth}/tools/device_add`, { method: "POST", headers: { authorization: `Bearer ${opt.admin}`, "content-type": "application/json" }, body: "{}" });
    const pairing = (await add.json()).result.code;
    await fetch(`${opt.auth}/tools/device_pair`, { method: "POST", headers: { authorization: `Bearer ${opt.admin}`, "content-type": "application/json" }, body: JSON.stringify({ code: pairing, device_name: "second" }) });
    await page.click("#tool button[type=submit]");
    await page.waitForSelector('.result.task .task-status[data-status="working"]');
    await page.click(".result.task button.danger");
    await page.waitForSelector('.result.task .task-status[data-status="cancelled"]');
  }, page);

  const audit = async (tool) => (await (await fetch(`${opt.auth}/audit?tool=${tool}`, { headers: { authorization: `Bearer ${opt.admin}` } })).json()).calls.map((c) => c.outcome);
  await run("confirmation-cancelled-does-nothing", async () => {
    await page.click('[data-tool="device_revoke"]');
    await page.fill('.field[data-pointer="/device_id"] input', device);
    await page.click("#tool button[type=submit]");
    await page.waitForSelector("#confirm[open]");
    check((await page.textContent("#confirm-question")).includes(device), "the question does not name the device");
    check((await page.textContent("#confirm-preview")).includes("browser phone"), "no dry-run preview");
    await page.screenshot({ path: `${opt.shots}/${String(++shot).padStart(2, "0")}-confirmation-dialog.png` });
    await page.click("#confirm-cancel");
    await page.waitForSelector("#tool .result-area >> text=Cancelled");
    const outcomes = await audit("device_revoke");
    check(!outcomes.includes("ok"), `a cancelled call ran: ${outcomes}`);
  }, page);

  let revokeRequest;
  await run("confirmation-confirmed-revokes", async () => {
    await page.click("#tool button[type=submit]");
    await page.waitForSelector("#confirm[open]");
    await page.click("#confirm-yes");
    await page.waitForSelector(".result.ok dl.tree");
    revokeRequest = (await page.textContent(".result .meta")).match(/request (\S+)/)?.[1];
    const revoked = await page.$eval(".result.ok dl.tree", (dl) => [...dl.children].find((c) => c.tagName === "DT" && c.textContent === "revoked_at").nextElementSibling.textContent);
    check(/^20\d\d-/.test(revoked), `not revoked: ${revoked}`);
    const outcomes = await audit("device_revoke");
    check(outcomes[0] === "ok", `the audit log's latest device_revoke is ${outcomes}`);
  }, page);

  await run("activity-shows-the-call", async () => {
    await page.click("#tab-activity");
    await page.waitForSelector("table.activity");
    check(await page.isHidden("#panel-tools") && await page.isHidden("#panel-chat"), "another tab's panel is still shown");
    const rows = await page.$$eval("table.activity tbody tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    check(rows.some((r) => r[1] === "device_revoke" && r[4] === "ok" && r[3] === "admin"), `no device_revoke by admin: ${JSON.stringify(rows.slice(0, 5))}`);
    // Each call's request id, the one its result showed, in the column of that name.
    const columns = await page.$$eval("table.activity thead th", (ths) => ths.map((th) => th.textContent));
    const [request, trace] = [columns.indexOf("request"), columns.indexOf("trace")];
    check(request >= 0 && trace >= 0, `no request or trace column: ${columns}`);
    check(/^req-/.test(revokeRequest ?? ""), `the confirmed call showed no request id: ${revokeRequest}`);
    const revoked = rows.find((r) => r[request] === revokeRequest);
    check(revoked?.[1] === "device_revoke", `request ${revokeRequest} not listed: ${JSON.stringify(rows.slice(0, 5))}`);
    // The console sends no trace context: only a server with telemetry on gives the call a trace.
    check(/^([0-9a-f]{32})?$/.test(revoked[trace]), `the trace column holds ${revoked[trace]}`);
  }, page);

  await run("activity-shows-the-trace", async () => {
    // A call made with a trace context of its own: the activity names its trace.
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const answer = await fetch(`${opt.auth}/tools/device_list`, {
      method: "POST",
      headers: { authorization: `Bearer ${opt.admin}`, "content-type": "application/json", traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      body: "{}",
    });
    check(answer.status === 200, `device_list with a traceparent answered ${answer.status}`);
    const requestId = (await answer.json()).meta.request_id;
    await page.click("#activity-refresh");
    await page.waitForFunction((id) => [...document.querySelectorAll("table.activity tbody td")].some((td) => td.textContent === id), requestId);
    const columns = await page.$$eval("table.activity thead th", (ths) => ths.map((th) => th.textContent));
    const rows = await page.$$eval("table.activity tbody tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    const row = rows.find((r) => r[columns.indexOf("request")] === requestId);
    check(row?.[columns.indexOf("trace")] === traceId, `request ${requestId} shows trace ${row?.[columns.indexOf("trace")]}, not ${traceId}`);
  }, page);

  await run("chat-shows-the-tool-call", async () => {
    await page.click("#tab-chat");
    check(await page.isHidden("#panel-tools") && await page.isHidden("#panel-activity"), "another tab's panel is still shown");
    await page.fill("#chat-input", "Which devices do I have?");
    await page.click("#chat-form button[type=submit]");
    await page.waitForSelector('.chat-log .call >> text=device_list');
    await page.waitForSelector(".chat-log .msg.assistant");
    const said = await page.textContent(".chat-log .msg.assistant");
    check(said.includes("browser phone"), `the answer was ${said}`);
    check((await page.textContent(".chat-log .call")).includes("✓"), "the tool call's result is not shown");
  }, page);

  await run("chat-confirmation-in-the-page", async () => {
    const added = await fetch(`${opt.auth}/tools/channel_add`, {
      method: "POST",
      headers: { authorization: `Bearer ${opt.admin}`, "content-type": "application/json" },
      body: JSON.stringify({ channel_name: "alerts", command: "tee alerts.txt" }),
    });
    check(added.status === 200, `channel_add answered ${added.status}`);
    await page.fill("#chat-input", "Remove the alerts channel.");
    await page.click("#chat-form button[type=submit]");
    await page.click("text=Review and confirm channel_remove");
    await page.waitForSelector("#confirm[open]");
    check(await page.isVisible("#panel-tools"), "the tools panel is not shown for the confirmation");
    const question = await page.textContent("#confirm-question");
    check(question === "Remove channel alerts?", `the question is ${question}`);
    await page.click("#confirm-yes");
    await page.waitForSelector(".result.ok dl.tree");
    check((await page.textContent(".result.ok")).includes("alerts"), "the removed channel is not shown");
    const left = await (await fetch(`${opt.auth}/tools/channel_list`, { method: "POST", headers: { authorization: `Bearer ${opt.admin}` } })).json();
    check(!left.result.channels.some((c) => c.name === "alerts"), "the channel is still there");
  }, page);

  const send = "#chat-form button[type=submit]";
  await run("chat-send-disabled-while-streaming", async () => {
    await page.click("#tab-chat");
    await page.fill("#chat-input", "Anything else?");
    await page.click(send);
    // The fake model answers after a pause: the run is still streaming.
    check(await page.isDisabled(send), "Send is enabled while the run streams");
    await page.waitForSelector(".chat-log .msg.assistant >> text=Nothing else");
    await page.waitForFunction((s) => !document.querySelector(s).disabled, send);
  }, page);

  await run("chat-failures-shown-in-the-page", async () => {
    const said = async () => page.$$eval(".chat-log .msg.violation", (els) => els.map((e) => e.textContent));
    const before = (await said()).length;
    // An event whose data is not JSON, then the stream ends without `finished`.
    await page.route("**/agent", (route) => route.fulfill({
      status: 200,
      contentType: "text/event-stream",
      body: 'event: text_delta\ndata: {"text": "Hel\n\n',
    }));
    try {
      await page.fill("#chat-input", "Hello?");
      await page.click(send);
      await page.waitForFunction((n) => document.querySelectorAll(".chat-log .msg.violation").length >= n + 2, before);
      const malformed = (await said()).slice(before);
      check(malformed[0].includes("could not be read") && malformed[1].includes("ended before it finished"), `the log says ${malformed}`);
      await page.waitForFunction((s) => !document.querySelector(s).disabled, send);
      await page.unroute("**/agent");
      await page.route("**/agent", (route) => route.abort("connectionrefused"));
      await page.fill("#chat-input", "Hello again?");
      await page.click(send);
      await page.waitForFunction((n) => document.querySelectorAll(".chat-log .msg.violation").length >= n + 3, before);
      const unreachable = (await said()).slice(before + 2);
      check(unreachable[0].includes("could not be reached"), `the log says ${unreachable}`);
      await page.waitForFunction((s) => !document.querySelector(s).disabled, send);
    } finally {
      await page.unroute("**/agent");
    }
  }, page);

  await run("narrow-window", async () => {
    await page.setViewportSize({ width: 420, height: 900 });
    await page.click("#tab-tools");
    await page.click('[data-tool="device_list"]');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 1, `the page is ${overflow}px wider than a narrow window`);
  }, page);

}
