// The schema thread's entry when the gateway runs from its TypeScript sources (tsx, vitest):
// tsx compiles schema-thread.ts for this thread. Bundled (infra/stack/bundle.ts), a file of
// the same name holds schema-thread.ts compiled, beside the function's index.mjs.
import { tsImport } from 'tsx/esm/api';

await tsImport('./schema-thread.ts', import.meta.url);
