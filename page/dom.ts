import { str } from './answer.js';

/** Writing into the page: its elements, and text from the API. */

export const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * Text a vendor or a model wrote (an error's message, a warning, a judge's reasoning) where the
 * page writes words of its own beside it: isolated (`bdi`), so that a right-to-left override in
 * it ("Overloaded \u202e") reverses nothing of the page's words after it.
 */
export const untrusted = (value: unknown): HTMLElement => el('bdi', undefined, str(value));

/** Whether `text` cut at `at` would part the two halves of a surrogate pair (one emoji, say). */
export function partsPair(text: string, at: number): boolean {
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}
