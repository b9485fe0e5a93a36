/**
 * How much judge material a judge task sends at once in bodies that cannot share it (the
 * Bedrock judges': the AWS SDK serialises each call's body itself, from its flattened prompt,
 * about 6 bytes of memory a character held while the call runs), in characters. A task's
 * other calls share the material's bytes (providers/shared-text.ts) and are not held.
 * 110 calls of two 1.45 MB answers held 760 MB in the judge function's 512; within this
 * budget, such calls go in turn.
 */
export const UNSHARED_MATERIAL_CHARS = 24 * 2 ** 20;

/**
 * Runs work of a size (`units`) so that at most `limit` units run at once, first come first
 * served; a piece of work larger than the limit runs alone.
 */
export class WorkBudget {
  private used = 0;
  private readonly waiting: { units: number; start(): void }[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(units: number, work: () => Promise<T>): Promise<T> {
    if (this.waiting.length > 0 || !this.fits(units)) await new Promise<void>((start) => this.waiting.push({ units, start }));
    else this.used += units;
    try {
      return await work();
    } finally {
      this.used -= units;
      this.startWaiting();
    }
  }

  private fits(units: number): boolean {
    return this.used === 0 || this.used + units <= this.limit;
  }

  private startWaiting(): void {
    for (let next = this.waiting[0]; next !== undefined && this.fits(next.units); next = this.waiting[0]) {
      this.waiting.shift();
      this.used += next.units;
      next.start();
    }
  }
}
