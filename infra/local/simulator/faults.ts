/**
 * Fault rules and latency settings of the provider simulator.
 *
 * A rule matches a call by provider and/or model (a rule without either
 * applies to every call). The first matching rule wins; when it has `times`,
 * each applied call decrements it and the rule is removed when it reaches 0.
 */

export interface FaultMatch {
  provider?: string;
  model?: string;
}

export type FaultRule = FaultMatch &
  (
    | { kind: 'status'; status: number; retryAfter?: string; body?: unknown } // vendor-shaped error body by default
    | { kind: 'hang' } // never answers (until close or client abort)
    | { kind: 'slow'; delayMs: number }
    | { kind: 'slow-stream'; delayMs: number } // a streamed answer's chunks come delayMs apart (a whole answer is unchanged)
    | { kind: 'malformed' } // 200 with a truncated JSON body
    | { kind: 'empty' } // 200 with an empty body
    | { kind: 'reset' } // destroy the socket without answering
    | { kind: 'no-usage' } // normal answer without the usage block
  ) & { times?: number /* how many calls it applies to; default: every call */ };

export type FaultKind = FaultRule['kind'];

const KINDS: ReadonlySet<string> = new Set<FaultKind>(['status', 'hang', 'slow', 'slow-stream', 'malformed', 'empty', 'reset', 'no-usage']);

function matches(m: FaultMatch, provider: string, model: string): boolean {
  return (m.provider === undefined || m.provider === provider) && (m.model === undefined || m.model === model);
}

/**
 * Validates an untrusted value (e.g. the body of POST /__sim/faults) and
 * returns a normalized copy of the rule, or an error message.
 */
export function parseFaultRule(input: unknown): { ok: true; rule: FaultRule } | { ok: false; error: string } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, error: 'fault rule must be a JSON object' };
  }
  const r = input as Record<string, unknown>;
  const kind = r['kind'];
  if (typeof kind !== 'string' || !KINDS.has(kind)) {
    return { ok: false, error: `kind must be one of ${[...KINDS].join(', ')}` };
  }
  const base: FaultMatch & { times?: number } = {};
  for (const key of ['provider', 'model'] as const) {
    const v = r[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' || v === '') return { ok: false, error: `${key} must be a non-empty string` };
    base[key] = v;
  }
  const times = r['times'];
  if (times !== undefined && times !== null) {
    if (typeof times !== 'number' || !Number.isInteger(times) || times < 1) {
      return { ok: false, error: 'times must be a positive integer' };
    }
    base.times = times;
  }
  switch (kind as FaultKind) {
    case 'status': {
      const status = r['status'];
      if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
        return { ok: false, error: 'status must be an integer HTTP status between 200 and 599' };
      }
      const retryAfter = r['retryAfter'];
      if (retryAfter !== undefined && retryAfter !== null && typeof retryAfter !== 'string' && typeof retryAfter !== 'number') {
        return { ok: false, error: 'retryAfter must be a string' };
      }
      const rule: Extract<FaultRule, { kind: 'status' }> = { ...base, kind: 'status', status };
      if (retryAfter !== undefined && retryAfter !== null) rule.retryAfter = String(retryAfter);
      if (r['body'] !== undefined) rule.body = r['body'];
      return { ok: true, rule };
    }
    case 'slow':
    case 'slow-stream': {
      const delayMs = r['delayMs'];
      if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
        return { ok: false, error: 'delayMs must be a non-negative number' };
      }
      return { ok: true, rule: { ...base, kind: kind as 'slow' | 'slow-stream', delayMs } };
    }
    default:
      return { ok: true, rule: { ...base, kind: kind as 'hang' | 'malformed' | 'empty' | 'reset' | 'no-usage' } };
  }
}

interface ActiveRule {
  rule: FaultRule;
  remaining: number; // Infinity when the rule has no `times`
}

/** The ordered list of active fault rules. */
export class FaultRules {
  private rules: ActiveRule[] = [];

  /** Adds a rule (validated; throws TypeError on an invalid rule). */
  add(input: FaultRule): void {
    const parsed = parseFaultRule(input);
    if (!parsed.ok) throw new TypeError(`invalid fault rule: ${parsed.error}`);
    this.rules.push({ rule: parsed.rule, remaining: parsed.rule.times ?? Infinity });
  }

  /**
   * Returns the first rule matching (provider, model) and consumes one of its
   * `times` (removing it at 0), or undefined when no rule applies.
   */
  take(provider: string, model: string): FaultRule | undefined {
    const rules = this.rules;
    if (rules.length === 0) return undefined;
    for (let i = 0; i < rules.length; i++) {
      const active = rules[i] as ActiveRule;
      if (!matches(active.rule, provider, model)) continue;
      active.remaining -= 1;
      if (active.remaining <= 0) rules.splice(i, 1);
      return active.rule;
    }
    return undefined;
  }

  get size(): number {
    return this.rules.length;
  }

  clear(): void {
    this.rules = [];
  }
}

interface LatencyEntry {
  provider: string | undefined;
  model: string | undefined;
  ms: number;
}

/**
 * Latency settings: a per-model setting wins over a per-provider one, which
 * wins over the default. A later setting for the same match replaces the
 * earlier one.
 */
export class LatencyTable {
  private byModel: LatencyEntry[] = [];
  private byProvider: LatencyEntry[] = [];
  private defaultMs: number;

  constructor(defaultMs: number) {
    this.defaultMs = checkMs(defaultMs);
  }

  set(ms: number, match?: FaultMatch): void {
    const value = checkMs(ms);
    const provider = match?.provider;
    const model = match?.model;
    if (model === undefined && provider === undefined) {
      this.defaultMs = value;
      return;
    }
    const list = model !== undefined ? this.byModel : this.byProvider;
    const existing = list.findIndex((e) => e.provider === provider && e.model === model);
    if (existing >= 0) list.splice(existing, 1);
    list.push({ provider, model, ms: value });
  }

  get(provider: string, model: string): number {
    // Newest first; among model entries, one that also names the provider is as good as one that does not.
    for (let i = this.byModel.length - 1; i >= 0; i--) {
      const e = this.byModel[i] as LatencyEntry;
      if (e.model === model && (e.provider === undefined || e.provider === provider)) return e.ms;
    }
    for (let i = this.byProvider.length - 1; i >= 0; i--) {
      const e = this.byProvider[i] as LatencyEntry;
      if (e.provider === provider) return e.ms;
    }
    return this.defaultMs;
  }

  reset(defaultMs: number): void {
    this.byModel = [];
    this.byProvider = [];
    this.defaultMs = checkMs(defaultMs);
  }
}

function checkMs(ms: number): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new TypeError(`latency must be a non-negative number of milliseconds, got ${String(ms)}`);
  }
  return ms;
}
