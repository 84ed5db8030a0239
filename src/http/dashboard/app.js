// The orderbridge dashboard: a client of the JSON API, nothing more. Every value shown comes
// from an API answer for the logged-in user; text is always set as text, never as HTML.
"use strict";

const TOKEN_KEY = "orderbridge.token";
const USER_KEY = "orderbridge.user";

const ORDER_STATES = ["new", "pending_shipment", "partially_shipped", "shipped", "canceled", "errored"];
const SHIPMENT_STATES = [
  "new", "scheduled_processing_shipment", "ready_for_shipment_notification", "errored_processing",
  "scheduled_notify_of_shipment", "notified_shipped", "delayed_notifying_of_shipment",
  "errored_notifying_of_shipment", "archived",
];
const ORDER_SORTS = ["id", "ordered_at", "created_at", "external_id", "store_id", "fulfillment_state"];
const SHIPMENT_SORTS = ["created_at", "shipped_at", "tracking_number", "warehouse_id", "state"];

// What a sync run's error code means, in plain words.
const ERROR_WORDS = {
  adapter_unreachable: "The platform could not be reached, or answered without a verdict; the pass will try again.",
  adapter_authentication_failed: "The platform refused the credentials. Check the store's or warehouse's adapter.",
  bad_data: "The platform or the warehouse sent something orderbridge could not use.",
  interrupted: "The server stopped while this pass ran; the next pass picks up where it was.",
  internal_error: "orderbridge could not read or write its database; see the server log.",
  not_found: "The connection no longer exists.",
};

// ---- small helpers -------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "text") el.textContent = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function show(value) {
  if (value === null || value === undefined || value === "") return "—";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function when(value) {
  if (!value) return "—";
  const d = new Date(value);
  return isNaN(d) ? String(value) : d.toLocaleString();
}

function svg(tag, attrs) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) el.setAttribute(key, String(value));
  return el;
}

function say(message) {
  document.getElementById("status").textContent = message;
}

function base64(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  bytes.forEach((b) => { binary += String.fromCharCode(b); });
  return btoa(binary);
}

class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error && body.error.message) || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function api(path, options = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const headers = Object.assign({ Accept: "application/json" }, options.headers || {});
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, Object.assign({}, options, { headers }));
  const text = await response.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (_) { body = null; }
  if (response.status === 401 && token) {
    logout("Your session ended; please log in again.");
    throw new ApiError(401, body);
  }
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== "" && value !== null && value !== undefined) q.set(key, value);
  }
  const text = q.toString();
  return text ? `?${text}` : "";
}

// `under(row)`, when given, may return what to show on a full-width line below the row.
function table(caption, columns, rows, under) {
  const lines = (row) => {
    const below = under ? under(row) : null;
    return [h("tr", {}, columns.map((c) => h("td", {}, c.cell(row)))),
      below ? h("tr", { class: "under" }, h("td", { colspan: columns.length }, below)) : null];
  };
  return h("div", { class: "scroll" },
    h("table", {},
      h("caption", { text: caption }),
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", text: c.label })))),
      h("tbody", {}, rows.length === 0
        ? h("tr", {}, h("td", { colspan: columns.length, text: "Nothing to show." }))
        : rows.flatMap(lines))));
}

