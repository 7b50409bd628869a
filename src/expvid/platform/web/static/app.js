// expvid review pages: clip-window playback, the timeline, the step editor, keyboard shortcuts and
// small form helpers. No inline scripts anywhere (CSP), so pages pass values through data- attributes.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

function parseJSON(text, fallback) {
  try {
    const value = JSON.parse(text || "");
    return value === null || value === undefined ? fallback : value;
  } catch (error) {
    return fallback;
  }
}

// --- the player ------------------------------------------------------------------------------------

function clampToWindow(video) {
  const start = parseFloat(video.dataset.start);
  const end = parseFloat(video.dataset.end);
  const removed = parseJSON(video.dataset.removed, []);
  if (Number.isNaN(start) || Number.isNaN(end)) return;
  video.dataset.clamped = "1";
  const seekStart = () => {
    if (Math.abs(video.currentTime - start) > 0.04) video.currentTime = start;
  };
  if (video.readyState >= 1) seekStart();
  video.addEventListener("loadedmetadata", seekStart);
  // Checked every animation frame while playing: timeupdate alone can overshoot the window by 250 ms.
  const watch = () => {
    if (video.currentTime >= end) {
      video.pause();
      video.currentTime = end;
      return;
    }
    // Spans the build cut out of the clip are skipped, so the reviewer sees what the model sees.
    for (const [a, b] of removed) {
      if (video.currentTime >= a && video.currentTime < b) video.currentTime = b;
    }
    if (!video.paused) requestAnimationFrame(watch);
  };
  video.addEventListener("play", () => {
    if (video.currentTime >= end - 0.04 || video.currentTime < start) video.currentTime = start;
    requestAnimationFrame(watch);
  });
  video.addEventListener("seeked", () => {
    if (video.currentTime < start - 0.04) video.currentTime = start;
    else if (video.currentTime > end + 0.04) video.currentTime = end;
  });
  const replay = video.parentElement.querySelector("[data-replay]");
  if (replay) {
    replay.addEventListener("click", () => {
      video.currentTime = start;
      playQuietly(video);
    });
  }
}

// A pause (key "k", a seek) that lands before playback starts rejects play()'s promise with an
// AbortError: that is the reviewer's intent, not a fault, so only other rejections reach the console.
function playQuietly(video) {
  video.play().catch((error) => {
    if (error && error.name !== "AbortError") console.warn("video did not play:", error);
  });
}

function playerWindow(video) {
  const start = parseFloat(video.dataset.start);
  const end = parseFloat(video.dataset.end);
  return {
    start: Number.isNaN(start) ? 0 : start,
    end: Number.isNaN(end) ? video.duration || 0 : end,
  };
}

function seekTo(video, seconds) {
  const w = playerWindow(video);
  video.currentTime = Math.min(Math.max(seconds, w.start), w.end || seconds);
}

// --- the timeline under the player ----------------------------------------------------------------

function svgElement(name, attributes) {
  const element = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  return element;
}

