/**
 * Defusing caller and model text shown to a judge inside the material's frames: a module of its
 * own, so that what calls it (each answer once a judge task) can be counted.
 */

/**
 * Tags that frame the material; the same tags inside the material are defused (a zero-width
 * space after the name) so that no answer can close its frame or open another: in any case,
 * with spaces or attributes (`</ answer_a >`, `<answer_b id=1>`), control characters counted as
 * spaces (`</\u0085answer_a\u0085>`, NEL: whitespace to some tokenizers).
 */
export const TAGS = ['system_prompt', 'conversation', 'prompt', 'response_schema', 'answer_a', 'answer_b'] as const;
// `(?=(\s*))\2` takes the spaces whole, as an atomic group would: no backtracking into them, so the search stays linear.
const TAG_PATTERN = new RegExp(`(<(?=([\\s\\p{Cc}]*))\\2/?(?=([\\s\\p{Cc}]*))\\3(?:${TAGS.join('|')}))(?=[\\s\\p{Cc}/>]|$)`, 'giu');

/**
 * `text` as a judge is shown it inside its frame: its frame-like tags defused, and half a
 * surrogate pair (a model's output may end one) as U+FFFD, which any vendor's parser takes:
 * caller text holding one is refused for that reason (shared/http/middleware.ts). The
 * quoted-verdict rule (judge.ts) reads the answers through this too.
 */
export function defuseTags(text: string): string {
  return text.replace(TAG_PATTERN, '$1\u200b').toWellFormed();
}