function field(label, input) {
  const id = `f-${label.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  input.id = id;
  return h("div", { class: "field" }, h("label", { for: id, text: label }), input);
}

function select(name, values, current, blank) {
  return h("select", { name },
    blank ? h("option", { value: "", text: blank }) : null,
    values.map((v) => h("option", { value: v, selected: v === current, text: v })));
}

function page(title, ...content) {
  const main = document.getElementById("main");
  main.replaceChildren(h("h1", { text: title }), ...content);
  document.title = `${title} · orderbridge`;
  main.focus();
}

function failure(e) {
  const details = e.body && e.body.error && e.body.error.details;
  return h("div", { class: "error", role: "alert" },
    h("p", { text: e.message }),
    details ? h("pre", { text: JSON.stringify(details, null, 2) }) : null);
}

function stateBadge(state) {
  const bad = /errored|delayed|failed/.test(state || "");
  return h("span", { class: `badge${bad ? " bad" : ""}`, text: show(state) });
}

// ---- names and reasons ---------------------------------------------------------------

// The stores, warehouses and customers this user sees, by id, so a page names them as a
// person knows them: three requests, shared by the pages of the next half minute.
let directoryCache = null;

function directory() {
  if (directoryCache && Date.now() - directoryCache.at < 30000) return directoryCache.promise;
  const byId = (path) => api(path)
    .then((body) => new Map((Array.isArray(body) ? body : []).map((row) => [row.id, row])))
    .catch(() => new Map());
  const promise = Promise.all([byId("/stores"), byId("/warehouses"), byId("/customers")])
    .then(([stores, warehouses, customers]) => ({ stores, warehouses, customers }));
  directoryCache = { at: Date.now(), promise };
  return promise;
}

// A store or warehouse as "Name (platform)", linked to its page; a customer by its name.
function named(kind, id, dir) {
  if (id === null || id === undefined) return "—";
  const row = dir && dir[kind] && dir[kind].get(id);
  if (kind === "customers") return row ? show(row.company_name) : `Customer ${id}`;
  const noun = kind === "stores" ? "Store" : "Warehouse";
  const text = row ? `${row.name || `${noun} ${id}`} (${row.platform})` : `${noun} ${id}`;
  return h("a", { href: `#/${kind}/${id}`, "data-id": id, text });
}

// An order's or shipment's latest error (its /sync answer), to show beside its state.
function lastError(sync) {
  if (!sync || !sync.last_error) return null;
  const e = sync.last_error;
  const tries = `${sync.attempts} ${sync.attempts === 1 ? "try" : "tries"}`;
  const facts = [e.step, e.at ? when(e.at) : null, tries, sync.next_attempt_at ? `next try ${when(sync.next_attempt_at)}` : null];
  return h("div", { class: "why" }, h("span", { class: "error", text: e.message }), " ",
    h("span", { class: "muted", text: `(${facts.filter(Boolean).join(" · ")})` }));
}

// The /sync answers of the listed rows whose state is a problem: at most `MAX_WHY` a page,
// asked together; the rest get a button that asks for one.
const MAX_WHY = 25;

async function reasons(kind, rows, isTroubled) {
  const asked = rows.filter(isTroubled).slice(0, MAX_WHY);
  const found = await Promise.all(asked.map((row) => api(`/${kind}/${row.id}/sync`).catch(() => null)));
  return new Map(asked.map((row, i) => [row.id, found[i]]));
}

function whyCell(kind, row, known, isTroubled) {
  if (!isTroubled(row)) return null;
  if (known.has(row.id)) return lastError(known.get(row.id)) || h("div", { class: "muted why", text: "No reason recorded." });
  const holder = h("div", {});
  holder.append(h("button", { type: "button", class: "small link", onclick: async () => {
    const sync = await api(`/${kind}/${row.id}/sync`).catch(() => null);
    holder.replaceChildren(lastError(sync) || h("span", { class: "muted", text: "No error recorded." }));
  } }, "Why?"));
  return holder;
}

// What a pass could not do for single items, under the pass.
function runProblems(run) {
  const problems = run.problems || [];
  if (problems.length === 0) return null;
  const total = run.problems_count || problems.length;
  const ref = (p) => p.kind === "order"
    ? h("a", { href: `#/orders/${encodeURIComponent(p.ref)}`, text: `Order ${p.ref}` })
    : h("strong", { text: `${p.kind === "sku" ? "SKU" : p.kind[0].toUpperCase() + p.kind.slice(1)} ${p.ref}` });
  return h("div", { class: "problems" },
    h("p", { class: "muted", text: `${total} item${total === 1 ? "" : "s"} this pass could not handle${total > problems.length ? ` (the first ${problems.length} shown)` : ""}:` }),
    h("ul", {}, problems.map((p) => h("li", {}, ref(p), ` (${p.step}): `, h("span", { text: p.message })))));
}

// ---- login ---------------------------------------------------------------------------

