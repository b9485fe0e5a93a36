import type { Options } from 'ajv';

type Ajv2020Class = typeof import('ajv/dist/2020.js')['default'];
export type Ajv = InstanceType<Ajv2020Class>;

let Ajv2020: Ajv2020Class | undefined;

/**
 * Loads ajv (about 60 ms) on first need only: the request contract is compiled ahead of
 * time, so a process that never sees a `response_schema` never pays for it.
 */
export async function loadAjv(): Promise<void> {
  if (Ajv2020) return;
  const module = await import('ajv/dist/2020.js');
  // ajv is CommonJS; under NodeNext its class arrives as the module's `default`.
  Ajv2020 = (module.default as unknown as { default?: Ajv2020Class }).default ?? (module.default as unknown as Ajv2020Class);
}

/** An ajv instance for JSON Schema 2020-12, the dialect of OpenAPI 3.1. `loadAjv()` must have resolved. */
export function createAjv(options: Options): Ajv {
  if (!Ajv2020) throw new Error('ajv is not loaded yet: await loadAjv() first');
  return new Ajv2020(options);
}