function drawTimeline(box, video, marks) {
  const duration = video.duration;
  if (!Number.isFinite(duration) || duration <= 0) return;
  const windowSpan = parseJSON(box.dataset.window, null);
  const removed = parseJSON(box.dataset.removed, []);
  const width = 1000;
  const x = (t) => (Math.min(Math.max(t, 0), duration) / duration) * width;
  const svg = svgElement("svg", { viewBox: `0 0 ${width} 40`, preserveAspectRatio: "none", class: "timeline-svg" });
  svg.appendChild(svgElement("rect", { x: 0, y: 8, width: width, height: 24, class: "tl-track" }));
  if (windowSpan) {
    const rect = svgElement("rect", {
      x: x(windowSpan[0]), y: 4, width: Math.max(1, x(windowSpan[1]) - x(windowSpan[0])), height: 32,
      class: "tl-window", "data-testid": "timeline-window",
    });
    const title = svgElement("title", {});
    title.textContent = `clip window ${windowSpan[0].toFixed(2)}–${windowSpan[1].toFixed(2)} s`;
    rect.appendChild(title);
    svg.appendChild(rect);
  }
  for (const [a, b] of removed) {
    const rect = svgElement("rect", { x: x(a), y: 4, width: Math.max(1, x(b) - x(a)), height: 32, class: "tl-removed" });
    const title = svgElement("title", {});
    title.textContent = `cut from the clip: ${a.toFixed(2)}–${b.toFixed(2)} s`;
    rect.appendChild(title);
    svg.appendChild(rect);
  }
  marks.forEach((mark, index) => {
    const group = svgElement("g", { class: "tl-step", "data-step": mark.label, "data-start": mark.start });
    group.appendChild(svgElement("rect", {
      x: x(mark.start), y: 10, width: Math.max(2, x(mark.end) - x(mark.start)), height: 20,
      class: index % 2 ? "tl-step-b" : "tl-step-a",
    }));
    const label = svgElement("text", { x: x(mark.start) + 4, y: 25, class: "tl-label" });
    label.textContent = mark.label;
    group.appendChild(label);
    const title = svgElement("title", {});
    title.textContent = `step ${mark.label}: ${mark.text || ""} (${mark.start.toFixed(2)}–${mark.end.toFixed(2)} s)`;
    group.appendChild(title);
    svg.appendChild(group);
  });
  const head = svgElement("line", { x1: 0, x2: 0, y1: 0, y2: 40, class: "tl-head" });
  svg.appendChild(head);
  box.replaceChildren(svg);
  const moveHead = () => {
    const position = x(video.currentTime);
    head.setAttribute("x1", position);
    head.setAttribute("x2", position);
  };
  moveHead();
  box.moveHead = moveHead;
}

function wireTimeline(box) {
  const video = document.getElementById("player");
  if (!video) return;
  let marks = parseJSON(box.dataset.marks, []);
  const redraw = () => drawTimeline(box, video, marks);
  box.setMarks = (newMarks) => {
    marks = newMarks;
    redraw();
  };
  if (video.readyState >= 1) redraw();
  video.addEventListener("loadedmetadata", redraw);
  video.addEventListener("timeupdate", () => box.moveHead && box.moveHead());
  video.addEventListener("seeked", () => box.moveHead && box.moveHead());
  box.addEventListener("click", (event) => {
    if (!Number.isFinite(video.duration)) return;
    const step = event.target.closest(".tl-step");
    if (step) {
      seekTo(video, parseFloat(step.dataset.start) + 0.001);
      return;
    }
    const bounds = box.getBoundingClientRect();
    seekTo(video, ((event.clientX - bounds.left) / bounds.width) * video.duration);
  });
}

// --- forms -------------------------------------------------------------------------------------------

function markEditOnChange(form) {
  const pick = (event) => {
    if (!event.target.matches("[data-content]")) return;
    const edit = form.querySelector('input[name="verdict"][value="edit"]');
    const reject = form.querySelector('input[name="verdict"][value="reject"]');
    // A rejection that corrects the steps stays a rejection.
    if (edit && !(reject && reject.checked)) edit.checked = true;
  };
  form.addEventListener("input", pick);
  form.addEventListener("change", pick);
}

function wireCounter(field) {
  const max = parseInt(field.getAttribute("maxlength"), 10);
  if (!max) return;
  const counter = document.createElement("span");
  counter.className = "counter muted";
  field.after(counter);
  const update = () => {
    const n = field.value.length;
    counter.hidden = n < max * 0.8;
    counter.textContent = `${n} / ${max} characters`;
  };
  field.addEventListener("input", update);
  update();
}

// --- the step editor ---------------------------------------------------------------------------------

function blankStepRow(template) {
  const row = template.cloneNode(true);
  row.querySelector('input[name="step_ref"]').value = "";
  row.querySelector(".num").textContent = "new";
  row.querySelector('textarea[name="step_text"]').value = "";
  row.querySelector('input[name="step_start"]').value = "";
  row.querySelector('input[name="step_end"]').value = "";
  row.querySelector('select[name="step_action"]').value = "keep";
  row.classList.remove("bad");
  return row;
}

function stepRows(form) {
  const rows = [];
  form.querySelectorAll("tr.step-row").forEach((tr) => {
    const ref = tr.querySelector('input[name="step_ref"]').value.trim();
    const text = tr.querySelector('textarea[name="step_text"]').value;
    const action = tr.querySelector('select[name="step_action"]').value;
    if (action === "remove" || (!ref && !text.trim())) return;
    const start = tr.querySelector('input[name="step_start"]').value.trim();
    const end = tr.querySelector('input[name="step_end"]').value.trim();
    rows.push({
      tr: tr,
      ref: ref ? parseInt(ref, 10) : null,
      text: text,
      start: start === "" ? null : Number(start),
      end: end === "" ? null : Number(end),
    });
  });
  return rows;
}

