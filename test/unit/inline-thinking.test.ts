import { describe, expect, it } from 'vitest';
import { InlineThinkingFilter } from '../../shared/providers/openai-chat/inline-thinking.js';
import { withoutThinking } from '../../shared/providers/openai-chat/response.js';

/** The deltas the filter shows for `text` fed in two pieces cut at `cut`, the stream then ended, and its output. */
function feed(text: string, cut: number): { deltas: string[]; output: string } {
  const deltas: string[] = [];
  const filter = new InlineThinkingFilter((delta) => deltas.push(delta));
  filter.add(text.slice(0, cut));
  filter.add(text.slice(cut));
  filter.end();
  return { deltas, output: filter.output };
}

describe('Class: InlineThinkingFilter', () => {
  it.each([
    '<think>plan the answer</think>\n\nThe answer.',
    '  <think>x</think>Answer',
    'No thinking here.',
    '<thin is not a tag',
    '\n<think></think>  \n',
    // Answers that end while they could still open a think block: the answer after all (they had been lost).
    '<',
    '  <th',
    '   ',
    // A block that never closes: all thinking, in the whole answer too.
    '<think>plan the answer, cut at the limit',
  ])('shows what the whole answer keeps, wherever the text is cut: %j', (text) => {
    for (let cut = 0; cut <= text.length; cut++) {
      const { deltas, output } = feed(text, cut);
      expect(output).toBe(withoutThinking(text));
      expect(deltas.join('')).toBe(output);
      expect(output).not.toContain('plan the answer');
    }
  });

  it('takes a hostile stream of many small pieces, whitespace only or thinking that never ends, as one piece', () => {
    // 40,000 pieces of 45 characters (1.8 MB): leading whitespace that never ends, then a think
    // block that never closes. Each piece is looked at once (the whole text, searched on each
    // piece, took minutes of CPU for a few MB and held the event loop seconds at a time).
    const deltas: string[] = [];
    const filter = new InlineThinkingFilter((delta) => deltas.push(delta));
    const spaces = ' '.repeat(45);
    for (let i = 0; i < 20_000; i++) filter.add(spaces);
    filter.add('<think>');
    for (let i = 0; i < 20_000; i++) filter.add('still thinking, no end in sight, more to say.');
    expect(deltas).toEqual([]);
    expect(filter.output).toBe('');
    expect(filter.all).toHaveLength(40_000 * 45 + 7);
    // A close split across pieces still ends it.
    filter.add('</thi');
    filter.add('nk>  The answer.');
    expect(deltas).toEqual(['The answer.']);
  });

  it('shows nothing of a think block that never closes', () => {
    const { deltas, output } = feed('<think>still thinking when the stream ended', 10);
    expect(deltas).toEqual([]);
    expect(output).toBe('');
  });
});