function login(message) {
  document.getElementById("nav").hidden = true;
  const user = h("input", { name: "username", autocomplete: "username", required: true });
  const password = h("input", { name: "password", type: "password", autocomplete: "current-password", required: true });
  const problem = h("p", { class: "error", role: "alert", hidden: !message, text: message || "" });
  const form = h("form", { class: "login", onsubmit: async (event) => {
    event.preventDefault();
    problem.hidden = true;
    try {
      const response = await fetch("/auth/token", {
        method: "POST",
        // No cookies or cached credentials, and no browser login prompt on a 401.
        credentials: "omit",
        headers: {
          Authorization: `Basic ${base64(`${user.value}:${password.value}`)}`,
          "Content-Type": "application/x-www-form-urlencoded",
          Accept: "application/json",
        },
        body: "grant_type=client_credentials",
      });
      const body = await response.json().catch(() => null);
      if (!response.ok || !body || !body.access_token) {
        throw new ApiError(response.status, body);
      }
      sessionStorage.setItem(TOKEN_KEY, body.access_token);
      sessionStorage.setItem(USER_KEY, user.value);
      directoryCache = null;
      password.value = "";
      start();
    } catch (e) {
      problem.textContent = e.status === 401 ? "That username and password do not match." : e.message;
      problem.hidden = false;
      password.focus();
    }
  } },
  field("Username", user),
  field("Password", password),
  h("button", { type: "submit", text: "Log in" }),
  problem);
  page("Log in", h("p", { text: "Log in with an orderbridge user: the same users and passwords as the API." }), form);
  user.focus();
}

function logout(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(USER_KEY);
  directoryCache = null;
  location.hash = "";
  login(message);
}

// ---- overview ------------------------------------------------------------------------

function dayStart(offset) {
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  d.setDate(d.getDate() - offset);
  return d;
}

async function overview() {
  page("Overview", h("p", { text: "Loading…" }));
  const days = [];
  for (let i = 13; i >= 0; i -= 1) days.push([dayStart(i), dayStart(i - 1)]);
  const perDay = await Promise.all(days.map(([from, to]) =>
    api(`/orders${query({ page: 1, limit: 1, ordered_at_min: from.toISOString(), ordered_at_max: to.toISOString() })}`)
      .then((r) => r.total_count || 0)));
  const perState = await Promise.all(SHIPMENT_STATES.map((state) =>
    api(`/shipments${query({ page: 1, limit: 1, state })}`).then((r) => r.total_count || 0)));
  const most = Math.max(1, ...perDay);
  const width = 44 * days.length;
  const chart = svg("svg", { viewBox: `0 0 ${width} 150`, class: "chart", role: "img", "aria-labelledby": "orders-chart-title" });
  const title = svg("title", { id: "orders-chart-title" });
  title.textContent = `Orders per day, last 14 days: ${perDay.join(", ")}`;
  chart.append(title);
  perDay.forEach((count, i) => {
    const height = Math.round((count / most) * 100);
    chart.append(svg("rect", { x: i * 44 + 8, y: 120 - height, width: 28, height, class: "bar" }));
    const number = svg("text", { x: i * 44 + 22, y: 114 - height, class: "count" });
    number.textContent = String(count);
    const day = svg("text", { x: i * 44 + 22, y: 140, class: "day" });
    day.textContent = `${days[i][0].getDate()}/${days[i][0].getMonth() + 1}`;
    chart.append(number, day);
  });
  const dayRows = days.map(([from], i) => ({ day: from.toLocaleDateString(), count: perDay[i] }));
  const stateRows = SHIPMENT_STATES.map((state, i) => ({ state, count: perState[i] }));
  const stateMost = Math.max(1, ...perState);
  page("Overview",
    h("section", { "aria-labelledby": "per-day" },
      h("h2", { id: "per-day", text: "Orders per day" }),
      chart,
      h("details", {}, h("summary", { text: "The numbers" }),
        table("Orders per day", [
          { label: "Day", cell: (r) => r.day },
          { label: "Orders", cell: (r) => String(r.count) },
        ], dayRows))),
    h("section", { "aria-labelledby": "per-state" },
      h("h2", { id: "per-state", text: "Shipments per state" }),
      table("Shipments per state", [
        { label: "State", cell: (r) => h("a", { href: `#/shipments?state=${r.state}`, text: r.state }) },
        { label: "Shipments", cell: (r) => String(r.count) },
        { label: "", cell: (r) => h("span", { class: "meter", style: null, "aria-hidden": "true" },
          h("span", { class: `fill w${Math.round((r.count / stateMost) * 20)}` })) },
      ], stateRows)));
}

