/**
 * WebMCP runtime: the only code on the site that touches `document.modelContext`.
 *
 * The server renders the page's manifest into <script id="webmcp-manifest"> ({% webmcp_tools %}):
 *   {fingerprint, route, stateVersion, reasons, tools: [{name, title?, description, inputSchema,
 *    annotations?, binding: "input" | "route" | "form", method, endpoint: "/api/x/{id}",
 *    routeValues?, autosubmit?}]}
 *
 * - "input" and "route" tools are registered here, each with its own AbortController (aborting is
 *   the only way to unregister). The registered set follows the manifest on load, after every htmx
 *   swap and after a back/forward-cache restore: removed or changed tools are aborted, new ones added.
 * - "form" tools are the page's <form toolname=…>; the browser registers those itself, and this
 *   module answers their agent-invoked submits through `event.respondWith()`.
 * - A tool never throws: every call resolves to an envelope {ok, code, reason, message, nextAction,
 *   retryable, uiUpdated, stateVersion}. The browser does not validate imperative input, so the
 *   server does; this module only routes the input: path parameters into the URL, the rest into the
 *   query string (GET) or a JSON body, unchanged, so the server sees and refuses anything wrong.
 * - After a write that changed the visitor's state, the live region ([data-webmcp-region], which
 *   holds the manifest) is re-rendered from the server, so the page and its tools follow at once.
 *   Chromium cancels a pending call whose tool disappears, so nothing that would remove the tool
 *   being called (aborting it, or replacing its form) happens before its answer is delivered.
 */

const REGION = "[data-webmcp-region]";
const EMPTY_MANIFEST = Object.freeze({ tools: [], stateVersion: 0, reasons: {} });
const modelContext = document.modelContext;
const canRegister = typeof modelContext?.registerTool === "function";
const registered = new Map(); // tool name -> {controller, signature}
const running = new Map(); // tool name -> number of calls in flight
let manifest = EMPTY_MANIFEST;

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

/** Make the registered imperative tools equal to the manifest's (idempotent). A tool with a call
 * in flight is left alone until that call has answered; `settle` runs sync again then. */
