/**
 * 8. The event loop beside a large request: one valid request near the body limit (a prompt
 * and ten history turns of 445,000 characters each, 4.9 MB) to 32 models, the provider
 * simulator in a process of its own answering at once, while this process sends a cheap
 * request (GET /api/v1/models) every 10 ms: how long the cheap requests waited, with the
 * host idle and beside the large one. What holds the gateway's thread holds every other
 * request of its process (docs/streaming.md: calls prepared in turns). Reported: no issue
 * sets a figure for it.
 */
import { allModels } from '../../shared/catalog/index.js';
import { MAX_REQUEST_OUTPUT_BYTES } from '../../shared/compare/output-budget.js';
import { LARGE_ANSWER_BYTES, MAX_ANSWER_BYTES } from '../../shared/http/post.js';
import { chatCompletionAnswer } from '../support/fixtures.js';
import { measureJudgeTask, startHostWithVendors, type Host, type HostWithVendors } from './children.js';
import { spreadModels } from './fanout.js';
import { createClient } from './http-client.js';
import { median, percentile, round } from './stats.js';
import type { Benchmark, Row } from './types.js';

/** How often the cheap request is sent. */
const PROBE_EVERY_MS = 10;

/** The vendors that speak chat completions (one answer body serves them all), and their models. */
const CHAT_PROVIDERS = ['xai', 'cerebras', 'deepseek', 'mistral', 'groq'];

/** Every chat vendor of the simulator answers `answer` to every call from now on, or as usual again (`undefined`). */
async function answerEveryChatCall(simulatorUrl: string, answer: Record<string, unknown> | undefined): Promise<void> {
  const cleared = await fetch(`${simulatorUrl}/__sim/faults`, { method: 'DELETE' });
  if (cleared.status !== 204) throw new Error(`simulator: clearing faults answered ${cleared.status}`);
  if (!answer) return;
  const body = JSON.stringify(answer);
  for (const provider of CHAT_PROVIDERS) {
    const set = await fetch(`${simulatorUrl}/__sim/faults`, { method: 'POST', body: `{"kind":"status","status":200,"provider":"${provider}","body":${body}}` });
    if (set.status !== 204) throw new Error(`simulator: setting ${provider}'s answer answered ${set.status}`);
  }
}