// ---- orders and shipments ------------------------------------------------------------

function listView(kind) {
  const isOrders = kind === "orders";
  return async (params) => {
    const filters = isOrders
      ? ["state", "store_id", "external_id", "ordered_at_min", "ordered_at_max"]
      : ["state", "store_id", "warehouse_id", "tracking_number", "shipped_at_min", "shipped_at_max"];
    const current = Object.fromEntries(filters.map((f) => [f, params.get(f) || ""]));
    const mode = params.get("mode") === "session" ? "session" : "page";
    const sort = params.get("sort") || (isOrders ? "id" : "created_at");
    const limit = params.get("limit") || "25";
    const pageNumber = Math.max(1, parseInt(params.get("page") || "1", 10) || 1);
    const session = params.get("session_id") || "";

    const inputs = {};
    const form = h("form", { class: "filters", "aria-label": "Filters", onsubmit: (event) => {
      event.preventDefault();
      const next = new URLSearchParams();
      for (const [name, input] of Object.entries(inputs)) if (input.value) next.set(name, input.value);
      location.hash = `#/${kind}?${next.toString()}`;
    } });
    for (const name of filters) {
      const states = isOrders ? ORDER_STATES : SHIPMENT_STATES;
      inputs[name] = name === "state" ? select("state", states, current.state, "any state")
        : h("input", { name, value: current[name], placeholder: name.endsWith("_min") || name.endsWith("_max") ? "e.g. 3 days ago, 2026-11-01" : "" });
      form.append(field(name.replace(/_/g, " "), inputs[name]));
    }
    inputs.sort = select("sort", isOrders ? ORDER_SORTS : SHIPMENT_SORTS, sort);
    form.append(field("sort by", inputs.sort));
    inputs.limit = select("limit", ["10", "25", "100", "500"], limit);
    form.append(field("rows", inputs.limit));
    inputs.mode = select("mode", ["page", "session"], mode);
    form.append(field("paging", inputs.mode));
    form.append(h("button", { type: "submit", text: "Show" }));

    const request = session
      ? { session_id: session }
      : Object.assign({}, current, { sort, limit, page: mode === "page" ? pageNumber : "" });
    let body;
    try {
      body = await api(`/${kind}${query(request)}`);
    } catch (e) {
      page(isOrders ? "Orders" : "Shipments", form, failure(e));
      return;
    }
    const rows = body[kind] || [];
    const troubled = isOrders
      ? (o) => o.fulfillment_state === "errored"
      : (s) => /^(errored_|delayed_)/.test(s.state || "");
    const [dir, known] = await Promise.all([directory(), reasons(kind, rows, troubled)]);
    const columns = isOrders ? [
      { label: "Id", cell: (o) => h("a", { href: `#/orders/${o.id}`, text: String(o.id) }) },
      { label: "External id", cell: (o) => show(o.external_display_id || o.external_id) },
      { label: "Store", cell: (o) => named("stores", o.store_id, dir) },
      { label: "Ordered", cell: (o) => when(o.ordered_at) },
      { label: "State", cell: (o) => [stateBadge(o.fulfillment_state), whyCell("orders", o, known, troubled)] },
      { label: "Items", cell: (o) => String((o.order_items || []).length) },
      { label: "Customer e-mail", cell: (o) => show(o.customer_email) },
    ] : [
      { label: "Id", cell: (s) => String(s.id) },
      { label: "Order", cell: (s) => h("a", { href: `#/orders/${s.order_id}`, text: String(s.order_id) }) },
      { label: "Tracking", cell: (s) => show(s.tracking_number) },
      { label: "Carrier", cell: (s) => show(s.carrier_name) },
      { label: "Shipped", cell: (s) => when(s.shipped_at) },
      { label: "Warehouse", cell: (s) => named("warehouses", s.warehouse_id, dir) },
      { label: "State", cell: (s) => [stateBadge(s.state), whyCell("shipments", s, known, troubled)] },
      { label: "", cell: (s) => /^errored_/.test(s.state || "") ? retryButton("shipments", s.id) : "" },
    ];
    const here = (changes) => {
      const next = new URLSearchParams(params);
      next.delete("session_id");
      for (const [k, v] of Object.entries(changes)) next.set(k, v);
      return `#/${kind}?${next.toString()}`;
    };
    const nav = h("nav", { class: "pager", "aria-label": "Pages" });
    if (body.session_id !== undefined && !("total_pages" in body && mode === "page")) {
      nav.append(h("span", { text: `Page ${show(body.page)} of this session` }));
      if (rows.length > 0) {
        const next = new URLSearchParams(params);
        next.set("mode", "session");
        next.set("session_id", body.session_id);
        nav.append(h("a", { href: `#/${kind}?${next.toString()}`, rel: "next", text: "Next page" }));
      }
    } else {
      const pages = body.total_pages || 1;
      if (pageNumber > 1) nav.append(h("a", { href: here({ page: pageNumber - 1, mode: "page" }), rel: "prev", text: "Previous page" }));
      nav.append(h("span", { text: `Page ${pageNumber} of ${pages} (${show(body.total_count)} in all${body.max_total_reached ? ", capped" : ""})` }));
      if (pageNumber < pages) nav.append(h("a", { href: here({ page: pageNumber + 1, mode: "page" }), rel: "next", text: "Next page" }));
    }
    page(isOrders ? "Orders" : "Shipments", form, nav, table(isOrders ? "Orders" : "Shipments", columns, rows));
  };
}

