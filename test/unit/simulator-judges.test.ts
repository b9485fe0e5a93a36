import { describe, expect, it } from 'vitest';
import { JudgeRules } from '../../infra/local/simulator/judges.js';

/** A chat body whose user message frames two answers as the gateway's judge prompt does. */
const judgeCall = (a: string, b: string) => ({ messages: [{ role: 'user', content: `Compare.\n<answer_a>\n${a}\n</answer_a>\n<answer_b>\n${b}\n</answer_b>` }] });

describe('Class: JudgeRules (the simulator)', () => {
  it('answers a judge no rule names as position-a, with scores that agree with its winner', () => {
    const verdict = new JudgeRules().verdictFor('openai', 'gpt-4.1', judgeCall('first', 'second'));
    expect(verdict).toEqual({ reasoning: 'Simulated position-a judge.', scoreA: 8, scoreB: 4, winner: 'A' });
  });

  it('leaves a call that is no judge call to its protocol: a body without both framed answers', () => {
    const rules = new JudgeRules();
    expect(rules.verdictFor('openai', 'gpt-4.1', { messages: [{ role: 'user', content: 'Say hello' }] })).toBeUndefined();
    expect(rules.verdictFor('openai', 'gpt-4.1', { messages: [{ role: 'user', content: '<answer_a>\nonly one\n</answer_a>' }] })).toBeUndefined();
  });

  it('finds the answers in a prompt of many unclosed tags in one pass (a pattern search from each tag took quadratic time)', () => {
    const hostile = { messages: [{ role: 'user', content: '\n</answer_a>'.concat('<answer_a>\nx'.repeat(300_000)) }] };
    expect(new JudgeRules().verdictFor('openai', 'gpt-4.1', hostile)).toBeUndefined();
  });
});
