/**
 * WebMCP runtime (django-webmcp): the only code on the site that touches `document.modelContext`.
 *
 * Tracks the WebMCP draft of 2026-10-02: `document.modelContext` only (no `navigator.modelContext`),
 * `registerTool(tool, {signal})` with one AbortSignal per registration (aborting it unregisters),
 * annotations readOnlyHint, untrustedContentHint, consequentialHint, debugging; `outputSchema` where
 * the browser reads it.
 *
 * The server renders the page's manifest into <script id="webmcp-manifest"> ({% webmcp_tools %}):
 *   {fingerprint, route, stateVersion, answers, texts, tools: [{name, title?, description,
 *    inputSchema, annotations?, binding: "input" | "route", method, endpoint: "/x/{id}/",
 *    routeValues?, confirm?}]}
 *
 * - Every tool is registered imperatively, each with its own AbortController (aborting is the only way
 *   to unregister), so the agent sees the whole contract: annotations, maxLength, enums and
 *   additionalProperties. The registered set follows the manifest on load, after every swap and after
 *   a back/forward-cache restore: removed or changed tools are aborted, new ones added.
 * - One call is one request. The tool's endpoint is the page route a person's form uses (or a JSON
 *   endpoint for a read that shows nothing). A page route answers with the page's refreshed live
 *   region ([data-webmcp-region], which holds the manifest) and the result as a JSON island
 *   (#webmcp-result): the region is swapped in before the call answers, so `uiUpdated: true` is a
 *   fact. A JSON answer (a refusal, or a read) leaves the page as it is.
 * - A `confirm` tool asks the person first: the form marked `data-webmcp-confirm` for it (and, for a
 *   tool that takes an id, the one whose `data-webmcp-values` match the input) is highlighted and its
 *   button focused; the request is sent only when the person presses it. Resetting the form or
 *   pressing "not now" declines: the call answers USER_CANCELLED and nothing is sent.
 * - A tool never throws: every call resolves to an envelope {ok, code, reason, message, nextAction,
 *   retryable, uiUpdated, stateVersion}; the ones this module gives itself are the manifest's
 *   `answers` (written in the registry, like every other word an agent reads). The browser does not validate imperative input, so the
 *   server does; this module only routes it: path parameters into the URL, the rest into the query
 *   string (GET) or a JSON body, unchanged, so the server sees and refuses anything wrong. Only a call
 *   that must wait for the person is checked here first (against its schema), so nobody is asked to
 *   confirm what the server would refuse.
 * - Chromium cancels a pending call whose tool disappears, so a tool with a call in flight keeps its
 *   registration until that call has answered.
 */

const REGION = "[data-webmcp-region]";
const RESULT_ID = "webmcp-result";
const EMPTY_MANIFEST = Object.freeze({ tools: [], stateVersion: 0, answers: {}, texts: {} });
const modelContext = document.modelContext;
const canRegister = typeof modelContext?.registerTool === "function";
const registered = new Map(); // tool name -> {controller, signature}
const running = new Map(); // tool name -> number of calls in flight
const pending = new Map(); // form -> {finish(boolean)} while a person is asked to confirm
let manifest = EMPTY_MANIFEST;
let outputSchemaRead = false; // whether this browser read a tool's outputSchema at registration

function readManifest() {
  const node = document.getElementById("webmcp-manifest");
  try {
    const data = node ? JSON.parse(node.textContent) : null;
    return data && Array.isArray(data.tools) ? data : EMPTY_MANIFEST;
  } catch (error) {
    console.warn("webmcp: unreadable manifest", error);
    return EMPTY_MANIFEST;
  }
}

/** Make the registered tools equal to the manifest's (idempotent). A tool with a call in flight is
 * left alone until that call has answered; `settle` runs sync again then. */
function sync() {
  manifest = readManifest();
  if (!canRegister) return;
  const wanted = new Map(manifest.tools.map((tool) => [tool.name, tool]));
  for (const [name, entry] of registered) {
    const tool = wanted.get(name);
    if ((tool && JSON.stringify(tool) === entry.signature) || running.has(name)) continue;
    entry.controller.abort();
    registered.delete(name);
  }
  for (const [name, tool] of wanted) {
    if (!registered.has(name)) register(tool);
  }
}

