/**
 * A large text that many vendor calls send (a judged request's answers, and its prompt, each
 * shown in up to 110 judge calls): its bytes inside a JSON string made once, and shared by
 * every call's body (http.ts's jsonRequest), where each call had held a copy of its own.
 */
export interface SharedText {
  readonly text: string;
}

/** A part of a call's prompt: literal text, or a text shared with other calls. Joined, the parts are the prompt. */
export type PromptPiece = string | SharedText;

const encoded = new WeakMap<SharedText, Buffer>();

/** The piece's text as UTF-8 inside a JSON string, escaped as JSON.stringify escapes it (a shared text once). */
export function jsonStringBytes(piece: PromptPiece): Buffer {
  if (typeof piece === 'string') return escaped(piece);
  let bytes = encoded.get(piece);
  if (!bytes) {
    bytes = escaped(piece.text);
    encoded.set(piece, bytes);
  }
  return bytes;
}

function escaped(text: string): Buffer {
  const json = JSON.stringify(text);
  return Buffer.from(json.slice(1, -1), 'utf8');
}

/** The prompt the pieces make, as a rope of them (string concatenation copies no text, where a join would copy it all). */
export function joinPieces(pieces: readonly PromptPiece[]): string {
  let text = '';
  for (const piece of pieces) text += typeof piece === 'string' ? piece : piece.text;
  return text;
}
