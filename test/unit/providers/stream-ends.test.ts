import { describe, expect, it } from 'vitest';
import { MessagesStream } from '../../../shared/providers/anthropic-messages/stream.js';
import { ConverseStreamReader } from '../../../shared/providers/bedrock-converse/stream.js';
import { UpstreamError } from '../../../shared/providers/errors.js';
import { GenerateContentStream } from '../../../shared/providers/gemini-generate-content/stream.js';
import { dialectFor } from '../../../shared/providers/openai-chat/dialects.js';
import { fromChatResponse } from '../../../shared/providers/openai-chat/response.js';
import { ChatStream } from '../../../shared/providers/openai-chat/stream.js';
import { ResponsesStream } from '../../../shared/providers/openai-responses/stream.js';
import { finishStream } from '../../../shared/providers/stream-http.js';
import type { ModelReply } from '../../../shared/providers/types.js';

/** Feeds SSE events (objects as JSON, strings as they are) to a reader and finishes it as the adapters do. */
function read(reader: { onEvent(event: { event: string; data: string }): void; finish(): ModelReply; partial(): { output: string } }, events: (object | string)[]) {
  for (const data of events) reader.onEvent({ event: 'message', data: typeof data === 'string' ? data : JSON.stringify(data) });
  return finishStream(reader);
}

/** What `run` throws. */
function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

function endedEarly(run: () => unknown): UpstreamError {
  const thrown = thrownBy(run);
  expect(thrown).toBeInstanceOf(UpstreamError);
  const error = thrown as UpstreamError;
  expect(error.code).toBe('upstream_malformed_response');
  expect(error.retryable).toBe(false);
  expect(error.message).toMatch(/stream ended before its/);
  return error;
}

