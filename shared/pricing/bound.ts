import { base64Bytes } from '../contract/base64.js';
import type { Attachment } from '../contract/types.js';
import { ADAPTERS } from '../providers/adapters.js';
import { cacheBreakpoints, marksCacheBreakpoints } from '../providers/cache-breakpoints.js';
import { promptTexts } from '../providers/shared-text.js';
import { schemaInstruction } from '../providers/structured-output.js';
import type { ModelCall } from '../providers/types.js';
import { providerCost } from './cost.js';
import { PdfCountBudget, pdfPageCounts, REQUEST_PDF_BUDGET } from './pdf-pages.js';
import { textTokens } from '../text/text-tokens.js';

/** Tokens an image is reserved as where the catalog names no more (ModelEntry.imageTokens): a ~1 megapixel image on most vendors. */
const IMAGE_TOKENS = 1_600;

/**
 * The most tokens a text can count: its UTF-8 bytes. The vendors' tokenizers work on bytes
 * (byte-level BPE, or SentencePiece falling back to bytes), so no token is shorter than one;
 * a text made to tokenize badly comes close to it (digits and spaces, symbols or control
 * characters take about a token a character: 4 times textTokens's count).
 */
export function textTokenBound(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Characters, whitespace aside, that no vendor's tokenizer fits in one token (their longest
 * tokens are runs of a few dozen characters, whitespace longer): a count of tokens below a
 * text's characters over this cannot be true of that text.
 */
const MOST_CHARACTERS_A_TOKEN = 128;

/**
 * The fewest tokens any tokenizer can make of `texts` and of text read apart and counted
 * `unseenTokens` by textTokens (thinking or reasoning the vendor showed beside the output,
 * which its output count includes: textTokens counts at most a token a character), or 0 when
 * `claimed` tokens could hold them whatever they are (the texts are then not read: a vendor's
 * usual count costs nothing).
 */
export function tooFewTokens(claimed: number, texts: readonly string[], unseenTokens = 0): number {
  let length = unseenTokens;
  for (const text of texts) length += text.length;
  if (claimed * MOST_CHARACTERS_A_TOKEN >= length) return 0;
  let visible = 0;
  for (const text of texts) {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 32 && c !== 10 && c !== 13 && c !== 9) visible++;
    }
  }
  const fewest = Math.floor(visible / MOST_CHARACTERS_A_TOKEN) + Math.floor(unseenTokens / MOST_CHARACTERS_A_TOKEN);
  return claimed < fewest ? fewest : 0;
}

/** What a call sends as input, and the model it goes to (images count by model). */
export type CallInput = Pick<ModelCall, 'entry' | 'system' | 'history' | 'prompt' | 'promptPieces' | 'attachments' | 'responseSchema'>;

/**
 * A call's text input counted with `count`, never zero: prompt, system blocks, history (4
 * tokens of framing a turn), the response schema as the instruction it becomes where it is
 * not native (natively it counts about as much). The same for every model of a request.
 */
function textInputTokens(call: CallInput, count: (text: string) => number): number {
  let text = 0;
  for (const piece of promptTexts(call)) text += count(piece);
  for (const block of call.system) text += count(block.text);
  for (const turn of call.history) text += count(turn.content);
  if (call.responseSchema) text += count(schemaInstruction(call.responseSchema));
  return Math.ceil(text) + 4 * (1 + call.history.length);
}

/**
 * Tokens of a PDF page's text, beside its image: a dense page of text (Anthropic counts "1,500
 * to 3,000 tokens per page", the page's image included; OpenAI also sends a page's text and
 * its image).
 */
export const PDF_PAGE_TEXT_TOKENS = 1_500;

/** Each PDF's pages (pdfPageCounts), counted once: a request's calls share its attachments. */
const pagesOf = new WeakMap<Attachment, { held: number; read: number } | undefined>();
/** The counting work a request's PDFs share (its attachments' list, which its calls share): ten made for it cost what three do. */
const budgets = new WeakMap<readonly Attachment[], PdfCountBudget>();

function pagesOfPdf(attachment: Attachment, attachments: readonly Attachment[]): { held: number; read: number } | undefined {
  if (!pagesOf.has(attachment)) {
    const shared = budgets.get(attachments) ?? new PdfCountBudget(REQUEST_PDF_BUDGET);
    budgets.set(attachments, shared);
    pagesOf.set(attachment, pdfPageCounts(Buffer.from(attachment.base64, 'base64'), new PdfCountBudget(1, shared)));
  }
  return pagesOf.get(attachment);
}

/**
 * The tokens a call's attachments count on its model, at most: an image as the catalog says,
 * a PDF as each of its pages an image and a dense page of text, or a token each 20 of its
 * bytes where that is more (its pages as held in a bound, as read in an estimate:
 * pdfPageCounts). A PDF whose pages cannot be counted is bounded by the model's context in a
 * bound, by its bytes in an estimate.
 */
