import { openApiDocument } from '../shared/contract/openapi.js';

/** Prints the OpenAPI 3.1 document: `npx tsx infra/openapi.ts > openapi.json`. */
process.stdout.write(`${JSON.stringify(openApiDocument(), null, 2)}\n`);