// The same rules as the server (services/level2.time_problems): a quick hint while typing.
function timeProblems(form, rows) {
  const segStart = form.dataset.segStart === "" ? null : parseFloat(form.dataset.segStart);
  const segEnd = form.dataset.segEnd === "" ? null : parseFloat(form.dataset.segEnd);
  const problems = [];
  const bad = new Set();
  const eps = 0.001;
  rows.forEach((row, i) => {
    for (const [name, value] of [["start", row.start], ["end", row.end]]) {
      if (value === null) continue;
      if (!Number.isFinite(value) || value < 0) {
        problems.push(`row ${i + 1}: the ${name} time is not a number of seconds`);
        bad.add(row.tr);
      } else if ((segStart !== null && value < segStart - eps) || (segEnd !== null && value > segEnd + eps)) {
        problems.push(`row ${i + 1}: the ${name} time (${value} s) lies outside the segment (${segStart}-${segEnd} s)`);
        bad.add(row.tr);
      }
    }
    if (row.start !== null && row.end !== null && row.end <= row.start) {
      problems.push(`row ${i + 1}: the end time must be after the start time`);
      bad.add(row.tr);
    }
  });
  const timed = rows.map((row, i) => [i, row]).filter(([, row]) => row.start !== null || row.end !== null);
  for (let k = 1; k < timed.length; k++) {
    const [ip, prev] = timed[k - 1];
    const [i, row] = timed[k];
    const prevEnd = prev.end !== null ? prev.end : prev.start;
    if (prevEnd !== null && row.start !== null && row.start < prevEnd - eps) {
      problems.push(`rows ${ip + 1} and ${i + 1} overlap: row ${ip + 1} ends at ${prevEnd} s, row ${i + 1} starts at ${row.start} s`);
      bad.add(prev.tr);
      bad.add(row.tr);
    }
  }
  return { problems, bad };
}

function showTimeProblems(form, redrawTimeline = true) {
  const rows = stepRows(form);
  const { problems, bad } = timeProblems(form, rows);
  form.querySelectorAll("tr.step-row").forEach((tr) => tr.classList.toggle("bad", bad.has(tr)));
  const list = form.querySelector("[data-testid=step-problems]");
  if (list) {
    list.replaceChildren(...problems.map((text) => {
      const li = document.createElement("li");
      li.textContent = text;
      return li;
    }));
    list.hidden = problems.length === 0;
  }
  // Keep the timeline in step with the table (it shows the player's clock).
  const box = document.querySelector(".timeline");
  if (redrawTimeline && box && box.setMarks) {
    const offset = parseFloat(form.dataset.offset) || 0;
    box.setMarks(rows.filter((r) => r.start !== null && r.end !== null && r.end > r.start).map((r) => ({
      label: r.ref === null ? "new" : String(r.ref), text: r.text, start: r.start - offset, end: r.end - offset,
    })));
  }
  return problems;
}

async function fetchPreview(form) {
  const rows = stepRows(form).map(({ ref, text, start, end }) => ({ ref, text, start, end }));
  const response = await fetch(form.dataset.previewUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": form.dataset.csrf },
    body: JSON.stringify({ steps: rows }),
    credentials: "same-origin",
  });
  return { ok: response.ok, body: await response.json() };
}

function previewText(body) {
  let text = body.question;
  if (body.options) {
    for (const [letter, option] of Object.entries(body.options)) text += "\n" + letter + ": " + option;
  }
  return text + "\nAnswer: " + JSON.stringify(body.answer);
}

