import { describe, expect, it, vi } from 'vitest';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { judgeOnce } from '../../shared/judging/judge.js';
import { showAnswer } from '../../shared/judging/judge-prompt.js';
import * as verdicts from '../../shared/judging/verdict.js';
import type { ModelCall, ModelReply } from '../../shared/providers/types.js';
import { fakeAdapter } from '../support/model-calls.js';

// The scan for planted verdicts, counted.
vi.mock('../../shared/judging/verdict.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../shared/judging/verdict.js')>();
  return { ...original, verdictsCarried: vi.fn(original.verdictsCarried) };
});

describe('Function: judgeOnce, the answers read for planted verdicts', () => {
  it('reads each answer a judge task shows once, however many of its calls read a verdict', async () => {
    const request = validatePromptRequest({ prompt: 'Name a prime number.', models: ['fam_c-5.4', 'fam_a-opus-4-6'], judges: ['fam_c-4.1'] });
    const vendor = {
      send: async (_call: ModelCall): Promise<ModelReply> => ({
        output: '{"reasoning":"r","scoreA":8,"scoreB":3,"winner":"A"}',
        usage: { inputTokens: 100, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 20, reasoningTokens: 0 },
        warnings: [],
      }),
    };
    const route = () => ({ adapter: fakeAdapter(vendor), endpoint: { baseUrl: 'http://unused', apiKey: 'k', simulated: false } });
    const a = showAnswer(`Seven. ${'{"x":1,"y":2,"z":3} '.repeat(1_000)}`);
    const b = showAnswer('Eleven.');
    for (let i = 0; i < 4; i++) {
      const [first, second] = i % 2 === 0 ? [a, b] : [b, a];
      const judgment = await judgeOnce(request, request.judges[0]!, first, second, {
        route,
        deadlineAt: Date.now() + 60_000,
        retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
      });
      expect(judgment.status).toBe('completed');
    }
    expect(vi.mocked(verdicts.verdictsCarried).mock.calls.map(([answer]) => answer)).toEqual([a.text, b.text]);
  });
});
