import { describe, expect, it } from 'vitest';
import { InlineThinkingFilter } from '../../shared/providers/openai-chat/inline-thinking.js';
import { withoutThinking } from '../../shared/providers/openai-chat/response.js';

/** The deltas the filter shows for `text` fed in two pieces cut at `cut`, and its output. */
function feed(text: string, cut: number): { deltas: string[]; output: string } {
  const deltas: string[] = [];
  const filter = new InlineThinkingFilter((delta) => deltas.push(delta));
  filter.add(text.slice(0, cut));
  filter.add(text.slice(cut));
  return { deltas, output: filter.output };
}

describe('Class: InlineThinkingFilter', () => {
  it.each(['<think>plan the answer</think>\n\nThe answer.', '  <think>x</think>Answer', 'No thinking here.', '<thin is not a tag', '\n<think></think>  \n'])(
    'shows what the whole answer keeps, wherever the text is cut: %j',
    (text) => {
      for (let cut = 0; cut <= text.length; cut++) {
        const { deltas, output } = feed(text, cut);
        expect(output).toBe(withoutThinking(text));
        expect(deltas.join('')).toBe(output);
        expect(output).not.toContain('plan the answer');
      }
    },
  );

  it('shows nothing of a think block that never closes', () => {
    const { deltas, output } = feed('<think>still thinking when the stream ended', 10);
    expect(deltas).toEqual([]);
    expect(output).toBe('');
  });
});
