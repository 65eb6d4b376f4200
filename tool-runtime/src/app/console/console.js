// The console: every tool the caller may see, as a form built from its input schema, run
// through the server's own routes. No framework and no build step; nothing is written into the
// page as HTML, every text goes in as text.

const $ = (selector) => document.querySelector(selector);

/** An element with attributes (`on*` are listeners, `text` its text) and children. */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") el.textContent = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const state = { who: null, tools: [], current: null, resources: [], templates: [], prompts: [] };

const token = () => sessionStorage.getItem("token") || "";

/** What the page says when a request gets no answer at all. */
const UNREACHABLE = "The server could not be reached.";

/**
 * Calls the server: the status, the JSON body (or null), the time taken. A request that gets
 * no answer (the server stopped, the network gone) is status 0 with `failure` saying so.
 */
async function api(method, path, body, extra = {}) {
  const headers = { accept: "application/json", ...extra };
  if (token()) headers.authorization = `Bearer ${token()}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const started = performance.now();
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    return { status: 0, body: null, ms: performance.now() - started, failure: UNREACHABLE };
  }
  let json = null;
  try {
    json = await response.json();
  } catch {
    json = null;
  }
  return { status: response.status, body: json, ms: performance.now() - started };
}

// ---- identity and sign-in -------------------------------------------------------------------

async function start() {
  $("#sign-in").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem("token", $("#token").value.trim());
    $("#token").value = "";
    load();
  });
  $("#sign-out").addEventListener("click", () => {
    sessionStorage.removeItem("token");
    load();
  });
  $("#search").addEventListener("input", renderTools);
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    tab.addEventListener("click", () => select(tab));
    tab.addEventListener("keydown", (event) => {
      if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
      const tabs = [...document.querySelectorAll('[role="tab"]:not([hidden])')];
      const next = tabs[(tabs.indexOf(tab) + (event.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
      next.focus();
      select(next);
    });
  }
  $("#activity-refresh").addEventListener("click", loadActivity);
  $("#activity-tool").addEventListener("change", loadActivity);
  $("#chat-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sendChat();
  });
  await load();
}

function select(tab) {
  for (const other of document.querySelectorAll('[role="tab"]')) {
    const chosen = other === tab;
    other.setAttribute("aria-selected", String(chosen));
    $(`#${other.getAttribute("aria-controls")}`).hidden = !chosen;
  }
  if (tab.id === "tab-activity") loadActivity();
}

async function load() {
  const who = await api("GET", "/whoami");
  const signIn = $("#sign-in");
  if (who.failure) {
    $("#identity").textContent = who.failure;
    return;
  }
  if (who.status === 401) {
    state.who = null;
    signIn.hidden = false;
    $("#sign-out").hidden = true;
    const refusal = token() ? "That token was not accepted." : "This server needs a token.";
    $("#identity").textContent = refusal;
    // Behind OAuth, the protected resource metadata (public, RFC 9728) names where to get one.
    const metadata = await api("GET", "/.well-known/oauth-protected-resource");
    const issuers = metadata.body?.authorization_servers ?? [];
    if (issuers.length) {
      const scopes = metadata.body.scopes_supported ?? [];
      $("#identity").textContent = `${refusal} Get one from ${issuers.join(" or ")}`
        + (scopes.length ? ` (scopes: ${scopes.join(", ")})` : "") + ".";
    }
    state.tools = [];
    renderTools();
    showItems({}, {});
    return;
  }
  state.who = who.body;
  document.title = `${who.body.name} console`;
  $("#app-name").textContent = who.body.name;
  signIn.hidden = !who.body.auth_required;
  $("#sign-out").hidden = !token();
  $("#identity").textContent = who.body.principal
    ? `Signed in as ${who.body.principal}` + (who.body.roles.length ? ` (roles: ${who.body.roles.join(", ")})` : " (no roles)")
      + (who.body.scopes?.length ? `, scopes: ${who.body.scopes.join(", ")}` : "")
    : "Anonymous caller on this machine";
  $("#tab-activity").hidden = !who.body.audit;
  $("#tab-chat").hidden = !who.body.agent;
  const listed = await api("GET", "/tools");
  if (listed.failure) $("#identity").textContent = listed.failure;
  state.tools = listed.body?.tools ?? [];
  const filter = $("#activity-tool");
  filter.replaceChildren(h("option", { value: "", text: "every tool" }),
    ...state.tools.map((t) => h("option", { value: t.name, text: t.name })));
  renderTools();
  const [resources, prompts] = await Promise.all([api("GET", "/resources"), api("GET", "/prompts")]);
  showItems(resources.body ?? {}, prompts.body ?? {});
  const again = state.current && state.tools.find((t) => t.name === state.current.name);
  if (again) showTool(again);
  else $("#tool").replaceChildren(h("p", { class: "hint", text: "Choose a tool." }));
}

// ---- the tool list --------------------------------------------------------------------------

