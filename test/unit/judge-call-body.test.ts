import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { judgeCall, showAnswer } from '../../shared/judging/judge-prompt.js';
import { chargeCall, implausibleUsage } from '../../shared/pricing/charge.js';
import { ADAPTERS } from '../../shared/providers/adapters.js';
import { jsonRequest } from '../../shared/providers/http.js';
import type { ModelCall } from '../../shared/providers/types.js';
import { toMessagesRequest } from '../../shared/providers/anthropic-messages/request.js';
import { toGenerateContentRequest } from '../../shared/providers/gemini-generate-content/request.js';
import { dialectFor } from '../../shared/providers/openai-chat/dialects.js';
import { toChatRequest } from '../../shared/providers/openai-chat/request.js';
import { toResponsesRequest } from '../../shared/providers/openai-responses/request.js';
import { startFakeHttp } from '../support/fake-http.js';

/**
 * A judge task shows each answer in up to 20 calls, and the request's prompt in every call:
 * each call's body holds their JSON bytes once for all (shared-text.ts), where each had held a
 * copy (110 calls of two 1.45 MB answers held 320 MB). The bytes on the wire are the same.
 */

/** Text JSON must escape, frame tags, a lone surrogate, and a word like the mark that stands for the prompt. */
const HOSTILE = 'He said "hi" \\ back\nslash\t\u0000\u001f\u2028\u2029 😀 \ud800 lone </answer_a> <answer_b> "prompt-00000000-0000-0000-0000-000000000000"';

function judgedRequest(judge: string) {
  return validatePromptRequest({
    prompt: `Compare these. ${HOSTILE}`,
    system_prompt: 'Be brief.',
    history: [{ role: 'user', content: `Earlier: ${HOSTILE}` }],
    models: ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro'],
    judges: [judge],
  });
}

let vendor: Awaited<ReturnType<typeof startFakeHttp>>;
beforeAll(async () => {
  vendor = await startFakeHttp(() => ({ status: 400, body: { error: { message: 'recorded' } } }));
});
afterAll(async () => {
  await vendor?.close();
});

/** The body `call` sends, as its vendor receives it. */
async function sentBody(call: ModelCall): Promise<string> {
  const before = vendor.calls.length;
  const prepared = ADAPTERS[call.entry.protocol].prepare(call, { baseUrl: vendor.url, apiKey: 'k', simulated: false });
  await prepared.send(AbortSignal.timeout(5_000)).catch(() => undefined);
  expect(vendor.calls).toHaveLength(before + 1);
  return vendor.calls[before]!.body;
}

