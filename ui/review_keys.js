// Keyboard for the review queue: Y (correct), N (wrong), S (skip), U (undo); and the card's four
// buttons, whose clicks take the same path.
//
// Every press is sent with the screen (one showing of one row: its number, run and item) shown
// when it was pressed and a sequence number, and is resent until the page acknowledges it
// (data.acked), so presses are neither merged nor lost between reruns; the page applies each
// exactly once, to the row it names. While a text field or a select has the focus, letters type
// there (Esc leaves the field).
const KEYS = ["y", "n", "s", "u"];
// A click on a card button is a press of its key. Left to Streamlit, a click names no row: its
// callback takes the arguments of the latest script run, so a click on a row still on screen while
// the server drew the next one was applied to that next row. Caught here (capture phase, before
// React's listener on its root), it is sent like a key with the row read at the moment of the click.
const BUTTONS = { q_yes: "y", q_no: "n", q_skip: "s", q_undo: "u" };

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

// The row a press belongs to is read from the page at the moment of the press: the block that
// shows the row's question and answers carries data-q-screen, data-q-run and data-q-item, so
// what the attributes say is what the person is reading. (The component's own data, or a marker
// drawn after the row, reaches the page later than the row does, so neither can tell.)
function rowShown() {
  const marker = document.querySelector("[data-q-screen]");
  if (!marker) return null;
  const screen = Number(marker.getAttribute("data-q-screen"));
  const run = Number(marker.getAttribute("data-q-run"));
  if (!Number.isInteger(screen) || screen <= 0) return null;
  return { screen: screen, run: Number.isInteger(run) ? run : null, item: marker.getAttribute("data-q-item") };
}

export default function (component) {
  const { data, setStateValue } = component;
  const keys = window.__reviewKeys || (window.__reviewKeys = { seq: 0, pending: [], handler: null });
  // With no row on the page a press is still sent (screen null), so the page says it was not
  // applied instead of it vanishing.
  const send = (key) => {
    const shown = rowShown();
    keys.seq += 1;
    keys.pending.push({
      seq: keys.seq,
      key: key,
      screen: shown ? shown.screen : null,
      run: shown ? shown.run : null,
      item: shown ? shown.item : null,
    });
    keys.send("presses", keys.pending.slice());
  };
  keys.send = setStateValue;
  const acked = data && Number.isInteger(data.acked) ? data.acked : 0;
  keys.pending = keys.pending.filter((p) => p.seq > acked);
  if (!keys.handler) {
    keys.handler = (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
      const target = event.target;
      if (inField(target)) {
        if (event.key === "Escape") target.blur();
        return;
      }
      const key = (event.key || "").toLowerCase();
      if (!KEYS.includes(key)) return;
      event.preventDefault();
      send(key);
    };
    keys.clicks = (event) => {
      const key = buttonKey(event.target);
      if (!key) return;
      event.preventDefault();
      event.stopPropagation();
      send(key);
    };
    document.addEventListener("keydown", keys.handler, true);
    document.addEventListener("click", keys.clicks, true);
  }
  return () => {
    document.removeEventListener("keydown", keys.handler, true);
    document.removeEventListener("click", keys.clicks, true);
    keys.handler = null;
  };
}
