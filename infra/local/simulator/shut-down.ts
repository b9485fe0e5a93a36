import { MODELS } from '../../../shared/catalog/models.js';
import { MAX_REQUEST_DEADLINE_MS } from '../../../shared/deadlines.js';

/**
 * The vendor models their vendors have shut down, as the catalog's retirements say (not a
 * `vendorReroute`'s, which its vendor still answers), by provider and vendor name: from the
 * start of the retirement day plus the longest a request may run. The gateway reads the
 * catalog once, when a request arrives, and a request read before the day calls the model its
 * estimate reserved for until its deadline (docs/reference.md, Retired vendor models), so a
 * vendor refusing from 00:00 UTC sharp would fail what the gateway means to send. No model
 * that stays sends a retired name (test/unit/catalog.test.ts).
 */
const shutDowns = new Map<string, number>();
const key = (provider: string, upstreamModel: string) => `${provider}\u0000${upstreamModel}`;
for (const entry of MODELS) {
  if (!entry.retirement) continue;
  shutDowns.set(key(entry.provider, entry.upstreamModel), Date.parse(`${entry.retirement.on}T00:00:00Z`) + MAX_REQUEST_DEADLINE_MS);
}

/** Whether `provider` no longer serves `upstreamModel` at `now` (above): its simulator then refuses it as the vendor does. */
export function shutDown(provider: string, upstreamModel: string, now = Date.now()): boolean {
  const from = shutDowns.get(key(provider, upstreamModel));
  return from !== undefined && now >= from;
}