function badges(tool) {
  const annotations = tool.annotations ?? {};
  const out = [];
  if (annotations.read_only) out.push(h("span", { class: "badge", text: "read-only" }));
  if (annotations.destructive) out.push(h("span", { class: "badge destructive", text: "destructive" }));
  if (annotations.idempotent) out.push(h("span", { class: "badge", text: "idempotent" }));
  if (tool.task) out.push(h("span", { class: "badge", title: "Runs as a task: followed here, cancellable", text: "task" }));
  // The OAuth scopes a call needs: the tool is listed all the same; a token without them is
  // refused with 403 insufficient_scope.
  for (const scope of tool.scopes ?? []) out.push(h("span", { class: "badge scope", title: "OAuth scope a call needs", text: `scope ${scope}` }));
  return out;
}

function renderTools() {
  const query = $("#search").value.trim().toLowerCase();
  const shown = state.tools.filter((t) =>
    !query || [t.name, t.title ?? "", ...(t.tags ?? [])].some((s) => s.toLowerCase().includes(query)));
  const groups = new Map();
  for (const tool of shown) {
    const tag = tool.tags?.[0] ?? "other";
    if (!groups.has(tag)) groups.set(tag, []);
    groups.get(tag).push(tool);
  }
  const list = $("#tools");
  list.replaceChildren(...[...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([tag, tools]) =>
    h("section", {}, h("h3", { text: tag }), h("ul", {}, tools.map((tool) =>
      h("li", {}, h("button", {
        type: "button",
        "data-tool": tool.name,
        "aria-current": state.current?.name === tool.name ? "true" : "false",
        onclick: () => showTool(tool),
      }, tool.title || tool.name, badges(tool))))))));
  if (!shown.length) list.append(h("p", { class: "hint", text: state.tools.length ? "No tool matches." : "No tools." }));
}

// ---- forms from schemas ---------------------------------------------------------------------

/** The schema's type without `null`, and whether `null` was allowed. */
function typeOf(schema) {
  let type = schema.type;
  let nullable = false;
  if (Array.isArray(type)) {
    nullable = type.includes("null");
    type = type.find((t) => t !== "null");
  }
  if (!type && schema.properties) type = "object";
  if (!type && (schema.enum || schema.oneOf)) type = "string";
  return { type, nullable };
}

/** Values to choose from: `enum`, or a `oneOf` of constants (with their descriptions). */
function choicesOf(schema) {
  if (Array.isArray(schema.enum)) return schema.enum.filter((v) => v !== null).map((v) => ({ value: v, label: String(v) }));
  if (Array.isArray(schema.oneOf) && schema.oneOf.every((s) => "const" in s)) {
    return schema.oneOf.map((s) => ({ value: s.const, label: s.description ? `${s.const}: ${s.description}` : String(s.const) }));
  }
  return null;
}

function hintOf(schema, required) {
  const parts = [];
  if (schema.description) parts.push(schema.description);
  const bounds = [];
  if (schema.minimum !== undefined && schema.maximum !== undefined && schema.maximum < 1e15) bounds.push(`from ${schema.minimum} to ${schema.maximum}`);
  else if (schema.minimum !== undefined && schema.minimum !== 0) bounds.push(`at least ${schema.minimum}`);
  else if (schema.maximum !== undefined && schema.maximum < 1e15) bounds.push(`at most ${schema.maximum}`);
  if (schema.minLength !== undefined || schema.maxLength !== undefined) bounds.push(`${schema.minLength ?? 0} to ${schema.maxLength ?? "any"} characters`);
  if (schema.pattern) bounds.push(`matching ${schema.pattern}`);
  if (schema.minItems !== undefined || schema.maxItems !== undefined) bounds.push(`${schema.minItems ?? 0} to ${schema.maxItems ?? "any"} items`);
  if (bounds.length) parts.push(bounds.join(", "));
  parts.push(required ? "required" : schema.default !== undefined ? `optional, default ${JSON.stringify(schema.default)}` : "optional");
  return parts.join(" · ");
}