function retryButton(kind, id) {
  return h("button", { type: "button", class: "small", onclick: async (event) => {
    event.target.disabled = true;
    try {
      await api(`/${kind}/${id}/retry`, { method: "POST" });
      say(`${kind === "orders" ? "Order" : "Shipment"} ${id} will be tried again in the next pass.`);
      route();
    } catch (e) {
      say(`Retry failed: ${e.message}`);
      event.target.disabled = false;
    }
  } }, `Retry ${kind === "orders" ? "order" : "shipment"} ${id}`);
}

async function orderView(id) {
  let body;
  try {
    body = await api(`/orders/${encodeURIComponent(id)}`);
  } catch (e) {
    page(`Order ${id}`, failure(e));
    return;
  }
  const o = body.order;
  const [dir, sync] = await Promise.all([directory(), api(`/orders/${o.id}/sync`).catch(() => null)]);
  const fact = (f) => {
    if (f === "store_id") return named("stores", o.store_id, dir);
    if (f === "fulfillment_warehouse_id") return named("warehouses", o.fulfillment_warehouse_id, dir);
    return /_at$/.test(f) ? when(o[f]) : show(o[f]);
  };
  const facts = ["external_id", "external_display_id", "store_id", "ordered_at", "created_at", "customer_email",
    "fulfillment_state", "fulfillment_warehouse_id", "shipping_carrier_name", "shipping_carrier_service_level",
    "currency_code", "tax_amount", "shipping_amount", "discount_amount", "notes"];
  const address = (a) => a ? h("address", {}, [a.first_name, a.last_name].filter(Boolean).join(" "), h("br"),
    show(a.street1), a.street2 ? [h("br"), a.street2] : null, h("br"),
    [a.postal_code, a.city, a.region, a.country].filter(Boolean).join(" ")) : h("p", { text: "—" });
  page(`Order ${o.id}`,
    h("div", { class: "state" }, h("p", {}, stateBadge(o.fulfillment_state), " ", o.fulfillment_state === "errored" ? retryButton("orders", o.id) : null),
      lastError(sync)),
    h("dl", { class: "facts" }, facts.map((f) => [h("dt", { text: { store_id: "store", fulfillment_warehouse_id: "fulfillment warehouse" }[f] || f.replace(/_/g, " ") }), h("dd", {}, fact(f))])),
    h("section", { "aria-labelledby": "addresses" }, h("h2", { id: "addresses", text: "Addresses" }),
      h("div", { class: "pair" },
        h("div", {}, h("h3", { text: "Shipping" }), address(o.shipping_address)),
        h("div", {}, h("h3", { text: "Billing" }), address(o.billing_address)))),
    h("section", { "aria-labelledby": "items" }, h("h2", { id: "items", text: "Items" }),
      table("Items of the order", [
        { label: "SKU", cell: (i) => show(i.sku) },
        { label: "Name", cell: (i) => show(i.name) },
        { label: "Quantity", cell: (i) => show(i.quantity) },
        { label: "Unit price", cell: (i) => show(i.unit_price) },
        { label: "Line id", cell: (i) => show(i.external_order_item_id) },
      ], o.order_items || [])),
    h("details", {}, h("summary", { text: "The whole document (JSON)" }), h("pre", { text: JSON.stringify(body, null, 2) })));
}

