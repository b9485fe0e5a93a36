import type { LocalHost } from '../../infra/local/host.js';
import { assertMatchesOpenApi } from './openapi-validator.js';

/** One Server-Sent Event as it came: its name, its data line as sent, and that line parsed. */
export interface SseEvent {
  event: string;
  data: string;
  json: any;
}

export interface EventAnswer {
  status: number;
  headers: Headers;
  /** The events in order (200 only). */
  events: SseEvent[];
  /** Comment lines (`: keep-alive`), in order. */
  comments: string[];
  /** Everything the body held, as received. */
  raw: string;
  /** The JSON body of a refusal (not 200). */
  body?: any;
}

/**
 * POSTs to the prompt endpoint asking for an event stream and reads it as it comes.
 * `stopAfter` sees each event and comment as it arrives: returning true disconnects (the
 * reading ends there). A refusal's JSON body, and `done`'s, are checked against the OpenAPI document.
 * Returns once the host has finished what follows the stream (settle, prompt log).
 */
export async function postEvents(
  host: LocalHost,
  payload: unknown,
  options: { headers?: Record<string, string>; stopAfter?: (item: SseEvent | { comment: string }, answer: EventAnswer) => boolean } = {},
): Promise<EventAnswer> {
  const controller = new AbortController();
  const response = await fetch(`${host.url}/api/v1/prompt`, {
    method: 'POST',
    headers: { authorization: `Bearer ${host.demo.apiKey}`, 'content-type': 'application/json', accept: 'text/event-stream', ...options.headers },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
    signal: controller.signal,
  });
  const answer: EventAnswer = { status: response.status, headers: response.headers, events: [], comments: [], raw: '' };
  if (response.status !== 200) {
    const text = await response.text();
    answer.raw = text;
    answer.body = text ? JSON.parse(text) : undefined;
    assertMatchesOpenApi({ status: answer.status, headers: answer.headers, body: answer.body });
    await host.settled();
    return answer;
  }
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let pending = '';
  reading: for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    answer.raw += value;
    pending += value;
    let end: number;
    while ((end = pending.indexOf('\n\n')) >= 0) {
      const block = pending.slice(0, end);
      pending = pending.slice(end + 2);
      const item = parseBlock(block);
      if ('comment' in item) answer.comments.push(item.comment);
      else answer.events.push(item);
      if (options.stopAfter?.(item, answer)) {
        controller.abort();
        await reader.cancel().catch(() => undefined);
        break reading;
      }
    }
  }
  // done is the JSON answer: it must be a documented one.
  const done = answer.events.find((e) => e.event === 'done');
  if (done) assertMatchesOpenApi({ status: 200, headers: new Headers({ 'content-type': 'application/json; charset=utf-8' }), body: done.json });
  await host.settled();
  return answer;
}

function parseBlock(block: string): SseEvent | { comment: string } {
  if (block.startsWith(':')) return { comment: block.slice(1).trim() };
  const lines = block.split('\n');
  const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length) ?? 'message';
  const dataLines = lines.filter((line) => line.startsWith('data: '));
  if (dataLines.length !== 1 || lines.length !== 2) throw new Error(`an event must be one event line and one data line: ${JSON.stringify(block)}`);
  const data = dataLines[0]!.slice('data: '.length);
  return { event, data, json: JSON.parse(data) };
}