function attachmentTokens(call: Pick<CallInput, 'entry' | 'attachments'>, use: 'bound' | 'estimate'): number {
  const imageTokens = call.entry.imageTokens ?? IMAGE_TOKENS;
  let tokens = 0;
  for (const attachment of call.attachments) {
    if (attachment.type !== 'application/pdf') {
      tokens += imageTokens;
      continue;
    }
    const counts = pagesOfPdf(attachment, call.attachments);
    if (counts === undefined && use === 'bound') return call.entry.contextWindow;
    // A bound holds the most any reading of the PDF gives; an estimate charges the pages a reader walks.
    const pages = counts === undefined ? 1 : use === 'bound' ? counts.held : counts.read;
    tokens += Math.max(pages * (imageTokens + PDF_PAGE_TEXT_TOKENS), Math.ceil(base64Bytes(attachment.base64) / 20));
  }
  return tokens;
}

/** The most tokens a call's text input can count (textTokenBound): what every model of the request is sent, counted once. */
export function textInputBound(call: CallInput): number {
  return textInputTokens(call, textTokenBound);
}

/** The most input tokens a call can count, what its reserve holds (capped at the model's context by callCostBound). */
export function inputTokenBound(call: CallInput): number {
  return textInputBound(call) + modelInputTokens(call);
}

/** Tokens a vendor may add to what it is sent (a chat template, a tool's definition) beyond the input's bound. */
const VENDOR_FRAMING_TOKENS = 512;

/**
 * The most input tokens a call's model may bill beyond the request's text, which differs by
 * model: its attachments (attachmentTokens), the system prompt its vendor adds
 * (ModelEntry.hiddenInputTokens), and the framing any vendor adds (VENDOR_FRAMING_TOKENS):
 * the hold covers all the input a usage block is believed to bill (tooManyInputTokens).
 */
export function modelInputTokens(call: Pick<CallInput, 'entry' | 'attachments'>): number {
  return attachmentTokens(call, 'bound') + (call.entry.hiddenInputTokens ?? 0) + VENDOR_FRAMING_TOKENS;
}

/**
 * Output tokens a vendor may report beyond the limit the call was sent with before its usage
 * is not believed: room for an end-of-turn token or a vendor that counts a few framing tokens.
 * The hold covers them (callCostBound).
 */
export const OUTPUT_TOLERANCE_TOKENS = 16;

/**
 * The input tokens a vendor cannot truthfully have billed for a call, or 0 when `claimed`
 * could be true: more than the input's bound, the system prompt its vendor adds and some
 * framing, where the request holds all that is billed (no attachments, whose counts the
 * catalog does not always bound; no Gemini cachedContent; no search grounding). A usual
 * count, below the text's length (a bound of it: a character is at least a byte), costs no
 * counting.
 */
export function tooManyInputTokens(claimed: number, call: ModelCall): number {
  if (call.attachments.length > 0 || call.tuning.cachedContent !== undefined || call.tuning.webSearch) return 0;
  const added = modelInputTokens(call);
  let length = call.prompt.length;
  for (const block of call.system) length += block.text.length;
  for (const turn of call.history) length += turn.content.length;
  if (claimed <= length + added) return 0;
  const most = textInputBound(call) + added;
  return claimed > most ? most : 0;
}

/** What a call's input counts as usual (textTokens): its charge when the vendor's usage cannot be used. */
export function inputTokenEstimate(call: CallInput): number {
  return textInputTokens(call, textTokens) + attachmentTokens(call, 'estimate');
}

/**
 * Input tokens a call may have billed as cache writes, which Anthropic prices above input
 * (1.25 times, 5-minute writes): the prefix up to its last `cache_control` breakpoint,
 * counted like the input's bound, and the framing a vendor adds; none without a breakpoint.
 * Undefined where writes cost no more than input: however many, they never raise the worst
 * case (nor do reads from cache, which are cheaper than input). Writes beyond it are not
 * believed (implausibleUsage): the hold holds no more.
 */
export function cacheWriteBound(call: CallInput): number | undefined {
  const { input, cacheWrite } = call.entry.prices;
  if (cacheWrite === null || cacheWrite <= input) return undefined;
  // Most calls mark no breakpoint: no need to count their text again.
  if (!marksCacheBreakpoints(call)) return 0;
  // Counted once a call: its plan holds it, and its charge checks its usage against it.
  let writes = prefixWrites.get(call);
  if (writes === undefined) {
    const prefix = cacheBreakpoints(call, textTokenBound).at(-1)?.prefixTokens;
    writes = prefix === undefined ? 0 : prefix + VENDOR_FRAMING_TOKENS;
    prefixWrites.set(call, writes);
  }
  return writes;
}

