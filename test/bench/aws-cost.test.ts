/**
 * The AWS cost model of test/bench/aws-cost.ts: it reads the functions' settings from the
 * synthesized template, and prices what a request writes and runs. Figures only, never a timing.
 */
import { describe, expect, it } from 'vitest';
import { PRICES, SCENARIOS, requestCost, templateSettings } from './aws-cost.js';

describe('AWS cost per request', () => {
  const settings = templateSettings();

  it("reads each function's memory and architecture from the template", () => {
    expect(settings.api).toEqual({ memoryMb: 1024, architecture: 'arm64' });
    expect(settings.judge).toEqual({ memoryMb: 512, architecture: 'arm64' });
    expect(settings.express).toBe(true);
  }, 60_000);

  it('prices the api function by memory and billed duration, and judged requests by their judge tasks, one a judge', async () => {
    const [plain, judged] = await Promise.all(SCENARIOS.map((scenario) => requestCost(scenario, settings)));
    const half = await requestCost(SCENARIOS[0]!, { ...settings, api: { ...settings.api, memoryMb: 512 } });
    const apiLine = (cost: typeof plain) => cost!.lines.find((line) => line.item.startsWith('api function'))!.usd;
    // Half the memory, half the GB-seconds; the request charge stays.
    expect(apiLine(half) - PRICES.lambdaRequest).toBeCloseTo((apiLine(plain) - PRICES.lambdaRequest) / 2, 12);
    expect(plain!.totalUsd).toBeCloseTo(
      plain!.lines.reduce((sum, line) => sum + line.usd, 0),
      12,
    );
    expect(plain!.share).toBeCloseTo(plain!.totalUsd / plain!.providerUsd, 12);
    const judgeLine = judged!.lines.find((line) => line.item.startsWith('judge function'))!;
    expect(judgeLine.item).toMatch(/^judge function: 2 x 512 MB x 3 s \(one task a judge, 12 calls each\)/);
    // Two invocations (one a judge), each 0.5 GB for 3 s: not one an evaluation's call.
    expect(judgeLine.usd).toBeCloseTo(2 * (0.5 * 3 * PRICES.lambdaGbSecond.arm64 + PRICES.lambdaRequest), 12);
    expect(plain!.lines.some((line) => line.item.startsWith('Step Functions'))).toBe(false);
  });

  it("counts the prompt log's entry in its table's index (its keys, 1 unit), written with it, and prices keeping it by the month apart", async () => {
    const plain = await requestCost(SCENARIOS[0]!, settings);
    const dynamo = plain!.lines.find((line) => line.item.startsWith('DynamoDB'))!;
    const [, wru, logUnits] = /^DynamoDB: (\d+) WRU \(prompt log (\d+),/.exec(dynamo.item)!.map(Number);
    // The reserve, the settlement entry and the close, 1 each; the log's item, and 1 for its keys in the index.
    expect(logUnits).toBe(12);
    expect(wru).toBe(3 + logUnits!);
    expect(plain!.keptPerMonthUsd).toBeGreaterThan(0);
    expect(plain!.totalUsd).toBeCloseTo(
      plain!.lines.reduce((sum, line) => sum + line.usd, 0),
      12,
    );
  });
});
