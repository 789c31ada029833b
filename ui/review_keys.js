// Keyboard for the review queue: Y (correct), N (wrong), S (skip), U (undo).
//
// Every press is sent with the number of the screen (row) shown when it was pressed and a
// sequence number, and is resent until the page acknowledges it (data.acked), so presses are
// neither merged nor lost between reruns; the page applies each at most once. While a text field
// or a select has the focus, letters type there (Esc leaves the field).
const KEYS = ["y", "n", "s", "u"];

function inField(target) {
  if (!target) return false;
  const tag = (target.tagName || "").toUpperCase();
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || target.isContentEditable === true;
}

// The screen a press belongs to is read from the page at the moment of the press: the page wraps
// the row's buttons, drawn after the row itself, in a container keyed "q_screen_<n>". (The
// component's own data reaches the browser later than the row does, so it cannot tell.)
function screenShown() {
  const marker = document.querySelector('[class*="st-key-q_screen_"]');
  if (!marker) return null;
  const found = /(?:^|\s)st-key-q_screen_(\d+)(?:\s|$)/.exec(marker.className);
  return found ? Number(found[1]) : null;
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
      // Between two screens (the page is being redrawn) there may be no marker: the press is
      // still sent, as screen 0, so the page reports it instead of it vanishing.
      const screen = screenShown() ?? 0;
      event.preventDefault();
      keys.seq += 1;
      keys.pending.push({ seq: keys.seq, key: key, screen: screen });
      keys.send("presses", keys.pending.slice());
    };
    document.addEventListener("keydown", keys.handler, true);
  }
  return () => {
    document.removeEventListener("keydown", keys.handler, true);
    keys.handler = null;
  };
}