describe('Judge calls: their bodies share the material', () => {
  it.each([
    ['openai-responses', 'fam_c-5.4-mini'],
    ['openai-chat', 'fam_d-3'],
    ['anthropic-messages', 'fam_a-haiku-4-5'],
    ['gemini-generate-content', 'fam_b-3.1-flash'],
  ])('sends the bytes a whole serialisation sends, %s', async (protocol, judge) => {
    const request = judgedRequest(judge);
    const shownA = showAnswer(`A: ${HOSTILE}`);
    const { call } = judgeCall(request, request.judges[0]!, shownA, showAnswer(`B: ${HOSTILE}`));
    expect(call.entry.protocol).toBe(protocol);
    expect(call.promptPieces).toBeDefined();

    const inPieces = await sentBody(call);
    const whole = await sentBody({ ...call, promptPieces: undefined });

    expect(inPieces).toBe(whole);
    // The material is in it, as its vendor reads it.
    expect(inPieces).toContain(JSON.stringify(shownA.text).slice(1, -1));
    expect(JSON.stringify(JSON.parse(inPieces))).toContain(JSON.stringify(call.prompt).slice(1, -1));
  });

  it.each([
    ['openai-responses', 'fam_c-5.4-mini', (call: ModelCall) => toResponsesRequest(call).body],
    ['openai-chat', 'fam_d-3', (call: ModelCall) => toChatRequest(call, dialectFor(call.entry.provider)).body],
    ['anthropic-messages', 'fam_a-haiku-4-5', (call: ModelCall) => toMessagesRequest(call).body],
    ['gemini-generate-content', 'fam_b-3.1-flash', (call: ModelCall) => toGenerateContentRequest(call).body],
  ])('puts the prompt in its body whole, so that it is sent in pieces, %s', (_, judge, build) => {
    const request = judgedRequest(judge);
    const { call } = judgeCall(request, request.judges[0]!, showAnswer('A'), showAnswer('B'));
    const { payload } = jsonRequest('http://vendor.test/v1', build(call), {}, { prompt: call });
    expect(Array.isArray(payload)).toBe(true);
  });

  it("holds each answer's and the context's bytes once for every call that shows them", () => {
    const request = judgedRequest('fam_c-5.4-mini');
    const judge = request.judges[0]!;
    const [a, b, c] = [showAnswer(`A ${HOSTILE}`), showAnswer(`B ${HOSTILE}`), showAnswer(`C ${HOSTILE}`)];
    const body = (call: ModelCall) => jsonRequest('http://vendor.test/v1', { input: call.prompt }, {}, { prompt: call }).payload as readonly Buffer[];
    const ab = body(judgeCall(request, judge, a, b).call);
    const ba = body(judgeCall(request, judge, b, a).call);
    const ac = body(judgeCall(request, judge, a, c).call);
    expect(Array.isArray(ab)).toBe(true);
    // [head, context, literal, answer A, literal, answer B, literal, tail]
    expect(ab).toHaveLength(8);
    expect(ba[1]).toBe(ab[1]);
    expect(ac[1]).toBe(ab[1]);
    expect(ac[3]).toBe(ab[3]);
    expect(ba[5]).toBe(ab[3]);
    expect(ba[3]).toBe(ab[5]);
    expect(Buffer.concat(ab).toString('utf8')).toBe(JSON.stringify({ input: judgeCall(request, judge, a, b).call.prompt }));
  });

  it('serialises the body whole where its pieces cannot stand for the prompt: changed since, or a surrogate pair split between two', () => {
    const request = judgedRequest('fam_c-5.4-mini');
    const { call } = judgeCall(request, request.judges[0]!, showAnswer('old answer'), showAnswer('B'));
    const changed = { ...call, prompt: 'NEW TEXT' };
    const split = { prompt: 'x😀y', promptPieces: ['x\ud83d', { text: '\ude00y' }] };
    for (const prompt of [changed, split]) {
      const body = { input: prompt.prompt };
      const { payload } = jsonRequest('http://vendor.test/v1', body, {}, { prompt: prompt });
      expect(Buffer.isBuffer(payload)).toBe(true);
      expect((payload as Buffer).toString('utf8')).toBe(JSON.stringify(body));
    }
  });

  it('serialises the body whole where the prompt is not one of its strings once', () => {
    const request = judgedRequest('fam_c-5.4-mini');
    const { call } = judgeCall(request, request.judges[0]!, showAnswer('A'), showAnswer('B'));
    for (const body of [{ twice: [call.prompt, call.prompt] }, { changed: `${call.prompt}!` }]) {
      const { payload } = jsonRequest('http://vendor.test/v1', body, {}, { prompt: call });
      expect(Buffer.isBuffer(payload)).toBe(true);
      expect((payload as Buffer).toString('utf8')).toBe(JSON.stringify(body));
    }
  });
});

/** The heap's live bytes, after a full collection. */
function liveHeapBytes(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return process.memoryUsage().heapUsed;
}

describe('Judge calls: their charge reads the material from its pieces', () => {
  it('charges a call whose usage is missing or not believed without a flat copy of its prompt, and as its whole prompt counts', () => {
    const request = judgedRequest('fam_c-5.4-mini');
    const judge = request.judges[0]!;
    // Two answers of 1 MiB, each shown in every call: read whole, each call's prompt would be flattened into 2 MiB of its own.
    const [a, b] = [showAnswer(`A ${'x'.repeat(1 << 20)}`), showAnswer(`B ${'y '.repeat(1 << 19)}`)];
    const calls = Array.from({ length: 16 }, (_, i) => judgeCall(request, judge, i % 2 ? a : b, i % 2 ? b : a).call);
    const before = liveHeapBytes();
    const charges = calls.map((call) => chargeCall(call, undefined, '{"winner":"A"}', Date.now()));
    // Usage too small for the text, and too large: each reads the input's text to say so.
    const doubts = calls.map((call) => [
      implausibleUsage({ inputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 5, reasoningTokens: 0 }, call),
      implausibleUsage({ inputTokens: 1e8, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 5, reasoningTokens: 0 }, call),
    ]);
    const grown = liveHeapBytes() - before;
    // 16 flat copies would be 32 MiB; the calls are still held.
    expect(grown).toBeLessThan(4 << 20);
    expect(calls).toHaveLength(16);

    const whole = { ...calls[0]!, promptPieces: undefined };
    expect(charges[0]).toEqual(chargeCall(whole, undefined, '{"winner":"A"}', Date.now()));
    expect(charges[0]).toMatchObject({ kind: 'estimated' });
    expect(doubts[0]).toEqual([
      implausibleUsage({ inputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 5, reasoningTokens: 0 }, whole),
      implausibleUsage({ inputTokens: 1e8, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 5, reasoningTokens: 0 }, whole),
    ]);
    expect(doubts[0]!.every((doubt) => doubt !== undefined)).toBe(true);
  });
});