/** The JSON pointer (RFC 6901) of property `key` of the value at `pointer`. */
const pointerTo = (pointer, key) => `${pointer}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;

let nextId = 0;

/**
 * A control for one value: its element, a reader of its value (`undefined` when left empty)
 * and a writer. Each control is registered in `fields` under its JSON pointer, where the
 * server's violations find it.
 */
function control(schema, name, pointer, required, fields) {
  const { type } = typeOf(schema);
  const id = `f${++nextId}`;
  const hint = h("p", { class: "hint", id: `${id}-hint`, text: hintOf(schema, required) });
  const violation = h("p", { class: "violation", id: `${id}-error`, role: "alert" });
  const label = h("label", { for: id, text: name });
  const wrap = (input, get, set) => {
    input.setAttribute("aria-describedby", `${id}-hint ${id}-error`);
    fields.set(pointer, { input, violation });
    return { el: h("div", { class: "field", "data-pointer": pointer }, label, input, hint, violation), get, set };
  };
  if (type === "object") {
    const inner = objectControl(schema, pointer, fields);
    const box = h("fieldset", { "data-pointer": pointer }, h("legend", { text: name }), hint, violation, inner.el);
    fields.set(pointer, { input: box, violation });
    return {
      el: box,
      get: () => { const v = inner.get(); return !required && Object.keys(v).length === 0 ? undefined : v; },
      set: inner.set,
    };
  }
  if (type === "array") return arrayControl(schema, name, pointer, required, fields, hint, violation);
  const choices = choicesOf(schema);
  if (choices) {
    const select = h("select", { id, name },
      h("option", { value: "", text: required ? "(choose)" : "(leave out)" }),
      choices.map((c, i) => h("option", { value: String(i), text: c.label })));
    return wrap(select, () => (select.value === "" ? undefined : choices[Number(select.value)].value),
      (v) => { const i = choices.findIndex((c) => c.value === v); select.value = i < 0 ? "" : String(i); });
  }
  if (type === "boolean") {
    if (required || schema.default !== undefined) {
      const box = h("input", { id, name, type: "checkbox" });
      box.checked = schema.default === true;
      return wrap(box, () => box.checked, (v) => { box.checked = v === true; });
    }
    const select = h("select", { id, name }, h("option", { value: "", text: "(leave out)" }),
      h("option", { value: "true", text: "true" }), h("option", { value: "false", text: "false" }));
    return wrap(select, () => (select.value === "" ? undefined : select.value === "true"),
      (v) => { select.value = v === undefined ? "" : String(v); });
  }
  const text = (v) => (v === undefined || v === null ? "" : String(v));
  if (type === "integer" || type === "number") {
    const input = h("input", {
      id, name, type: "text", inputmode: type === "integer" ? "numeric" : "decimal",
      placeholder: schema.default !== undefined ? `default ${schema.default}` : undefined,
    });
    return wrap(input, () => {
      const raw = input.value.trim();
      if (raw === "") return undefined;
      const n = Number(raw);
      return Number.isFinite(n) ? n : raw;
    }, (v) => { input.value = text(v); });
  }
  const secret = schema.writeOnly || schema.format === "password";
  const input = h("input", {
    id, name, type: secret ? "password" : "text", autocomplete: secret ? "off" : undefined,
    placeholder: schema.default !== undefined ? `default ${schema.default}` : undefined,
  });
  return wrap(input, () => (input.value === "" && !required ? undefined : input.value), (v) => { input.value = text(v); });
}

function objectControl(schema, pointer, fields) {
  const required = new Set(schema.required ?? []);
  const parts = Object.entries(schema.properties ?? {}).map(([key, sub]) =>
    [key, control(sub, key, pointerTo(pointer, key), required.has(key), fields)]);
  return {
    el: h("div", {}, parts.map(([, part]) => part.el)),
    get: () => {
      const value = {};
      for (const [key, part] of parts) {
        const v = part.get();
        if (v !== undefined) value[key] = v;
      }
      return value;
    },
    set: (value) => { for (const [key, part] of parts) part.set(value?.[key]); },
  };
}

/** A list of items with Add and Remove; the items are drawn again (values kept) when one goes. */
function arrayControl(schema, name, pointer, required, fields, hint, violation) {
  let parts = [];
  const list = h("ol", { class: "items" });
  const add = h("button", { type: "button", text: `Add ${name} item` });
  const box = h("fieldset", { "data-pointer": pointer }, h("legend", { text: name }), hint, violation, list, add);
  fields.set(pointer, { input: box, violation });
  const render = (values) => {
    for (const key of [...fields.keys()]) if (key.startsWith(`${pointer}/`)) fields.delete(key);
    const items = values.map((value, i) => {
      const part = control(schema.items ?? {}, `${name} ${i + 1}`, `${pointer}/${i}`, true, fields);
      if (value !== undefined) part.set(value);
      const remove = h("button", { type: "button", text: `Remove ${name} ${i + 1}`, onclick: () => {
        const kept = parts.map((p) => p.get());
        kept.splice(i, 1);
        render(kept);
      } });
      return { part, li: h("li", {}, part.el, remove) };
    });
    parts = items.map((item) => item.part);
    list.replaceChildren(...items.map((item) => item.li));
  };
  add.addEventListener("click", () => {
    render([...parts.map((p) => p.get()), undefined]);
    list.lastElementChild?.querySelector("input, select")?.focus();
  });
  return {
    el: box,
    get: () => {
      const values = parts.map((p) => p.get()).filter((v) => v !== undefined);
      return !required && values.length === 0 ? undefined : values;
    },
    set: (values) => render(Array.isArray(values) ? values : []),
  };
}

// ---- running a tool -------------------------------------------------------------------------

/** Shows `tool`'s form; with `preset` arguments, fills it and runs the call. */
function showTool(tool, preset) {
  state.current = tool;
  renderTools();
  const fields = new Map();
  const form = objectControl(tool.input_schema ?? {}, "", fields);
  const general = h("div", { class: "violation general", role: "alert" });
  const result = h("div", { class: "result-area" });
  const run = h("button", { type: "submit", class: tool.annotations?.destructive ? "danger" : "primary", text: `Run ${tool.name}` });
  const view = { fields, general, result, run };
  const el = h("form", { novalidate: true, "aria-label": tool.name, onsubmit: (event) => {
    event.preventDefault();
    submit(tool, form.get(), view);
  } },
  h("h2", {}, tool.title || tool.name, badges(tool)),
  h("p", { class: "hint", text: tool.name }),
  tool.description ? h("p", { text: tool.description }) : null,
  form.el, general, h("div", { class: "row" }, run), result);
  $("#tool").replaceChildren(el);
  if (preset) {
    form.set(preset);
    submit(tool, form.get(), view);
  }
}

function clearViolations(fields, general) {
  for (const { input, violation } of fields.values()) {
    violation.textContent = "";
    input.removeAttribute("aria-invalid");
  }
  general.replaceChildren();
}

/**
 * The pointer of the value a violation is about: a missing property (`keyword` `required`)
 * is the field of that `property` inside the object at `path`; any other is at `path`.
 */
function violationPointer(v) {
  const path = v.path ?? "";
  return v.keyword === "required" && typeof v.property === "string" ? pointerTo(path, v.property) : path;
}

/**
 * Puts each violation beside the field it is about (or the nearest enclosing one); those about
 * no field, such as an unknown top-level property, go in `general`.
 */
function showViolations(violations, fields, general) {
  for (const v of violations) {
    let pointer = violationPointer(v);
    while (pointer && !fields.has(pointer)) pointer = pointer.slice(0, pointer.lastIndexOf("/"));
    const field = pointer === "" ? undefined : fields.get(pointer);
    if (field) {
      field.violation.textContent = field.violation.textContent ? `${field.violation.textContent}; ${v.message}` : v.message;
      field.input.setAttribute("aria-invalid", "true");
    } else {
      general.append(h("p", { text: v.path ? `${v.path}: ${v.message}` : v.message }));
    }
  }
  document.querySelector('[aria-invalid="true"]')?.focus();
}

/** Runs `tool` with `args`; its Run button is disabled until the answer (or its absence) is shown. */
async function submit(tool, args, view, confirmation) {
  const { fields, general, result, run } = view;
  clearViolations(fields, general);
  let path = `/tools/${encodeURIComponent(tool.name)}`;
  if (confirmation) path += `?confirmation=${encodeURIComponent(confirmation)}`;
  run.disabled = true;
  result.setAttribute("aria-busy", "true");
  let answer;
  try {
    // A tool that may run as a task runs as one: followed below, cancellable.
    answer = await api("POST", path, args, tool.task ? { prefer: "respond-async" } : {});
  } finally {
    run.disabled = false;
    result.removeAttribute("aria-busy");
  }
  if (answer.status === 202 && answer.body?.id) {
    followTask(tool, args, answer.body, result);
    return;
  }
  const error = answer.body?.error;
  if (error?.type === "confirmation_required" && error.details?.token) {
    confirm(error.details, (yes) => {
      if (yes) submit(tool, args, view, error.details.token);
      else result.replaceChildren(h("div", { class: "result" }, h("p", { text: "Cancelled: nothing was done." })));
    });
    return;
  }
  if (error?.type === "invalid_arguments") showViolations(error.details?.violations ?? [], fields, general);
  result.replaceChildren(renderEnvelope(tool, args, answer));
}

/**
 * Shows the task `task` of a call of `tool` in `result` until it ends: its status, a Cancel
 * button, a form for each question it waits on; then the call's result, as a call's.
 */
async function followTask(tool, args, task, result) {
  const status = h("p", { class: "task-status", role: "status" });
  const questions = h("div", { class: "task-questions" });
  const cancel = h("button", { type: "button", class: "danger", text: "Cancel task",
    onclick: async () => {
      cancel.disabled = true;
      await api("DELETE", `/tasks/${encodeURIComponent(task.id)}`);
    } });
  const panel = h("div", { class: "result task", "data-task": task.id },
    h("h3", { text: "Task" }), status, questions, h("div", { class: "row" }, cancel));
  result.replaceChildren(panel);
  const started = performance.now();
  let asked = "";
  for (;;) {
    status.textContent = `${task.id}: ${task.status.replaceAll("_", " ")}`;
    status.dataset.status = task.status;
    const keys = Object.keys(task.questions ?? {}).sort().join(",");
    if (task.status === "input_required" && keys !== asked) {
      asked = keys;
      questions.replaceChildren(...Object.entries(task.questions).map(([key, question]) => answerForm(task.id, key, question)));
    } else if (task.status !== "input_required") {
      asked = "";
      questions.replaceChildren();
    }
    if (["completed", "failed", "cancelled"].includes(task.status)) break;
    await new Promise((resolve) => setTimeout(resolve, Math.max(200, task.poll_interval_ms ?? 500)));
    const read = await api("GET", `/tasks/${encodeURIComponent(task.id)}`);
    if (read.status !== 200 || !read.body?.id) {
      status.textContent = `${task.id}: ${read.failure ?? read.body?.error?.message ?? `HTTP ${read.status}`}`;
      return;
    }
    task = read.body;
  }
  cancel.remove();
  if (task.outcome) {
    panel.after(renderEnvelope(tool, args, { status: 200, body: task.outcome, ms: performance.now() - started }));
  }
}

/** A form answering the question `key` of the task `id` (an elicitation: its requested schema). */
function answerForm(id, key, question) {
  const params = question.params ?? {};
  const fields = new Map();
  const form = objectControl(params.requestedSchema ?? {}, "", fields);
  // Buttons, not a form of its own: it sits inside the tool's form.
  const send = (action) => async () => {
    const answer = action === "accept" ? { action, content: form.get() } : { action };
    await api("POST", `/tasks/${encodeURIComponent(id)}/input`, { [key]: answer });
  };
  if (question.method !== "elicitation/create") {
    return h("p", { class: "hint", text: `${key}: the task asks for ${question.method}, which the console cannot answer` });
  }
  return h("div", { class: "task-question", "data-question": key },
    h("p", { text: params.message ?? key }), form.el,
    h("div", { class: "row" }, h("button", { type: "button", class: "primary", text: "Answer", onclick: send("accept") }),
      h("button", { type: "button", text: "Decline", onclick: send("decline") })));
}

function confirm(details, answer) {
  const dialog = $("#confirm");
  $("#confirm-question").textContent = details.question ?? "Run this destructive call?";
  const preview = $("#confirm-preview");
  preview.replaceChildren();
  if (details.preview !== undefined && details.preview !== null) {
    preview.append(h("p", { class: "hint", text: "Dry-run preview:" }), renderValue(details.preview));
  }
  const done = (yes) => {
    dialog.close();
    $("#confirm-yes").onclick = null;
    $("#confirm-cancel").onclick = null;
    dialog.oncancel = null;
    answer(yes);
  };
  $("#confirm-yes").onclick = () => done(true);
  $("#confirm-cancel").onclick = () => done(false);
  dialog.oncancel = (event) => { event.preventDefault(); done(false); };
  dialog.showModal();
  $("#confirm-cancel").focus();
}

function shellQuote(text) {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function renderEnvelope(tool, args, answer) {
  const envelope = answer.body ?? {};
  const ok = envelope.status === "ok";
  const meta = envelope.meta ?? {};
  const body = JSON.stringify(args);
  const curl = `curl -s -X POST ${shellQuote(`${location.origin}/tools/${tool.name}`)} -H 'content-type: application/json'`
    + (token() ? " -H \"authorization: Bearer $TOKEN\"" : "") + ` -d ${shellQuote(body)}`;
  // The tool's own subcommand (`device_add` → `device-add`), which every app has.
  const command = `${state.who?.name ?? "app"} ${tool.name.replaceAll("_", "-")} --params-json ${shellQuote(body)}`;
  const copy = (label, text) => h("button", { type: "button", text: label,
    onclick: (event) => navigator.clipboard?.writeText(text).then(() => { event.target.textContent = "Copied"; }, () => {}) });
  return h("div", { class: `result ${ok ? "ok" : "error"}` },
    h("h3", { text: ok ? "Result" : envelope.error?.type ?? (answer.failure ? "No answer" : `HTTP ${answer.status}`) }),
    h("p", { class: "meta", text: `request ${meta.request_id ?? "?"} · ${meta.duration_ms ?? Math.round(answer.ms)} ms · ${answer.failure ? "no answer" : `HTTP ${answer.status}`}` }),
    ok ? renderValue(envelope.result) : h("p", { class: "error-message", role: "alert", text: envelope.error?.message ?? answer.failure ?? "no answer" }),
    h("details", {}, h("summary", { text: "Raw envelope" }), h("pre", { text: JSON.stringify(envelope, null, 2) })),
    h("details", {}, h("summary", { text: "As a command" }),
      h("pre", { class: "curl", text: curl }), h("pre", { class: "command", text: command }),
      h("div", { class: "row" }, copy("Copy as curl", curl), copy("Copy as command line", command))));
}

const isPlainObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** A value as a readable tree: objects as term lists, arrays of objects as tables. */
function renderValue(value) {
  if (value === null || value === undefined) return h("span", { class: "null", text: "null" });
  if (Array.isArray(value)) {
    if (value.length === 0) return h("span", { class: "null", text: "(none)" });
    if (value.every(isPlainObject)) {
      const keys = [...new Set(value.flatMap(Object.keys))];
      return h("table", {}, h("thead", {}, h("tr", {}, keys.map((k) => h("th", { scope: "col", text: k })))),
        h("tbody", {}, value.map((row) => h("tr", {}, keys.map((k) => h("td", {}, renderValue(row[k])))))));
    }
    return h("ul", {}, value.map((v) => h("li", {}, renderValue(v))));
  }
  if (isPlainObject(value)) {
    return h("dl", { class: "tree" }, Object.entries(value).flatMap(([k, v]) => [h("dt", { text: k }), h("dd", {}, renderValue(v))]));
  }
  return h("span", { text: String(value) });
}

// ---- resources and prompts ------------------------------------------------------------------

/** The resources, templates and prompts the caller may see; their tabs only when there are some. */
function showItems(resources, prompts) {
  state.resources = resources.resources ?? [];
  state.templates = resources.templates ?? [];
  state.prompts = prompts.prompts ?? [];
  $("#tab-resources").hidden = !(state.resources.length || state.templates.length);
  $("#tab-prompts").hidden = !state.prompts.length;
  const chosen = document.querySelector('[role="tab"][aria-selected="true"]');
  if (chosen?.hidden) select($("#tab-tools"));
  const item = (attrs, label, badge) => h("li", {}, h("button", { type: "button", ...attrs }, label,
    badge ? h("span", { class: "badge", text: badge }) : null));
  const section = (title, items) => (items.length ? h("section", {}, h("h3", { text: title }), h("ul", {}, items)) : null);
  $("#resources").replaceChildren(...[
    section("Resources", state.resources.map((r) => item({ "data-resource": r.uri, onclick: () => showResource(r) }, r.title || r.name, r.mimeType))),
    section("Templates", state.templates.map((t) => item({ "data-template": t.uriTemplate, onclick: () => showTemplate(t) }, t.title || t.name, t.mimeType))),
  ].filter(Boolean));
  $("#prompts").replaceChildren(...[
    section("Prompts", state.prompts.map((p) => item({ "data-prompt": p.name, onclick: () => showPrompt(p) }, p.title || p.name))),
  ].filter(Boolean));
  $("#resource").replaceChildren(h("p", { class: "hint", text: "Choose a resource." }));
  $("#prompt").replaceChildren(h("p", { class: "hint", text: "Choose a prompt." }));
}

/** Marks the list's button for what is shown. */
function current(list, attr, value) {
  for (const b of document.querySelectorAll(`${list} button`)) b.setAttribute("aria-current", String(b.getAttribute(attr) === value));
}

/**
 * A field for one string argument, registered in `fields` under `/name`; its suggestions are
 * what `suggest(name, typed)` answers (the server's completions) as the user types.
 */
function stringField(name, description, required, fields, suggest) {
  const id = `f${++nextId}`;
  const input = h("input", { id, name, type: "text", autocomplete: "off", list: `${id}-values`, "aria-describedby": `${id}-hint ${id}-error` });
  const values = h("datalist", { id: `${id}-values` });
  input.addEventListener("input", async () => {
    const answer = await suggest(name, input.value);
    values.replaceChildren(...(answer.body?.completion?.values ?? []).map((v) => h("option", { value: v })));
  });
  const violation = h("p", { class: "violation", id: `${id}-error`, role: "alert" });
  fields.set(`/${name}`, { input, violation });
  const hint = [description, required ? "required" : "optional"].filter(Boolean).join(" · ");
  return h("div", { class: "field", "data-pointer": `/${name}` },
    h("label", { for: id, text: name }), input, values, h("p", { class: "hint", id: `${id}-hint`, text: hint }), violation);
}

/** The non-empty values of `fields`, by name. */
function valuesOf(fields) {
  const out = {};
  for (const [pointer, { input }] of fields) if (input.value !== "") out[pointer.slice(1)] = input.value;
  return out;
}

/** The answer of a request that failed, said in the page. */
function failed(answer) {
  const error = answer.body?.error;
  return h("div", { class: "result error" },
    h("h3", { text: error?.type ?? (answer.failure ? "No answer" : `HTTP ${answer.status}`) }),
    h("p", { class: "error-message", role: "alert", text: error?.message ?? answer.failure ?? "no answer" }));
}

function bytesOf(base64) {
  const raw = atob(base64);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

/** One resource's contents: text as text, an image shown, other bytes as a download. */
function renderContents(c) {
  const mime = c.mimeType ?? (typeof c.text === "string" ? "text/plain" : "application/octet-stream");
  const head = h("p", { class: "meta", text: `${c.uri} · ${mime}` });
  if (typeof c.text === "string") return h("div", { class: "contents" }, head, h("pre", { class: "resource-text", text: c.text }));
  if (typeof c.blob !== "string") return h("div", { class: "contents" }, head);
  if (mime.startsWith("image/")) {
    return h("div", { class: "contents" }, head, h("img", { class: "resource-image", alt: c.uri, src: `data:${mime};base64,${c.blob}` }));
  }
  const bytes = bytesOf(c.blob);
  const name = c.uri.split(/[/:]/).filter(Boolean).pop() || "resource";
  const url = URL.createObjectURL(new Blob([bytes], { type: mime }));
  return h("div", { class: "contents" }, head,
    h("a", { class: "download", href: url, download: name, text: `Download ${name} (${bytes.length} bytes)` }));
}

/** Reads `uri` into `view.result`; refused template values go beside their fields. */
async function readResource(uri, view) {
  view.result.setAttribute("aria-busy", "true");
  if (view.fields) clearViolations(view.fields, view.general);
  const answer = await api("GET", `/resources/read?uri=${encodeURIComponent(uri)}&format=json`);
  view.result.removeAttribute("aria-busy");
  const error = answer.body?.error;
  if (error?.type === "invalid_arguments" && view.fields) showViolations(error.details?.violations ?? [], view.fields, view.general);
  if (answer.status !== 200) {
    view.result.replaceChildren(failed(answer));
    return;
  }
  view.result.replaceChildren(h("div", { class: "result ok" }, h("h3", { text: uri }), answer.body.contents.map(renderContents)));
}

function showResource(resource) {
  current("#resources", "data-resource", resource.uri);
  const result = h("div", { class: "result-area" });
  $("#resource").replaceChildren(h("h2", { text: resource.title || resource.name }),
    h("p", { class: "hint", text: resource.uri }),
    resource.description ? h("p", { text: resource.description }) : null, result);
  readResource(resource.uri, { result });
}

/** A template's variables: `{name}`, `{name*}` and each of `{?a,b}`. */
function variablesOf(template) {
  return [...template.matchAll(/\{(\?)?([^}]*)\}/g)].flatMap(([, query, names]) =>
    query ? names.split(",").map((name) => ({ name, query: true })) : [{ name: names.replace(/\*$/, ""), query: false }]);
}

/** The URI `template` makes of `values`: each value percent-encoded (a `{name*}` keeps its `/`). */
function expand(template, values) {
  return template.replace(/\{(\?)?([^}]*)\}/g, (_, query, names) => {
    if (query) {
      const given = names.split(",").filter((n) => values[n] !== undefined);
      return given.length ? `?${given.map((n) => `${n}=${encodeURIComponent(values[n])}`).join("&")}` : "";
    }
    const rest = names.endsWith("*");
    const value = values[rest ? names.slice(0, -1) : names] ?? "";
    return rest ? value.split("/").map(encodeURIComponent).join("/") : encodeURIComponent(value);
  });
}

function showTemplate(template) {
  current("#resources", "data-template", template.uriTemplate);
  const fields = new Map();
  const suggest = (name, value) => api("POST", "/complete", {
    ref: { type: "ref/resource", uri: template.uriTemplate }, argument: { name, value },
    context: { arguments: valuesOf(fields) } });
  const inputs = variablesOf(template.uriTemplate).map((v) => stringField(v.name, "", !v.query, fields, suggest));
  const general = h("div", { class: "violation general", role: "alert" });
  const result = h("div", { class: "result-area" });
  const form = h("form", { novalidate: true, "aria-label": template.name, onsubmit: (event) => {
    event.preventDefault();
    readResource(expand(template.uriTemplate, valuesOf(fields)), { result, fields, general });
  } }, inputs, general, h("div", { class: "row" }, h("button", { type: "submit", class: "primary", text: "Read" })), result);
  $("#resource").replaceChildren(h("h2", { text: template.title || template.name }),
    h("p", { class: "hint", text: template.uriTemplate }),
    template.description ? h("p", { text: template.description }) : null, form);
}

/** A prompt message's content: text, an image, an embedded resource, a link. */
function renderContent(c) {
  if (c.type === "text") return h("pre", { class: "message-text", text: c.text });
  if (c.type === "image") return h("img", { class: "resource-image", alt: "image", src: `data:${c.mimeType};base64,${c.data}` });
  if (c.type === "resource") return renderContents(c.resource);
  if (c.type === "resource_link") return h("p", { text: `${c.name}: ${c.uri}` });
  return h("p", { class: "hint", text: `[${c.type} ${c.mimeType ?? ""}]` });
}

function showPrompt(prompt) {
  current("#prompts", "data-prompt", prompt.name);
  const fields = new Map();
  const suggest = (name, value) => api("POST", "/complete", {
    ref: { type: "ref/prompt", name: prompt.name }, argument: { name, value },
    context: { arguments: valuesOf(fields) } });
  const inputs = prompt.arguments.map((a) => stringField(a.name, a.description, a.required, fields, suggest));
  const general = h("div", { class: "violation general", role: "alert" });
  const result = h("div", { class: "result-area" });
  const run = h("button", { type: "submit", class: "primary", text: "Get messages" });
  const form = h("form", { novalidate: true, "aria-label": prompt.name, onsubmit: async (event) => {
    event.preventDefault();
    clearViolations(fields, general);
    run.disabled = true;
    result.setAttribute("aria-busy", "true");
    let answer;
    try {
      answer = await api("POST", `/prompts/${encodeURIComponent(prompt.name)}`, valuesOf(fields));
    } finally {
      run.disabled = false;
      result.removeAttribute("aria-busy");
    }
    const error = answer.body?.error;
    if (error?.type === "invalid_arguments") showViolations(error.details?.violations ?? [], fields, general);
    if (answer.status !== 200) {
      result.replaceChildren(failed(answer));
      return;
    }
    result.replaceChildren(h("div", { class: "result ok" }, h("h3", { text: "Messages" }),
      answer.body.description ? h("p", { class: "hint", text: answer.body.description }) : null,
      answer.body.messages.map((m) => h("div", { class: "message", "data-role": m.role },
        h("h4", { text: m.role }), renderContent(m.content)))));
  } }, inputs, general, h("div", { class: "row" }, run), result);
  $("#prompt").replaceChildren(h("h2", { text: prompt.title || prompt.name }),
    h("p", { class: "hint", text: prompt.name }),
    prompt.description ? h("p", { text: prompt.description }) : null, form);
}

// ---- activity -------------------------------------------------------------------------------

async function loadActivity() {
  const tool = $("#activity-tool").value;
  const answer = await api("GET", `/audit?limit=50${tool ? `&tool=${encodeURIComponent(tool)}` : ""}`);
  const area = $("#activity");
  if (answer.status !== 200) {
    area.replaceChildren(h("p", { class: "violation", role: "alert", text: answer.failure ?? answer.body?.error?.message ?? `HTTP ${answer.status}` }));
    return;
  }
  const calls = answer.body.calls;
  if (!calls.length) {
    area.replaceChildren(h("p", { class: "hint", text: "No calls yet." }));
    return;
  }
  area.replaceChildren(h("table", { class: "activity" },
    h("thead", {}, h("tr", {}, ["time", "tool", "source", "principal", "outcome", "ms", "request", "trace"].map((c) => h("th", { scope: "col", text: c })))),
    h("tbody", {}, calls.map((c) => h("tr", {},
      h("td", { text: new Date(c.time * 1000).toLocaleString() }), h("td", { text: c.tool }), h("td", { text: c.source }),
      h("td", { text: c.principal ?? "" }), h("td", { text: c.outcome }), h("td", { text: c.duration_ms?.toFixed(1) ?? "" }),
      h("td", { text: c.request_id }), h("td", { text: c.trace_id ?? "" }))))));
}

// ---- chat -----------------------------------------------------------------------------------

let history = [];

/**
 * Sends the message as an agent run and shows its events as they stream. Send stays disabled
 * until the run ends, fails or its answer breaks off; every failure is said in the log.
 */
async function sendChat() {
  const input = $("#chat-input");
  const send = $("#chat-form button[type=submit]");
  const prompt = input.value.trim();
  if (!prompt || send.disabled) return;
  input.value = "";
  const log = $("#chat-log");
  log.append(h("div", { class: "msg user", text: prompt }));
  send.disabled = true;
  log.setAttribute("aria-busy", "true");
  try {
    await runAgent(prompt, log);
  } finally {
    send.disabled = false;
    log.removeAttribute("aria-busy");
  }
}

async function runAgent(prompt, log) {
  const problem = (text) => log.append(h("div", { class: "msg violation", role: "alert", text }));
  const headers = { "content-type": "application/json", accept: "text/event-stream" };
  if (token()) headers.authorization = `Bearer ${token()}`;
  let response;
  try {
    response = await fetch("/agent", { method: "POST", headers, body: JSON.stringify({ prompt, history }) });
  } catch {
    problem(UNREACHABLE);
    return;
  }
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    problem(body?.error?.message ?? `HTTP ${response.status}`);
    return;
  }
  const show = { reply: null, calls: new Map(), finished: false };
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch {
      problem("The answer broke off: the connection to the server was lost.");
      return;
    }
    if (chunk.done) break;
    buffer += decoder.decode(chunk.value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trimStart();
      }
      if (!data) continue;
      let event;
      try {
        event = JSON.parse(data);
      } catch {
        problem(`The server sent a ${name} event that could not be read; it is left out.`);
        continue;
      }
      showEvent(name, event, log, show, problem);
    }
  }
  if (!show.finished) problem("The run ended before it finished: its answer may be incomplete.");
}

/** One event of an agent run, shown in the log. */
function showEvent(name, event, log, show, problem) {
  if (name === "text_delta") {
    if (!show.reply) { show.reply = h("div", { class: "msg assistant" }); log.append(show.reply); }
    show.reply.textContent += event.text;
  } else if (name === "tool_call_started") {
    show.reply = null;
    const item = h("div", { class: "call", "data-call": event.id }, h("strong", { text: `→ ${event.name}` }), " ", h("code", { text: event.arguments }));
    show.calls.set(event.id, { item, name: event.name, arguments: event.arguments });
    log.append(item);
  } else if (name === "tool_call_finished") {
    const call = show.calls.get(event.result.call_id);
    const item = call?.item ?? log.appendChild(h("div", { class: "call" }));
    const content = event.result.content;
    item.append(h("div", {}, event.result.is_error ? `✗ ${content?.type ?? "error"}: ${content?.message ?? ""}` : "✓ done", renderValue(event.result.is_error ? null : content)));
    if (["confirmation_required", "confirmation_declined"].includes(content?.type)) {
      const tool = state.tools.find((t) => t.name === event.result.name);
      if (tool && call) {
        // The run went on without it; the user can make the same call here, confirming it.
        item.append(h("button", { type: "button", class: "danger", text: `Review and confirm ${tool.name}`, onclick: () => {
          select($("#tab-tools"));
          showTool(tool, JSON.parse(call.arguments || "{}"));
        } }));
      }
    }
  } else if (name === "refused") {
    problem(`refused: ${event.refusal?.message ?? ""}`);
  } else if (name === "finished") {
    show.finished = true;
    if (event.stop !== "answered" && event.error) problem(event.error);
  } else if (name === "transcript") {
    history = event.messages ?? history;
  }
}

start();
