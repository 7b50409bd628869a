// expvid review pages: clip-window playback, the step editor, and small form helpers.
// No inline scripts anywhere (CSP), so pages pass values through data- attributes.
"use strict";

function clampToWindow(video) {
  const start = parseFloat(video.dataset.start);
  const end = parseFloat(video.dataset.end);
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
      video.play();
    });
  }
}

function markEditOnChange(form) {
  const pick = (event) => {
    if (!event.target.matches("[data-content]")) return;
    const edit = form.querySelector('input[name="verdict"][value="edit"]');
    if (edit) edit.checked = true;
  };
  form.addEventListener("input", pick);
  form.addEventListener("change", pick);
}

function blankStepRow(template) {
  const row = template.cloneNode(true);
  row.querySelector('input[name="step_ref"]').value = "";
  row.querySelector(".num").textContent = "new";
  row.querySelector('textarea[name="step_text"]').value = "";
  row.querySelector('input[name="step_start"]').value = "";
  row.querySelector('input[name="step_end"]').value = "";
  row.querySelector('select[name="step_action"]').value = "keep";
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
      ref: ref ? parseInt(ref, 10) : null,
      text: text,
      start: start ? parseFloat(start) : null,
      end: end ? parseFloat(end) : null,
    });
  });
  return rows;
}

function wireStepEditor(form) {
  form.addEventListener("click", (event) => {
    const button = event.target.closest("[data-add-step]");
    if (!button) return;
    const tr = button.closest("tr");
    tr.after(blankStepRow(tr));
    const edit = form.querySelector('input[name="verdict"][value="edit"]');
    if (edit) edit.checked = true;
  });
  const previewButton = form.querySelector("[data-preview]");
  const output = form.querySelector(".preview");
  if (!previewButton || !output || !form.dataset.previewUrl) return;
  previewButton.addEventListener("click", async () => {
    output.hidden = false;
    output.textContent = "…";
    const response = await fetch(form.dataset.previewUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": form.dataset.csrf },
      body: JSON.stringify({ steps: stepRows(form) }),
      credentials: "same-origin",
    });
    const body = await response.json();
    if (!response.ok) {
      output.textContent = "Cannot rebuild: " + (body.problems || [body.detail]).join("; ");
      return;
    }
    let text = body.question;
    if (body.options) {
      for (const [letter, option] of Object.entries(body.options)) text += "\n" + letter + ": " + option;
    }
    output.textContent = text + "\nAnswer: " + JSON.stringify(body.answer);
  });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("video[data-start]").forEach(clampToWindow);
  document.querySelectorAll("form.review-form").forEach(markEditOnChange);
  document.querySelectorAll("form.review-form, form.version").forEach((form) => {
    if (form.querySelector("tr.step-row")) wireStepEditor(form);
  });
});