function register(tool) {
  const controller = new AbortController();
  registered.set(tool.name, { controller, signature: JSON.stringify(tool) });
  const definition = {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    execute: (input, options) => settle(tool.name, () => execute(tool, input, options?.signal)),
  };
  if (tool.title) definition.title = tool.title;
  if (tool.annotations) definition.annotations = tool.annotations;
  if (tool.outputSchema) {
    // Read only by a browser whose registerTool knows `outputSchema` (a WebIDL dictionary reads the
    // members it defines and no others), so the schema reaches only the browsers that support it.
    Object.defineProperty(definition, "outputSchema", {
      enumerable: true,
      get() {
        outputSchemaRead = true;
        return tool.outputSchema;
      },
    });
  }
  const forget = (error) => {
    console.warn(`webmcp: could not register ${tool.name}`, error);
    if (registered.get(tool.name)?.controller === controller) registered.delete(tool.name);
  };
  try {
    Promise.resolve(modelContext.registerTool(definition, { signal: controller.signal })).catch(forget);
  } catch (error) {
    forget(error);
  }
}

/** Run one call of `name`, then bring the tool set up to date once its answer is delivered. */
async function settle(name, work) {
  running.set(name, (running.get(name) ?? 0) + 1);
  try {
    return await work();
  } finally {
    if (running.get(name) === 1) running.delete(name);
    else running.set(name, running.get(name) - 1);
    setTimeout(sync, 0); // a later task: the browser has the answer by then
  }
}

// ---- envelopes -------------------------------------------------------------------------------

/** The envelope the manifest gives for `key` (`{name}` filled from `values`), with `extra` fields. */
function answer(key, values = {}, extra = {}) {
  const spec = manifest.answers?.[key] ?? { code: "TEMPORARY_FAILURE", reason: key, retryable: true };
  const fill = (text) => (text ?? "").replace(/\{(\w+)\}/g, (whole, name) => values[name] ?? whole);
  return {
    ok: false,
    code: spec.code,
    reason: spec.reason,
    message: fill(spec.message),
    nextAction: fill(spec.nextAction),
    retryable: Boolean(spec.retryable),
    uiUpdated: false,
    stateVersion: manifest.stateVersion,
    ...extra,
  };
}

/** No usable answer. For a write the outcome is unknown: retrying blindly could repeat it. */
function lost(method, error) {
  console.warn("webmcp: no usable answer", error);
  return answer(method === "GET" ? "unavailable" : "responseLost");
}

function invalidFields(fields) {
  return answer("invalidInput", { fields: Object.keys(fields).join(", ") }, { fields });
}

function isPlainObject(value) {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

// ---- one call --------------------------------------------------------------------------------

async function execute(tool, input, signal) {
  try {
    if (!isPlainObject(input)) {
      return answer("notAnObject");
    }
    const params = { ...input };
    if (tool.binding === "route") {
      for (const [key, value] of Object.entries(tool.routeValues ?? {})) {
        const given = params[key];
        if (given !== undefined && given !== null && given !== value) {
          return answer("routeMismatch", {
            param: key, expected: JSON.stringify(value), given: JSON.stringify(given), tool: tool.name,
          });
        }
        delete params[key];
      }
    }
    if (tool.confirm) {
      const refusal = await askThePerson(tool, params, signal);
      if (refusal) return refusal;
    }
    return await call(tool, params, signal);
  } catch (error) {
    return lost(tool.method, error);
  }
}

function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]')?.content;
  if (meta) return meta;
  const cookie = document.cookie.split("; ").find((part) => part.startsWith("csrftoken="));
  return cookie ? decodeURIComponent(cookie.slice("csrftoken=".length)) : "";
}

