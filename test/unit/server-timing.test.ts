import { describe, expect, it } from 'vitest';
import { parseServerTiming, ServerTiming } from '../../shared/http/server-timing.js';

describe('Class: ServerTiming', () => {
  it('answers each phase once it ended, a failed one included, then the total', async () => {
    const timing = new ServerTiming();
    await timing.measure('reserve', async () => 1);
    await expect(timing.measure('models', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const header = timing.header();
    expect(header).toMatch(/^reserve;dur=\d+\.\d, models;dur=\d+\.\d, total;dur=\d+\.\d$/);
    expect(Object.keys(parseServerTiming(header))).toEqual(['reserve', 'models', 'total']);
  });

  it('reads durations back by name, skipping entries without one', () => {
    expect(parseServerTiming('reserve;dur=1.25, cache;desc="hit", models;dur=200, models;dur=9')).toEqual({ reserve: 1.25, models: 200 });
    expect(parseServerTiming(undefined)).toEqual({});
  });
});
