// Keyboard for the review queue: Y (correct), N (wrong), S (skip), U (undo); and the card's four
// buttons, whose clicks take the same path.
//
// Every press is sent with the screen (one showing of one row: its number, run and item) that was
// painted when the key went down, how long it had been painted (shown_ms: the page refuses a
// verdict on a row shown for less than a person can react to it), and a sequence number; it is
// resent until the page acknowledges it (data.acked), so presses are neither merged nor lost
// between reruns; the page applies each exactly once, to the row it names.
//
// Keys never go into a field by accident: after a pick (a select's option, a switch, a segmented
// control, Enter in a field) the focus leaves the field, so the next letters mark rows; while a
// field does hold the focus, the line under the buttons says so (this component's own element).
// A note typed and not yet given with a mark or skip is never dropped unasked: a scope control, a
// sidebar link, the run picker or leaving the page asks first.
const KEYS = ["y", "n", "s", "u"];
// A click on a card button is a press of its key. Left to Streamlit, a click names no row: its
// callback takes the arguments of the latest script run, so a click on a row still on screen while
// the server drew the next one was applied to that next row. Caught here (capture phase, before
// React's listener on its root), it is sent like a key with the row painted at the click.
const BUTTONS = { q_yes: "y", q_no: "n", q_skip: "s", q_undo: "u" };
// Where a pick leaves the page's scope or the page itself: a typed note would be dropped.
const LEAVING = [
  "[data-testid='stSidebarNavLink']",
  ".st-key-run_picker",
  ".st-key-q_bucket",
  ".st-key-q_domain",
  ".st-key-q_language",
  ".st-key-q_sample",
  ".st-key-q_view",
  "[data-testid='stPopover']",
].join(",");
const NOTE_FIELD = "[class*='st-key-q_note_'] input";
// A click here picks something (an option of a select, a segment, a switch): the focus leaves after.
const PICKED = "[role='option'], [data-testid='stButtonGroup'], label:has(input[type='checkbox']), label:has(input[type='radio'])";
const IDLE = "Keys: Y correct · N wrong · S skip · U undo";

// The queue is on the page (this component's element, which stays while a rerun redraws it): the
// listeners, registered once for the tab, act only then.
function onQueue() {
  return document.querySelector(".st-key-q_keys") !== null;
}

function buttonKey(target) {
  const button = target && target.closest ? target.closest("button") : null;
  if (!button || button.disabled) return null;
  for (const [name, key] of Object.entries(BUTTONS)) {
    if (button.closest(".st-key-" + name)) return key;
  }
  return null;
}

function inField(target) {
  if (!target) return false;
  const tag = (target.tagName || "").toUpperCase();
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || target.isContentEditable === true;
}

// The field's name as the reviewer sees it: its label, else its placeholder.
function fieldName(target) {
  const box = target.closest ? target.closest("[data-testid^='st'][class*='st-key-']") : null;
  const label = box ? box.querySelector("label") : null;
  const text = (label && label.innerText.trim()) || target.getAttribute("placeholder") || "";
  return text.replace(/\s*\(optional\)\s*/i, "").trim() || "a field";
}

// The row shown is read from the page: the block that shows the row's question and answers
// carries data-q-screen, data-q-run and data-q-item, so what the attributes say is what the person
// is reading. (The component's own data, or a marker drawn after the row, reaches the page later
// than the row does, so neither can tell.)
function rowShown() {
  const marker = document.querySelector("[data-q-screen]");
  if (!marker) return null;
  const screen = Number(marker.getAttribute("data-q-screen"));
  const run = Number(marker.getAttribute("data-q-run"));
  if (!Number.isInteger(screen) || screen <= 0) return null;
  return { screen: screen, run: Number.isInteger(run) ? run : null, item: marker.getAttribute("data-q-item") };
}

// Each showing, timed at the animation frame after it reached the page: the frame that paints it.
// A press belongs to the showing painted last before its keydown (a row in the page but not yet
// painted has not been seen), and is as old as the time since that paint.
// A showing drawn again (a rerun redrew the card, the view came back to the queue) keeps the time
// it was first painted: the reviewer has seen that row since then.
function watchRows(keys) {
  if (keys.observer) return;
  keys.seen = [];
  keys.shownBefore = new Map();
  const look = () => {
    const now = rowShown();
    const last = keys.seen[keys.seen.length - 1];
    if (last && (now ? last.screen === now.screen && last.run === now.run : last.screen === null)) return;
    const id = now ? `${now.run}:${now.screen}` : null;
    const again = id !== null ? keys.shownBefore.get(id) : undefined;
    const entry = again || {
      screen: now ? now.screen : null,
      run: now ? now.run : null,
      item: now ? now.item : null,
      at: Infinity,
    };
    keys.seen.push(entry);
    if (keys.seen.length > 64) keys.seen.shift();
    if (again) return;
    if (id !== null) {
      keys.shownBefore.set(id, entry);
      if (keys.shownBefore.size > 256) keys.shownBefore.delete(keys.shownBefore.keys().next().value);
    }
    requestAnimationFrame(() => {
      entry.at = performance.now();
    });
    if (now) keys.dirty = false; // a new row: its note field starts from what the page gave it
  };
  keys.observer = new MutationObserver(look);
  keys.observer.observe(document.body, {
    subtree: true,
    childList: true,
    attributes: true,
    attributeFilter: ["data-q-screen"],
  });
  look();
}