describe('A vendor stream that ends before the event that ends its answer fails, carrying what it delivered', () => {
  const chat = () => new ChatStream(dialectFor('openai'), () => undefined);
  const piece = (content: string, finish_reason: string | null = null) => ({ choices: [{ delta: { content }, finish_reason }] });

  it('chat completions: whole once a usage chunk came with its finish_reason or after it, [DONE] or not (a vendor may hold the connection open before it)', () => {
    const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
    const after = chat();
    for (const chunk of [piece('Hello'), piece('', 'stop')]) after.onEvent({ event: 'message', data: JSON.stringify(chunk) });
    expect(after.ended()).toBe(false);
    after.onEvent({ event: 'message', data: JSON.stringify({ choices: [], usage }) });
    expect(after.ended()).toBe(true);
    expect(after.finish()).toMatchObject({ output: 'Hello', usage: { inputTokens: 3, outputTokens: 2 } });
    // Groq's usage rides on the chunk of the finish_reason.
    const groq = new ChatStream(dialectFor('groq'), () => undefined);
    groq.onEvent({ event: 'message', data: JSON.stringify({ ...piece('Hi', 'stop'), x_groq: { usage } }) });
    expect(groq.ended()).toBe(true);
    // A usage chunk before the finish_reason (a running count) does not end it.
    const running = chat();
    running.onEvent({ event: 'message', data: JSON.stringify({ ...piece('Hel'), usage }) });
    expect(running.ended()).toBe(false);
  });

  it('chat completions: ended by a finish_reason (a usage chunk may still follow) or by [DONE], else early', () => {
    expect(read(chat(), [piece('Hello'), piece('', 'stop')]).output).toBe('Hello');
    expect(read(chat(), [piece('Hello'), '[DONE]']).output).toBe('Hello');
    const error = endedEarly(() => read(chat(), [piece('Hel'), { choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }]));
    expect(error.details.partial).toEqual({ output: 'Hel', usage: expect.objectContaining({ inputTokens: 3, outputTokens: 2 }), hints: { unseenOutputTokens: 0 } });
  });

  it('Anthropic Messages: ended by message_stop, or by a message_delta with its stop reason and usage; usage already sent travels with the failure', () => {
    const events = [
      { type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 1 } } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Partial' } },
    ];
    const delta = { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 7 } };
    expect(read(new MessagesStream(() => undefined), [...events, delta, { type: 'message_stop' }]).output).toBe('Partial');
    // Only message_stop follows a message_delta that says how the answer ended and what it counted: the answer is whole.
    expect(read(new MessagesStream(() => undefined), [...events, delta])).toMatchObject({ output: 'Partial', usage: { inputTokens: 5, outputTokens: 7 } });
    // A stop reason without its usage is not yet the end (its usage may follow), but the answer has stopped: closed there, it is whole and has no count, as a chat answer's finish_reason without usage.
    const uncounted = new MessagesStream(() => undefined);
    uncounted.onEvent({ event: 'message', data: JSON.stringify(events[0]) });
    uncounted.onEvent({ event: 'message', data: JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' } }) });
    expect([uncounted.ended(), uncounted.stopped()]).toEqual([false, true]);
    expect(read(new MessagesStream(() => undefined), [...events, { type: 'message_delta', delta: { stop_reason: 'end_turn' } }])).toMatchObject({
      output: 'Partial',
      usage: undefined,
    });
    // Usage without a stop reason is not the end.
    endedEarly(() => read(new MessagesStream(() => undefined), [...events, { type: 'message_delta', delta: {}, usage: { output_tokens: 7 } }]));
    const error = endedEarly(() => read(new MessagesStream(() => undefined), events));
    expect(error.message).toContain('message_stop');
    expect(error.details.partial).toEqual({ output: 'Partial', hints: { inputTokens: 5 } });
  });

  it('OpenAI Responses: ended by a final event, also one without its response (then without usage)', () => {
    const delta = { type: 'response.output_text.delta', delta: 'Hello' };
    const reply = read(new ResponsesStream(() => undefined), [delta, { type: 'response.completed' }]);
    expect(reply).toMatchObject({ output: 'Hello', usage: undefined });
    expect(endedEarly(() => read(new ResponsesStream(() => undefined), [delta])).details.partial).toEqual({ output: 'Hello' });
    // A `failed` final response: the partial (asked for when the stream then broke off) is the text and the usage, not the failure thrown.
    const failed = new ResponsesStream(() => undefined);
    for (const data of [
      delta,
      { type: 'response.failed', response: { status: 'failed', error: { code: 'server_error', message: 'boom' }, usage: { input_tokens: 8, output_tokens: 3, total_tokens: 11 } } },
    ]) {
      failed.onEvent({ event: 'message', data: JSON.stringify(data) });
    }
    expect(failed.partial()).toMatchObject({ output: 'Hello', usage: { inputTokens: 8, outputTokens: 3 } });
  });

  it('Gemini: ended by a finishReason; a blocked prompt (no candidate, no finishReason) is still named as blocked', () => {
    const text = (t: string, finishReason?: string) => ({ candidates: [{ content: { parts: [{ text: t }] }, ...(finishReason ? { finishReason } : {}) }] });
    expect(read(new GenerateContentStream(() => undefined), [text('Hel'), text('lo', 'STOP')]).output).toBe('Hello');
    expect(endedEarly(() => read(new GenerateContentStream(() => undefined), [text('Hel')])).details.partial).toEqual({ output: 'Hel' });
    // A block reason that blocks nothing does not stand for a finishReason.
    for (const blockReason of [null, '', 'BLOCK_REASON_UNSPECIFIED']) {
      endedEarly(() => read(new GenerateContentStream(() => undefined), [{ ...text('Hel'), promptFeedback: { blockReason } }]));
    }
    // Cut while it was still thinking: no text yet, and still a stream that ended early.
    const thinking = { candidates: [{ content: { parts: [{ text: 'Let me think', thought: true }] } }] };
    expect(endedEarly(() => read(new GenerateContentStream(() => undefined), [thinking])).details.partial).toEqual({ output: '' });
    let blocked: unknown;
    try {
      read(new GenerateContentStream(() => undefined), [{ promptFeedback: { blockReason: 'SAFETY' } }]);
    } catch (error) {
      blocked = error;
    }
    expect(blocked).toMatchObject({ code: 'upstream_blocked' });
  });

  it("Gemini: a running count of the prompt alone, in a chunk with text, is no usage of what was streamed, only the estimate's hints", () => {
    const early = { candidates: [{ content: { parts: [{ text: 'Hel' }] } }], usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 } };
    const stopped = new GenerateContentStream(() => undefined);
    stopped.onEvent({ event: 'message', data: JSON.stringify(early) });
    expect(stopped.partial()).toEqual({ output: 'Hel', hints: { inputTokens: 7 } });
    // Counting output, it is the usage up to its chunk.
    const counted = new GenerateContentStream(() => undefined);
    counted.onEvent({ event: 'message', data: JSON.stringify({ ...early, usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 1, totalTokenCount: 8 } }) });
    expect(counted.partial()).toMatchObject({ output: 'Hel', usage: { inputTokens: 7, outputTokens: 1 } });
    // Stopped while thinking: its count of the thoughts covers what came.
    const thinking = new GenerateContentStream(() => undefined);
    thinking.onEvent({
      event: 'message',
      data: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'Let me think', thought: true }] } }], usageMetadata: { promptTokenCount: 7, thoughtsTokenCount: 900 } }),
    });
    expect(thinking.partial()).toMatchObject({ output: '', usage: { inputTokens: 7, outputTokens: 900, reasoningTokens: 900 } });
    // A later chunk's count of the prompt alone does not take the place of that count: the estimate still has the thoughts.
    thinking.onEvent({ event: 'message', data: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'Hi' }] } }], usageMetadata: { promptTokenCount: 7 } }) });
    expect(thinking.partial()).toMatchObject({ output: 'Hi', hints: { inputTokens: 7, outputTokensAtLeast: 900 } });
  });

  it('Bedrock ConverseStream: ended by messageStop (metadata may be missing: no usage), else early', () => {
    const events = (stop: boolean) => [
      { messageStart: { role: 'assistant' } },
      { contentBlockDelta: { delta: { text: 'Hi' } } },
      ...(stop ? [{ messageStop: { stopReason: 'end_turn' } }] : []),
    ];
    const finished = (stop: boolean) => {
      const reader = new ConverseStreamReader(false, () => undefined);
      for (const event of events(stop)) reader.onEvent(event);
      return finishStream(reader);
    };
    expect(finished(true)).toMatchObject({ output: 'Hi', usage: undefined });
    expect(endedEarly(() => finished(false)).details.partial).toEqual({ output: 'Hi' });
  });

  it('Bedrock ConverseStream with a forced tool: input cut at maxTokens is the output as streamed, cut (not a malformed answer); uncut input that is not JSON is malformed', () => {
    const finished = (stopReason: string) => {
      const reader = new ConverseStreamReader(true, () => undefined);
      for (const event of [
        { messageStart: { role: 'assistant' } },
        { contentBlockStart: { start: { toolUse: { name: 'respond' } } } },
        { contentBlockDelta: { delta: { toolUse: { input: '{"a":"some long te' } } } },
        { messageStop: { stopReason } },
      ])
        reader.onEvent(event);
      return finishStream(reader);
    };
    expect(finished('max_tokens')).toMatchObject({ output: '{"a":"some long te', cutAtMaxTokens: true });
    expect(() => finished('tool_use')).toThrow(/streamed tool input that is not JSON/);
  });
});

