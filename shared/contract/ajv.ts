import * as ajvModule from 'ajv/dist/2020.js';
import type { Options } from 'ajv';

// ajv is CommonJS; under NodeNext its class arrives as the module's `default`.
const Ajv2020 = ajvModule.default.default ?? ajvModule.default;
export type Ajv = InstanceType<typeof Ajv2020>;

/** An ajv instance for JSON Schema 2020-12, the dialect of OpenAPI 3.1. */
export function createAjv(options: Options): Ajv {
  return new Ajv2020(options);
}
