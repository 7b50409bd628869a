// expvid view: the item list (virtualised), item pages, keyboard navigation and live refresh.
// One file for both the served viewer (data from the server's JSON API) and the static export
// (data embedded in the page). No build step, no library, no inline handlers: every string from a
// run (model output included) goes into the page as text, never as HTML.
"use strict";

(function () {
  const MODE = document.body.dataset.mode === "static" ? "static" : "served";
  const ROW = 30; // px; the list's rows all have this height so the list can be virtual
  const OVERSCAN = 12;
  const POLL_MS = 2000;
  const FAILURES = new Set(["partial", "wrong", "unparseable", "failed", "judge-failed"]);
  const FILTER_KEYS = ["task", "discipline", "outcome", "run", "disagree", "q"];
  const timings = { scriptStart: performance.now() };

  const state = {
    data: null, // {version, runs, tasks, disciplines, rows}
    version: document.body.dataset.version || null,
    filters: {},
    filterKey: null,
    filtered: [], // indices into data.rows
    selected: 0,
    scroll: {},
    route: null,
    detailText: null,
  };

  // -- small helpers --------------------------------------------------------------------------

  function $(selector, root) {
    return (root || document).querySelector(selector);
  }

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    if (attrs) {
      for (const [key, value] of Object.entries(attrs)) {
        if (value === null || value === undefined || value === false) continue;
        if (key === "class") el.className = value;
        else if (key === "text") el.textContent = value;
        else if (key === "dataset") Object.assign(el.dataset, value);
        else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
        else el.setAttribute(key, value === true ? "" : String(value));
      }
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : String(child));
    }
    return el;
  }

  function fmt(value, digits) {
    if (value === null || value === undefined) return "—";
    if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(digits === undefined ? 2 : digits);
    return String(value);
  }

  function answerText(value) {
    if (value === null || value === undefined) return "";
    if (Array.isArray(value)) {
      if (value.every((v) => Number.isInteger(v))) return value.join(", ");
      return value.map(answerText).join(" | ");
    }
    if (typeof value === "object") return JSON.stringify(value);
    return String(value);
  }

  function badge(outcome, extra) {
    return h("span", { class: "badge o-" + outcome, text: outcome + (extra || "") });
  }

  function kv(value) {
    if (value === null || value === undefined) return h("span", { class: "none", text: "—" });
    if (Array.isArray(value)) {
      if (value.every((v) => v === null || typeof v !== "object")) return document.createTextNode(value.map(fmt).join(", "));
      return h("pre", { class: "json", text: JSON.stringify(value, null, 1) });
    }
    if (typeof value === "object") {
      const keys = Object.keys(value);
      if (!keys.length) return h("span", { class: "none", text: "{}" });
      return h("table", { class: "kv" }, keys.map((key) => h("tr", null, h("th", { text: key }), h("td", null, kv(value[key])))));
    }
    if (typeof value === "string" && value.length > 160) {
      return h("details", { class: "long" }, h("summary", { text: value.slice(0, 80) + "… (" + value.length + " chars)" }), h("pre", { text: value }));
    }
    return document.createTextNode(fmt(value, 4));
  }

  function section(title, ...body) {
    return h("div", { class: "block" }, h("h4", { text: title }), body);
  }

  function folded(title, body, open, testid) {
    return h("details", { open: !!open, "data-testid": testid }, h("summary", { text: title }), body);
  }

  function setLive(text, warn) {
    const live = $("#live");
    live.textContent = text;
    live.classList.toggle("warn", !!warn);
  }

  // -- data sources ---------------------------------------------------------------------------

  async function getJSON(url) {
    const response = await fetch(url, { cache: "no-store" });
    if (!response.ok) throw new Error(url + ": HTTP " + response.status);
    return response.json();
  }

  const source = MODE === "static" ? staticSource() : servedSource();

  function staticSource() {
    const bundle = JSON.parse($("#expvid-data").textContent);
    return {
      items: async () => bundle.list,
      item: async (id) => bundle.details[id] || null,
      frames: async (ref) => ref,
      image: (frame) => (frame.thumb ? bundle.thumbs[frame.thumb] : null),
      live: false,
    };
  }

  function servedSource() {
    return {
      items: () => getJSON("api/items"),
      item: (id) => getJSON("api/item?id=" + encodeURIComponent(id)),
      frames: (ref) => (ref && ref.url ? getJSON(ref.url) : Promise.resolve(ref)),
      image: (frame) => frame.url || null,
      version: () => getJSON("api/version"),
      overview: async () => {
        const response = await fetch("fragment/overview", { cache: "no-store" });
        if (!response.ok) throw new Error("overview: HTTP " + response.status);
        return response.text();
      },
      live: true,
    };
  }

  async function ensureData() {
    if (state.data) return state.data;
    const started = performance.now();
    state.data = await source.items();
    timings.itemsLoaded = performance.now() - started;
    if (state.data.version !== undefined && state.data.version !== null) state.version = String(state.data.version);
    state.index = new Map(state.data.rows.map((row, i) => [row.i, i]));
    state.filterKey = null;
    fillFilterOptions();
    timings.dataReady = performance.now();
    return state.data;
  }

  // -- routes ---------------------------------------------------------------------------------

  function parseRoute() {
    const raw = location.hash.replace(/^#\/?/, "");
    const cut = raw.indexOf("?");
    const path = cut >= 0 ? raw.slice(0, cut) : raw;
    const params = new URLSearchParams(cut >= 0 ? raw.slice(cut + 1) : "");
    const filters = {};
    for (const key of FILTER_KEYS) if (params.get(key)) filters[key] = params.get(key);
    if (path.startsWith("item/")) {
      return { view: "item", id: decodeURIComponent(path.slice(5)), filters, sample: parseInt(params.get("sample") || "0", 10) || 0 };
    }
    return { view: path === "items" ? "items" : "overview", filters };
  }

  function query(filters, extra) {
    const params = new URLSearchParams();
    for (const key of FILTER_KEYS) if (filters[key]) params.set(key, filters[key]);
    if (extra) for (const [key, value] of Object.entries(extra)) params.set(key, value);
    const text = params.toString();
    return text ? "?" + text : "";
  }

  function listHash(filters) {
    return "#/items" + query(filters);
  }

  function itemHash(id, filters, sample) {
    return "#/item/" + encodeURIComponent(id) + query(filters, sample ? { sample: String(sample) } : null);
  }

  function show(view) {
    document.querySelectorAll("main > section").forEach((el) => {
      el.hidden = el.dataset.view !== view;
    });
    document.querySelectorAll("[data-nav]").forEach((a) => a.classList.toggle("active", a.dataset.nav === view));
  }

  async function route() {
    const r = parseRoute();
    state.route = r;
    if (r.view === "overview") {
      show("overview");
      return;
    }
    await ensureData();
    setFilters(r.filters);
    if (r.view === "items") {
      show("items");
      renderList(true);
      if (!timings.listRendered) {
        timings.listRendered = performance.now();
        document.body.dataset.listRenderedMs = String(Math.round(timings.listRendered));
      }
      return;
    }
    show("item");
    await renderItem(r);
  }

  // -- filters --------------------------------------------------------------------------------

  function fillFilterOptions() {
    const data = state.data;
    const fill = (select, options) => {
      const keep = select.value;
      select.replaceChildren(h("option", { value: "", text: "all" }), ...options.map(([value, text]) => h("option", { value, text })));
      select.value = keep;
    };
    fill($("#f-task"), data.tasks.map((t) => [t.name, t.label === t.name ? t.name : t.name + " — " + t.label]));
    fill($("#f-discipline"), data.disciplines.map((d) => [d, d]));
    const run = $("#f-run");
    fill(run, data.runs.map((r) => [r.key, r.label]));
    run.firstElementChild.textContent = "any";
    document.querySelectorAll(".multi").forEach((el) => {
      el.hidden = data.runs.length < 2;
    });
    document.documentElement.style.setProperty("--runs", String(data.runs.length));
    const head = $("#list-head");
    head.replaceChildren(
      h("span", { text: "#" }), h("span", { text: "item" }), h("span", { text: "task" }), h("span", { text: "discipline" }),
      ...data.runs.map((r) => h("span", null, h("span", { class: "chip " + r.key, title: r.spec, text: r.label }))),
      h("span", { text: "gold" }), h("span", { text: "question" }),
    );
  }

  function setFilters(filters) {
    state.filters = filters;
    $("#f-task").value = filters.task || "";
    $("#f-discipline").value = filters.discipline || "";
    $("#f-outcome").value = filters.outcome || "";
    $("#f-run").value = filters.run || "";
    $("#f-disagree").checked = !!filters.disagree;
    if (document.activeElement !== $("#f-q")) $("#f-q").value = filters.q || "";
    applyFilters();
  }

  function readFilters() {
    const filters = {};
    const put = (key, value) => {
      if (value) filters[key] = value;
    };
    put("task", $("#f-task").value);
    put("discipline", $("#f-discipline").value);
    put("outcome", $("#f-outcome").value);
    put("run", $("#f-run").value);
    put("disagree", $("#f-disagree").checked ? "1" : "");
    put("q", $("#f-q").value.trim());
    return filters;
  }

  function isFailure(cell) {
    return FAILURES.has(cell.o) || (cell.f || "").includes("T");
  }

  function cellMatches(cell, outcome) {
    if (outcome === "truncated") return (cell.f || "").includes("T");
    if (outcome === "failure") return isFailure(cell);
    return cell.o === outcome;
  }

  // Runs disagree on an item when two runs that both have an answer for it differ in outcome or in
  // the answer extraction read (items only one run has, or not answered yet, are not compared).
  function disagrees(row) {
    const cells = row.r.filter((cell) => cell.o !== "absent" && cell.o !== "pending");
    if (cells.length < 2) return false;
    return cells.some((cell) => cell.o !== cells[0].o || cell.a !== cells[0].a);
  }

  function cellsFor(row, filters) {
    const at = filters.run ? state.data.runs.findIndex((r) => r.key === filters.run) : -1;
    return at >= 0 ? [row.r[at]] : row.r;
  }

  // What the search box reads: id, gold, answers and the row's text (question, options, responses),
  // lower-cased once per row, the first time a search needs it.
  function haystack(row) {
    if (row._l === undefined) row._l = [row.i, row.g, ...row.r.map((cell) => cell.a), row.s].join("\n").toLowerCase();
    return row._l;
  }

  function question(row) {
    const cut = row.s.indexOf("\n");
    return (cut < 0 ? row.s : row.s.slice(0, cut)).slice(0, 240);
  }

  function applyFilters() {
    const f = state.filters;
    const key = JSON.stringify([state.version, f]);
    if (key === state.filterKey) return;
    state.filterKey = key;
    const rows = state.data.rows;
    const terms = (f.q || "").toLowerCase().split(/\s+/).filter(Boolean);
    const out = [];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      if (f.task && row.t !== f.task) continue;
      if (f.discipline && row.d !== f.discipline) continue;
      if (f.outcome && !cellsFor(row, f).some((cell) => cellMatches(cell, f.outcome))) continue;
      if (f.disagree && !disagrees(row)) continue;
      if (terms.length && !terms.every((term) => haystack(row).includes(term))) continue;
      out.push(i);
    }
    state.filtered = out;
    state.selected = Math.min(state.selected, Math.max(0, out.length - 1));
    $("#count").textContent = out.length + " of " + rows.length + " items";
  }

  function onFilterInput() {
    const filters = readFilters();
    history.replaceState(null, "", listHash(filters));
    state.filters = filters;
    state.selected = 0;
    applyFilters();
    $("#list").scrollTop = 0;
    renderList(true);
  }

  // -- the virtual list -----------------------------------------------------------------------

  function rowElement(data, rowIndex, position, selected, filters) {
    const row = data.rows[rowIndex];
    return h(
      "a",
      { class: "row" + (selected ? " sel" : ""), href: itemHash(row.i, filters || {}), "data-testid": "row", dataset: { id: row.i, pos: String(position) } },
      h("span", { class: "c-pos", text: String(position + 1) }),
      h("span", { class: "c-id", text: row.i, title: row.i }),
      h("span", { class: "c-task", text: row.t }),
      h("span", { class: "c-disc", text: row.d }),
      row.r.map((cell, k) =>
        h(
          "span",
          { class: "c-run", title: data.runs[k].label + ": " + cell.o + " — " + cell.w, "data-outcome": cell.o },
          h("b", { class: "badge o-" + cell.o, text: cell.o }),
          cell.f ? h("b", { class: "flags", text: cell.f, title: "T truncated, R refusal, C cached response" }) : null,
          " ",
          cell.a,
        ),
      ),
      h("span", { class: "c-gold", text: row.g, title: row.g }),
      h("span", { class: "c-q", text: question(row) }),
    );
  }

  let rowsBox = null;
  let frame = 0;

  function renderList(now) {
    if (!now) {
      if (!frame) frame = requestAnimationFrame(() => renderList(true));
      return;
    }
    frame = 0;
    const list = $("#list");
    if (!rowsBox) {
      rowsBox = h("div", { class: "rows" });
      list.append(rowsBox);
    }
    const total = state.filtered.length;
    list.firstElementChild.style.height = total * ROW + "px";
    const top = list.scrollTop;
    const height = list.clientHeight || window.innerHeight;
    const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    const last = Math.min(total, Math.ceil((top + height) / ROW) + OVERSCAN);
    rowsBox.style.transform = "translateY(" + first * ROW + "px)";
    const fragment = document.createDocumentFragment();
    for (let p = first; p < last; p++) {
      fragment.append(rowElement(state.data, state.filtered[p], p, p === state.selected, state.filters));
    }
    rowsBox.replaceChildren(fragment);
    if (!total) rowsBox.replaceChildren(h("p", { class: "empty", text: "No item matches these filters." }));
  }

  function select(position) {
    const total = state.filtered.length;
    if (!total) return;
    state.selected = Math.max(0, Math.min(total - 1, position));
    const list = $("#list");
    const y = state.selected * ROW;
    if (y < list.scrollTop) list.scrollTop = y;
    else if (y + ROW > list.scrollTop + list.clientHeight) list.scrollTop = y + ROW - list.clientHeight;
    renderList(true);
  }

  function nextFailure(from, step) {
    const rows = state.data.rows;
    for (let p = from + step; p >= 0 && p < state.filtered.length; p += step) {
      const row = rows[state.filtered[p]];
      if (cellsFor(row, state.filters).some(isFailure)) return p;
    }
    return -1;
  }

  // -- the item page --------------------------------------------------------------------------

  function positionOf(id) {
    const rowIndex = state.index.get(id);
    if (rowIndex === undefined) return -1;
    let lo = 0;
    let hi = state.filtered.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const value = state.filtered[mid];
      if (value === rowIndex) return mid;
      if (value < rowIndex) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  function goToPosition(position) {
    if (position < 0 || position >= state.filtered.length) return false;
    state.selected = position;
    location.hash = itemHash(state.data.rows[state.filtered[position]].i, state.filters);
    return true;
  }

  async function renderItem(r, quiet) {
    const target = $("#view-item");
    let detail;
    try {
      detail = await source.item(r.id);
    } catch (error) {
      target.replaceChildren(h("p", { class: "note", text: "Cannot load " + r.id + ": " + error.message }));
      return;
    }
    if (!detail) {
      target.replaceChildren(h("p", { class: "note", text: "No item " + r.id + " in these runs." }));
      return;
    }
    const text = JSON.stringify(Object.assign({}, detail, { version: null }));
    if (quiet && text === state.detailText) return; // nothing changed: keep the page as it is
    state.detailText = text;
    const position = positionOf(r.id);
    if (position >= 0) state.selected = position;
    target.replaceChildren(itemPage(detail, r, position));
    target.querySelectorAll("[data-frames]").forEach(loadFrames);
    target.querySelectorAll("video[data-start]").forEach(clampToWindow);
    if (!quiet) window.scrollTo(0, 0);
  }

  function navBar(detail, r, position) {
    const total = state.filtered.length;
    const filters = state.filters;
    const back = h("a", { href: listHash(filters), class: "button", "data-testid": "back", text: "← list (Esc)" });
    const where = position >= 0 ? position + 1 + " of " + total + (Object.keys(filters).length ? " (filtered)" : "") : "not in the current filter";
    const prev = position > 0 ? itemHash(state.data.rows[state.filtered[position - 1]].i, filters) : null;
    const next = position >= 0 && position < total - 1 ? itemHash(state.data.rows[state.filtered[position + 1]].i, filters) : null;
    const failure = position >= 0 ? nextFailure(position, 1) : -1;
    return h(
      "div",
      { class: "itemnav" },
      back,
      h("a", { class: "button" + (prev ? "" : " off"), href: prev || "#", "data-testid": "prev", text: "‹ prev (k)" }),
      h("span", { class: "where", "data-testid": "position", text: where }),
      h("a", { class: "button" + (next ? "" : " off"), href: next || "#", "data-testid": "next", text: "next (j) ›" }),
      h("a", {
        class: "button" + (failure >= 0 ? "" : " off"),
        href: failure >= 0 ? itemHash(state.data.rows[state.filtered[failure]].i, filters) : "#",
        "data-testid": "next-failure",
        text: "next failure (n) »",
      }),
    );
  }

  function itemPage(detail, r, position) {
    const page = h("article", { class: "item", "data-testid": "item", dataset: { id: detail.id } });
    page.append(navBar(detail, r, position));
    const title = h("h1", null, h("span", { "data-testid": "item-id", text: detail.id }), " ");
    if (detail.found) {
      title.append(h("small", { text: [detail.task_label, detail.level ? "Level " + detail.level : null, detail.discipline, detail.answer_type].filter(Boolean).join(" · ") }));
    }
    page.append(title);
    if (detail.note) page.append(h("p", { class: "note", text: detail.note }));
    if (detail.found) page.append(questionBlock(detail));
    if (detail.media && detail.media.kind === "video") page.append(player(detail.media));
    const sample = detail.samples.includes(r.sample) ? r.sample : detail.samples[0];
    if (detail.samples.length > 1) {
      page.append(
        h("div", { class: "samples" }, "sample: ", detail.samples.map((s) =>
          h("a", { class: "button" + (s === sample ? " on" : ""), href: itemHash(detail.id, state.filters, s), text: String(s) }))),
      );
    }
    const grid = h("div", { class: "runs-grid" });
    grid.style.setProperty("--cols", String(detail.runs.length)); // CSSOM, not a style attribute (CSP)
    for (const run of detail.runs) {
      const entry = run.samples.find((s) => s.sample === sample);
      grid.append(runColumn(run, entry, detail));
    }
    page.append(grid);
    return page;
  }

  function questionBlock(detail) {
    const picks = {};
    for (const run of detail.runs) {
      const entry = run.samples[0];
      const ex = entry && entry.extraction ? entry.extraction.recorded || entry.extraction.reread : null;
      if (ex && typeof ex.value === "string") (picks[ex.value] = picks[ex.value] || []).push(run);
    }
    const block = h("div", { class: "question block" }, h("h4", { text: "Question" }), h("pre", { class: "q", "data-testid": "question", text: detail.question }));
    if (detail.options) {
      const list = h("ol", { class: "options" });
      for (const [letter, text] of Object.entries(detail.options)) {
        const gold = detail.gold === letter;
        list.append(
          h("li", { class: gold ? "gold" : "" }, h("b", { text: letter + ": " }), text, gold ? h("span", { class: "badge o-correct", text: "gold" }) : null,
            (picks[letter] || []).map((run) => h("span", { class: "chip " + run.key, title: run.spec, text: run.label }))),
        );
      }
      block.append(list);
    }
    block.append(h("p", { class: "gold-line" }, h("b", { text: "Gold answer: " }), h("span", { "data-testid": "gold", text: detail.gold_text })));
    if (detail.context) block.append(folded("Narration / context (" + detail.context.length + " chars; sent only with -S with_asr=true)", h("pre", { text: detail.context })));
    if (detail.item_meta && Object.keys(detail.item_meta).length) block.append(folded("Item metadata", kv(detail.item_meta)));
    return block;
  }

  function player(media) {
    const window_ = media.start !== null && media.start !== undefined ? media.start.toFixed(2) + "–" + (media.end !== null ? media.end.toFixed(2) : "end") + " s of " : "";
    const caption = h("p", { class: "hint", text: "clip: " + window_ + media.name });
    if (!media.url) return h("div", { class: "player block" }, caption, h("p", { class: "hint", text: "The video is not part of the static export." }));
    const src = media.url + (media.start !== null && media.start !== undefined ? "#t=" + media.start + (media.end ? "," + media.end : "") : "");
    const video = h("video", {
      id: "player", controls: true, muted: true, preload: "metadata", src, "data-testid": "player",
      dataset: media.start !== null && media.start !== undefined ? { start: String(media.start), end: String(media.end === null ? "" : media.end) } : {},
    });
    return h("div", { class: "player block" }, video, caption);
  }

  function clampToWindow(video) {
    const start = parseFloat(video.dataset.start);
    const end = parseFloat(video.dataset.end);
    if (Number.isNaN(start)) return;
    video.dataset.clamped = "1";
    const limit = Number.isNaN(end) ? Infinity : end;
    const toStart = () => {
      if (Math.abs(video.currentTime - start) > 0.04) video.currentTime = start;
    };
    if (video.readyState >= 1) toStart();
    video.addEventListener("loadedmetadata", toStart);
    const watch = () => {
      if (video.currentTime >= limit) {
        video.pause();
        video.currentTime = limit;
        return;
      }
      if (!video.paused) requestAnimationFrame(watch);
    };
    video.addEventListener("play", () => {
      if (video.currentTime >= limit - 0.04 || video.currentTime < start) video.currentTime = start;
      requestAnimationFrame(watch);
    });
    video.addEventListener("seeked", () => {
      if (video.currentTime < start - 0.04) video.currentTime = start;
      else if (video.currentTime > limit + 0.04) video.currentTime = limit;
    });
  }

  function runColumn(run, entry, detail) {
    const column = h("div", { class: "run-col", "data-testid": "run-" + run.key, dataset: { run: run.key } });
    column.append(h("h3", null, h("span", { class: "chip " + run.key, title: run.spec, text: run.label })));
    if (!entry) {
      column.append(badge("pending"), h("p", { class: "hint", text: "no record for this sample" }));
      return column;
    }
    const head = h("p", { class: "outcome" }, h("span", { class: "badge o-" + entry.outcome, "data-testid": "outcome", text: entry.outcome }), " ", entry.why);
    if (entry.truncated) head.append(" ", h("span", { class: "badge o-truncated", text: "truncated" }));
    if (entry.refusal) head.append(" ", h("span", { class: "badge o-failed", text: "refusal" }));
    column.append(head);
    // The reply first, then how it was read and scored; the frames (up to hundreds of thumbnails)
    // after them, folded when there are many.
    const p = entry.prediction;
    if (p && p.error) {
      column.append(section("Error", h("p", { class: "error", "data-testid": "error" }, h("span", { class: "badge o-failed", text: p.error_kind || "error" }), " ", p.http_status ? "HTTP " + p.http_status + " — " : "", p.error)));
    }
    if (p) column.append(responseBlock(p));
    if (entry.score) column.append(scoreBlock(entry.score));
    column.append(extractionBlock(entry.extraction));
    if (entry.judgment) column.append(judgeBlock(entry.judgment));
    if (entry.frames) column.append(framesBlock(entry.frames, entry.prediction));
    if (p) {
      column.append(section("Request", kv(Object.assign({}, p.stats, { "prediction line": p.line, model: p.model }))));
      column.append(section("What was sent", Object.keys(p.sent || {}).length ? kv(p.sent) : h("p", { class: "hint", text: "not recorded by this run" })));
      const prompt = p.prompt !== null && p.prompt !== undefined ? h("pre", { class: "prompt", "data-testid": "prompt", text: p.prompt }) : h("p", { class: "hint", text: "not recorded" });
      column.append(folded("Prompt as sent (" + p.prompt_source + (p.prompt ? ", " + p.prompt.length + " chars" : "") + ")", [prompt, p.prompt_sha256 ? h("p", { class: "hint", text: "sha256 " + p.prompt_sha256 }) : null], false, "prompt-block"));
      const extra = Object.assign({}, p.extra, p.meta_extra && Object.keys(p.meta_extra).length ? { meta: p.meta_extra } : {});
      if (Object.keys(extra).length) column.append(folded("Other recorded fields", h("div", { "data-testid": "extra" }, kv(extra)), true));
    } else {
      column.append(h("p", { class: "hint", text: "No prediction recorded for this item yet." }));
    }
    return column;
  }

  function scoreBlock(score) {
    const body = h("p", null, h("b", { "data-testid": "score", text: fmt(score.earned, 3) + " / " + fmt(score.possible, 3) }), " · status ", score.status);
    if (score.judge_error) body.append(h("span", { class: "error", text: " · judge error: " + score.judge_error }));
    const extra = score.extra && Object.keys(score.extra).length ? folded("score fields", kv(score.extra)) : null;
    return section("Score", body, extra);
  }

  function extractionBlock(ex) {
    const parts = [];
    if (ex.recorded) parts.push(h("p", null, "recorded by the last scoring: ", h("span", { class: "badge o-" + (ex.recorded.status === "ok" ? "neutral" : ex.recorded.status), text: ex.recorded.status }), " ", h("code", { "data-testid": "extracted", text: answerText(ex.recorded.value) || "—" })));
    if (ex.reread) {
      parts.push(h("p", null, "read now: ", h("code", { text: ex.reread.text || "—" }), " by rule ", h("code", { "data-testid": "rule", text: ex.reread.rule }), ex.reread.detail ? " — " + ex.reread.detail : ""));
    }
    if (ex.differs) parts.push(h("p", { class: "note", text: "The recorded extraction differs from what extraction reads today (scored with an older expvid, or another extraction mode)." }));
    if (!parts.length) parts.push(h("p", { class: "hint", text: "nothing to extract (no response, or no dataset item)" }));
    return section("Extraction", parts);
  }

  function judgeBlock(j) {
    const parts = [h("p", null, "judge ", h("code", { text: j.judge }), j.cached ? " (cached)" : "", j.score !== null && j.score !== undefined ? " · score " + fmt(j.score, 3) : "")];
    if (j.error) parts.push(h("p", { class: "error", text: "judge failed: " + j.error }));
    if (j.blanks) {
      parts.push(
        h("table", { class: "blanks", "data-testid": "blanks" },
          h("tr", null, h("th", { text: "blank" }), h("th", { text: "gold" }), h("th", { text: "answer" }), h("th", { text: "verdict" })),
          j.blanks.map((b) => h("tr", null, h("td", { text: String(b.blank) }), h("td", { text: b.gold }), h("td", { text: answerText(b.predicted) }),
            h("td", null, b.verdict === null || b.verdict === undefined ? "—" : h("span", { class: "badge o-" + (b.verdict ? "correct" : "wrong"), text: b.verdict ? "right" : "wrong" }))))),
      );
    } else if (j.verdicts) {
      parts.push(h("p", { text: "verdicts: " + j.verdicts.map((v) => (v ? "right" : "wrong")).join(", ") }));
    }
    let raw;
    if (Array.isArray(j.raw_json) && j.raw_json.length && j.raw_json.every((x) => x && typeof x === "object" && !Array.isArray(x))) {
      const keys = [...new Set(j.raw_json.flatMap((x) => Object.keys(x)))];
      raw = h("table", { class: "blanks" }, h("tr", null, keys.map((k) => h("th", { text: k }))), j.raw_json.map((x) => h("tr", null, keys.map((k) => h("td", { text: fmt(x[k], 4) })))));
    } else {
      raw = h("pre", { text: j.raw || "—" });
    }
    parts.push(folded("judge's raw reply", raw, false, "judge-raw"));
    if (j.extra && Object.keys(j.extra).length) parts.push(folded("other judgment fields", kv(j.extra)));
    return section("Judge", parts);
  }

  function responseBlock(p) {
    const parts = [];
    if (p.refusal) parts.push(h("p", { class: "error", text: "refusal: " + p.refusal }));
    if (p.response === null || p.response === undefined) {
      parts.push(h("p", { class: "hint", text: "no response" }));
    } else {
      parts.push(h("pre", { class: "response", "data-testid": "response", text: p.answer_text }));
      if (p.inline_reasoning !== null && p.inline_reasoning !== undefined) {
        parts.push(folded("reasoning in the reply (" + p.inline_reasoning.length + " chars; not read by extraction)", h("pre", { text: p.inline_reasoning }), false, "reasoning"));
        parts.push(folded("raw reply as recorded", h("pre", { text: p.response })));
      }
    }
    if (p.reasoning) parts.push(folded("reasoning channel (" + p.reasoning.length + " chars)", h("pre", { text: p.reasoning }), false, "reasoning"));
    return section("Response", parts);
  }

  // Frames shown open up to this many (Level-1 and -2 requests); more (Level-3: 128) start folded.
  const FRAMES_OPEN_MAX = 16;

  function framesBlock(ref, prediction) {
    const recorded = prediction ? prediction.recorded_frames || [] : [];
    const block = h("details", { class: "block frames-block", "data-frames": "1", "data-testid": "frames-block", open: recorded.length <= FRAMES_OPEN_MAX });
    block._ref = ref;
    block._recorded = recorded;
    block.append(framesSummary(recorded.length || null), h("p", { class: "hint", text: "loading…" }));
    return block;
  }

  function framesSummary(n) {
    return h("summary", { class: "frames-summary" }, h("h4", { text: "Frames sent" + (n === null ? "" : " (" + n + ")") }));
  }

  async function loadFrames(block) {
    let set;
    try {
      set = await source.frames(block._ref);
    } catch (error) {
      block.replaceChildren(framesSummary(null), h("p", { class: "error", text: "cannot load frames: " + error.message }));
      return;
    }
    const recorded = (set.recorded && set.recorded.length ? set.recorded : block._recorded) || [];
    const images = set.frames || [];
    const n = recorded.length || images.length;
    const head = h("p", { class: "frames-source" },
      h("span", { class: "badge src-" + set.source, "data-testid": "frames-source", text: set.source === "resampled" ? "re-sampled" : set.source }), " ", set.note);
    const strip = h("div", { class: "frames" + (n > 32 ? " many" : ""), "data-testid": "frames", dataset: { source: set.source, count: String(n) } });
    for (let p = 0; p < n; p++) {
      const rec = recorded[p];
      const img = images[p];
      const index = rec ? rec.index : img ? img.index : null;
      const time = rec ? rec.time : img ? img.time : null;
      let label = index !== null && index !== undefined ? "#" + index + " · " + time.toFixed(2) + " s" : img ? img.label : "";
      if (rec && img && img.index !== null && img.index !== rec.index) label += " (now #" + img.index + ")";
      const src = img ? source.image(img) : null;
      const figure = h("figure", { class: "frame", "data-testid": "frame", dataset: { index: index === null || index === undefined ? "" : String(index), time: time === null || time === undefined ? "" : String(time) } },
        src ? h("img", { src, alt: label, loading: "lazy" }) : h("div", { class: "noimg", text: "no image" }),
        h("figcaption", { text: label }));
      if (src) figure.addEventListener("click", () => zoom(src, label, time));
      strip.append(figure);
    }
    if (!block._recorded.length) block.open = n <= FRAMES_OPEN_MAX; // the count is known only now
    const parts = [framesSummary(n), head];
    if (set.mismatch) parts.push(h("p", { class: "note", "data-testid": "frames-mismatch", text: "The frames recovered now are not the ones recorded: the video changed after the run." }));
    if (!n) parts.push(h("p", { class: "hint", text: "none" }));
    else parts.push(strip);
    block.replaceChildren(...parts);
  }

  function zoom(src, label, time) {
    const box = $("#zoom");
    $("img", box).src = src;
    const video = $("#player");
    $("p", box).textContent = label + (video && time !== null && time !== undefined ? " — press p to play the clip from here" : "");
    box.hidden = false;
    box._time = time;
  }

  // -- keyboard -------------------------------------------------------------------------------

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const typing = event.target.matches("input, select, textarea");
    const help = $("#help");
    const zoomBox = $("#zoom");
    if (event.key === "Escape") {
      if (!help.hidden || !zoomBox.hidden) {
        help.hidden = true;
        zoomBox.hidden = true;
      } else if (typing) {
        event.target.blur();
      } else if (state.route && state.route.view === "item") {
        location.hash = listHash(state.filters);
      }
      return;
    }
    if (typing) return;
    const view = state.route ? state.route.view : "overview";
    const key = event.key;
    if (key === "?") {
      help.hidden = !help.hidden;
    } else if (key === "/") {
      event.preventDefault();
      if (view !== "items") location.hash = listHash(state.filters);
      setTimeout(() => $("#f-q").focus(), 0);
    } else if (key === "g") {
      location.hash = "#/";
    } else if (key === "p" && !zoomBox.hidden) {
      const video = $("#player");
      if (video && zoomBox._time !== null && zoomBox._time !== undefined) {
        zoomBox.hidden = true;
        video.currentTime = zoomBox._time;
        video.play();
      }
    } else if (view === "items" && state.data) {
      if (key === "j" || key === "ArrowDown") select(state.selected + 1);
      else if (key === "k" || key === "ArrowUp") select(state.selected - 1);
      else if (key === "n" || key === "N") {
        const found = nextFailure(state.selected, key === "n" ? 1 : -1);
        if (found >= 0) select(found);
      } else if (key === "Enter" || key === "o") {
        if (state.filtered.length) goToPosition(state.selected);
      } else return;
      event.preventDefault();
    } else if (view === "item" && state.data) {
      const position = positionOf(state.route.id);
      if (key === "u") location.hash = listHash(state.filters);
      else if (key === "j" || key === "ArrowRight") goToPosition(position + 1);
      else if (key === "k" || key === "ArrowLeft") goToPosition(position - 1);
      else if (key === "n" || key === "N") goToPosition(nextFailure(position, key === "n" ? 1 : -1));
      else return;
      event.preventDefault();
    }
  }

  // -- live refresh (served) ------------------------------------------------------------------

  async function poll() {
    try {
      const answer = await source.version();
      const version = String(answer.version);
      if (version !== state.version) {
        state.version = version;
        const overview = await source.overview();
        $("#view-overview").innerHTML = overview; // rendered and escaped by the server (Jinja2)
        if (state.data) {
          state.data = null;
          await ensureData();
          if (state.route && state.route.view === "items") {
            applyFilters();
            renderList(true);
          } else if (state.route && state.route.view === "item") {
            applyFilters();
            await renderItem(state.route, true);
          }
        }
        setLive("live · updated " + new Date().toLocaleTimeString());
        document.body.dataset.version = version;
      } else if ($("#live").classList.contains("warn")) {
        setLive("live");
      }
    } catch (error) {
      setLive("server not reachable", true);
    }
    setTimeout(poll, POLL_MS);
  }

  // -- start ----------------------------------------------------------------------------------

  function start() {
    const form = $("#filters");
    form.addEventListener("input", onFilterInput);
    form.addEventListener("change", onFilterInput);
    form.addEventListener("submit", (event) => event.preventDefault());
    $("#list").addEventListener("scroll", () => renderList(false), { passive: true });
    window.addEventListener("resize", () => renderList(false));
    window.addEventListener("hashchange", route);
    document.addEventListener("keydown", onKey);
    $("#help-button").addEventListener("click", () => {
      $("#help").hidden = !$("#help").hidden;
    });
    document.querySelectorAll(".overlay").forEach((el) => el.addEventListener("click", () => (el.hidden = true)));
    route().catch((error) => setLive("error: " + error.message, true));
    if (source.live) {
      setLive("live");
      setTimeout(poll, POLL_MS);
    }
  }

  window.expvidView = { state, timings, rowElement, applyFilters, renderList };
  start();
})();
