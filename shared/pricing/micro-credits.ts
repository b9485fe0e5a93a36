/** Storage keeps integer micro-credits; the API speaks credits (DESIGN.md, Credits). */
export const MICRO_PER_CREDIT = 1_000_000;

/**
 * The most micro-credits an account holds (a billion credits): far below 2^53, so that a
 * balance, and the sums of the ledger, stay exact numbers (DynamoDB's clients read larger
 * integers as BigInt, which the balance arithmetic cannot take).
 */
export const MAX_BALANCE_MICRO = 1e15;

export function microToCredits(micro: number): number {
  return micro / MICRO_PER_CREDIT;
}

export function creditsToMicro(credits: number): number {
  return Math.round(credits * MICRO_PER_CREDIT);
}
