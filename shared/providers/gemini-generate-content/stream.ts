import { UpstreamError, streamEndedEarly, type PartialReply } from '../errors.js';
import type { SseEvent } from '../sse.js';
import { eventJson } from '../stream-http.js';
import type { ModelReply } from '../types.js';
import { errorInAnswer } from './errors.js';
import { fromGenerateContentResponse, promptBlocked, searchQueryCount, usageAndHints } from './response.js';
import { toUsage, type UsageMetadata } from './usage.js';
import { OtherChoices } from '../first-choice.js';

interface Chunk {
  candidates?: { index?: unknown; content?: { parts?: unknown } | null; finishReason?: unknown; groundingMetadata?: unknown }[] | null;
  promptFeedback?: unknown;
  usageMetadata?: UsageMetadata | null;
  error?: { code?: unknown } | null;
}

/** The input counts of a usageMetadata. */
const INPUT_COUNTS = ['promptTokenCount', 'toolUsePromptTokenCount', 'cachedContentTokenCount'] as const;

/**
 * `output`'s counts of output (candidates and thoughts), each input count the higher of the
 * two counts' (search results read after the earlier count; none goes back), and no total,
 * which would not add up.
 */
function withOutputOf(input: UsageMetadata | undefined, output: UsageMetadata): UsageMetadata {
  const merged: UsageMetadata = { ...output, totalTokenCount: undefined };
  for (const key of INPUT_COUNTS) {
    const later = input?.[key];
    const earlier = output[key];
    merged[key] = typeof later !== 'number' ? earlier : typeof earlier !== 'number' ? later : Math.max(later, earlier);
  }
  return merged;
}

/** Whether a usageMetadata counts output (candidates or thoughts), not the prompt alone. */
const countsOutput = (metadata: UsageMetadata) => metadata.candidatesTokenCount !== undefined || metadata.thoughtsTokenCount !== undefined;

/**
 * Reads `streamGenerateContent?alt=sse`: each event a GenerateContentResponse. The text of
 * parts without `thought: true` becomes deltas; the finishReason and the last usageMetadata
 * (prompt, candidates, thoughts, cached content) are kept. Gemini's usage is a running count,
 * up to the chunk that carries it: it is the call's usage only where no part came after it
 * (the chunk with the finishReason carries the whole call's); a count that parts followed
 * falls short of what was billed, and is only hints for the estimate (its prompt and
 * thoughts). A stream that ends before a finishReason ended early (a failed call), unless
 * its prompt was blocked. `finish` assembles one response for fromGenerateContentResponse,
 * so usage is priced by the same code. A stream stopped or broken before its finishReason
 * is charged from the last running count it carried in the same way.
 */
export class GenerateContentStream {
  private text = '';
  private chunks = 0;
  private finishReason: unknown;
  private grounding: unknown;
  private promptFeedback: unknown;
  private usage: UsageMetadata | undefined;
  /** Whether a part (text or thought) came after the last usageMetadata: its running count then falls short. */
  private partsAfterUsage = false;
  /** The count with the most output (candidates and thoughts) of those it carried, and that output. */
  private most: { metadata: UsageMetadata; outputTokens: number } | undefined;
  private finished = false;
  private readonly candidates = new OtherChoices<NonNullable<Chunk['candidates']>[number]>('finishReason');

  constructor(private readonly onDelta: (text: string) => void) {}

  onEvent(event: SseEvent): void {
    const chunk = eventJson(event) as Chunk;
    if (chunk.error !== undefined && chunk.error !== null) throw errorInAnswer(chunk.error);
    this.chunks++;
    if (chunk.promptFeedback !== undefined) this.promptFeedback = chunk.promptFeedback;
    this.readCandidate(Array.isArray(chunk.candidates) ? this.candidates.read(chunk.candidates) : undefined);
    // The count covers this chunk's own parts, where it counts them: a running one of the
    // prompt alone (Gemini's early chunks) covers none of the text that came, and a stopped
    // stream's estimate says why it has no usage, not that this one counted no output; one that
    // counts thoughts covers the thoughts before any text.
    const counts = chunk.usageMetadata;
    if (!counts) return;
    // A running count that counts no output after one that did does not replace it: a vendor's count does not go back.
    if (!this.finished && !countsOutput(counts) && this.usage && countsOutput(this.usage)) return;
    this.usage = counts;
    const outputTokens = toUsage(counts)?.outputTokens ?? 0;
    if (outputTokens > (this.most?.outputTokens ?? 0)) this.most = { metadata: counts, outputTokens };
    if (this.finished || counts.candidatesTokenCount !== undefined || (this.text === '' && counts.thoughtsTokenCount !== undefined)) this.partsAfterUsage = false;
  }

