import { describe, expect, it } from 'vitest';
import { curlCommand, requestBody, type PageForm } from '../../page/request.js';
import { SseParser } from '../../page/sse.js';

describe('Class: SseParser', () => {
  describe('Method: push', () => {
    it('returns each event once its blank line arrives, however the chunks split it', () => {
      const stream = 'event: delta\ndata: {"index":0,"text":"Hel"}\n\n: keep-alive\n\nevent: done\r\ndata: {"a":\r\ndata: 1}\r\n\r\n';
      for (const size of [1, 2, 7, stream.length]) {
        const parser = new SseParser();
        const events = [];
        for (let at = 0; at < stream.length; at += size) events.push(...parser.push(stream.slice(at, at + size)));
        expect(events).toEqual([
          { event: 'delta', data: '{"index":0,"text":"Hel"}' },
          { event: 'done', data: '{"a":\n1}' },
        ]);
      }
    });

    it('names an unnamed event "message", skips other fields and does not dispatch an event without data', () => {
      const parser = new SseParser();
      expect(parser.push('id: 7\nretry: 10\n\nevent: ranking\n\ndata:x\n\n')).toEqual([{ event: 'message', data: 'x' }]);
    });
  });
});

const FORM: PageForm = {
  prompt: "It's",
  models: ['a', 'b'],
  judges: [],
  weights: { accuracy: '', speed: '', cost: '' },
  settings: { temperature: '', maxTokens: '', topP: '' },
};

describe('Function: requestBody', () => {
  it('sends only what is set, numbers as numbers', () => {
    expect(requestBody(FORM)).toEqual({ prompt: "It's", models: ['a', 'b'] });
    expect(requestBody({ ...FORM, judges: ['j'], weights: { accuracy: '0.5', speed: ' ', cost: '0' }, settings: { temperature: '0.2', maxTokens: '64', topP: '' } })).toEqual({
      prompt: "It's",
      models: ['a', 'b'],
      judges: ['j'],
      judge_weights: { accuracy: 0.5, cost: 0 },
      generation_settings: { temperature: 0.2, maxTokens: 64 },
    });
  });

  it('sends weights only with judges, and a value that is not a number as typed, for the API to name', () => {
    expect(requestBody({ ...FORM, weights: { accuracy: '1', speed: '', cost: '' } })).not.toHaveProperty('judge_weights');
    expect(requestBody({ ...FORM, settings: { temperature: 'hot', maxTokens: '', topP: '' } }).generation_settings).toEqual({ temperature: 'hot' });
  });
});

describe('Function: curlCommand', () => {
  it('quotes the body for the shell and leaves the key to $GATEWAY_KEY', () => {
    const command = curlCommand('http://127.0.0.1:3000/api/v1/prompt', requestBody(FORM));
    expect(command).toBe(
      [
        "curl -sN 'http://127.0.0.1:3000/api/v1/prompt'",
        '  -H "Authorization: Bearer $GATEWAY_KEY"',
        "  -H 'Content-Type: application/json'",
        "  -H 'Accept: text/event-stream'",
        `  --data-binary '{"prompt":"It'\\''s","models":["a","b"]}'`,
      ].join(' \\\n'),
    );
  });
});
