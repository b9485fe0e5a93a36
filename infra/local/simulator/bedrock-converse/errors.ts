/**
 * The error bodies of the simulated Converse API, as restJson1 shapes them: the type in the
 * `x-amzn-errortype` header, `{"message"}` in the body, so the AWS SDK raises its own
 * exception classes.
 */
import { randomUUID } from 'node:crypto';
import { errorNameFor } from '../error-names.js';
import type { Reply } from '../types.js';

/** The message each exception carries when a fault gives no body. */
export const BEDROCK_MESSAGES: Record<string, string> = {
  ValidationException: 'Malformed input request, please reformat your input and try again.',
  AccessDeniedException: "You don't have access to the model with the specified model ID.",
  ResourceNotFoundException: 'Could not resolve the foundation model from the provided model identifier.',
  ModelTimeoutException: 'Model has timed out in processing the request. Try your request again.',
  ConflictException: 'The request could not be completed because of a conflict.',
  ModelErrorException: 'The model encountered an error while processing the request.',
  ThrottlingException: 'Too many requests, please wait before trying again.',
  InternalServerException: 'The system encountered an unexpected error during processing. Try your request again.',
  ServiceUnavailableException: 'Bedrock is unable to process your request.',
};

export function bedrockHeaders(): Record<string, string> {
  return { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID(), date: new Date().toUTCString() };
}

/** A restJson1 error: the type in `x-amzn-errortype` (with Coral's namespace suffix), the message in the body. */
export function simulatedBedrockError(status: number, message: string, type = errorNameFor('bedrock', status)): Reply {
  return {
    status,
    headers: { ...bedrockHeaders(), 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
    body: JSON.stringify({ message }),
  };
}