describe('A streamed answer its vendor withheld after generating it', () => {
  function blocked(run: () => unknown): UpstreamError {
    const thrown = thrownBy(run);
    expect(thrown).toMatchObject({ code: 'upstream_blocked', retryable: false });
    return thrown as UpstreamError;
  }

  it('Gemini: SAFETY after thinking carries the usage of the chunk with the finishReason, thoughts included', () => {
    const events = [
      { candidates: [{ content: { parts: [{ text: 'Let me think', thought: true }] } }], usageMetadata: { promptTokenCount: 9, thoughtsTokenCount: 700, totalTokenCount: 709 } },
      { candidates: [{ content: { parts: [] }, finishReason: 'SAFETY' }], usageMetadata: { promptTokenCount: 9, thoughtsTokenCount: 900, totalTokenCount: 909 } },
    ];
    const error = blocked(() => read(new GenerateContentStream(() => undefined), events));
    expect(error.details.billed?.usage).toEqual({ inputTokens: 9, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 900, reasoningTokens: 900 });
  });

  it('chat completions: content_filter without text carries the usage chunk that followed it', () => {
    const events = [
      { choices: [{ delta: {}, finish_reason: 'content_filter' }] },
      { choices: [], usage: { prompt_tokens: 9, completion_tokens: 400, total_tokens: 409 } },
      '[DONE]',
    ];
    const error = blocked(() => read(new ChatStream(dialectFor('mistral'), () => undefined), events));
    expect(error.details.billed?.usage).toMatchObject({ inputTokens: 9, outputTokens: 400 });
  });

  it('chat completions: content_filter after streamed reasoning, its usage not to be believed, carries the reasoning for the estimate', () => {
    const events = [
      { choices: [{ delta: { reasoning_content: 'step '.repeat(400) } }] },
      { choices: [{ delta: {}, finish_reason: 'content_filter' }] },
      { choices: [], usage: { prompt_tokens: 9, completion_tokens: -1, total_tokens: 8 } },
      '[DONE]',
    ];
    const error = blocked(() => read(new ChatStream(dialectFor('deepseek'), () => undefined), events));
    expect(error.details.billed).toEqual({ usage: undefined, hints: { unseenOutputTokens: 500 } });
  });

  it('Bedrock ConverseStream: content_filtered carries the usage of its metadata event', () => {
    const reader = new ConverseStreamReader(false, () => undefined);
    for (const event of [{ messageStop: { stopReason: 'content_filtered' } }, { metadata: { usage: { inputTokens: 9, outputTokens: 300, totalTokens: 309 } } }])
      reader.onEvent(event);
    const error = blocked(() => finishStream(reader));
    expect(error.details.billed?.usage).toMatchObject({ inputTokens: 9, outputTokens: 300 });
  });
});

