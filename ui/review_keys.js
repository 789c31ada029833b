// Keyboard for the review queue: Y (correct), N (wrong), S (skip), U (undo).
//
// Every press is sent with the screen (one showing of one row: its number, run and item) shown
// when it was pressed and a sequence number, and is resent until the page acknowledges it
// (data.acked), so presses are neither merged nor lost between reruns; the page applies each
// exactly once, to the row it names. While a text field or a select has the focus, letters type
// there (Esc leaves the field).
const KEYS = ["y", "n", "s", "u"];

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
      // With no row on the page the press is still sent (screen null), so the page says it was
      // not applied instead of it vanishing.
      const shown = rowShown();
      event.preventDefault();
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
    document.addEventListener("keydown", keys.handler, true);
  }
  return () => {
    document.removeEventListener("keydown", keys.handler, true);
    keys.handler = null;
  };
}
