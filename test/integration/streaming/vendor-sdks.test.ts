/**
 * The simulator's streams parsed by the vendors' own SDKs (dev dependencies, used only here):
 * if the simulator's format were not the real one, the SDK would read nothing, or fail.
 * Each streamed answer must read as the same text and usage as the non-streamed answer.
 */
import Anthropic from '@anthropic-ai/sdk';
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { GoogleGenAI } from '@google/genai';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { suiteSimulator } from '../../support/simulator.js';

const sim = await suiteSimulator();
const PROMPT = 'Compare two ways to cache HTTP responses.';

describe('Simulator streams, read by the vendor SDKs', () => {
  it('openai chat.completions.create({stream: true}): content chunks and the usage chunk', async () => {
    const client = new OpenAI({ apiKey: 'sk-simulated', baseURL: sim.baseUrl('deepseek'), maxRetries: 0 });
    const request = { model: 'deepseek-v4-pro', messages: [{ role: 'user' as const, content: PROMPT }] };
    const whole = await client.chat.completions.create(request);
    sim.reset();
    const stream = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let reasoning = '';
    let usage: unknown;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta.content ?? '';
      reasoning += (chunk.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(chunks).toBeGreaterThan(3);
    expect(text).toBe(whole.choices[0]?.message.content);
    expect(reasoning).toBe((whole.choices[0]?.message as { reasoning_content?: string } | undefined)?.reasoning_content);
    expect(usage).toEqual(whole.usage);
  });

  it('openai responses.stream: text deltas, and the final response with its usage', async () => {
    const client = new OpenAI({ apiKey: 'sk-simulated', baseURL: sim.baseUrl('openai'), maxRetries: 0 });
    const request = { model: 'gpt-5.4', input: PROMPT, store: false, reasoning: { effort: 'high' as const } };
    const whole = await client.responses.create(request);
    sim.reset();
    const stream = client.responses.stream(request);
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(whole.output_text);
    expect(final.output_text).toBe(whole.output_text);
    expect(final.usage).toEqual(whole.usage);
    expect(final.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  });

  it('anthropic messages.stream: text events, the final message with merged usage', async () => {
    // This SDK version sends an apiKey as a bearer token; the Messages API's own header is x-api-key.
    const client = new Anthropic({ apiKey: null, authToken: null, defaultHeaders: { 'x-api-key': 'sk-ant-simulated' }, baseURL: `${sim.url}/anthropic`, maxRetries: 0 });
    const request = { model: 'claude-opus-4-6', max_tokens: 4096, thinking: { type: 'adaptive' as const }, messages: [{ role: 'user' as const, content: PROMPT }] };
    const whole = await client.messages.create(request);
    sim.reset();
    const stream = client.messages.stream(request);
    const texts: string[] = [];
    const thoughts: string[] = [];
    stream.on('text', (delta) => texts.push(delta));
    stream.on('thinking', (delta) => thoughts.push(delta));
    const final = await stream.finalMessage();
    expect(texts.length).toBeGreaterThan(1);
    expect(thoughts.length).toBeGreaterThan(0);
    expect(final.content).toEqual(whole.content);
    expect(final.usage).toMatchObject(whole.usage);
    expect(final.stop_reason).toBe(whole.stop_reason);
  });

  it('google genai models.generateContentStream: chunk texts and the last usageMetadata', async () => {
    const ai = new GoogleGenAI({ apiKey: 'simulated', httpOptions: { baseUrl: `${sim.url}/google`, apiVersion: 'v1beta' } });
    const request = { model: 'gemini-2.5-flash', contents: PROMPT, config: { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } } };
    const whole = await ai.models.generateContent(request);
    sim.reset();
    let text = '';
    let chunks = 0;
    let usage: unknown;
    for await (const chunk of await ai.models.generateContentStream(request)) {
      chunks++;
      for (const part of chunk.candidates?.[0]?.content?.parts ?? []) if (!part.thought && part.text) text += part.text;
      usage = chunk.usageMetadata;
    }
    expect(chunks).toBeGreaterThan(2);
    expect(text).toBe(whole.text);
    expect(usage).toEqual(whole.usageMetadata);
    expect(whole.usageMetadata?.thoughtsTokenCount).toBeGreaterThan(0);
  });

  it('Bedrock runtime ConverseStreamCommand: text deltas, messageStop and metadata usage', async () => {
    const client = new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: sim.baseUrl('bedrock'),
      credentials: { accessKeyId: 'simulated', secretAccessKey: 'simulated' },
      requestHandler: new NodeHttpHandler(),
      maxAttempts: 1,
    });
    const input = { modelId: 'amazon.nova-pro-v1:0', messages: [{ role: 'user' as const, content: [{ text: PROMPT }] }] };
    const whole = await client.send(new ConverseCommand(input));
    sim.reset();
    const answer = await client.send(new ConverseStreamCommand(input));
    let text = '';
    let deltas = 0;
    let stopReason: string | undefined;
    let usage: unknown;
    for await (const event of answer.stream ?? []) {
      if (event.contentBlockDelta?.delta?.text !== undefined) {
        deltas++;
        text += event.contentBlockDelta.delta.text;
      }
      if (event.messageStop) stopReason = event.messageStop.stopReason;
      if (event.metadata) usage = event.metadata.usage;
    }
    client.destroy();
    expect(deltas).toBeGreaterThan(1);
    expect(text).toBe(whole.output?.message?.content?.[0]?.text);
    expect(stopReason).toBe(whole.stopReason);
    expect(usage).toEqual(whole.usage);
  });
});
