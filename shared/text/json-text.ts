/**
 * Half a surrogate pair as JSON.stringify writes it, `\udXXX` (D800 to DFFF), where its
 * backslash is not itself escaped (`\\ud800` is a backslash and the text "ud800"). A whole
 * pair is written as itself, never escaped: every such escape in its text is half a pair.
 */
const LONE_SURROGATE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

/**
 * `value` as JSON text that is also Unicode text: half a surrogate pair in any of its strings
 * or member names is written as U+FFFD. JSON.stringify writes one as a `\ud800` escape,
 * valid JSON that strict readers (Rust's serde_json among them) refuse: one vendor's output
 * holding one (its JSON escapes, or JSON an output holds and the gateway parsed) would make
 * a whole answer, every other model's result with it, unreadable to them.
 */
export function jsonText(value: unknown): string {
  const text = JSON.stringify(value);
  return text.includes('\\ud') ? text.replace(LONE_SURROGATE, '$1\\ufffd') : text;
}