// ---- connections, stores, warehouses -------------------------------------------------

async function connectionsView() {
  const list = await api("/connections");
  const connections = list.connections || list || [];
  const dir = await directory();
  const rows = await Promise.all(connections.map(async (c) => {
    const runs = await api(`/connections/${c.id}/sync_runs`).catch(() => []);
    const items = Array.isArray(runs) ? runs : (runs.sync_runs || []);
    return Object.assign({ last: items[0] }, c);
  }));
  page("Connections", table("Connections and their last sync", [
    { label: "Id", cell: (c) => h("a", { href: `#/connections/${c.id}`, text: String(c.id) }) },
    { label: "Name", cell: (c) => h("a", { href: `#/connections/${c.id}`, text: show(c.name) }) },
    { label: "Store", cell: (c) => named("stores", c.store_id, dir) },
    { label: "Warehouse", cell: (c) => named("warehouses", c.warehouse_id, dir) },
    { label: "Enabled", cell: (c) => c.enabled_at ? "yes" : "no" },
    { label: "Last pass", cell: (c) => c.last ? [stateBadge(c.last.status), " ", when(c.last.finished_at || c.last.started_at),
      c.last.problems_count ? h("span", { class: "muted", text: ` · ${c.last.problems_count} problem${c.last.problems_count === 1 ? "" : "s"}` }) : null] : "never" },
  ], rows));
}

function runError(run) {
  if (!run.error) return "";
  const words = ERROR_WORDS[run.error.code] || "";
  return h("div", {}, h("strong", { text: words || run.error.code }), h("br"),
    h("span", { class: "muted", text: `${run.error.step}: ${run.error.message}` }));
}

