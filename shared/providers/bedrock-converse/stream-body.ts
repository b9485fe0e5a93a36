import { AnswerPieces } from '../../http/post.js';
import { type SseLimits, StreamLimitError } from '../sse.js';
import { MAX_VENDOR_JSON_FIELDS, tooManyVendorJsonFields } from '../vendor-json.js';

/**
 * Bytes of an event-stream message besides its headers and payload: the prelude (the message's
 * total length and its headers' length, 4 bytes each, big-endian, and their CRC) and the
 * message's CRC at its end.
 */
const PRELUDE_BYTES = 12;
const FRAME_BYTES = PRELUDE_BYTES + 4;

/** What a ConverseStream answer is read under: the SSE vendors' byte limits, its messages as their events, and a cap on the messages (as on their lines). */
export type EventStreamLimits = Pick<SseLimits, 'maxEventBytes' | 'maxTotalBytes'> & { maxMessages: number };

/**
 * A ConverseStream answer's body (`application/vnd.amazon.eventstream`) handed to the AWS SDK
 * message by message, each checked before the SDK reads it, as the other vendors' streams are
 * (sse.ts, vendor-json.ts): at most `maxTotalBytes` in all and `maxMessages` messages, a
 * message at most `maxEventBytes` of payload and headers (refused from the length its prelude
 * declares, before its bytes arrive: the SDK allocates what a prelude declares, up to 4 GiB),
 * its payload at most MAX_VENDOR_JSON_FIELDS JSON fields (the SDK parses each whole), its
 * pieces not too small (AnswerPieces). Past a limit, StreamLimitError (or EANSWERFRAGMENTED);
 * bytes left after the last whole message go on, for the SDK to refuse as truncated.
 */
export async function* limitedMessages(body: AsyncIterable<Uint8Array>, limits: EventStreamLimits): AsyncGenerator<Buffer> {
  const pieces = new AnswerPieces();
  let total = 0;
  let messages = 0;
  // What arrived of the messages not yet handed on, piece by piece: joined once a message is whole.
  let held: Buffer[] = [];
  let heldBytes = 0;
  for await (const piece of body) {
    const chunk = Buffer.isBuffer(piece) ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    pieces.count(chunk.length);
    total += chunk.length;
    if (total > limits.maxTotalBytes) throw new StreamLimitError(`The stream exceeded ${limits.maxTotalBytes} bytes`);
    held.push(chunk);
    heldBytes += chunk.length;
    while (heldBytes >= 4) {
      if ((held[0] as Buffer).length < 4) held = [Buffer.concat(held, heldBytes)];
      const first = held[0] as Buffer;
      const length = first.readUInt32BE(0);
      if (length < FRAME_BYTES) throw new StreamLimitError(`A message of the stream declared ${length} bytes, fewer than its frame's ${FRAME_BYTES}`);
      if (length - FRAME_BYTES > limits.maxEventBytes) throw new StreamLimitError(`An event of the stream exceeded ${limits.maxEventBytes} bytes`);
      if (heldBytes < length) break;
      if (++messages > limits.maxMessages) throw new StreamLimitError(`The stream exceeded ${limits.maxMessages} messages`);
      const all = held.length === 1 ? first : Buffer.concat(held, heldBytes);
      const message = all.subarray(0, length);
      held = length < all.length ? [all.subarray(length)] : [];
      heldBytes -= length;
      if (tooManyFields(message)) throw new StreamLimitError(`An event of the stream holds more than ${MAX_VENDOR_JSON_FIELDS} JSON fields`);
      yield message;
    }
  }
  if (heldBytes > 0) yield Buffer.concat(held, heldBytes);
}

/** Whether a whole message's payload (the JSON of its event, after its headers, before its CRC) holds more fields than a vendor's JSON may. */
function tooManyFields(message: Buffer): boolean {
  return tooManyVendorJsonFields(message, PRELUDE_BYTES + message.readUInt32BE(4), message.length - 4);
}
