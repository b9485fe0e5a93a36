import { parseRetryAfter, statusError, UpstreamError } from '../errors.js';
import { vendorBody } from '../http.js';
import type { ChatDialect } from './dialects.js';
import { cutWhole } from '../../text/characters.js';
import { PROVIDER_NAMES } from '../../catalog/types.js';

const MAX_MESSAGE = 500;

/**
 * The human part of a vendor error body. The shapes in use:
 * - `{"error": {"message", "type", "code"}}`: OpenAI, DeepSeek, Groq, Cerebras 5xx;
 * - `{"code": "<status text>", "error": "<message>"}`: xAI;
 * - `{"message", "type", "param", "code"}`: Cerebras 4xx, Mistral (`"object": "error"`);
 * - `{"detail": [{"loc", "msg", "input"}]}`, or that object as Mistral's `message`: Mistral 422.
 * Validation details are reduced to field and reason: their `input` echoes the request (the prompt).
 */
export function vendorMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { error, message, detail } = body as { error?: unknown; message?: unknown; detail?: unknown };
  const candidates = [
    typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : error,
    message,
    typeof message === 'object' && message !== null ? (message as { detail?: unknown }).detail : undefined,
    detail,
  ];
  for (const candidate of candidates) {
    const text = typeof candidate === 'string' ? candidate : validationText(candidate);
    if (text) return cutWhole(text, MAX_MESSAGE);
  }
  return undefined;
}

/** FastAPI-style validation details as "field: reason; field: reason". */
function validationText(detail: unknown): string | undefined {
  if (!Array.isArray(detail)) return undefined;
  const lines: string[] = [];
  for (const item of detail as unknown[]) {
    const { loc, msg } = (item ?? {}) as { loc?: unknown; msg?: unknown };
    if (typeof msg !== 'string') continue;
    const field = Array.isArray(loc) ? loc.filter((part) => typeof part === 'string' || typeof part === 'number').join('.') : '';
    lines.push(field ? `${field}: ${msg}` : msg);
  }
  return lines.length > 0 ? lines.join('; ') : undefined;
}

/**
 * A non-2xx answer as an UpstreamError: the vendor's message and status; 429, 5xx and the
 * vendor's capacity statuses are retryable, waiting as long as Retry-After says. For a schema
 * call (`schemaCall`) to a vendor that refuses its own generations (`refusedGenerations`), the
 * refused answer rides along as `refusedAnswer`; from any other call a `failed_generation` is
 * no answer (it had been taken as one, charged, from a call that asked for no schema).
 */
export function fromErrorResponse(dialect: ChatDialect, status: number, text: string, retryAfter: string | null, { now = Date.now(), schemaCall = false } = {}): UpstreamError {
  const body = vendorBody(text);
  const message = vendorMessage(body) ?? `${PROVIDER_NAMES[dialect.id]} answered ${status}`;
  const error = statusError(status, message, { body, retryAfterMs: parseRetryAfter(retryAfter, now), capacityStatuses: dialect.capacityStatuses });
  const refused = status === 400 && schemaCall && dialect.refusedGenerations === true ? failedGeneration(body) : undefined;
  if (refused === undefined) return error;
  const warning = `${PROVIDER_NAMES[dialect.id]} refused its own answer as not fitting the schema (json_validate_failed): shown as it came, with the gateway's check`;
  return new UpstreamError(error.code, error.message, { ...error.details, refusedAnswer: { output: refused, warnings: [warning] } });
}

/**
 * The answer Groq generated in best-effort structured output and then refused as not fitting
 * the schema (400 `json_validate_failed`, "See 'failed_generation' for more details"), or
 * undefined.
 */
function failedGeneration(body: unknown): string | undefined {
  const error = typeof body === 'object' && body !== null ? (body as { error?: { code?: unknown; failed_generation?: unknown } }).error : undefined;
  return error?.code === 'json_validate_failed' && typeof error.failed_generation === 'string' ? error.failed_generation : undefined;
}
