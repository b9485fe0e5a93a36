/**
 * Credentials out of text that leaves the gateway (a result's error message, a log line).
 * Vendors quote the key they were sent in their error messages ("Incorrect API key
 * provided: sk-…"), and library errors may quote a request's headers; none of it may
 * reach an answer, a stored record or a log.
 */

const REDACTED = '[redacted]';

/**
 * Credential shapes: authorization schemes, API-key headers, and the key formats of the
 * gateway and its vendors. The distinctive prefixes match even glued to a word before them
 * (`xxxAKIA…`: a vendor message may run text into a key); `sk-` only at a word's start,
 * as words such as `risk-` end in it.
 */
const PATTERNS: readonly [RegExp, string][] = [
  [/\b(Bearer|Basic|Token|AWS4-HMAC-SHA256)\s+[^\s,;"'`)]+/gi, `$1 ${REDACTED}`],
  [/\b(x-api-key|x-goog-api-key|api[-_ ]?key|authorization|credential)(["']?\s*[:=]\s*["']?)[^\s,;"'`)]+/gi, `$1$2${REDACTED}`],
  [/mcg_[A-Za-z0-9_-]{8,}/g, REDACTED], // the gateway's own keys
  [/\bsk-[A-Za-z0-9_*.-]{6,}/g, REDACTED], // OpenAI, Anthropic (sk-ant-), DeepSeek
  [/AIza[0-9A-Za-z_*-]{10,}/g, REDACTED], // Google
  [/xai-[A-Za-z0-9_*-]{6,}/g, REDACTED], // xAI
  [/csk-[A-Za-z0-9_*-]{6,}/g, REDACTED], // Cerebras
  [/gsk_[A-Za-z0-9_*]{6,}/g, REDACTED], // Groq
  [/(?:AKIA|ASIA)[A-Z0-9*]{12,}/g, REDACTED], // AWS access key IDs
];

/** Known secrets shorter than this are not searched for (they would redact ordinary words). */
const MIN_KNOWN_LENGTH = 8;

/** The shortest start of a known secret redacted where a text ends with it. */
const MIN_KNOWN_START = 4;

/**
 * `text` with every known secret (exactly as configured, e.g. a provider's key) and every
 * credential-shaped token replaced by `[redacted]`; and where the text ends with the start
 * of a known secret (a vendor message cut short in the middle of the key it quoted), that
 * start too.
 */
export function redactSecrets(text: string, known: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of known) {
    if (!secret || secret.length < MIN_KNOWN_LENGTH) continue;
    out = out.split(secret).join(REDACTED);
    for (let length = Math.min(secret.length - 1, out.length); length >= MIN_KNOWN_START; length--) {
      if (out.endsWith(secret.slice(0, length))) {
        out = out.slice(0, out.length - length) + REDACTED;
        break;
      }
    }
  }
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}
