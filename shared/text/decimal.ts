/**
 * A finite number as the digits (its sign with them) and the power of ten of its shortest
 * decimal, as JavaScript writes it: 1.2 is `12` and -1, 1e-7 is `1` and -7, 1e21 is `1` and 21.
 * Exact arithmetic on decimals (credits, a schema's `multipleOf`) starts from it.
 */
export function decimalDigits(value: number): { digits: string; power: number } {
  const text = String(value);
  const e = text.indexOf('e');
  const mantissa = e < 0 ? text : text.slice(0, e);
  const exponent = e < 0 ? 0 : Number(text.slice(e + 1));
  const point = mantissa.indexOf('.');
  if (point < 0) return { digits: mantissa, power: exponent };
  return { digits: mantissa.slice(0, point) + mantissa.slice(point + 1), power: exponent - (mantissa.length - point - 1) };
}
