import { renderMarkdown } from './markdown.js';
import type { RenderRequest, ThreadMessage } from './markdown-rules.js';

/*
 * The comparison page's Markdown thread (GET /page-markdown.js, a dedicated worker): renders
 * each text the page sends it, one at a time. marked takes time quadratic in some inputs and
 * cannot be interrupted; here the page can stop it (MarkdownThread) and stays responsive meanwhile.
 */

/** The worker's global scope, as far as this uses it (the page's TypeScript lib is the DOM's). */
const thread = globalThis as unknown as {
  onmessage: ((event: MessageEvent<RenderRequest>) => void) | null;
  postMessage(message: ThreadMessage): void;
};

thread.onmessage = ({ data }) => thread.postMessage({ id: data.id, ...renderMarkdown(data.text) });
// Loaded: a render's time limit counts from here (render-thread.ts).
thread.postMessage({ loaded: true });