/** Fill the endpoint template (the page's routeValues first), then query string or JSON body. */
function buildRequest(tool, params) {
  const routeValues = tool.routeValues ?? {};
  const missing = [];
  const mistyped = [];
  let url = tool.endpoint.replace(/\{([^}]+)\}/g, (_, name) => {
    const value = Object.hasOwn(routeValues, name) ? routeValues[name] : params[name];
    delete params[name];
    if (value === undefined || value === null || value === "") {
      missing.push(name);
      return "";
    }
    // A path loses the JSON type, so only text or a number may stand in it (never an array).
    if (typeof value !== "string" && typeof value !== "number") {
      mistyped.push(name);
      return "";
    }
    const text = String(value);
    if (!text.isWellFormed()) {
      mistyped.push(name); // a lone surrogate cannot be sent in a URL
      return "";
    }
    return encodeURIComponent(text);
  });
  const headers = {
    Accept: "text/html, application/json",
    "X-Client-Mode": "agent",
    "X-WebMCP-Tool": tool.name,
    "X-WebMCP-Page": location.href, // the page whose region the answer redraws
  };
  const token = csrfToken();
  if (token) headers["X-CSRFToken"] = token;
  const rest = Object.entries(params).filter(([, value]) => value !== null && value !== undefined);
  let body;
  if (tool.method === "GET") {
    // A query string has no arrays or objects: sent as text they would pass for a string.
    for (const [key, value] of rest) if (typeof value === "object") mistyped.push(key);
    const query = new URLSearchParams(rest.map(([key, value]) => [key, String(value)])).toString();
    if (query) url += `?${query}`;
  } else if (rest.length) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(Object.fromEntries(rest));
  }
  return { url, headers, body, missing, mistyped };
}

/** Send the one request of this call; show the region it brings; return its result. */
async function call(tool, params, signal) {
  const request = buildRequest(tool, params);
  if (request.missing.length || request.mistyped.length) {
    const fields = Object.fromEntries([
      ...request.missing.map((name) => [name, ["This field is required."]]),
      ...request.mistyped.map((name) => [name, ["Give this field as text, not a list or an object."]]),
    ]);
    return invalidFields(fields);
  }
  let response;
  let text;
  try {
    response = await fetch(request.url, {
      method: tool.method,
      credentials: "same-origin",
      headers: request.headers,
      body: request.body,
      signal,
    });
    text = await response.text();
  } catch (error) {
    return lost(tool.method, error);
  }
  const type = response.headers.get("Content-Type") ?? "";
  if (type.includes("application/json")) {
    let body;
    try {
      body = JSON.parse(text);
    } catch (error) {
      return lost(tool.method, error);
    }
    return isPlainObject(body) ? { ...body, uiUpdated: false } : lost(tool.method, new TypeError("not an object"));
  }
  const page = new DOMParser().parseFromString(text, "text/html");
  const island = page.getElementById(RESULT_ID);
  let result;
  try {
    result = JSON.parse(island?.textContent ?? "");
  } catch (error) {
    return lost(tool.method, error);
  }
  if (!isPlainObject(result)) return lost(tool.method, new TypeError("no result in the answer"));
  const pushUrl = response.headers.get("HX-Push-Url");
  return { ...result, uiUpdated: showRegion(page, pushUrl) };
}

// ---- keeping the visible page in step ------------------------------------------------------

/**
 * Show what the answer brings: its live region in place of the page's, or, when it brings parts of
 * one (elements with an id, e.g. a form and a list), each in place of the page's element with that
 * id. True when the page now shows it. A plain replace plus `htmx.process` (for the new hx-
 * attributes) costs a few milliseconds; htmx's own swap would clean up every removed element first.
 */
function showRegion(answer, pushUrl) {
  const region = answer.querySelector(REGION);
  const parts = region ? [region] : [...answer.body.children].filter((node) => node.id && node.id !== RESULT_ID);
  let shown = parts.length > 0;
  for (const part of parts) {
    const before = part === region ? document.querySelector(REGION) : document.getElementById(part.id);
    if (!before) {
      shown = false;
      continue;
    }
    const fresh = document.importNode(part, true);
    try {
      before.replaceWith(fresh);
      window.htmx?.process(fresh);
    } catch (error) {
      console.warn("webmcp: could not show the answer", error);
      shown = false;
    }
  }
  if (shown) document.dispatchEvent(new CustomEvent("webmcp:shown")); // for the page's own scripts
  if (shown && pushUrl && pushUrl !== location.pathname + location.search) {
    // Marked as htmx's own entry: going back asks the server for that page again.
    history.pushState({ htmx: true }, "", pushUrl);
  }
  sync();
  return shown;
}

// ---- asking the person -----------------------------------------------------------------------

function phrase(key, fallback) {
  return manifest.texts?.[key] ?? fallback;
}