/** A valid request of `turnChars` characters a turn (eleven turns with the prompt) to `models` models. */
function largeBody(turnChars: number, models: number): string {
  const history = Array.from({ length: 10 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${i} ${'h'.repeat(turnChars - 2)}` }));
  return JSON.stringify({ prompt: 'p'.repeat(turnChars), history, models: spreadModels(models) });
}

/** The waits of cheap requests sent every PROBE_EVERY_MS until `until` settles (at least one). */
async function probeWhile(host: Host, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  const waits: number[] = [];
  do {
    const started = performance.now();
    const reply = await fetch(`${host.url}/api/v1/models`, { headers: { authorization: `Bearer ${host.apiKey}` } });
    await reply.arrayBuffer();
    if (reply.status !== 200) throw new Error(`probe: status ${reply.status}`);
    waits.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
  } while (!done);
  return waits;
}

export const largeRequest: Benchmark = {
  id: 'large-request',
  title: '8. The event loop beside a large request (32 models, a 4.9 MB prompt)',
  async run(context) {
    const rounds = context.smoke ? 1 : 5;
    const models = context.smoke ? 2 : 32;
    const body = largeBody(context.smoke ? 10_000 : 445_000, models);
    // A judge task over large answers, in a process of its own as the judge function runs it, before the host starts.
    const judgeTask = context.smoke ? { models: 2, answerChars: 1_000, latencyMs: 0 } : { models: 11, answerChars: 1_450_000, latencyMs: 3_000 };
    const judged = await measureJudgeTask(judgeTask);
    if (judged.completed !== judged.calls) throw new Error(`judge task: ${judged.completed} of ${judged.calls} calls completed`);
    let started: HostWithVendors | undefined;
    const client = createClient();
    try {
      started = await startHostWithVendors(context, 'large-request', 0);
      const target = started.host;
      const large = async () => {
        const reply = await client.post(`${target.url}/api/v1/prompt`, body, { authorization: `Bearer ${target.apiKey}` });
        if (reply.status !== 200) throw new Error(`large request: status ${reply.status}: ${reply.body.slice(0, 300)}`);
        return reply.ms;
      };
      const measure = async () => {
        const request = large();
        const waits = await probeWhile(target, request);
        return { waits, requestMs: await request };
      };
      // The cheap request's own first runs (a new connection, its code compiled) are not its waits.
      await probeWhile(target, Promise.resolve());
      await probeWhile(target, new Promise((resolve) => setTimeout(resolve, 200)));
      const idle = await probeWhile(target, new Promise((resolve) => setTimeout(resolve, context.smoke ? 50 : 1_000)));
      // The host's first large request also loads the protocols' code.
      const first = await measure();
      const warm: { waits: number[]; requestMs: number }[] = [];
      for (let r = 0; r < rounds; r++) warm.push(await measure());
      // Large answers: every chat model of the catalog answering 8 MiB at once, which the
      // request's output budget (16 MiB, every model together) holds.
      const chatModels = allModels()
        .filter((entry) => CHAT_PROVIDERS.includes(entry.provider))
        .map((entry) => entry.id)
        .slice(0, context.smoke ? 2 : undefined);
      // The smoke run's answers are past LARGE_ANSWER_BYTES (each read in a turn of its own), not past the budget.
      const answerChars = context.smoke ? LARGE_ANSWER_BYTES + 1024 : MAX_ANSWER_BYTES - 300;
      const keptChars = Math.min(MAX_REQUEST_OUTPUT_BYTES, answerChars * chatModels.length);
      const largeAnswers: { waits: number[]; requestMs: number }[] = [];
      try {
        await answerEveryChatCall(started.vendors.url, chatCompletionAnswer('a'.repeat(answerChars), { prompt_tokens: 10, completion_tokens: 2_000, total_tokens: 2_010 }));
        const askBody = JSON.stringify({ prompt: 'hi', models: chatModels });
        for (let r = 0; r < rounds; r++) {
          const request = client.post(`${target.url}/api/v1/prompt`, askBody, { authorization: `Bearer ${target.apiKey}` }).then((reply) => {
            if (reply.status !== 200) throw new Error(`large answers: status ${reply.status}: ${reply.body.slice(0, 300)}`);
            // Every model answered, and the request kept what its budget holds.
            const { results } = JSON.parse(reply.body) as { results: { status: string; output: string }[] };
            const kept = results.reduce((sum, result) => sum + result.output.length, 0);
            if (results.some((result) => result.status !== 'completed') || kept !== keptChars) throw new Error(`large answers: ${kept} characters kept, ${keptChars} expected`);
            return reply.ms;
          });
          const waits = await probeWhile(target, request);
          largeAnswers.push({ waits, requestMs: await request });
        }
      } finally {
        await answerEveryChatCall(started.vendors.url, undefined);
      }
      const row = (name: string, samples: { waits: number[]; requestMs?: number }[]): Row => ({
        case: name,
        probes: samples.reduce((sum, s) => sum + s.waits.length, 0),
        p50Ms: round(median(samples.map((s) => percentile(s.waits, 50))), 1),
        longestMs: round(median(samples.map((s) => Math.max(...s.waits))), 1),
        requestMs: samples[0]?.requestMs === undefined ? null : round(median(samples.map((s) => s.requestMs!)), 0),
      });
      return {
        status: 'ok',
        notes: [
          `request body ${round(Buffer.byteLength(body) / 1e6, 2)} MB to ${models} models (spread over the providers, as in benchmark 2)`,
          `large answers: ${chatModels.length} of the catalog's chat-completion models (${CHAT_PROVIDERS.join(', ')}), each vendor answering ${answerChars.toLocaleString('en-US')} characters to every call; the request keeps ${keptChars.toLocaleString('en-US')} of them (its output budget holds ${MAX_REQUEST_OUTPUT_BYTES.toLocaleString('en-US')})`,
          `a judge task in a process of its own (test/bench/judge-task-process.ts; the judge function has 512 MB): ${judged.calls} calls of ${judged.judge} over ${judgeTask.models} answers of ${judgeTask.answerChars.toLocaleString('en-US')} characters, answered after ${judgeTask.latencyMs} ms: peak resident memory ${judged.peakAfterMb} MB (${judged.peakBeforeMb} MB before the task), the task ${judged.ms} ms`,
        ],
        method: `the local host in its own process, the provider simulator in another (answering at once); a cheap GET /api/v1/models every ${PROBE_EVERY_MS} ms from this process, while the host is idle for 1 s, beside its first large request, then beside ${rounds} more one after another, then beside ${rounds} requests whose every model answers a large text; longest wait = the longest of the cheap requests beside one large request (median over the large requests); request = the large request's wall time`,
        columns: [
          { key: 'case', label: 'case' },
          { key: 'probes', label: 'cheap requests' },
          { key: 'p50Ms', label: 'cheap request p50 ms', digits: 1 },
          { key: 'longestMs', label: 'longest cheap request ms', digits: 1 },
          { key: 'requestMs', label: 'large request ms' },
        ],
        rows: [
          row('host idle', [{ waits: idle }]),
          row('beside the first large request (its protocols load)', [first]),
          row(`beside a large request (${rounds}, one after another)`, warm),
          row(`beside a request whose ${chatModels.length} models each answer ${round(answerChars / 2 ** 20, 2)} MiB (${rounds}, one after another)`, largeAnswers),
        ],
        targets: [],
      };
    } finally {
      client.close();
      await started?.close();
    }
  },
};
