import type { ModelCall } from './types.js';

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

/**
 * The texts of a call's prompt pieces, where they make its prompt (as long as it: a prompt
 * changed since its pieces were made is not stood for by them); undefined otherwise. Reads
 * no text but the lengths, so that a rope prompt is never flattened.
 */
export function pieceTexts(call: Pick<ModelCall, 'prompt' | 'promptPieces'>): readonly string[] | undefined {
  const pieces = call.promptPieces;
  if (!pieces) return undefined;
  const texts = pieces.map((piece) => (typeof piece === 'string' ? piece : piece.text));
  let length = 0;
  for (const text of texts) length += text.length;
  return length === call.prompt.length ? texts : undefined;
}

/**
 * The texts a call's prompt is made of, each as it is held: its pieces' where they make it,
 * else the prompt itself. A count that adds up character by character (tokens, bytes) reads
 * them one by one: reading a judge call's prompt, a rope of texts its other calls share,
 * would copy them into a flat string of its own, megabytes for each of up to 110 calls.
 */
export function promptTexts(call: Pick<ModelCall, 'prompt' | 'promptPieces'>): readonly string[] {
  return pieceTexts(call) ?? [call.prompt];
}