function wireStepEditor(form) {
  form.addEventListener("click", (event) => {
    const add = event.target.closest("[data-add-step]");
    if (add) {
      const tr = add.closest("tr");
      tr.after(blankStepRow(tr));
      const edit = form.querySelector('input[name="verdict"][value="edit"]');
      if (edit) edit.checked = true;
      showTimeProblems(form);
      return;
    }
    const fromPlayer = event.target.closest("[data-time-from-player]");
    const video = document.getElementById("player");
    if (fromPlayer && video) {
      // Step times are on the source's clock; the player may show a clip starting at the segment.
      const offset = parseFloat(form.dataset.offset) || 0;
      const input = fromPlayer.closest("tr").querySelector(`input[name="${fromPlayer.dataset.timeFromPlayer}"]`);
      input.value = (Math.round((video.currentTime + offset) * 10) / 10).toFixed(1);
      input.dispatchEvent(new Event("input", { bubbles: true }));
    }
  });
  form.addEventListener("input", () => showTimeProblems(form));
  form.addEventListener("change", () => showTimeProblems(form));
  showTimeProblems(form, false);

  const previewButton = form.querySelector("[data-preview]");
  const output = form.querySelector(".preview");
  if (previewButton && output && form.dataset.previewUrl) {
    previewButton.addEventListener("click", async () => {
      output.hidden = false;
      output.textContent = "…";
      const { ok, body } = await fetchPreview(form);
      output.textContent = ok ? previewText(body) : "Cannot rebuild: " + (body.problems || [body.detail]).join("; ");
    });
  }

  // Before saving an edit, ask the server whether this question can still be made from the list:
  // when it cannot (too few steps for four orderings, the missing step removed...), say so and
  // offer the right outcome instead of a refused save.
  const panel = form.querySelector("[data-testid=cannot-rebuild]");
  if (!panel || !form.dataset.previewUrl) return;
  form.addEventListener("submit", async (event) => {
    const verdict = form.querySelector('input[name="verdict"]:checked');
    if (!verdict || verdict.value !== "edit" || form.dataset.checked === "1") return;
    event.preventDefault();
    if (showTimeProblems(form).length) {
      form.querySelector("[data-testid=step-problems]").scrollIntoView({ block: "center" });
      return;
    }
    const { ok, body } = await fetchPreview(form);
    if (ok || body.code !== "cannot_rebuild") {
      form.dataset.checked = "1";
      form.requestSubmit();
      return;
    }
    panel.querySelector("[data-reason]").textContent = (body.problems || []).join(" ").split(". If the correction")[0] + ".";
    panel.hidden = false;
    panel.scrollIntoView({ block: "center" });
  });
  panel.querySelector("[data-reject-keep-steps]").addEventListener("click", () => {
    form.querySelector('input[name="verdict"][value="reject"]').checked = true;
    panel.hidden = true;
    const justification = form.querySelector('textarea[name="justification"]');
    if (justification.value.trim().length < 5) {
      justification.focus();
      return;
    }
    form.requestSubmit();
  });
  panel.querySelector("[data-keep-editing]").addEventListener("click", () => {
    panel.hidden = true;
  });
}

// --- keyboard shortcuts ------------------------------------------------------------------------------

function typing(target) {
  return target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

function toggleShortcuts(show) {
  const overlay = document.getElementById("shortcuts");
  if (!overlay) return;
  overlay.hidden = show === undefined ? !overlay.hidden : !show;
  if (!overlay.hidden) overlay.querySelector("[data-shortcuts-close]").focus();
}

function chooseVerdict(value) {
  const form = document.querySelector("form.review-form");
  if (!form) return false;
  const radio = form.querySelector(`input[name="verdict"][value="${value}"]`);
  if (!radio) return false;
  radio.checked = true;
  if (value === "edit") {
    const first = form.querySelector("[data-content]");
    if (first) first.focus();
  } else {
    form.querySelector('textarea[name="justification"]').focus();
  }
  return true;
}

function onKey(event) {
  const video = document.getElementById("player");
  const overlay = document.getElementById("shortcuts");
  if (event.key === "Escape") {
    if (overlay && !overlay.hidden) toggleShortcuts(false);
    else if (typing(event.target)) event.target.blur();
    return;
  }
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    const decisionForms = "form.review-form, form.version, form.author";
    const inside = event.target.closest && event.target.closest("form");
    const form = inside && inside.matches(decisionForms) ? inside : document.querySelector("form.review-form");
    if (form && form.matches(decisionForms)) {
      event.preventDefault();
      form.requestSubmit();
    }
    return;
  }
  if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
  if (overlay && !overlay.hidden && event.key !== "?") return;
  const key = event.key;
  let handled = true;
  if (key === "?") toggleShortcuts();
  else if ((key === " " || key === "k") && video) {
    if (video.paused) playQuietly(video);
    else video.pause();
  } else if ((key === "," || key === ".") && video) {
    const fps = parseFloat(video.dataset.fps) || 25;
    video.pause();
    seekTo(video, video.currentTime + (key === "." ? 1 : -1) / fps);
  } else if ((key === "ArrowLeft" || key === "ArrowRight") && video) {
    seekTo(video, video.currentTime + (key === "ArrowRight" ? 1 : -1));
  } else if (key === "0" && video) {
    seekTo(video, playerWindow(video).start);
  } else if (key === "a") handled = chooseVerdict("approve");
  else if (key === "e") handled = chooseVerdict("edit");
  else if (key === "r") {
    handled = chooseVerdict("reject");
    if (!handled) {
      const reject = document.querySelector("[data-testid=reject-form] textarea[name=justification]");
      if (reject) {
        reject.focus();
        handled = true;
      }
    }
  } else if (key === "j") {
    const field = document.querySelector("form.review-form textarea[name=justification]");
    if (field) field.focus();
    else handled = false;
  } else if (key === "n" && document.body.dataset.nextUrl) {
    window.location.assign(document.body.dataset.nextUrl);
  } else if (/^[1-9]$/.test(key)) {
    const version = document.querySelector(`form.version[data-version="${key}"]`);
    if (version) {
      version.scrollIntoView({ block: "start" });
      version.querySelector("textarea[name=justification]").focus();
    } else handled = false;
  } else handled = false;
  if (handled) event.preventDefault();
}