function showingAt(keys, time) {
  for (let i = keys.seen.length - 1; i >= 0; i--) {
    if (keys.seen[i].at <= time) return keys.seen[i];
  }
  return null;
}

// The note field holds text the reviewer typed that no mark or skip has taken yet.
function unsavedNote(keys) {
  const field = document.querySelector(NOTE_FIELD);
  return keys.dirty && field && field.value.trim() ? field : null;
}

function askToLeave(keys) {
  const field = unsavedNote(keys);
  if (!field) return true;
  const place = document.querySelector("[data-q-screen] .q-line"); // "Row 12 of the run   Domain: ..."
  const which = place ? place.textContent.split(/\s{2,}/)[0].toLowerCase() : "this row";
  const ok = window.confirm(
    `Your note on ${which} ("${field.value.trim().slice(0, 60)}") is not saved yet: it is saved with ` +
      "Correct, Wrong or Skip. Leave it and lose the note?",
  );
  if (ok) keys.dirty = false;
  return ok;
}

export default function (component) {
  const { data, setStateValue, parentElement } = component;
  const keys = window.__reviewKeys || (window.__reviewKeys = { seq: 0, pending: [], handler: null, dirty: false });
  keys.send = setStateValue;
  keys.notice = parentElement ? parentElement.querySelector(".q-keys") : null;
  watchRows(keys);
  // A press is sent with the showing painted at its keydown (none: screen null, so the page says
  // it was not applied instead of it vanishing).
  const send = (key, time) => {
    const found = showingAt(keys, time);
    const shown = found && found.screen !== null ? found : null;
    keys.seq += 1;
    keys.pending.push({
      seq: keys.seq,
      key: key,
      screen: shown ? shown.screen : null,
      run: shown ? shown.run : null,
      item: shown ? shown.item : null,
      shown_ms: shown ? Math.max(0, Math.round(time - shown.at)) : null,
    });
    keys.dirty = false; // the note typed goes with this press
    keys.send("presses", keys.pending.slice());
  };
  const acked = data && Number.isInteger(data.acked) ? data.acked : 0;
  keys.pending = keys.pending.filter((p) => p.seq > acked);
  const say = () => {
    const notice = keys.notice;
    if (!notice || !notice.isConnected) return;
    const target = document.activeElement;
    if (inField(target) && !(target.type === "checkbox" || target.type === "radio")) {
      notice.textContent = `Typing in ${fieldName(target)}: letters go there. Press Esc to mark with Y, N, S, U.`;
      notice.classList.add("q-keys-field");
    } else {
      notice.textContent = IDLE;
      notice.classList.remove("q-keys-field");
    }
  };
  keys.say = say;
  say();
  if (!keys.handler) {
    // After a pick the focus leaves the field (a select keeps it, and its search box takes letters).
    const release = () =>
      setTimeout(() => {
        const target = document.activeElement;
        if (target && target !== document.body && !target.matches(NOTE_FIELD)) target.blur();
        keys.say && keys.say();
      }, 20);
    keys.handler = (event) => {
      if (!onQueue()) return;
      if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
      const target = event.target;
      if (inField(target)) {
        if (event.key === "Escape") target.blur();
        else if (event.key === "Enter" && !target.matches(NOTE_FIELD)) release();
        return;
      }
      const key = (event.key || "").toLowerCase();
      if (!KEYS.includes(key)) return;
      event.preventDefault();
      send(key, event.timeStamp);
    };
    keys.clicks = (event) => {
      if (!onQueue()) return;
      if (keys.gesture && keys.gesture.target === event.target && !keys.gesture.ok) {
        event.preventDefault();
        event.stopImmediatePropagation();
        return;
      }
      if (event.target.closest && event.target.closest(PICKED)) release();
      const key = buttonKey(event.target);
      if (!key) return;
      event.preventDefault();
      event.stopPropagation();
      send(key, event.timeStamp);
    };
    // Asked at the press of the mouse (a select opens then), and the click that follows obeys.
    keys.leaving = (event) => {
      keys.gesture = null;
      if (!onQueue()) return;
      const target = event.target;
      if (!target.closest || !target.closest(LEAVING) || !unsavedNote(keys)) return;
      const ok = askToLeave(keys);
      keys.gesture = { target: target, ok: ok };
      if (!ok) {
        event.preventDefault();
        event.stopImmediatePropagation();
      }
    };
    keys.typed = (event) => {
      if (event.target.matches && event.target.matches(NOTE_FIELD)) keys.dirty = true;
    };
    keys.changed = (event) => {
      if (event.target.type === "checkbox" || event.target.type === "radio") release();
    };
    keys.unload = (event) => {
      if (!onQueue() || !unsavedNote(keys)) return;
      event.preventDefault();
      event.returnValue = "";
    };
    keys.focus = () => keys.say && keys.say();
    document.addEventListener("keydown", keys.handler, true);
    document.addEventListener("click", keys.clicks, true);
    document.addEventListener("mousedown", keys.leaving, true);
    document.addEventListener("input", keys.typed, true);
    document.addEventListener("change", keys.changed, true);
    document.addEventListener("focusin", keys.focus, true);
    document.addEventListener("focusout", () => setTimeout(keys.focus, 0), true);
    window.addEventListener("beforeunload", keys.unload);
  }
  return () => {
    keys.notice = null;
  };
}
