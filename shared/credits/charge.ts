import { BalanceTooLowError, type AccountsRepository } from '../storage/accounts.js';

/**
 * Charges what a finished request cost. The balance never goes below zero: when a
 * concurrent request spent it first, what is left is taken and the shortfall is
 * reported (the reserve-then-settle design replaces this in the credits issue).
 */
export async function chargeUpTo(
  accounts: AccountsRepository,
  accountId: string,
  amountMicro: number,
): Promise<{ chargedMicro: number; shortfallMicro: number }> {
  if (amountMicro <= 0) return { chargedMicro: 0, shortfallMicro: 0 };
  let want = amountMicro;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await accounts.deduct(accountId, want);
      return { chargedMicro: want, shortfallMicro: amountMicro - want };
    } catch (error) {
      if (!(error instanceof BalanceTooLowError)) throw error;
      const balance = (await accounts.get(accountId))?.balanceMicro ?? 0;
      if (balance <= 0) return { chargedMicro: 0, shortfallMicro: amountMicro };
      want = Math.min(amountMicro, balance);
    }
  }
  return { chargedMicro: 0, shortfallMicro: amountMicro };
}