const prefixWrites = new WeakMap<CallInput, number>();

/** The most output tokens a call can be billed: its adapter's bound (see ProtocolAdapter.billedOutputBound). */
export function outputTokenBound(call: ModelCall): number {
  return ADAPTERS[call.entry.protocol].billedOutputBound(call);
}

/** The most output tokens a usage block is believed to bill for a call (implausibleUsage), which its hold holds (callCostBound): its bound and the tolerance above it. */
export function believedOutputTokens(call: ModelCall): number {
  return outputTokenBound(call) + OUTPUT_TOLERANCE_TOKENS;
}

/**
 * The most search queries a call is charged (Gemini 3's search grounding bills each query
 * run, and nothing bounds how many a call runs): what its reserve holds, and the most of
 * the queries its answer lists that are charged.
 */
export const MAX_SEARCH_QUERIES_CHARGED = 10;

/**
 * The search queries a call may be billed: MAX_SEARCH_QUERIES_CHARGED where its model bills
 * queries and the call may search (`webSearch`, or a Gemini cachedContent, whose stored
 * tools Gemini uses instead of the request's), else 0.
 */
export function searchQueryBound(call: Pick<ModelCall, 'entry' | 'tuning'>): number {
  if (call.entry.prices.searchQueryUsd === undefined) return 0;
  return call.tuning.webSearch === true || call.tuning.cachedContent !== undefined ? MAX_SEARCH_QUERIES_CHARGED : 0;
}

/** The most a call can be billed, as token counts and USD. */
export interface CostBound {
  /** The request's own input (a Gemini cachedContent's tokens, which `usd` counts, aside). */
  inputTokens: number;
  /** The adapter's billed output bound: what it sends as the limit, reasoning included where the vendor counts it there. */
  outputTokens: number;
  /** The search queries it may be charged (searchQueryBound). */
  searchQueries: number;
  usd: number;
}

/**
 * The most one call can cost, USD, before it runs: its input (by default `inputTokenBound`;
 * never more than the model's context, the most input its vendor takes) at the input price, the prefix up to its last cache breakpoint at the cache-write price
 * where writes cost more, its billed output bound at the output price, and the search queries
 * it may be charged (searchQueryBound) at their price; at peak and,
 * where the input crosses the threshold, long-context rates. The credit estimate reserves
 * the sum of these; usage beyond `outputTokens` is not believed.
 */
export function callCostBound(call: ModelCall, inputTokensCounted: number = inputTokenBound(call)): CostBound {
  const inputTokens = Math.min(inputTokensCounted, call.entry.contextWindow);
  const outputTokens = outputTokenBound(call);
  const searchQueries = searchQueryBound(call);
  // What a usage block is believed to bill above the limit (implausibleUsage) is held too.
  const usd = providerCost(call.entry.prices, { ...heldInput(call, inputTokens), outputTokens: believedOutputTokens(call), searchQueries });
  return { inputTokens, outputTokens, searchQueries, usd };
}

/** The input a bound holds for `inputTokens` of the call's own, as its vendor bills it. */
function heldInput(call: ModelCall, inputTokens: number) {
  const cacheWriteTokens = Math.min(inputTokens, cacheWriteBound(call) ?? 0);
  // A Gemini cachedContent's tokens are billed as cached input, and the request does not say
  // how many it holds: as many as the model's context leaves beside the request's own input.
  const cachedInputTokens = call.tuning.cachedContent ? call.entry.contextWindow - inputTokens : 0;
  return { inputTokens: inputTokens + cachedInputTokens, cachedInputTokens, cacheWriteTokens };
}

/**
 * The part of a call's bound its input holds (its output and search queries apart), what a 402
 * says: its cost, USD, and the tokens of it held for a Gemini cachedContent.
 */
export function boundInput(call: ModelCall, bound: CostBound): { usd: number; cachedContentTokens: number } {
  const input = heldInput(call, bound.inputTokens);
  return { usd: providerCost(call.entry.prices, { ...input, outputTokens: 0, searchQueries: 0 }), cachedContentTokens: input.cachedInputTokens };
}

/** The part of a call's bound its search queries hold (searchQueryBound), USD, what a 402 says. */
export function boundSearch(call: ModelCall, bound: CostBound): number {
  return providerCost(call.entry.prices, { inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0, searchQueries: bound.searchQueries });
}

/** Where the request's PDFs whose pages cannot be counted are (`/attachments/0`): each held at every model's whole context. */
export function uncountedPdfs(attachments: readonly Attachment[]): string[] {
  const pointers: string[] = [];
  attachments.forEach((attachment, index) => {
    if (attachment.type === 'application/pdf' && pagesOfPdf(attachment, attachments) === undefined) pointers.push(`/attachments/${index}`);
  });
  return pointers;
}
