/** The bytes a valid (padded) base64 string decodes to, without decoding it: 3 per 4 characters, less its `=` padding. */
export function base64Bytes(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.floor((base64.length * 3) / 4) - padding;
}
