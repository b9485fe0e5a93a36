import { cutWhole } from './text/characters.js';

/** The most of the SDK's reason for having no credentials a message repeats. */
const MAX_REASON_CHARS = 300;

/**
 * Why the SDK's credential chain found nothing to sign with, as it says it (`Could not load
 * credentials from any providers`; an SSO session that has expired, with the command that
 * renews it), cut to MAX_REASON_CHARS (an ellipsis where cut): it names no secret, and says
 * what to do. Undefined where the error gives no message.
 */
export function credentialsReason(error: unknown): string | undefined {
  const message = (error as { message?: unknown } | null)?.message;
  if (typeof message !== 'string' || message === '') return undefined;
  return message.length > MAX_REASON_CHARS ? `${cutWhole(message, MAX_REASON_CHARS)}…` : message;
}
