/** Storage keeps integer micro-credits; the API speaks credits (DESIGN.md, Credits). */
export const MICRO_PER_CREDIT = 1_000_000;

export function microToCredits(micro: number): number {
  return micro / MICRO_PER_CREDIT;
}

export function creditsToMicro(credits: number): number {
  return Math.round(credits * MICRO_PER_CREDIT);
}
