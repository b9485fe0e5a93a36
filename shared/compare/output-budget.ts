import type { StructuredOutput } from '../contract/structured-output.js';
import type { ModelResult } from './result.js';

/**
 * The most output text one request holds, all its models together, in UTF-8 bytes. Each
 * call is capped on its own (an answer at 8 MiB, a stream at 32 MiB), but 32 models at
 * those caps held a request's answer at hundreds of MB and the process at gigabytes (an
 * out-of-memory end for an `api` function of 1,024 MB, every model's result lost with it).
 * With this, a request's outputs, answer and prompt log stay within a few hundred MB even
 * where every character is one JSON escapes six bytes long. Outputs within `maxTokens` reach
 * it only when dozens of models each write the 200,000 tokens the contract allows; a vendor
 * that writes past the limit it was sent takes no other call's share of it (OutputBudget).
 */
export const MAX_REQUEST_OUTPUT_BYTES = 16 * 1024 * 1024;

/** The warning of an output cut at the budget. */
export function outputCutWarning(limitBytes: number): string {
  return `The output was cut at its part of the gateway's limit of ${formatBytes(limitBytes)} of output a request (every model together: a share of half of it for each model while it runs, the other half to whichever writes first)`;
}

/** What `response_schema` says of an output cut at the budget: not checked, as what was cut cannot be. */
export const CUT_OUTPUT_CHECK: StructuredOutput = Object.freeze({ conforms: false, errors: ["the output was cut at the request's output limit, so it was not checked"] });

/**
 * Results whose outputs were held whole elsewhere (a judged request runs each model in a task
 * of its own) held to the request's budget, as the fan-out holds the results it runs: each
 * with its share, the smallest outputs first, so that what they leave of theirs goes to the
 * largest whatever the models' order. In the results' order.
 */
export function heldToBudget(results: readonly ModelResult[], limitBytes: number = MAX_REQUEST_OUTPUT_BYTES): ModelResult[] {
  const budget = new OutputBudget(limitBytes, results.length);
  const held = [...results];
  // By length in code units, near enough to their bytes for an order, without a pass over each (take measures the bytes).
  const smallestFirst = results.map((_, index) => index).sort((a, b) => results[a]!.output.length - results[b]!.output.length);
  for (const index of smallestFirst) {
    const result = results[index]!;
    const share = budget.share();
    const output = share.take(result.output);
    share.end();
    if (output.length === result.output.length) continue;
    held[index] = {
      ...result,
      output,
      ...(result.structuredOutput ? { structuredOutput: CUT_OUTPUT_CHECK } : {}),
      warnings: [...(result.warnings ?? []), outputCutWarning(limitBytes)],
    };
  }
  return held;
}

/** One call's part of a request's output budget: its share while it runs, and what no call holds. */
export interface OutputShare {
  readonly limitBytes: number;
  /**
   * Takes `text`: all of it where it fits in the call's share and what no call holds, else the
   * longest start of it that does (never half a surrogate pair), which spends both.
   */
  take(text: string): string;
  /** The call has ended: what is left of its share goes to the others. */
  end(): void;
}

/**
 * A request's output budget: the models' texts take from it as they arrive (a streamed call
 * delta by delta, a whole answer at once), and what does not fit is cut. Half of it is held in
 * equal shares, one for each call until the call ends; the rest, with what ended calls left
 * of their shares, goes to whichever text comes first. So a vendor that writes past its output
 * limit (a stream may carry 32 MiB whatever `maxTokens` says) takes its share and the free part,
 * never what the other calls are sure of: 4 MiB each of two calls, 256 KiB each of 32.
 */
export class OutputBudget {
  /** What no running call holds. */
  private free: number;
  private readonly shareBytes: number;

  constructor(
    readonly limitBytes: number = MAX_REQUEST_OUTPUT_BYTES,
    private sharesLeft = 1,
  ) {
    this.shareBytes = Math.floor(limitBytes / 2 / Math.max(1, sharesLeft));
    this.free = limitBytes - this.shareBytes * sharesLeft;
  }

  /** A call's part: one of the shares the budget was made with (past them, the free part alone). */
  share(): OutputShare {
    let own = this.sharesLeft > 0 ? this.shareBytes : 0;
    this.sharesLeft = Math.max(0, this.sharesLeft - 1);
    return {
      limitBytes: this.limitBytes,
      take: (text) => {
        const bytes = Buffer.byteLength(text, 'utf8');
        const room = own + this.free;
        if (bytes <= room) {
          const fromOwn = Math.min(bytes, own);
          own -= fromOwn;
          this.free -= bytes - fromOwn;
          return text;
        }
        // encodeInto writes whole characters only: `read` code units fit in the room.
        const { read } = new TextEncoder().encodeInto(text, new Uint8Array(room));
        own = 0;
        this.free = 0;
        // A copy: V8's slice of a string keeps the whole string alive (up to 8 MiB per answer).
        return Buffer.from(text.slice(0, read), 'utf16le').toString('utf16le');
      },
      end: () => {
        this.free += own;
        own = 0;
      },
    };
  }
}

function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}
