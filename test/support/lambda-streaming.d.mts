import type { LambdaStreamingRuntime } from '../../functions/stream-answer.js';

export function lambdaStreamingRuntime(): LambdaStreamingRuntime;
export function splitStreamed(bytes: Buffer): { metadata: Record<string, unknown>; body: string };
