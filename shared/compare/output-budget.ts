import type { StructuredOutput } from '../contract/structured-output.js';
import type { ModelResult } from './result.js';

/**
 * The most output text one request holds, all its models together, in UTF-8 bytes. Each
 * call is capped on its own (an answer at 8 MiB, a stream at 32 MiB), but 32 models at
 * those caps held a request's answer at hundreds of MB and the process at gigabytes (an
 * out-of-memory end for an `api` function of 1,024 MB, every model's result lost with it).
 * With this, a request's outputs, answer and prompt log stay within a few hundred MB even
 * where every character is one JSON escapes six bytes long. Outputs within `maxTokens` reach
 * it only when dozens of models each write the 200,000 tokens the contract allows.
 */
export const MAX_REQUEST_OUTPUT_BYTES = 16 * 1024 * 1024;

/** The warning of an output cut at the budget. */
export function outputCutWarning(limitBytes: number): string {
  return `The output was cut: this request's outputs reached the gateway's limit of ${formatBytes(limitBytes)} in all (every model together)`;
}

/** What `response_schema` says of an output cut at the budget: not checked, as what was cut cannot be. */
export const CUT_OUTPUT_CHECK: StructuredOutput = Object.freeze({ conforms: false, errors: ["the output was cut at the request's output limit, so it was not checked"] });

/**
 * A result whose output was held whole elsewhere (a judged request runs each model in a task
 * of its own) held to the request's budget, as the fan-out holds the results it runs.
 */
export function heldToBudget(result: ModelResult, budget: OutputBudget): ModelResult {
  const output = budget.take(result.output);
  if (output.length === result.output.length) return result;
  return {
    ...result,
    output,
    ...(result.structuredOutput ? { structuredOutput: CUT_OUTPUT_CHECK } : {}),
    warnings: [...(result.warnings ?? []), outputCutWarning(budget.limitBytes)],
  };
}

/**
 * What is left of a request's output budget: the models' texts take from it as they arrive
 * (a streamed call delta by delta, a whole answer at once), and what does not fit is cut.
 */
export class OutputBudget {
  private left: number;

  constructor(readonly limitBytes: number = MAX_REQUEST_OUTPUT_BYTES) {
    this.left = limitBytes;
  }

  /**
   * Takes `text` from the budget: all of it where it fits, else the longest start of it that
   * does (never half a surrogate pair), which spends the budget.
   */
  take(text: string): string {
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes <= this.left) {
      this.left -= bytes;
      return text;
    }
    // encodeInto writes whole characters only: `read` code units fit in what is left.
    const { read } = new TextEncoder().encodeInto(text, new Uint8Array(this.left));
    this.left = 0;
    // A copy: V8's slice of a string keeps the whole string alive (up to 8 MiB per answer).
    return Buffer.from(text.slice(0, read), 'utf16le').toString('utf16le');
  }
}

function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}