function wireProcedural(form) {
  // Page kind `procedural`: the answers are judged only once the question is judged valid.
  const answers = form.querySelector("[data-answers]");
  const radios = form.querySelectorAll("input[name=question_valid][type=radio]");
  if (!answers || !radios.length) return;
  const update = () => {
    const chosen = form.querySelector("input[name=question_valid]:checked");
    answers.hidden = !chosen || chosen.value !== "yes";
  };
  radios.forEach((r) => r.addEventListener("change", update));
  update();
}

function autoGrow(area) {
  // The CSS `field-sizing: content` of textarea.grow, for browsers without it (Firefox, older Safari).
  const fit = () => {
    area.style.height = "auto";
    area.style.height = Math.min(area.scrollHeight + 2, window.innerHeight * 0.75) + "px";
  };
  area.addEventListener("input", fit);
  fit();
}

document.addEventListener("DOMContentLoaded", () => {
  if (!(window.CSS && CSS.supports("field-sizing", "content"))) document.querySelectorAll("textarea.grow").forEach(autoGrow);
  document.querySelectorAll("form.procedural-form").forEach(wireProcedural);
  document.querySelectorAll("video[data-start]").forEach(clampToWindow);
  document.querySelectorAll(".timeline").forEach(wireTimeline);
  document.querySelectorAll("form.review-form").forEach(markEditOnChange);
  document.querySelectorAll("textarea[data-counter]").forEach(wireCounter);
  document.querySelectorAll("form.review-form, form.version").forEach((form) => {
    if (form.querySelector("tr.step-row")) wireStepEditor(form);
  });
  document.querySelectorAll("[data-shortcuts-toggle]").forEach((b) => b.addEventListener("click", () => toggleShortcuts()));
  document.querySelectorAll("[data-shortcuts-close]").forEach((b) => b.addEventListener("click", () => toggleShortcuts(false)));
  document.addEventListener("keydown", onKey);
});

// Page kind `timed-mcq`: a time button plays the video from that time, to the range's end if any. The
// end is checked every animation frame, as the clip window is (timeupdate alone overshoots by up to
// 250 ms); a later click replaces an earlier range.
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-seek]");
  const video = document.getElementById("player");
  if (!button || !video) return;
  const start = parseFloat(button.dataset.seek);
  const end = button.dataset.seekEnd ? parseFloat(button.dataset.seekEnd) : null;
  const token = String(Number(video.dataset.seekToken || 0) + 1);
  video.dataset.seekToken = token;
  video.currentTime = start;
  const watch = () => {
    if (video.dataset.seekToken !== token || end === null) return;
    if (video.currentTime >= end) {
      video.pause();
      video.currentTime = end;
      return;
    }
    if (!video.paused) requestAnimationFrame(watch);
  };
  video.play().then(() => requestAnimationFrame(watch), () => {});
});