describe('A stream whose events come out of order, or with more than one answer: the first stop stands and nothing after it is the answer (as a whole answer reads one)', () => {
  const heard = () => {
    const deltas: string[] = [];
    return { deltas, onDelta: (text: string) => void deltas.push(text) };
  };

  /** A stream whose only choice is numbered 1, finished and counted, has not ended (index 0 may come), and, closed, fails as its whole answer would, charged the count (5 in, 2 out). */
  const endsAsWholeAnswer = (reader: Parameters<typeof finishStream>[0] & { ended(): boolean }, message: string) => {
    expect(reader.ended()).toBe(false);
    expect(() => finishStream(reader)).toThrow(
      expect.objectContaining({
        code: 'upstream_malformed_response',
        message,
        details: expect.objectContaining({ billed: expect.objectContaining({ usage: expect.objectContaining({ inputTokens: 5, outputTokens: 2 }) }) }),
      }),
    );
  };

  it('chat completions: text after the finish_reason is dropped, the first finish_reason stands, and a second choice is not joined to the first (they had been: "AAABBB")', () => {
    const piece = (content: string, finish_reason: string | null = null, index = 0) => ({ choices: [{ index, delta: { content }, finish_reason }] });
    const late = heard();
    expect(read(new ChatStream(dialectFor('openai'), late.onDelta), [piece('Hello'), piece('', 'stop'), piece(' LATE'), piece('', 'length')])).toMatchObject({
      output: 'Hello',
      finishReason: 'stop',
    });
    expect(late.deltas).toEqual(['Hello']);
    const two = heard();
    expect(read(new ChatStream(dialectFor('openai'), two.onDelta), [piece('AAA'), piece('BBB', null, 1), piece('', 'stop'), piece('', 'stop', 1)]).output).toBe('AAA');
    expect(two.deltas).toEqual(['AAA']);
    // Index 0's, though another's chunk comes first (a second version had kept to the first index named).
    expect(read(new ChatStream(dialectFor('openai'), () => undefined), [piece('ONE ', null, 1), piece('ZERO', null, 0), piece('', 'stop', 0), piece('', 'stop', 1)]).output).toBe(
      'ZERO',
    );
    // A vendor that numbers its only choice 1 answered none the gateway asked for: malformed, whole and streamed alike, charged the usage it reported.
    const usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 };
    expect(() => fromChatResponse({ choices: [{ index: 1, message: { content: 'Hi' }, finish_reason: 'stop' }], usage })).toThrow(
      expect.objectContaining({
        code: 'upstream_malformed_response',
        details: expect.objectContaining({ billed: expect.objectContaining({ usage: expect.objectContaining({ inputTokens: 5 }) }) }),
      }),
    );
    expect(() => read(new ChatStream(dialectFor('openai'), () => undefined), [piece('Hi', null, 1), piece('', 'stop', 1), { choices: [], usage }, '[DONE]'])).toThrow(
      expect.objectContaining({ code: 'upstream_malformed_response', details: expect.objectContaining({ billed: expect.anything() }) }),
    );
    // Closed without [DONE] after the other choice's finish_reason and the usage: the whole answer's failure (it had said the stream ended before its finish_reason).
    const heldOpen = new ChatStream(dialectFor('openai'), () => undefined);
    for (const event of [piece('Hi', null, 1), piece('', 'stop', 1), { choices: [], usage }]) heldOpen.onEvent({ event: 'message', data: JSON.stringify(event) });
    endsAsWholeAnswer(heldOpen, 'The provider answered without a message');
    // Index 0 after another choice finished, and counted in the same chunk, is still the answer (a version had ended the stream there).
    expect(
      read(new ChatStream(dialectFor('openai'), () => undefined), [
        piece('B', null, 1),
        { ...piece('', 'stop', 1), usage },
        piece('ZERO'),
        piece('', 'stop'),
        { choices: [], usage },
      ]).output,
    ).toBe('ZERO');
    // Whole, the choice of index 0 wherever it stands.
    expect(
      fromChatResponse({
        choices: [
          { index: 1, message: { content: 'BBB' }, finish_reason: 'stop' },
          { index: 0, message: { content: 'AAA' }, finish_reason: 'stop' },
        ],
      }).output,
    ).toBe('AAA');
  });

  it('Gemini: parts and finishReasons after the first finishReason are dropped (its search count still read); a second candidate is not joined to the first', () => {
    const text = (t: string, finishReason?: string, index?: number) => ({
      candidates: [{ ...(index === undefined ? {} : { index }), content: { parts: [{ text: t }] }, ...(finishReason ? { finishReason } : {}) }],
    });
    const late = heard();
    const reply = read(new GenerateContentStream(late.onDelta), [text('Hel'), text('lo', 'STOP'), text(' LATE', 'SAFETY')]);
    expect(reply).toMatchObject({ output: 'Hello', finishReason: 'STOP' });
    expect(reply).not.toHaveProperty('cutShort');
    expect(late.deltas).toEqual(['Hel', 'lo']);
    expect(read(new GenerateContentStream(() => undefined), [text('AAA', undefined, 0), text('BBB', undefined, 1), text('', 'STOP', 0)]).output).toBe('AAA');
    expect(read(new GenerateContentStream(() => undefined), [text('ONE ', undefined, 1), text('ZERO', undefined, 0), text('', 'STOP', 0)]).output).toBe('ZERO');
    // Its only candidate numbered 1, finished with its count, then the stream's close: it fails as the whole answer does, charged that count (it had said the stream ended before its finishReason).
    const onlyOther = new GenerateContentStream(() => undefined);
    onlyOther.onEvent({ event: 'message', data: JSON.stringify({ ...text('Hi', 'STOP', 1), usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2 } }) });
    endsAsWholeAnswer(onlyOther, 'The provider answered without a candidate');
    // Index 0 after another candidate finished with a count is still the answer (a version had ended the stream there).
    const counted = (chunk: object) => ({ ...chunk, usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2 } });
    expect(read(new GenerateContentStream(() => undefined), [counted(text('x', 'STOP', 1)), counted(text('Hello', 'STOP', 0))]).output).toBe('Hello');
  });

  it('Anthropic Messages: text after the stop reason is dropped, and the first stop reason stands', () => {
    const late = heard();
    const reply = read(new MessagesStream(late.onDelta), [
      { type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 1 } } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' LATE' } },
      { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 3 } },
      { type: 'message_stop' },
    ]);
    expect(reply).toMatchObject({ output: 'Hello', finishReason: 'end_turn', usage: { outputTokens: 3 } });
    expect(reply).not.toHaveProperty('cutAtMaxTokens');
    expect(late.deltas).toEqual(['Hello']);
  });

  it('Bedrock ConverseStream: text after messageStop is dropped, the first stop reason stands, and its metadata is still read', () => {
    const late = heard();
    const reader = new ConverseStreamReader(false, late.onDelta);
    for (const event of [
      { contentBlockDelta: { delta: { text: 'Hello' } } },
      { messageStop: { stopReason: 'end_turn' } },
      { contentBlockDelta: { delta: { text: ' LATE' } } },
      { messageStop: { stopReason: 'max_tokens' } },
      { metadata: { usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 } } },
    ])
      reader.onEvent(event);
    expect(finishStream(reader)).toMatchObject({ output: 'Hello', finishReason: 'end_turn', usage: { outputTokens: 2 } });
    expect(late.deltas).toEqual(['Hello']);
  });

  it("OpenAI Responses: a text delta that is no string is no text, as a whole answer's part is (it had failed the call, free, where the whole answer was charged)", () => {
    const usage = { input_tokens: 9, output_tokens: 5, total_tokens: 14 };
    const final = { id: 'r', status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: 42 }] }], usage };
    const streamed = read(new ResponsesStream(() => undefined), [
      { type: 'response.output_text.delta', delta: 42 },
      { type: 'response.completed', response: final },
    ]);
    expect(streamed).toMatchObject({ output: '', usage: { inputTokens: 9, outputTokens: 5 } });
  });
});