/** Null when the person pressed the form's button; otherwise the envelope that ends the call. */
async function askThePerson(tool, params, signal) {
  const problems = schemaProblems(tool.inputSchema, params);
  if (problems) return invalidFields(problems);
  const form = [...document.querySelectorAll("form[data-webmcp-confirm]")].find(
    (candidate) => candidate.dataset.webmcpConfirm === tool.name && valuesMatch(candidate, params),
  );
  if (!form) {
    return answer("notOnPage");
  }
  if (pending.has(form)) {
    return answer("busy");
  }
  const pressed = await waitForPress(form, signal);
  if (pressed) return null;
  return answer("declined");
}

function valuesMatch(form, params) {
  let values = {};
  try {
    values = JSON.parse(form.dataset.webmcpValues || "{}");
  } catch (error) {
    return false;
  }
  return Object.entries(values).every(([key, value]) => params[key] === value);
}

/** Highlight `form`, focus its button and wait: true when pressed, false when declined or aborted. */
function waitForPress(form, signal) {
  return new Promise((resolve) => {
    const prompt = document.createElement("p");
    prompt.className = "webmcp-confirm";
    prompt.setAttribute("role", "status");
    prompt.textContent = `${phrase("confirm", "An assistant asks to do this for you. Press the button to confirm.")} `;
    const decline = document.createElement("button");
    decline.type = "reset";
    decline.className = "link-button";
    decline.textContent = phrase("decline", "Not now");
    prompt.append(decline);
    const finish = (pressed) => {
      pending.delete(form);
      form.removeEventListener("reset", onReset);
      signal?.removeEventListener("abort", onAbort);
      delete form.dataset.webmcpPending;
      prompt.remove();
      resolve(pressed);
    };
    const onReset = () => finish(false);
    const onAbort = () => finish(false);
    pending.set(form, { finish });
    form.addEventListener("reset", onReset);
    signal?.addEventListener("abort", onAbort);
    form.dataset.webmcpPending = "";
    form.prepend(prompt);
    const button = form.querySelector('button[type="submit"], button:not([type]), input[type="submit"]');
    button?.scrollIntoView({ block: "center" });
    button?.focus();
  });
}

// The person's press of a form waiting for them: the pending call sends its request instead of the
// form's own submit (capture phase on document runs before htmx's listener and before navigation).
document.addEventListener(
  "submit",
  (event) => {
    const waiting = pending.get(event.target);
    if (!waiting || !event.isTrusted) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    waiting.finish(true);
  },
  true,
);

/** The input's problems against the subset of JSON Schema the registry generates; null when none. */
function schemaProblems(schema, input) {
  const problems = {};
  const properties = schema?.properties ?? {};
  for (const name of schema?.required ?? []) {
    if (input[name] === undefined || input[name] === null) problems[name] = ["This field is required."];
  }
  for (const [name, value] of Object.entries(input)) {
    const spec = properties[name];
    if (!spec) {
      if (schema?.additionalProperties === false) problems[name] = ["This parameter is not accepted."];
      continue;
    }
    if (value === null || value === undefined) continue;
    if (spec.type === "string") {
      if (typeof value !== "string") problems[name] = ["Give this field as a string."];
      else if (spec.maxLength !== undefined && value.length > spec.maxLength) {
        problems[name] = [`At most ${spec.maxLength} characters.`];
      } else if (spec.minLength !== undefined && value.length < spec.minLength) {
        problems[name] = [`At least ${spec.minLength} characters.`];
      } else if (spec.pattern && !matches(spec.pattern, value)) {
        problems[name] = ["This value does not have the expected form."];
      }
    }
    if (spec.enum && !spec.enum.includes(value)) problems[name] = ["This value is not one of the choices."];
  }
  return Object.keys(problems).length ? problems : null;
}

function matches(pattern, value) {
  try {
    return new RegExp(pattern, "u").test(value);
  } catch (error) {
    return true; // a pattern this engine cannot read: the server decides
  }
}

// htmx events bubble from the swapped element through body to document.
document.addEventListener("htmx:afterSettle", () => sync());
window.addEventListener("pageshow", (event) => {
  if (event.persisted) sync();
});
sync();

window.__webmcpRuntime = Object.freeze({
  sync,
  registeredNames: () => [...registered.keys()].sort(),
  readsOutputSchema: () => outputSchemaRead,
});