async function connectionView(id) {
  let c;
  try {
    c = await api(`/connections/${encodeURIComponent(id)}`);
  } catch (e) {
    page(`Connection ${id}`, failure(e));
    return;
  }
  c = c.connection || c;
  const channels = await api(`/connections/${id}/channels`).catch(() => []);
  const runsBody = await api(`/connections/${id}/sync_runs`).catch(() => []);
  const dir = await directory();
  const runs = Array.isArray(runsBody) ? runsBody : (runsBody.sync_runs || []);
  const syncNow = h("button", { type: "button", onclick: async (event) => {
    event.target.disabled = true;
    try {
      const started = await api(`/connections/${id}/sync`, { method: "POST" });
      say(`Sync pass ${started.run_id} started.`);
      for (let i = 0; i < 120; i += 1) {
        const run = await api(`/connections/${id}/sync_runs/${started.run_id}`);
        if (run.finished_at) {
          say(`Sync pass ${run.id} ${run.status}.`);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      route();
    } catch (e) {
      const details = e.body && e.body.error && e.body.error.details;
      say(`Sync could not start: ${e.message}${details ? ` (${JSON.stringify(details)})` : ""}`);
      event.target.disabled = false;
    }
  } }, "Sync now");
  const channelList = Array.isArray(channels) ? channels : (channels.channels || []);
  page(`Connection ${c.id}: ${show(c.name)}`,
    h("p", { class: "link-line" }, named("stores", c.store_id, dir), " → ", named("warehouses", c.warehouse_id, dir),
      `; ${c.enabled_at ? "enabled" : "switched off"}. `, syncNow),
    h("h2", { text: "Channels" }),
    h("ul", {}, channelList.map((ch) => h("li", { text: `${ch.type}: ${ch.enabled_at ? "on" : "off"}` }))),
    h("h2", { text: "Last sync passes" }),
    table("Sync passes, newest first", [
      { label: "Run", cell: (r) => String(r.id) },
      { label: "Started", cell: (r) => when(r.started_at) },
      { label: "Status", cell: (r) => stateBadge(r.status) },
      { label: "Orders in / out", cell: (r) => `${show(r.orders_pulled)} / ${show(r.orders_sent)}` },
      { label: "Shipments in / told", cell: (r) => `${show(r.shipments_pulled)} / ${show(r.shipments_notified)}` },
      { label: "Stock levels", cell: (r) => show(r.stock_levels_sent) },
      { label: "What went wrong", cell: runError },
    ], runs.slice(0, 20), runProblems),
    h("p", {}, h("a", { href: `#/orders?state=errored&store_id=${c.store_id}`, text: "Errored orders of this store" }), " · ",
      h("a", { href: `#/shipments?state=errored_notifying_of_shipment&store_id=${c.store_id}`, text: "Shipments the store refused" }), " · ",
      h("a", { href: `#/shipments?state=errored_processing&store_id=${c.store_id}`, text: "Shipments that did not match their order" })));
}

function holdersView(kind) {
  return async () => {
    const body = await api(`/${kind}`);
    const rows = body[kind] || body || [];
    const dir = await directory();
    page(kind === "stores" ? "Stores" : "Warehouses", table(kind === "stores" ? "Stores" : "Warehouses", [
      { label: "Id", cell: (r) => String(r.id) },
      { label: "Name", cell: (r) => h("a", { href: `#/${kind}/${r.id}`, text: show(r.name) }) },
      { label: "Customer", cell: (r) => named("customers", r.customer_id, dir) },
      { label: "Platform", cell: (r) => show(r.platform) },
      { label: "Enabled", cell: (r) => r.enabled_at ? "yes" : "no" },
      { label: "Adapter (secrets masked)", cell: (r) => h("code", { text: show(r.adapter) }) },
    ], rows));
  };
}

// A file warehouse's formats (files-csv-layouts.md, files-x12.md): what it writes and reads,
// with each layout's columns in file order, so an operator checks a 3PL's template at a glance.
const FILE_PLATFORMS = ["sftp", "ftp", "dropstream", "folder"];
function fileFormat(row) {
  if (!FILE_PLATFORMS.includes(row.platform)) return "";
  const a = row.adapter || {};
  if (a.file_format === "x12") {
    const x = a.x12 || {};
    return h("section", {},
      h("h2", { text: "File format: X12 EDI 004010" }),
      h("dl", { class: "facts" },
        h("dt", { text: "orders out" }), h("dd", { text: `940s into ${show(a.orders_dir || "orders")}, from ${show(x.sender_id)} to ${show(x.receiver_id)}` }),
        h("dt", { text: "shipments in" }), h("dd", { text: `945s (and 997s) from ${show(a.shipments_dir || "shipments")}` }),
        h("dt", { text: "stock in" }), h("dd", { text: `846s from ${show(a.inventory_dir || "inventory")}` }),
        h("dt", { text: "acknowledgements" }), h("dd", { text: x.send_997 === false ? "none sent" : "a 997 for each file read" })));
  }
  const columns = (layout) => (layout.columns || []).map((c) => typeof c === "string" ? c : `${c.header}${c.field ? ` ← ${c.field}` : ""}`).join(" | ");
  const side = (name, layout, what) => [
    h("dt", { text: what }),
    h("dd", { text: layout ? `${name}: ${columns(layout) || "today's columns"}` : `${name}: orderbridge's own CSV (CONTRACT §11)` }),
  ];
  return h("section", {},
    h("h2", { text: "File format: CSV" }),
    h("dl", { class: "facts" },
      ...side("orders_layout", a.orders_layout, "orders out"),
      ...side("shipments_layout", a.shipments_layout, "shipments in"),
      ...side("inventory_layout", a.inventory_layout, "stock in")));
}

// One store or warehouse, with the connections it is part of.
function holderView(kind) {
  return async (id) => {
    const noun = kind === "stores" ? "Store" : "Warehouse";
    let row;
    try {
      row = await api(`/${kind}/${encodeURIComponent(id)}`);
    } catch (e) {
      page(`${noun} ${id}`, failure(e));
      return;
    }
    const [dir, list] = await Promise.all([directory(), api("/connections").catch(() => [])]);
    const own = kind === "stores" ? "store_id" : "warehouse_id";
    const connections = (Array.isArray(list) ? list : []).filter((c) => c[own] === row.id);
    page(`${show(row.name)} (${row.platform})`,
      h("dl", { class: "facts" },
        h("dt", { text: "id" }), h("dd", { text: String(row.id) }),
        h("dt", { text: "customer" }), h("dd", {}, named("customers", row.customer_id, dir)),
        h("dt", { text: "platform" }), h("dd", { text: show(row.platform) }),
        h("dt", { text: "enabled" }), h("dd", { text: row.enabled_at ? `since ${when(row.enabled_at)}` : "no" }),
        h("dt", { text: "adapter (secrets masked)" }), h("dd", {}, h("code", { text: show(row.adapter) }))),
      kind === "warehouses" ? fileFormat(row) : "",
      h("h2", { text: "Connections" }),
      table(`Connections of this ${noun.toLowerCase()}`, [
        { label: "Name", cell: (c) => h("a", { href: `#/connections/${c.id}`, text: show(c.name) }) },
        { label: kind === "stores" ? "Warehouse" : "Store",
          cell: (c) => kind === "stores" ? named("warehouses", c.warehouse_id, dir) : named("stores", c.store_id, dir) },
        { label: "Enabled", cell: (c) => c.enabled_at ? "yes" : "no" },
      ], connections));
  };
}

// ---- routing -------------------------------------------------------------------------

const VIEWS = [
  [/^\/?$|^\/overview$/, () => overview()],
  [/^\/orders$/, (m, params) => listView("orders")(params)],
  [/^\/orders\/(\d+)$/, (m) => orderView(m[1])],
  [/^\/shipments$/, (m, params) => listView("shipments")(params)],
  [/^\/connections$/, () => connectionsView()],
  [/^\/connections\/(\d+)$/, (m) => connectionView(m[1])],
  [/^\/stores$/, () => holdersView("stores")()],
  [/^\/stores\/(\d+)$/, (m) => holderView("stores")(m[1])],
  [/^\/warehouses$/, () => holdersView("warehouses")()],
  [/^\/warehouses\/(\d+)$/, (m) => holderView("warehouses")(m[1])],
];

async function route() {
  if (!sessionStorage.getItem(TOKEN_KEY)) {
    login();
    return;
  }
  const [path, search] = location.hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(search || "");
  for (const link of document.querySelectorAll("#nav a")) {
    const current = link.getAttribute("href") === `#${path}` || (path === "" && link.getAttribute("href") === "#/overview");
    if (current) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
  }
  for (const [pattern, view] of VIEWS) {
    const match = (path || "/").match(pattern);
    if (match) {
      try {
        await view(match, params);
      } catch (e) {
        if (e.status !== 401) page("Something went wrong", failure(e));
      }
      return;
    }
  }
  page("Not found", h("p", { text: "There is no such page." }), h("a", { href: "#/overview", text: "Go to the overview" }));
}

function start() {
  document.getElementById("nav").hidden = false;
  document.getElementById("who").textContent = `(${sessionStorage.getItem(USER_KEY) || ""})`;
  if (!location.hash || location.hash === "#") location.hash = "#/overview";
  else route();
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("logout").addEventListener("click", () => logout("You are logged out."));
  window.addEventListener("hashchange", () => { say(""); route(); });
  if (sessionStorage.getItem(TOKEN_KEY)) start(); else login();
});
