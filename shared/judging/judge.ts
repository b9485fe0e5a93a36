import { runModels, type FanOutOptions } from '../compare/run-models.js';
import type { PromptRequest, RequestedModel } from '../contract/types.js';
import { CUT_SHORT_VERDICT, VerdictParseError } from './errors.js';
import { judgeCall, showAnswer, type ShownAnswer } from './judge-prompt.js';
import type { Judgment } from './types.js';
import { parseVerdict, verdictsCarried } from './verdict.js';

/**
 * The verdicts each answer shown carries, read once: a judge task shows an answer in 2 (n − 1)
 * calls, and reading megabytes for planted verdicts in each of them held the thread (about
 * 0.1 s a call for two 1 MB answers).
 */
const carriedByShown = new WeakMap<ShownAnswer, ReadonlySet<string>>();
function carriedBy(shown: ShownAnswer): ReadonlySet<string> {
  let carried = carriedByShown.get(shown);
  if (!carried) {
    carried = verdictsCarried(shown.text);
    carriedByShown.set(shown, carried);
  }
  return carried;
}

/**
 * One judge call: the judge sees `answerA` and `answerB` by position only. It runs like a
 * model call (retries, deadline, cost from observed usage). An upstream failure or an
 * answer that holds no readable verdict is a failed judgment, charged as the call was: an
 * answer without a verdict was billed by its vendor all the same (and a caller's
 * `judge_prompt` can ask for one), so it is charged what it used, as a completed call is.
 */
export async function judgeOnce(
  request: PromptRequest,
  judge: RequestedModel,
  answerA: string | ShownAnswer,
  answerB: string | ShownAnswer,
  options: FanOutOptions,
): Promise<Judgment> {
  const a = typeof answerA === 'string' ? showAnswer(answerA) : answerA;
  const b = typeof answerB === 'string' ? showAnswer(answerB) : answerB;
  // The material (megabytes, with large answers) is built in a turn of the caller's, as the call is prepared.
  await options.turn?.();
  const [result] = await runModels([{ ...judgeCall(request, judge, a, b), cutShortFails: CUT_SHORT_VERDICT }], options);
  if (!result) throw new Error('runModels answered no result for the judge call');
  const warnings = result.warnings && result.warnings.length > 0 ? { warnings: result.warnings } : {};
  // What the call used, as its result reports it (an upstream failure's: nothing).
  const used = {
    tokensIn: result.tokensIn,
    tokensOut: result.tokensOut,
    latencyMs: result.latencyMs,
    providerCost: result.providerCost,
    ...(result.estimatedCost !== undefined ? { estimatedCost: result.estimatedCost } : {}),
    ...(result.usage ? { usage: result.usage } : {}),
    ...warnings,
  };
  if (result.status === 'failed') {
    return { status: 'failed', ...used, error: result.error ?? { code: 'internal_error', message: 'The judge call failed' } };
  }
  try {
    // A verdict an answer carries, quoted by the judge, is not the judge's: the answers as the judge was shown them.
    const verdict = parseVerdict(result.output, { quoted: [a.text, b.text], carried: (answer) => carriedBy(answer === a.text ? a : b) });
    return { status: 'completed', verdict, ...used };
  } catch (error) {
    if (!(error instanceof VerdictParseError)) throw error;
    return { status: 'failed', ...used, error: { code: error.code, message: error.message } };
  }
}