  private readCandidate(candidate: NonNullable<Chunk['candidates']>[number] | undefined): void {
    if (!candidate || typeof candidate !== 'object') return;
    // The searches run, billed whenever they are reported.
    if (candidate.groundingMetadata !== undefined) this.grounding = candidate.groundingMetadata;
    // After the finishReason (which comes with the last parts) nothing more of the answer: the first finishReason stands.
    if (this.finished) return;
    if (candidate.finishReason !== undefined && candidate.finishReason !== null) {
      this.finishReason = candidate.finishReason;
      this.finished = true;
    }
    const parts = candidate.content?.parts;
    if (!Array.isArray(parts)) return;
    for (const part of parts as { text?: unknown; thought?: unknown }[]) {
      if (typeof part?.text !== 'string' || part.text === '') continue;
      this.partsAfterUsage = true;
      if (part.thought === true) continue;
      this.text += part.text;
      this.onDelta(part.text);
    }
  }

  /** Gemini has no event that ends a stream: its answer is whole once a finishReason came with a count no part followed (its last chunk carries both). */
  ended(): boolean {
    return this.finished && this.usage !== undefined && !this.partsAfterUsage;
  }

  /** The finishReason came: a count may follow. */
  stopped(): boolean {
    return this.finished;
  }

  /**
   * The last usageMetadata, and whether it is a count of everything streamed (no part came after
   * it). A vendor's count does not go back: a last count of less output than one before it (or
   * none that can be read) is not the call's usage; its input counts, with the output of the
   * count before it, which the call is charged at least, say what it used, as a running count
   * parts came after does.
   */
  private get lastUsage(): { metadata: UsageMetadata | undefined; current: boolean } {
    const { most, usage } = this;
    if (most && (toUsage(usage)?.outputTokens ?? 0) < most.outputTokens) return { metadata: withOutputOf(usage, most.metadata), current: false };
    return { metadata: usage, current: usage !== undefined && !this.partsAfterUsage };
  }

  /** What the stream had delivered: with the last usageMetadata it carried, the running count up to its stop. */
  partial(): PartialReply {
    const { metadata, current } = this.lastUsage;
    const { usage, hints } = usageAndHints(metadata, searchQueryCount(this.grounding), current);
    return { output: this.text, ...(usage ? { usage } : {}), ...(Object.keys(hints).length > 0 ? { hints } : {}) };
  }

  finish(requestWarnings: readonly string[] = []): ModelReply {
    if (this.chunks === 0) throw new UpstreamError('upstream_malformed_response', 'The provider streamed no answer', { upstreamStatus: 200 });
    const { metadata, current } = this.lastUsage;
    // Ended with only candidates numbered otherwise, finished: the whole answer's failure (no candidate), charged the usage reported.
    if (this.candidates.only) return fromGenerateContentResponse({ candidates: [], promptFeedback: this.promptFeedback, usageMetadata: metadata }, requestWarnings, current);
    const candidate = { content: { parts: this.text === '' ? [] : [{ text: this.text }] }, finishReason: this.finishReason, groundingMetadata: this.grounding };
    // A blocked prompt's stream has no finishReason: the mapper names the block.
    if (!this.finished && !promptBlocked(this.promptFeedback)) throw streamEndedEarly('finishReason');
    return fromGenerateContentResponse({ candidates: [candidate], promptFeedback: this.promptFeedback, usageMetadata: metadata }, requestWarnings, current);
  }
}