function sync() {
  manifest = readManifest();
  if (!canRegister) return;
  const wanted = new Map(
    manifest.tools.filter((tool) => tool.binding !== "form").map((tool) => [tool.name, tool]),
  );
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

function failure(code, reason, message, nextAction, { retryable = false, ...extra } = {}) {
  const { stateVersion } = manifest;
  return { ok: false, code, reason, message, nextAction, retryable, uiUpdated: false, stateVersion, ...extra };
}

function invalid(message, nextAction, extra = {}) {
  return failure("INVALID_INPUT", "VALIDATION_ERROR", message, nextAction, extra);
}

/** No usable answer. For a write the outcome is unknown: retrying blindly could repeat it. */
function lost(method, error) {
  console.warn("webmcp: no usable answer", error);
  if (method === "GET") {
    return failure("TEMPORARY_FAILURE", manifest.reasons?.unavailable ?? "SERVICE_UNAVAILABLE",
      "The service did not give a usable answer.",
      "Retry later; do not report this as an empty result.", { retryable: true });
  }
  return failure("UNKNOWN_OUTCOME", "RESPONSE_LOST",
    "The request was sent but its answer was lost: it may or may not have taken effect.",
    "Check the current state (read it again) before retrying; do not assume it failed.");
}

function isPlainObject(value) {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

// ---- the request path shared by imperative tools and declarative forms -----------------------

/** Imperative `execute`: check the input's shape and the page's object, then call the endpoint. */
async function execute(tool, input, signal) {
  try {
    if (!isPlainObject(input)) {
      return invalid("The input must be a JSON object.", "Call the tool again with a JSON object.");
    }
    const params = { ...input };
    if (tool.binding === "route") {
      for (const [key, value] of Object.entries(tool.routeValues ?? {})) {
        const given = params[key];
        if (given !== undefined && given !== null && given !== value) {
          return failure("INVALID_INPUT", manifest.reasons?.routeMismatch ?? "ROUTE_OBJECT_MISMATCH",
            `This page is about another object (${key} ${JSON.stringify(value)}, not ${JSON.stringify(given)}).`,
            `Call ${tool.name} with {} to act on this page's object, or open the page of ` +
              `${JSON.stringify(given)} and call ${tool.name} there.`);
        }
        delete params[key];
      }
    }
    return await call(tool, params, { signal });
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
  const headers = { Accept: "application/json", "X-Client-Mode": "agent" };
  const token = csrfToken();
  if (token) headers["X-CSRFToken"] = token;
  const rest = Object.entries(params).filter(([, value]) => value !== null && value !== undefined);
  let body;
  if (tool.method === "GET") {
    const query = new URLSearchParams(
      rest.map(([key, value]) => [key, typeof value === "object" ? JSON.stringify(value) : String(value)]),
    ).toString();
    if (query) url += `?${query}`;
  } else if (rest.length) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(Object.fromEntries(rest));
  }
  return { url, headers, body, missing, mistyped };
}

/**
 * Call the endpoint and return the server's envelope with `uiUpdated` set. After a write that
 * changed the state the region is refreshed: at once for an imperative tool; for a form (which the
 * refresh replaces, cancelling its pending call) right after the answer, once the fresh page is in.
 */
async function call(tool, params, { signal, afterAnswer = false } = {}) {
  const request = buildRequest(tool, params);
  if (request.missing.length || request.mistyped.length) {
    const fields = Object.fromEntries([
      ...request.missing.map((name) => [name, ["This field is required."]]),
      ...request.mistyped.map((name) => [name, ["Give this field as a string."]]),
    ]);
    return invalid(`Missing or mistyped: ${Object.keys(fields).join(", ")}.`,
      "Call the tool again with every required field, as the schema describes it.", { fields });
  }
  let body;
  try {
    const response = await fetch(request.url, {
      method: tool.method,
      credentials: "same-origin",
      headers: request.headers,
      body: request.body,
      signal,
    });
    body = await response.json();
  } catch (error) {
    return lost(tool.method, error);
  }
  if (!isPlainObject(body)) return lost(tool.method, new TypeError("The answer is not a JSON object."));
  const result = { ...body, uiUpdated: false };
  if (tool.method !== "GET" && body.ok === true && body.stateVersion !== manifest.stateVersion) {
    const show = await freshRegion();
    if (show && afterAnswer) {
      setTimeout(show, 0);
      result.uiUpdated = true;
    } else if (show) {
      result.uiUpdated = show();
    }
  }
  return result;
}

// ---- keeping the visible page in step ------------------------------------------------------

/** Load this page afresh; return a function that swaps in its live region (true when it did), or
 * null when there is nothing to show. The manifest is in the region, so the tools follow it. */
async function freshRegion() {
  if (!window.htmx || !document.querySelector(REGION)) return null;
  let html;
  try {
    const response = await fetch(location.href, {
      credentials: "same-origin",
      headers: { Accept: "text/html", "X-Client-Mode": "agent" },
    });
    html = response.ok ? await response.text() : "";
  } catch (error) {
    console.warn("webmcp: could not reload the page", error);
    return null;
  }
  if (!new DOMParser().parseFromString(html, "text/html").querySelector(REGION)) return null;
  return () => {
    const before = document.querySelector(REGION);
    try {
      window.htmx.swap(REGION, html, { swapStyle: "outerHTML", swapDelay: 0, settleDelay: 0 }, { select: REGION });
    } catch (error) {
      console.warn("webmcp: could not refresh the page", error);
    }
    sync();
    return Boolean(before) && !before.isConnected;
  };
}

/**
 * Show an agent's search exactly as a person's: htmx issues the form's own request (hx-get with
 * the form's values, which the browser filled from the agent's input), swaps it into the form's
 * hx-target with its hx-swap, and pushes the URL itself when the form has hx-push-url.
 */
async function showResults(form) {
  let swapped = false;
  const mark = (event) => {
    if (event.detail?.requestConfig?.elt === form) swapped = true;
  };
  document.addEventListener("htmx:afterSwap", mark);
  try {
    await window.htmx.ajax("GET", form.getAttribute("hx-get") || form.action, {
      source: form,
      headers: { "X-Client-Mode": "agent" }, // done for the agent: recorded as its activity
    });
  } catch (error) {
    console.warn("webmcp: could not show the results", error);
  } finally {
    document.removeEventListener("htmx:afterSwap", mark);
  }
  return swapped;
}

function formInput(form) {
  const input = {};
  for (const [key, value] of new FormData(form)) {
    if (key !== "csrfmiddlewaretoken" && typeof value === "string" && value !== "") input[key] = value;
  }
  return input;
}

async function answerForm(form, tool) {
  try {
    const params = { ...formInput(form), ...(tool.routeValues ?? {}) };
    const result = await call(tool, params, { afterAnswer: true });
    if (tool.autosubmit && result.ok === true && window.htmx && form.hasAttribute("hx-get")) {
      result.uiUpdated = await showResults(form);
    }
    return result;
  } catch (error) {
    return lost(tool.method, error);
  }
}

// Capture phase on document: runs before htmx's listener on the form and before navigation.
document.addEventListener(
  "submit",
  (event) => {
    const form = event.target;
    if (!event.agentInvoked || typeof event.respondWith !== "function") return;
    if (!(form instanceof HTMLFormElement)) return;
    const name = form.getAttribute("toolname");
    const tool = manifest.tools.find((entry) => entry.name === name && entry.binding === "form");
    if (!tool) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    event.respondWith(settle(name, () => answerForm(form, tool)));
  },
  true,
);

// htmx events bubble from the swapped element through body to document.
document.addEventListener("htmx:afterSettle", () => sync());
window.addEventListener("pageshow", (event) => {
  if (event.persisted) sync();
});
sync();

window.__webmcpRuntime = Object.freeze({ sync, registeredNames: () => [...registered.keys()].sort() });
